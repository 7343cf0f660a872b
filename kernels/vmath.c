/* vmath.c -- e^x, the logistic sigmoid, GELU's erf, tanh, ELU and
 * LeakyReLU over arrays, in loops
 * the compiler vectorises (SSE2, AVX2 or AVX-512 on x86-64, NEON on arm64).
 *
 * Why: the C library's expf and erff are scalar calls the vectoriser cannot
 * take; efficientnet_b0's SiLU gates (Sigmoid) were half of its latency
 * through them, ConvNeXt's GELU a fifth (bench/README.md, "Sigmoid and
 * GELU").  Debian 12's glibc has no vector math library for arm64.
 *
 * Invariant: every element's arithmetic is the same whatever the array
 * length, offset or SIMD width (no reductions, no lane-dependent paths, no
 * FMA contraction: the file is built with -ffp-contract=off), so a slice or
 * a band of a layer equals the same elements of the whole layer bit for
 * bit, on every device and under any DSE_AVX512 setting (for inputs that
 * are not NaN: a NaN gives a NaN, whose sign bit the instruction decides).
 * Accuracy (checked by test_kernels against double precision over every
 * float exponent; vmath_check also compares every loop's bits):
 *   e^x          relative error < 2e-7 for x in [-87.3, 88.37]; 2^-126
 *                times e^(x - n ln 2) below (PyTorch gives 0 below -103:
 *                both are 0 to 1e-38), +infinity above 88.37 (the true
 *                overflow is at 88.72);
 *   sigmoid(x)   1 / (1 + e^-x): relative error < 5e-7 down to -69 (the
 *                check's reach), exactly 0 below -88.37;
 *   erf(x)       Abramowitz and Stegun 7.1.26, absolute error < 1.5e-7,
 *                the approximation PyTorch's own vectorised erf uses;
 *   GELU         tanh form through the sigmoid, x/2 (1 + tanh u) = x
 *                sigmoid(2u);
 *   LRN          x b^(-3/4) by two square roots: relative error < 4e-7
 *                (other exponents by powf, not vectorised);
 *   tanh, ELU    through the sigmoid and e^x, by their series near 0.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kern_impl.h"

#if defined(__x86_64__) && defined(__GNUC__)
/* x86-64's baseline is SSE2, 4 floats wide: AVX2 and AVX-512 loops too. */
#define VM_AVX512 __attribute__((target("avx512f")))
#define VM_AVX2 __attribute__((target("avx2")))
#endif

/* e^x, Cephes' expf: x = n ln 2 + r, |r| <= ln 2 / 2, e^r by a degree-7
 * polynomial, 2^n built in the exponent bits.  Branch-free: the clamp
 * keeps n in [-126, 127] so 2^n is a normal float. */
static inline float vm_exp(float x0)
{
    float x = x0 < -87.33654f ? -87.33654f : x0;
    x = x > 88.3762626647949f ? 88.3762626647949f : x;
    /* round to nearest by the 1.5 * 2^23 trick (SSE2 has no rounding
     * instruction, and rintf is a call there) */
    float t = x * 1.44269504088896341f + 12582912.0f;
    float n = t - 12582912.0f;
    float r = x - n * 0.693359375f; /* ln 2 in two parts: exact n * hi */
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    /* 2^n from t's own bits: t = 1.5 * 2^23 + n, so its low bits are n
     * (unsigned arithmetic: no conversion of a float, defined for NaN) */
    uint32_t ti, e;
    memcpy(&ti, &t, sizeof ti);
    e = (ti - 0x4B400000u + 127u) << 23;
    float s;
    memcpy(&s, &e, sizeof s);
    /* beyond the clamp, infinity: so 1 / (1 + e^-x) is 0 there */
    return x0 > 88.3762626647949f ? (float)INFINITY : p * s;
}

static inline float vm_sigmoid(float x) { return 1.0f / (1.0f + vm_exp(-x)); }

/* GELU, erf form: x/2 (1 + erf(x / sqrt 2)); erf(z) = sign(z) (1 - (a1 t +
 * ... + a5 t^5) e^(-z^2)), t = 1 / (1 + p |z|) (A&S 7.1.26). */
static inline float vm_gelu_erf(float x)
{
    float z = x * 0.7071067811865476f;
    float az = z < 0.0f ? -z : z;
    float t = 1.0f / (1.0f + 0.3275911f * az);
    float q = 1.061405429f;
    q = q * t - 1.453152027f;
    q = q * t + 1.421413741f;
    q = q * t - 0.284496736f;
    q = q * t + 0.254829592f;
    float erf_abs = 1.0f - q * t * vm_exp(-az * az);
    float erf = z < 0.0f ? -erf_abs : erf_abs;
    return 0.5f * x * (1.0f + erf);
}

