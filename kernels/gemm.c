/* gemm.c -- the runtime's single-precision matrix product, C (+)= A B, for
 * the convolutions (conv.c, wino.c).
 *
 * On x86-64 CPUs with AVX-512 it is our own blocked product (Goto's
 * scheme: B packed in KC x NC blocks, A in MC x KC blocks, a 12 x 32
 * register-tile micro-kernel) unless OpenBLAS itself runs AVX-512 kernels;
 * elsewhere, after kern_set_gemm(0), or with DSE_AVX512=0 in the
 * environment (the CPU then counts as one without AVX-512: the ARM boards'
 * path, on this machine), it is the BLAS's cblas_sgemm.  The AVX-512 code
 * is compiled on x86-64 only, each function for that target alone; other
 * targets (arm64) compile the #else branch at the end.  Why
 * our own: OpenBLAS picks its kernels once per process from
 * OPENBLAS_CORETYPE or the CPU, and a setting of Haswell (this project's CI
 * machines export one) leaves the AVX-512 units idle; the conv layers of
 * vgg16 and resnet50 then run 1.3-1.9x slower than this product
 * (bench/README.md, "Kernels").  The boards we target (Jetson, Raspberry
 * Pi) have no AVX-512 and keep the BLAS.
 *
 * Invariant: every element of C is computed the same way whatever M, N,
 * the caller's slice of rows or the number of threads: a sum over k in
 * blocks of KC in increasing order, each block one fused multiply-add
 * chain, then added to C.  So a slice of output channels equals the same
 * rows of the whole layer bit for bit (kernels.h's slice invariant).
 *
 * Packing space: one buffer per calling thread (a pthread key, freed when
 * that thread exits), holding one slot per kernel thread; a process that
 * never runs a convolution never allocates it.  When it cannot be
 * allocated the product falls back to cblas_sgemm (which has its own).
 */
#include <cblas.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kern_impl.h"
#include "kernels.h"

static int gemm_mode = 1;

void kern_set_gemm(int mode) { gemm_mode = mode < 0 || mode > 2 ? 1 : mode; }

static void blas_gemm(int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                      int acc, float *C, int ldc)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, lda, B, ldb,
                acc ? 1.0f : 0.0f, C, ldc);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f")))
#define MR 12   /* rows of A (output channels) per micro-tile */
#define NR 32   /* columns of B (pixels) per micro-tile: two vectors */
#define KC 512  /* depth of a block; chosen by measurement (bench/README.md) */
#define MC 120  /* rows of an A block: 10 micro-panels */
#define NC 1024 /* columns of a B block */
#define SLOT_FLOATS ((size_t)MC * KC + (size_t)KC * NC + 16)

/* OpenBLAS's name for the kernels it runs ("Haswell", "Cooperlake", ...). */
char *openblas_get_corename(void);

/* Does the BLAS already run AVX-512 kernels?  Then it is the faster of the
 * two (bench/README.md: vgg16 0.55 against 0.66 of PyTorch's time). */
static int blas_has_avx512(void)
{
    static const char *const cores[] = {"skylakex", "cooperlake", "sapphirerapids", "zen4",
                                        "zen5"};
    const char *name = openblas_get_corename();
    char low[32] = "";
    for (int i = 0; name && name[i] && i < 31; i++)
        low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
    for (size_t k = 0; k < sizeof cores / sizeof *cores; k++)
        if (!strcmp(low, cores[k])) return 1;
    return 0;
}

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int cpu_avx512, cpu_avx2, blas_avx512;

static void probe(void)
{
    const char *env = getenv("DSE_AVX512");
    cpu_avx512 = __builtin_cpu_supports("avx512f") != 0 && !(env && !strcmp(env, "0"));
    cpu_avx2 = __builtin_cpu_supports("avx2") != 0;
    blas_avx512 = blas_has_avx512();
}

int kern_avx512(void)
{
    pthread_once(&probe_once, probe);
    return cpu_avx512;
}

int kern_avx2(void)
{
    pthread_once(&probe_once, probe);
    return cpu_avx2;
}

int kern_gemm_own(void)
{
    if (gemm_mode == 0) return 0;
    pthread_once(&probe_once, probe);
    return cpu_avx512 && (gemm_mode == 2 || !blas_avx512);
}

/* The first n lanes of a 16-float vector (none for n <= 0, all for
 * n >= 16): the masks of a panel's last, partial columns. */
static inline __mmask16 lanes(int n)
{
    return n <= 0 ? 0 : n >= 16 ? 0xffff : (__mmask16)((1u << n) - 1);
}

/* ---- packing ---- */

/* Rows [0, mc) x depth [0, kc) of A into micro-panels of MR rows, each
 * stored k-major (MR floats per k); missing rows of the last panel are 0. */
