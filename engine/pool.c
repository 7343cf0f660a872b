/* pool.c -- the engine's thread pool (nsga.h): parallel evaluation for the
 * engine, campaigns and the test problems.
 * Invariant: which thread runs an item never matters, because fn(ctx, i)
 * writes only item i's outputs; the results do not depend on threads. */
#include "nsga.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- parallel evaluation helpers -------------------------------------------------------
 * Items are claimed in chunks from an atomic counter; which thread runs an
 * item never matters because fn(ctx, i) writes only item i's outputs. */

struct nsga_pool {
    int nthreads; /* workers including the caller */
    int nstarted;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    unsigned long job;
    int quit, busy;
    /* current job */
    nsga_item_fn fn;
    void *ctx;
    int n, chunk;
    atomic_int next;
    int err_i, err_rc;
};

static void run_items(nsga_pool *p)
{
    for (;;) {
        int b = atomic_fetch_add(&p->next, p->chunk);
        if (b >= p->n) return;
        int e = b + p->chunk < p->n ? b + p->chunk : p->n;
        for (int i = b; i < e; i++) {
            int rc = p->fn(p->ctx, i);
            if (rc) {
                pthread_mutex_lock(&p->mu);
                if (i < p->err_i) {
                    p->err_i = i;
                    p->err_rc = rc;
                }
                pthread_mutex_unlock(&p->mu);
            }
        }
    }
}

static void *worker(void *arg)
{
    nsga_pool *p = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->job == seen) pthread_cond_wait(&p->work, &p->mu);
        if (p->quit) break;
        seen = p->job;
        pthread_mutex_unlock(&p->mu);
        run_items(p);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

nsga_pool *nsga_pool_create(int nthreads)
{
    nsga_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->nthreads = nthreads < 1 ? 1 : nthreads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    if (p->nthreads > 1) {
        p->th = malloc((size_t)(p->nthreads - 1) * sizeof *p->th);
        if (!p->th) {
            nsga_pool_destroy(p);
            return NULL;
        }
        for (int t = 0; t < p->nthreads - 1; t++) {
            if (pthread_create(&p->th[t], NULL, worker, p)) {
                nsga_pool_destroy(p);
                return NULL;
            }
            p->nstarted++;
        }
    }
    return p;
}

int nsga_pool_run(nsga_pool *p, int n, nsga_item_fn fn, void *ctx)
{
    if (!p || !fn || n <= 0) return 0;
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->err_i = n;
    p->err_rc = 0;
    int parts = 4 * p->nthreads;
    p->chunk = n / parts > 0 ? n / parts : 1;
    atomic_store(&p->next, 0);
    if (p->nstarted > 0 && n > 1) {
        pthread_mutex_lock(&p->mu);
        p->busy = p->nstarted;
        p->job++;
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
        run_items(p);
        pthread_mutex_lock(&p->mu);
        while (p->busy > 0) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    } else {
        run_items(p);
    }
    return p->err_rc;
}

void nsga_pool_destroy(nsga_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int t = 0; t < p->nstarted; t++) pthread_join(p->th[t], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p->th);
    free(p);
}

int nsga_eval_parallel(int nthreads, int n, nsga_item_fn fn, void *ctx)
{
    if (!fn || n <= 0) return 0;
    nsga_pool *p = nsga_pool_create(nthreads > n ? n : nthreads);
    if (!p) { /* no threads: the same results in this thread */
        for (int i = 0; i < n; i++) {
            int rc = fn(ctx, i);
            if (rc) return rc;
        }
        return 0;
    }
    int rc = nsga_pool_run(p, n, fn, ctx);
    nsga_pool_destroy(p);
    return rc;
}
