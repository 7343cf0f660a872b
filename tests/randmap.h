/* randmap.h -- random mappings with every kind of cut, for the tests of
 * bands (docs/spatial.md): each layer whole on one device, cut by channels
 * (splittable kinds), by rows or by columns (row-splittable layers) into
 * 2..nd parts of random sizes on distinct random devices. */
#ifndef DSE_TEST_RANDMAP_H
#define DSE_TEST_RANDMAP_H

#include "mapping.h"
#include "net.h"

/* Random mapping of n on nd devices: each layer whole, cut by channels
 * (splittable kinds), by rows or by columns (row-splittable layers), into
 * 2..nd random parts on distinct random devices. */
static inline void randmap_mixed(mapping *m, const net *n, int nd, unsigned *seed)
{
    int pos = 0;
#define RND() (*seed = *seed * 1103515245u + 12345u, (*seed >> 8))
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        m->first[i] = pos;
        m->cut[i] = 0;
        int how = RND() % 4, devs[64], k;
        for (int d = 0; d < nd; d++) devs[d] = d;
        for (int d = nd - 1; d > 0; d--) {
            int j = RND() % (d + 1), t = devs[d];
            devs[d] = devs[j], devs[j] = t;
        }
        int total = how == 1 && net_kind_splittable(L->kind) ? L->out.c
                  : how == 2 && net_layer_rowsplit(n, i)     ? L->out.h
                  : how == 3 && net_layer_colsplit(n, i)     ? L->out.w
                                                             : 0;
        if (total < 2) {
            m->slices[pos++] = (map_slice){devs[0], 0, L->out.c};
            continue;
        }
        m->cut[i] = how == 2 ? MAP_CUT_ROWS : how == 3 ? MAP_CUT_COLS : MAP_CUT_CHANNELS;
        k = 2 + RND() % (nd - 1);
        if (k > total) k = total;
        /* k - 1 distinct cut points in 1..total-1. */
        int cuts[65] = {0}, nc = 0; /* = {0}: GCC -O3 cannot see that only cuts[0..nc) is read */
        while (nc < k - 1) {
            int c = 1 + RND() % (total - 1), dup = 0;
            for (int j = 0; j < nc; j++) dup |= cuts[j] == c;
            if (!dup) cuts[nc++] = c;
        }
        for (int a = 1; a < nc; a++)
            for (int b = a; b > 0 && cuts[b - 1] > cuts[b]; b--) {
                int t = cuts[b];
                cuts[b] = cuts[b - 1], cuts[b - 1] = t;
            }
        cuts[nc] = total;
        for (int a = 0, prev = 0; a < k; a++) {
            m->slices[pos++] = (map_slice){devs[a], prev, cuts[a] - prev};
            prev = cuts[a];
        }
    }
    m->first[n->n] = pos;
#undef RND
}

#endif