static void pack_a(int mc, int kc, const float *A, int lda, float *Ap)
{
    for (int i0 = 0; i0 < mc; i0 += MR, Ap += (size_t)MR * kc) {
        int mr = mc - i0 < MR ? mc - i0 : MR;
        const float *a = A + (size_t)i0 * lda;
        if (mr == MR) {
            /* k outer: twelve read streams, one contiguous write stream */
            for (int k = 0; k < kc; k++)
#pragma GCC unroll 12
                for (int i = 0; i < MR; i++) Ap[(size_t)k * MR + i] = a[(size_t)i * lda + k];
            continue;
        }
        for (int k = 0; k < kc; k++)
            for (int i = 0; i < MR; i++)
                Ap[(size_t)k * MR + i] = i < mr ? a[(size_t)i * lda + k] : 0.0f;
    }
}

/* Depth [0, kc) x columns [0, nc) of B into micro-panels of NR columns,
 * k-major (NR floats per k); missing columns of the last panel are 0. */
AVX512 static void pack_b(int kc, int nc, const float *B, int ldb, float *Bp)
{
    for (int j0 = 0; j0 < nc; j0 += NR) {
        int nr = nc - j0 < NR ? nc - j0 : NR;
        __mmask16 m0 = lanes(nr), m1 = lanes(nr - 16);
        for (int k = 0; k < kc; k++, Bp += NR) {
            const float *s = B + (size_t)k * ldb + j0;
            _mm512_store_ps(Bp, _mm512_maskz_loadu_ps(m0, s));
            _mm512_store_ps(Bp + 16, _mm512_maskz_loadu_ps(m1, s + 16));
        }
    }
}

/* ---- micro-kernel ---- */

/* The mr x nr corner of the MR x NR tile a (MR x kc panel) times b (kc x NR
 * panel), stored into c, or added to it when acc.  mr is a constant in
 * each instance below, so the accumulators stay in registers. */
AVX512 static inline __attribute__((always_inline)) void
tile(int mr, int kc, const float *restrict a, const float *restrict b, float *c, int ldc,
     int acc, int nr)
{
    __m512 r0[MR], r1[MR];
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) r0[i] = r1[i] = _mm512_setzero_ps();
    for (int k = 0; k < kc; k++, a += MR, b += NR) {
        __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
        _mm_prefetch((const char *)(b + 8 * NR), _MM_HINT_T0);
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            __m512 av = _mm512_set1_ps(a[i]);
            r0[i] = _mm512_fmadd_ps(av, b0, r0[i]);
            r1[i] = _mm512_fmadd_ps(av, b1, r1[i]);
        }
    }
    if (nr == NR) {
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++, c += ldc) {
            if (acc) {
                r0[i] = _mm512_add_ps(r0[i], _mm512_loadu_ps(c));
                r1[i] = _mm512_add_ps(r1[i], _mm512_loadu_ps(c + 16));
            }
            _mm512_storeu_ps(c, r0[i]);
            _mm512_storeu_ps(c + 16, r1[i]);
        }
        return;
    }
    __mmask16 m0 = lanes(nr), m1 = lanes(nr - 16);
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++, c += ldc) {
        if (acc) {
            r0[i] = _mm512_add_ps(r0[i], _mm512_maskz_loadu_ps(m0, c));
            r1[i] = _mm512_add_ps(r1[i], _mm512_maskz_loadu_ps(m1, c + 16));
        }
        _mm512_mask_storeu_ps(c, m0, r0[i]);
        _mm512_mask_storeu_ps(c + 16, m1, r1[i]);
    }
}

typedef void (*tile_fn)(int kc, const float *a, const float *b, float *c, int ldc, int acc,
                        int nr);
#define TILE(R)                                                                             \
    AVX512 static void tile##R(int kc, const float *a, const float *b, float *c, int ldc,   \
                               int acc, int nr)                                             \
    {                                                                                       \
        tile(R, kc, a, b, c, ldc, acc, nr);                                                 \
    }
TILE(1) TILE(2) TILE(3) TILE(4) TILE(5) TILE(6) TILE(7) TILE(8) TILE(9) TILE(10) TILE(11)
TILE(12)
static const tile_fn tiles[MR + 1] = {NULL,   tile1, tile2, tile3,  tile4,  tile5, tile6,
                                      tile7,  tile8, tile9, tile10, tile11, tile12};

/* ---- blocked product on one thread ---- */