/* GELU, tanh form: x/2 (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x +
 * 0.044715 x^3): the same function without tanh's cancellation near 0. */
static inline float vm_gelu_tanh(float x)
{
    return x * vm_sigmoid(1.5957691216057308f * (x + 0.044715f * x * x * x));
}

/* Tanh: 2 sigmoid(2x) - 1, and near 0 (|x| < 0.03), where that loses its
 * relative precision, the series x - x^3/3 + 2x^5/15 (error < 1e-9 of the
 * value there). */
static inline float vm_tanh(float x)
{
    float x2 = x * x, near = x * (1.0f - x2 * (1.0f / 3 - x2 * (2.0f / 15)));
    float far = 2.0f * vm_sigmoid(2.0f * x) - 1.0f;
    float ax = x < 0.0f ? -x : x;
    return ax < 0.03f ? near : far;
}

/* ELU: x above 0, else alpha (e^x - 1), by the series x + x^2/2 + x^3/6
 * above -0.01 (e^x - 1 loses its relative precision there). */
static inline float vm_elu(float x, float a)
{
    float m = x < 0.0f ? x : 0.0f;
    float near = m * (1.0f + m * (0.5f + m * (1.0f / 6))), far = vm_exp(m) - 1.0f;
    float em1 = m > -0.01f ? near : far;
    return x > 0.0f ? x : x != x ? x : a * em1; /* a NaN stays a NaN */
}

/* LeakyReLU and PReLU: x, or alpha x below 0.  Here (built without
 * trapping math) the product is computed for every element and selected,
 * so the loop is vectorised; in kernels.c GCC put it under a branch on the
 * sign, mispredicted on real data and 7x slower than on the patterned data
 * a calibration fed it. */
static inline float vm_leaky(float x, float a) { return x < 0.0f ? a * x : x; }

/* Softplus: log(1 + e^x) as max(x, 0) + log1p(e^-|x|), no overflow;
 * log1p(u) for u in (0, 1] as 2 atanh(s), s = u / (2 + u) <= 1/3, by its
 * series to s^15 (the next term is below 3e-9 of the value): no branch and
 * no library call, so the loop is vectorised.  YOLOv4's Mish is x times
 * Tanh of it. */
static inline float vm_softplus(float x)
{
    float ax = x < 0.0f ? -x : x, u = vm_exp(-ax), s = u / (2.0f + u), s2 = s * s;
    float p = 1.0f + s2 * (1.0f / 3 + s2 * (1.0f / 5 + s2 * (1.0f / 7 + s2 * (1.0f / 9 +
              s2 * (1.0f / 11 + s2 * (1.0f / 13 + s2 * (1.0f / 15)))))));
    return (x > 0.0f ? x : 0.0f) + 2.0f * s * p;
}

#define VM_LOOP1(name, fn, attr)                                                                   \
    attr static void name(const float *x, float *y, size_t n, float a)                            \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) y[i] = fn(x[i], a);                                         \
    }

#define VM_LOOP(name, fn, attr)                                                                    \
    attr static void name(const float *x, float *y, size_t n)                                     \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) y[i] = fn(x[i]);                                            \
    }

VM_LOOP(exp_base, vm_exp, )
VM_LOOP(sigmoid_base, vm_sigmoid, )
VM_LOOP(gelu_base, vm_gelu_erf, )
VM_LOOP(gelu_tanh_base, vm_gelu_tanh, )
VM_LOOP(tanh_base, vm_tanh, )
VM_LOOP(softplus_base, vm_softplus, )
VM_LOOP1(elu_base, vm_elu, )
VM_LOOP1(leaky_base, vm_leaky, )
typedef void (*vm_fn)(const float *, float *, size_t);
typedef void (*vm_fn1)(const float *, float *, size_t, float);

static int forced; /* kern_vmath_path: 0 auto, 1 baseline, 2 AVX2, 3 AVX-512 */

int kern_vmath_path(int path)
{
#ifdef VM_AVX512
    int ok = path == 0 || path == 1 || (path == 2 && kern_avx2()) ||
             (path == 3 && kern_avx512());
#else
    int ok = path == 0 || path == 1;
#endif
    if (ok) __atomic_store_n(&forced, path, __ATOMIC_RELAXED);
    return ok;
}

