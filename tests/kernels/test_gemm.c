/* test_gemm.c -- the convolutions' matrix product (kernels/gemm.c) against
 * a double-precision triple loop, on shapes that hit every edge of its
 * blocking (rows and columns around the 12 x 32 micro-tile, depths around
 * the 512 block, strided leading dimensions), in both modes (our AVX-512
 * product where the CPU has it, and cblas_sgemm), storing and
 * accumulating; then the invariants the runtime relies on: a band of rows
 * or columns equals the whole product's bit for bit, and so does a run on
 * 2 threads.  Entries of C outside the M x N window must stay untouched.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kern_impl.h"
#include "kernels.h"

static uint64_t rng = 88172645463325252ull;

static float frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

#define GUARD 1234.5f

/* One product: C (M x N inside an ldc-wide array with a guard column and
 * row) against the reference; returns the worst error relative to the sum
 * of |terms| of its element. */
static double check_one(int M, int N, int K, int acc, int pad)
{
    int lda = K + pad, ldb = N + pad, ldc = N + pad + 1;
    float *A = malloc(((size_t)M * lda + 1) * sizeof *A);
    float *B = malloc(((size_t)K * ldb + 1) * sizeof *B);
    float *C = malloc(((size_t)(M + 1) * ldc) * sizeof *C);
    for (size_t i = 0; i < (size_t)M * lda; i++) A[i] = frand();
    for (size_t i = 0; i < (size_t)K * ldb; i++) B[i] = frand();
    for (size_t i = 0; i < (size_t)(M + 1) * ldc; i++) C[i] = GUARD;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] = acc ? frand() : GUARD;
    float *C0 = malloc(((size_t)(M + 1) * ldc) * sizeof *C0);
    memcpy(C0, C, ((size_t)(M + 1) * ldc) * sizeof *C);
    kern_sgemm(M, N, K, A, lda, B, ldb, acc, C, ldc);
    double worst = 0;
    for (int i = 0; i < M + 1; i++)
        for (int j = 0; j < ldc; j++) {
            size_t at = (size_t)i * ldc + j;
            if (i == M || j >= N) {
                CHECK(C[at] == GUARD, "%dx%dx%d: C[%d][%d] outside the product was written", M,
                      N, K, i, j);
                continue;
            }
            double s = acc ? C0[at] : 0.0, mag = fabs(s);
            for (int k = 0; k < K; k++) {
                double t = (double)A[(size_t)i * lda + k] * B[(size_t)k * ldb + j];
                s += t;
                mag += fabs(t);
            }
            double e = fabs(C[at] - s) / (mag > 0 ? mag : 1.0);
            if (e > worst) worst = e;
        }
    free(A), free(B), free(C), free(C0);
    return worst;
}

/* Rows [r0, r1) and columns [j0, j1) computed alone equal the whole
 * product's, bit for bit; so do 2 threads. */
static void check_bands(int M, int N, int K)
{
    float *A = malloc((size_t)M * K * sizeof *A), *B = malloc((size_t)K * N * sizeof *B);
    float *C = malloc((size_t)M * N * sizeof *C), *D = calloc((size_t)M * N, sizeof *D);
    for (size_t i = 0; i < (size_t)M * K; i++) A[i] = frand();
    for (size_t i = 0; i < (size_t)K * N; i++) B[i] = frand();
    kern_sgemm(M, N, K, A, K, B, N, 0, C, N);
    int r0 = M / 3, r1 = M - M / 5, j0 = N / 4 + 1, j1 = N - 3;
    kern_sgemm(r1 - r0, N, K, A + (size_t)r0 * K, K, B, N, 0, D + (size_t)r0 * N, N);
    int same = 1;
    for (int i = r0; i < r1; i++) same &= !memcmp(C + (size_t)i * N, D + (size_t)i * N, N * sizeof *C);
    CHECK(same, "%dx%dx%d: rows %d..%d alone differ from the whole product", M, N, K, r0, r1);
    memset(D, 0, (size_t)M * N * sizeof *D);
    kern_sgemm(M, j1 - j0, K, A, K, B + j0, N, 0, D + j0, N);
    same = 1;
    for (int i = 0; i < M; i++)
        same &= !memcmp(C + (size_t)i * N + j0, D + (size_t)i * N + j0, (size_t)(j1 - j0) * sizeof *C);
    CHECK(same, "%dx%dx%d: columns %d..%d alone differ from the whole product", M, N, K, j0, j1);
    kern_set_threads(2);
    kern_sgemm(M, N, K, A, K, B, N, 0, D, N);
    kern_set_threads(1);
    CHECK(!memcmp(C, D, (size_t)M * N * sizeof *C), "%dx%dx%d: 2 threads differ from 1", M, N, K);
    free(A), free(B), free(C), free(D);
}

int main(void)
{
    static const int dims[][3] = {
        {1, 1, 1},      {1, 33, 7},    {11, 31, 5},    {12, 32, 512},  {13, 33, 513},
        {24, 64, 1},    {25, 17, 1023}, {121, 40, 64}, {120, 1024, 9}, {7, 1025, 30},
        {64, 49, 4608 / 8}, {130, 1100, 600}, {37, 200, 0},
    };
    kern_set_threads(1);
    int own = kern_gemm_own();
    /* DSE_AVX512=0: the CPU counts as one without AVX-512 (the boards' path) */
    const char *no512 = getenv("DSE_AVX512");
    int off = no512 && !strcmp(no512, "0");
#if defined(__x86_64__) && defined(__GNUC__)
    /* With AVX-512 and a BLAS bound to AVX2 kernels (OPENBLAS_CORETYPE=
     * Haswell, as CI sets it) the default must be our product. */
    const char *core = getenv("OPENBLAS_CORETYPE");
    if (core && !strcmp(core, "Haswell"))
        CHECK(own == (!off && __builtin_cpu_supports("avx512f") != 0), "kern_gemm_own() = %d", own);
#else
    off = 1; /* no AVX-512 code in this build */
#endif
    printf("default product: %s\n", own ? "own AVX-512" : "BLAS");
    for (int mode = 2; mode >= 0; mode -= 2) {
        kern_set_gemm(mode);
        if (off) CHECK(!kern_gemm_own(), "mode %d runs the AVX-512 product", mode);
        double worst = 0;
        for (size_t s = 0; s < sizeof dims / sizeof *dims; s++)
            for (int acc = 0; acc <= 1; acc++)
                for (int pad = 0; pad <= 3; pad += 3) {
                    double e = check_one(dims[s][0], dims[s][1], dims[s][2], acc, pad);
                    CHECK(e <= 1e-6, "mode %d: %dx%dx%d acc %d pad %d: error %.3g of the sum of |terms|",
                          mode, dims[s][0], dims[s][1], dims[s][2], acc, pad, e);
                    if (e > worst) worst = e;
                }
        printf("mode %d (%s): worst error %.3g of the sum of |terms| over %zu shapes\n", mode,
               kern_gemm_own() ? "own AVX-512" : "BLAS", worst, sizeof dims / sizeof *dims);
        /* the BLAS promises no such thing (kernels.h asks equality to its
         * rounding only) */
        if (kern_gemm_own()) {
            check_bands(100, 300, 700);
            check_bands(40, 2100, 65);
            check_bands(250, 20, 1100);
        }
    }
    kern_set_gemm(1);
    return check_done("test_gemm");
}
