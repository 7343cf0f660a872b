/* campaign_internal.h -- what the files of campaign/ share, private to
 * it (the public API is campaign.h): the campaign's state and the helpers
 * that end a campaign.
 * Invariant: a camp owns everything it points to (campaign.h). */
#ifndef DSE_CAMPAIGN_INTERNAL_H
#define DSE_CAMPAIGN_INTERNAL_H

#include "campaign.h"
#include "chrom.h"
#include "cost.h"
#include "mapping.h"
#include "nsga.h"
#include "plan.h"
#include "seeds.h"

/* The name stored in a campaign's configuration ("halos") for the halo
 * rule of cost_pick_halos: a change of that rule that changes any choice
 * gets a new name, so stored campaigns are never resumed or exported under
 * a rule they were not evaluated with (docs/results-schema.md). */
#define CAMP_HALO_RULE "cost-1"

/* The name stored in a spatial campaign's configuration ("bands") for the
 * set of kinds that may be cut into bands (kinds.def's NET_KF_ROWS): a
 * change of that set gets a new name.  A configuration without it was
 * stored when only the kinds of CAMP_BANDS_1 could be (before 2026-11-29):
 * its genomes decode with those alone, as they were evaluated. */
#define CAMP_BAND_RULE "kinds-2"
#define CAMP_BANDS_1                                                                         \
    ((1ull << NET_CONV) | (1ull << NET_RELU) | (1ull << NET_LRN) | (1ull << NET_MAXPOOL) |      \
     (1ull << NET_AVGPOOL) | (1ull << NET_BN) | (1ull << NET_ADD) | (1ull << NET_CONCAT) |      \
     (1ull << NET_DROPOUT) | (1ull << NET_SIGMOID) | (1ull << NET_HSIGMOID) |                  \
     (1ull << NET_HSWISH) | (1ull << NET_MUL) | (1ull << NET_LEAKYRELU) | (1ull << NET_PRELU) | \
     (1ull << NET_TANH) | (1ull << NET_ELU) | (1ull << NET_CLIP) | (1ull << NET_SOFTPLUS))

typedef struct {
    mapping *map;
    plan *pl;
    cost_model *cost; /* the model keeps scratch: one per thread */
    char err[BASE_ERRLEN];
} workspace;

struct camp {
    camp_options opt; /* strings below are owned copies */
    char *s_network, *s_platform, *s_coeffs, *s_chromosome, *s_split_kinds, *s_kind;
    char *config;
    net *net;
    platform *plat;
    cost_coeffs *coeffs;
    int coeffs_given;        /* 1: from a file (stored in the configuration), 0: built-in defaults */
    char warn[BASE_ERRLEN]; /* the cost model's fallback warning, or "" */
    int halos; /* 1: the cost model chooses each row cut's halos (recompute or fetch,
                * cost_pick_halos; configuration "halos": CAMP_HALO_RULE); 0: every
                * halo is fetched (configurations stored before the choice existed) */
    int bands1; /* spatial: 1 for configurations without "bands" (CAMP_BANDS_1's kinds
                   alone are cut into bands), 0: every NET_KF_ROWS kind (CAMP_BAND_RULE) */
    int cuts;  /* spatial: what its cut genes choose (chrom_cut_mode; configuration
                * "cuts", its name): --cuts, default channels,bands, for new
                * campaigns; channels,rows for those stored before columns */
    int seeds_once; /* 1: each distinct seed genome enters the first population once
                     * (camp_initial_genomes; configuration "seeds": "distinct"), for
                     * new campaigns; 0: with copies, as campaigns stored before did */
    chrom *ch;
    int nvar;
    int *lo, *hi;
    int *fastest;
    camp_seeds seeds; /* --init genomes (seeds.c) */
    double ref[COST_NOBJ];
    int threads;
    nsga_pool *pool;
    workspace *ws;
    /* batch handed to the workers */
    int job_n;
    const int *job_g;
    double *job_obj, *job_cv;
};

/* Store the front of n candidate points (genomes, objectives, violations;
 * ranks, or NULL to rank them here; where each came from, src_gen /
 * src_idx, or NULL for generation 0 / its position) and set the campaign
 * finished: 0 or -1 with err. */
int camp_finish_front(camp *c, res_db *db, long long id, int n, const int *genomes,
                      const double *obj, const double *cv, const int *rank, const long *src_gen,
                      const int *src_idx, char *err);
/* A decoded mapping's Plan and evaluation as the campaign makes them: the
 * halo choices first when c->halos (m's recompute flags are set or
 * cleared), then plan_build into p and cost_eval into *r (NULL: not
 * evaluated) with cost model cm.  0, or -1 with err. */
int camp_plan(const camp *c, cost_model *cm, mapping *m, plan *p, cost_result *r, char *err);
/* Set the campaign failed with msg (best effort: it is already failing). */
void camp_mark_failed(res_db *db, long long id, const char *msg);

#endif
