/* parallel.c -- the kernels' threads: how many a rank uses
 * (kern_set_threads) and the one way a kernel splits its work across them
 * (kern_parallel_for).  A leaf of the kernels module: the kernels call it,
 * it calls nothing of theirs.
 * Invariant: a range is split into contiguous chunks whose bounds depend
 * only on n and the thread count, and each element's arithmetic is the
 * same whatever the chunking, so results do not depend on threads. */
#include <cblas.h>
#include <pthread.h>
#include <stdint.h>

#include "kern_impl.h"
#include "kernels.h"

static int nthreads = 1;

void kern_set_threads(int t)
{
    nthreads = t < 1 ? 1 : t;
    openblas_set_num_threads(nthreads);
}

int kern_get_threads(void) { return nthreads; }

typedef struct {
    kern_range_fn fn;
    void *ctx;
    int i0, i1;
} range_task;

static void *range_main(void *p)
{
    range_task *t = p;
    t->fn(t->ctx, t->i0, t->i1);
    return NULL;
}

/* Below this many elementary operations a thread costs more than it saves. */
#define PAR_MIN_WORK 2e5
#define PAR_MAX_THREADS 64

void kern_parallel_for(int n, double work, kern_range_fn fn, void *ctx)
{
    int t = nthreads < n ? nthreads : n;
    if (t > PAR_MAX_THREADS) t = PAR_MAX_THREADS;
    if (t <= 1 || work < PAR_MIN_WORK) {
        if (n > 0) fn(ctx, 0, n);
        return;
    }
    range_task task[PAR_MAX_THREADS];
    pthread_t tid[PAR_MAX_THREADS];
    int started[PAR_MAX_THREADS];
    for (int k = 0; k < t; k++) {
        task[k] = (range_task){fn, ctx, (int)((int64_t)n * k / t), (int)((int64_t)n * (k + 1) / t)};
        /* The caller's thread runs chunk 0; a failed create runs inline. */
        started[k] = k > 0 && pthread_create(&tid[k], NULL, range_main, &task[k]) == 0;
        if (k > 0 && !started[k]) range_main(&task[k]);
    }
    range_main(&task[0]);
    for (int k = 1; k < t; k++)
        if (started[k]) pthread_join(tid[k], NULL);
}
