/* objectives.c -- the objectives table (model/objectives.def) made into
 * data and functions (cost.h): their names, units and labels, and the
 * objective vector of a cost_result.  Its own file so that a build may
 * swap the table (-DDSE_OBJECTIVES_DEF=...; tests/objectives does).
 * Invariant: the order of every objective vector is the table's. */
#include "cost.h"

const cost_objective cost_objectives[COST_NOBJ] = {
#define OBJ(ID, name, key, unit, label, dir, value, device_value) {#name, key, unit, label},
#include DSE_OBJECTIVES_DEF
#undef OBJ
};

/* The engine minimises; its hypervolume takes the box [0, ref] of
 * non-negative costs.  A quantity to maximise enters the table as a cost
 * (its inverse, or a bound minus it), so every row says dir +1. */
#define OBJ(ID, name, key, unit, label, dir, value, device_value) \
    _Static_assert((dir) == +1, "objective " #name ": dir must be +1 (see the comment above)");
#include DSE_OBJECTIVES_DEF
#undef OBJ

void cost_objectives_of(const cost_result *r, double obj[COST_NOBJ])
{
    int k = 0;
#define OBJ(ID, name, key, unit, label, dir, value, device_value) obj[k++] = (value);
#include DSE_OBJECTIVES_DEF
#undef OBJ
    (void)k;
}

void cost_objectives_dev(const cost_device *d, double obj[COST_NOBJ])
{
    int k = 0;
#define OBJ(ID, name, key, unit, label, dir, value, device_value) obj[k++] = (device_value);
#include DSE_OBJECTIVES_DEF
#undef OBJ
    (void)k;
}
