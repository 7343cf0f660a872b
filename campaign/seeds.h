/* seeds.h -- private to campaign/: the solvers' genomes of dse run --init
 * (seeds.c), computed once and kept in the campaign's configuration. */
#ifndef DSE_CAMP_SEEDS_H
#define DSE_CAMP_SEEDS_H

#include "campaign.h"
#include "chrom.h"
#include "cost.h"

#include <cJSON.h>

/* Run the solvers of list ("single,elim,...") and encode each mapping
 * with ch.  0, or -1 with err (unknown or inapplicable method). */
int seeds_solve(camp_seeds *s, const char *list, const net *n, const platform *pl, cost_model *cost,
                const chrom *ch, int split_mask, char *err);
/* The configuration's "init" array, and back (a NULL array: no seeds);
 * genomes outside [lo, hi] are refused. */
cJSON *seeds_to_json(const camp_seeds *s);
int seeds_from_json(camp_seeds *s, const cJSON *a, int nvar, const int *lo, const int *hi, char *err);
void seeds_free(camp_seeds *s);

#endif