#ifdef VM_AVX512
VM_LOOP(exp_512, vm_exp, VM_AVX512)
VM_LOOP(sigmoid_512, vm_sigmoid, VM_AVX512)
VM_LOOP(gelu_512, vm_gelu_erf, VM_AVX512)
VM_LOOP(gelu_tanh_512, vm_gelu_tanh, VM_AVX512)
VM_LOOP(exp_avx2, vm_exp, VM_AVX2)
VM_LOOP(sigmoid_avx2, vm_sigmoid, VM_AVX2)
VM_LOOP(gelu_avx2, vm_gelu_erf, VM_AVX2)
VM_LOOP(gelu_tanh_avx2, vm_gelu_tanh, VM_AVX2)
VM_LOOP(tanh_512, vm_tanh, VM_AVX512)
VM_LOOP(tanh_avx2, vm_tanh, VM_AVX2)
VM_LOOP(softplus_512, vm_softplus, VM_AVX512)
VM_LOOP(softplus_avx2, vm_softplus, VM_AVX2)
VM_LOOP1(elu_512, vm_elu, VM_AVX512)
VM_LOOP1(elu_avx2, vm_elu, VM_AVX2)
VM_LOOP1(leaky_512, vm_leaky, VM_AVX512)
VM_LOOP1(leaky_avx2, vm_leaky, VM_AVX2)

/* The loop kern_vmath_path chose, else the widest this CPU runs: AVX-512
 * where kern_avx512() allows it (DSE_AVX512=0 turns it off), else AVX2,
 * else the baseline; the same numbers in each (the invariant). */
static int vm_path(void)
{
    int p = __atomic_load_n(&forced, __ATOMIC_RELAXED);
    return p ? p : kern_avx512() ? 3 : kern_avx2() ? 2 : 1;
}

static void vm_run(vm_fn base, vm_fn avx2, vm_fn avx512, const float *x, float *y, size_t n)
{
    int p = vm_path();
    (p == 3 ? avx512 : p == 2 ? avx2 : base)(x, y, n);
}
#define VM_RUN(f, x, y, n) vm_run(f##_base, f##_avx2, f##_512, x, y, n)
static void vm_run1(vm_fn1 base, vm_fn1 avx2, vm_fn1 avx512, const float *x, float *y, size_t n, float a)
{
    int p = vm_path();
    (p == 3 ? avx512 : p == 2 ? avx2 : base)(x, y, n, a);
}
#define VM_RUN1(f, x, y, n, a) vm_run1(f##_base, f##_avx2, f##_512, x, y, n, a)
#else
#define VM_RUN(f, x, y, n) f##_base(x, y, n)
#define VM_RUN1(f, x, y, n, a) f##_base(x, y, n, a)
#endif

/* LRN's last step for beta = 3/4 (AlexNet's, CaffeNet's and GoogLeNet's
 * value): x b^(-3/4) = x / (sqrt(b) sqrt(sqrt(b))), square roots the
 * vectoriser takes where powf is a call. */
#define VM_LRN(name, attr)                                                                         \
    attr static void name(const float *x, float *o, size_t n, float k, float s)                   \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            float r = sqrtf(k + s * o[i]);                                                         \
            o[i] = x[i] / (r * sqrtf(r));                                                          \
        }                                                                                          \
    }
VM_LRN(lrn34_base, )
#ifdef VM_AVX512
VM_LRN(lrn34_avx2, VM_AVX2)
VM_LRN(lrn34_512, VM_AVX512)
#endif

void kern_vlrn(const float *x, float *o, size_t n, float k, float s, float beta)
{
    if (beta != 0.75f) {
        for (size_t i = 0; i < n; i++) o[i] = x[i] * powf(k + s * o[i], -beta);
        return;
    }
#ifdef VM_AVX512
    int p = vm_path();
    (p == 3 ? lrn34_512 : p == 2 ? lrn34_avx2 : lrn34_base)(x, o, n, k, s);
#else
    lrn34_base(x, o, n, k, s);
#endif
}

void kern_vexp(const float *x, float *y, size_t n) { VM_RUN(exp, x, y, n); }
void kern_vsigmoid(const float *x, float *y, size_t n) { VM_RUN(sigmoid, x, y, n); }
void kern_vgelu(const float *x, float *y, size_t n) { VM_RUN(gelu, x, y, n); }
void kern_vgelu_tanh(const float *x, float *y, size_t n) { VM_RUN(gelu_tanh, x, y, n); }
void kern_vtanh(const float *x, float *y, size_t n) { VM_RUN(tanh, x, y, n); }
void kern_vsoftplus(const float *x, float *y, size_t n) { VM_RUN(softplus, x, y, n); }
void kern_velu(const float *x, float *y, size_t n, float alpha) { VM_RUN1(elu, x, y, n, alpha); }
void kern_vleaky(const float *x, float *y, size_t n, float alpha) { VM_RUN1(leaky, x, y, n, alpha); }
