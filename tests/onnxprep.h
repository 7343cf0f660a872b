/* onnxprep.h -- making a libonnx-testdata model deployable, shared by the
 * importer's and the kernels' conformance tests: node tests feed weights
 * as extra graph inputs, so graph inputs 1.. are bound to their
 * test_data_set_0/input_K.pb values as initializers (what a deployed model
 * does with weights), and the caller may re-declare the batch.  The model
 * file itself is never modified. */
#ifndef DSE_TEST_ONNXPREP_H
#define DSE_TEST_ONNXPREP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "tfile.h"

static inline int onnxprep_is_initializer(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (!strcmp(g->initializer[i]->name, name)) return 1;
    return 0;
}

/* The fixed first dimension of a tensor value with at least min_dims
 * dimensions, or NULL. */
static inline Onnx__TensorShapeProto__Dimension *onnxprep_dim0(Onnx__ValueInfoProto *v, size_t min_dims)
{
    if (!v || !v->type || v->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return NULL;
    Onnx__TensorShapeProto *s = v->type->tensor_type->shape;
    if (!s || s->n_dim < min_dims || s->n_dim < 1) return NULL;
    Onnx__TensorShapeProto__Dimension *d = s->dim[0];
    return d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? d : NULL;
}

/* dir's model.onnx serialised with inputs 1.. bound as initializers;
 * fix(g, first_input, ctx) (may be NULL) edits the graph before packing.
 * Returns the bytes (caller frees) and their count in *len, or NULL. */
static inline uint8_t *onnxprep_bind(const char *dir, size_t *len,
                                     void (*fix)(Onnx__GraphProto *, Onnx__ValueInfoProto *, void *),
                                     void *ctx)
{
    char path[700];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    uint8_t *b = (uint8_t *)tfile_read(path, len);
    Onnx__ModelProto *m = b ? onnx__model_proto__unpack(NULL, *len, b) : NULL;
    free(b);
    if (!m || !m->graph) {
        if (m) onnx__model_proto__free_unpacked(m, NULL);
        return NULL;
    }
    Onnx__GraphProto *g = m->graph;
    Onnx__TensorProto **old = g->initializer, *bound[16];
    char *oldname[16];
    size_t nold = g->n_initializer;
    int nb = 0, k = 0;
    Onnx__ValueInfoProto *first = NULL;
    Onnx__TensorProto **inits = malloc((nold + 16) * sizeof *inits);
    if (nold) memcpy(inits, old, nold * sizeof *inits);
    g->initializer = inits;
    for (size_t i = 0; i < g->n_input && nb < 16; i++) {
        if (onnxprep_is_initializer(g, g->input[i]->name)) continue;
        if (k++ == 0) {
            first = g->input[i];
            continue;
        }
        size_t tl;
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, k - 1);
        uint8_t *tb = (uint8_t *)tfile_read(path, &tl);
        Onnx__TensorProto *t = tb ? onnx__tensor_proto__unpack(NULL, tl, tb) : NULL;
        free(tb);
        if (!t) continue;
        oldname[nb] = t->name; /* restored before the unpacked model is freed */
        t->name = g->input[i]->name;
        bound[nb++] = t;
        inits[g->n_initializer++] = t;
    }
    if (fix) fix(g, first, ctx);
    *len = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(*len ? *len : 1);
    onnx__model_proto__pack(m, buf);
    for (int i = 0; i < nb; i++) {
        bound[i]->name = oldname[i];
        onnx__tensor_proto__free_unpacked(bound[i], NULL);
    }
    g->initializer = old;
    g->n_initializer = nold;
    free(inits);
    onnx__model_proto__free_unpacked(m, NULL);
    return buf;
}

#endif
