/* fuzz_json_seeds.c -- writes fuzz_json's seed corpus: valid files of each
 * reader, each behind its selector byte (fuzz_json.c): the small zoo
 * networks, the preset platforms, mappings of toy6 (one device, and FC
 * split over two), the coefficients of the presets and the example file.
 * usage: fuzz_json_seeds SOURCE_DIR OUT_DIR */
#include "cost.h"
#include "mapping.h"
#include "net.h"
#include "platform.h"
#include "tfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int put(const char *dir, const char *name, int sel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fputc(sel, f) == EOF || fputs(text, f) == EOF || fclose(f)) {
        fprintf(stderr, "fuzz_json_seeds: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    char err[BASE_ERRLEN], path[1024], name[128];
    if (argc != 3) {
        fprintf(stderr, "usage: fuzz_json_seeds SOURCE_DIR OUT_DIR\n");
        return 2;
    }
    int rc = 0;
    static const char *nets[] = {"toy6", "branchy"};
    for (int i = 0; i < 2; i++) {
        net *n = net_zoo(nets[i], err);
        char *t = n ? net_to_json(n) : NULL;
        snprintf(name, sizeof name, "net-%s", nets[i]);
        rc |= !t || put(argv[2], name, 0, t);
        free(t);
        net_free(n);
    }
    static const char *plats[] = {"local-2", "local-4", "jetson-nx-8-cpu", "jetson-nx-8-cpugpu"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/examples/platforms/%s.json", argv[1], plats[i]);
        char *t = tfile_read(path, NULL);
        snprintf(name, sizeof name, "plat-%s", plats[i]);
        rc |= !t || put(argv[2], name, 1, t);
        free(t);
        platform *p = platform_load(path, err);
        cost_coeffs *c = p ? coeffs_default(p) : NULL;
        char *ct = c ? coeffs_to_json(c) : NULL;
        snprintf(name, sizeof name, "coeffs-%s", plats[i]);
        rc |= !ct || put(argv[2], name, 3, ct);
        free(ct);
        coeffs_free(c);
        platform_free(p);
    }
    snprintf(path, sizeof path, "%s/examples/coeffs/jetson-nx-thesis.json", argv[1]);
    char *t = tfile_read(path, NULL);
    rc |= !t || put(argv[2], "coeffs-thesis", 3, t);
    free(t);
    /* Mappings of toy6 on fuzz_json's two devices. */
    net *n = net_zoo("toy6", err);
    static const char plat[] =
        "{\"format\":\"dse-platform\",\"devices\":["
        "{\"name\":\"d0\",\"board\":\"a\",\"freq_mhz\":1000,\"cores\":2,\"memory_mb\":512,"
        "\"idle_w\":1,\"busy_w\":2},"
        "{\"name\":\"d1\",\"board\":\"b\",\"freq_mhz\":1000,\"cores\":2,\"memory_mb\":512,"
        "\"idle_w\":1,\"busy_w\":2}],"
        "\"links\":{\"same_board\":{\"latency_us\":1,\"bandwidth_mbs\":1000},"
        "\"network\":{\"latency_us\":100,\"bandwidth_mbs\":100}}}";
    platform *p = platform_from_json(plat, "seeds", err);
    mapping *m = n && p ? mapping_new(n->n, 2) : NULL;
    if (!m) {
        fprintf(stderr, "fuzz_json_seeds: %s\n", err);
        return 1;
    }
    mapping_set_single(m, n, 1);
    char *mt = mapping_to_json(m, n, p);
    rc |= !mt || put(argv[2], "map-single", 2, mt);
    free(mt);
    int k = 0;
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        m->first[i] = k;
        if (L->kind == NET_FC && L->out.c > 1) {
            m->slices[k++] = (map_slice){0, 0, L->out.c / 2};
            m->slices[k++] = (map_slice){1, L->out.c / 2, L->out.c - L->out.c / 2};
        } else {
            m->slices[k++] = (map_slice){0, 0, L->out.c};
        }
    }
    m->first[n->n] = k;
    mt = mapping_to_json(m, n, p);
    rc |= !mt || put(argv[2], "map-split", 2, mt);
    free(mt);
    mapping_free(m);
    platform_free(p);
    net_free(n);
    return rc ? 1 : 0;
}
