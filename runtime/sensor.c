/* sensor.c -- energy sensors: a RAPL-style counter or a power file
 * integrated by a sampling thread (runtime.h).
 * Invariant: a sensor that cannot be read gives no number (NULL / NAN),
 * never a made-up one. */
#include "runtime.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct rt_sensor {
    const char *path;
    int counter;
    double start_uj;
    double t_start, t_last, p_last; /* power files: integrated up to t_last */
    volatile int run;
    double joules;
    pthread_t th;
};

static int read_num(const char *path, double *v)
{
    /* A regular (or sysfs) file of a few bytes: a FIFO or a device named
     * by a platform file must not block or flood a rank. */
    char e[BASE_ERRLEN];
    FILE *f = base_open_input(path, 1 << 16, NULL, e);
    if (!f) return -1;
    int ok = fscanf(f, "%lf", v) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

/* Trapezoids between samples; the last value holds until the next one. */
static void *sample_power(void *arg)
{
    rt_sensor *s = arg;
    while (s->run) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
        double p, t = base_now();
        if (read_num(s->path, &p) == 0) {
            s->joules += 0.5 * (p + s->p_last) * 1e-3 * (t - s->t_last);
            s->p_last = p;
            s->t_last = t;
        }
    }
    return NULL;
}

rt_sensor *rt_sensor_start(const char *path)
{
    double v;
    if (!path || read_num(path, &v)) return NULL;
    rt_sensor *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->path = path;
    s->counter = strstr(path, "energy_uj") != NULL;
    s->t_start = s->t_last = base_now();
    if (s->counter) {
        s->start_uj = v;
        return s;
    }
    s->p_last = v;
    s->run = 1;
    if (pthread_create(&s->th, NULL, sample_power, s)) {
        free(s);
        return NULL;
    }
    return s;
}

double rt_sensor_stop(rt_sensor *s, double *seconds)
{
    double j, t;
    if (s->counter) {
        double v = s->start_uj;
        read_num(s->path, &v);
        t = base_now();
        j = v >= s->start_uj ? (v - s->start_uj) * 1e-6 : NAN; /* wrapped: unknown */
    } else {
        s->run = 0;
        pthread_join(s->th, NULL);
        t = base_now();
        j = s->joules + s->p_last * 1e-3 * (t - s->t_last);
    }
    if (seconds) *seconds = t - s->t_start;
    free(s);
    return j;
}