static void gemm_one(int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                     int acc, float *C, int ldc, float *slot)
{
    /* 64-byte aligned: pack_b stores and the kernel loads aligned vectors */
    float *Bp = (float *)(((uintptr_t)slot + 63) & ~(uintptr_t)63);
    float *Ap = Bp + (size_t)KC * NC;
    if (K == 0) {
        if (!acc)
            for (int i = 0; i < M; i++) memset(C + (size_t)i * ldc, 0, (size_t)N * sizeof *C);
        return;
    }
    for (int jc = 0; jc < N; jc += NC) {
        int nc = N - jc < NC ? N - jc : NC;
        for (int pc = 0; pc < K; pc += KC) {
            int kc = K - pc < KC ? K - pc : KC, add = acc || pc > 0;
            pack_b(kc, nc, B + (size_t)pc * ldb + jc, ldb, Bp);
            for (int ic = 0; ic < M; ic += MC) {
                int mc = M - ic < MC ? M - ic : MC;
                pack_a(mc, kc, A + (size_t)ic * lda + pc, lda, Ap);
                for (int jr = 0; jr < nc; jr += NR) {
                    int nr = nc - jr < NR ? nc - jr : NR;
                    for (int ir = 0; ir < mc; ir += MR)
                        tiles[mc - ir < MR ? mc - ir : MR](
                            kc, Ap + (size_t)ir * kc, Bp + (size_t)jr * kc,
                            C + (size_t)(ic + ir) * ldc + jc + jr, ldc, add, nr);
                }
            }
        }
    }
}

/* ---- threads and packing space ---- */

typedef struct {
    float *p;
    size_t cap; /* floats */
} pack_buf;

static pthread_key_t buf_key;
static pthread_once_t buf_once = PTHREAD_ONCE_INIT;
static int buf_key_ok;

static void buf_free(void *p)
{
    pack_buf *b = p;
    free(b->p);
    free(b);
}

static void buf_init(void) { buf_key_ok = pthread_key_create(&buf_key, buf_free) == 0; }

/* The calling thread's packing space of at least n floats, or NULL. */
static float *pack_space(size_t n)
{
    pthread_once(&buf_once, buf_init);
    if (!buf_key_ok) return NULL;
    pack_buf *b = pthread_getspecific(buf_key);
    if (!b) {
        if (!(b = calloc(1, sizeof *b))) return NULL;
        if (pthread_setspecific(buf_key, b)) {
            free(b);
            return NULL;
        }
    }
    if (b->cap < n) {
        float *p = malloc(n * sizeof *p);
        if (!p) return NULL;
        free(b->p);
        b->p = p;
        b->cap = n;
    }
    return b->p;
}

typedef struct {
    int M, N, K, lda, ldb, ldc, acc, parts, by_cols;
    const float *A, *B;
    float *C, *space;
} gemm_job;

/* Parts [p0, p1): part p takes a contiguous run of whole micro-tile
 * columns (or rows), and packing slot p. */
static void gemm_parts(void *ctx, int p0, int p1)
{
    const gemm_job *j = ctx;
    int unit = j->by_cols ? NR : MR, len = j->by_cols ? j->N : j->M;
    int tiles_n = (len + unit - 1) / unit;
    for (int p = p0; p < p1; p++) {
        int lo = (int)((int64_t)tiles_n * p / j->parts) * unit;
        int hi = (int)((int64_t)tiles_n * (p + 1) / j->parts) * unit;
        if (hi > len) hi = len;
        if (lo >= hi) continue;
        float *slot = j->space + (size_t)p * SLOT_FLOATS;
        if (j->by_cols)
            gemm_one(j->M, hi - lo, j->K, j->A, j->lda, j->B + lo, j->ldb, j->acc, j->C + lo,
                     j->ldc, slot);
        else
            gemm_one(hi - lo, j->N, j->K, j->A + (size_t)lo * j->lda, j->lda, j->B, j->ldb,
                     j->acc, j->C + (size_t)lo * j->ldc, j->ldc, slot);
    }
}

void kern_sgemm(int M, int N, int K, const float *A, int lda, const float *B, int ldb, int acc,
                float *C, int ldc)
{
    if (M <= 0 || N <= 0) return;
    if (!kern_gemm_own()) {
        blas_gemm(M, N, K, A, lda, B, ldb, acc, C, ldc);
        return;
    }
    int parts = kern_get_threads(), by_cols = N >= parts * NR;
    int max_parts = by_cols ? (N + NR - 1) / NR : (M + MR - 1) / MR;
    if (parts > max_parts) parts = max_parts;
    if (parts < 1) parts = 1;
    float *space = pack_space((size_t)parts * SLOT_FLOATS);
    if (!space) {
        blas_gemm(M, N, K, A, lda, B, ldb, acc, C, ldc);
        return;
    }
    gemm_job j = {M, N, K, lda, ldb, ldc, acc, parts, by_cols, A, B, C, space};
    kern_parallel_for(parts, 2.0 * M * N * K, gemm_parts, &j);
}

#else /* no AVX-512 code on this target: the BLAS */

int kern_avx512(void) { return 0; }
int kern_avx2(void) { return 0; }
int kern_gemm_own(void) { return 0; }

void kern_sgemm(int M, int N, int K, const float *A, int lda, const float *B, int ldb, int acc,
                float *C, int ldc)
{
    if (M > 0 && N > 0) blas_gemm(M, N, K, A, lda, B, ldb, acc, C, ldc);
}

#endif
