/* group_chans.h -- the plan tests' own statement of which input channels a
 * channel slice reads, written from the layer definitions (not from
 * model/rows.c's net_chans_in, which the Plan uses). */
#ifndef DSE_TEST_GROUP_CHANS_H
#define DSE_TEST_GROUP_CHANS_H

#include "net.h"

/* The input channels [*a0, *a1) a slice [c0, c0+nc) of consumer c reads
 * of its input j, from the layer's definition: a grouped (or depthwise)
 * convolution's output channel o reads the in_c/groups channels of group
 * o / (out_c/groups); a GroupNorm's output channel o the C/groups
 * channels of its group o / (C/groups); anything else here reads all of
 * its input. */
static inline void group_chans(const net *n, int c, int j, int c0, int nc, int C, int *a0, int *a1)
{
    const net_layer *L = &n->layers[c];
    *a0 = 0, *a1 = C;
    if (L->kind == NET_GROUPNORM) { /* the statistics of each group it touches */
        int g = C / L->a.groups;
        *a0 = c0 / g * g;
        *a1 = ((c0 + nc - 1) / g + 1) * g;
        return;
    }
    if (L->kind != NET_CONV || j != 0 || L->a.groups <= 1) return;
    int cin_g = C / L->a.groups, cout_g = L->out.c / L->a.groups;
    *a0 = c0 / cout_g * cin_g;
    *a1 = ((c0 + nc - 1) / cout_g + 1) * cin_g;
}

#endif
