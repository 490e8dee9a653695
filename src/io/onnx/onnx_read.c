/* Reading an ONNX file: size check, wire-format check, protobuf-c unpack with
 * sleapc's allocator, then a copy into the plain structs of onnx_read.h. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/onnx/onnx_impl.h"

/* protobuf's own limit on a message; bigger exports use external data. */
#define ONNX_MAX_FILE_BYTES (((size_t)1 << 31) - 1)
/* More entries than this in one list is not a model (and would overflow int). */
#define ONNX_MAX_ITEMS (1 << 24)

typedef struct pb_heap {
    bool failed; /* an allocation failed: NULL from unpack means NOMEM */
} pb_heap;

static void *pb_alloc(void *data, size_t n)
{
    void *p = sleapc__malloc(n);
    if (!p)
        ((pb_heap *)data)->failed = true;
    return p;
}

static void pb_free(void *data, void *p)
{
    (void)data;
    sleapc__free(p);
}

static sleapc_status nomem(const char *path)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "read ONNX: %s: out of memory", path);
}

static char *dup_or_empty(const char *s)
{
    return sleapc__strdup(s ? s : "");
}

static sleapc_status check_count(size_t n, const char *what, const char *path)
{
    if (n > ONNX_MAX_ITEMS)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read ONNX: %s: %zu %s", path, n, what);
    return SLEAPC_OK;
}

static sleapc_status copy_strings(char *const *src, size_t n, const char *path, char ***dst,
                                  int *n_dst)
{
    sleapc_status st = check_count(n, "names", path);
    if (st)
        return st;
    *dst = sleapc__calloc(n ? n : 1, sizeof **dst);
    if (!*dst)
        return nomem(path);
    *n_dst = (int)n;
    for (size_t i = 0; i < n; i++)
        if (!((*dst)[i] = dup_or_empty(src[i])))
            return nomem(path);
    return SLEAPC_OK;
}

static sleapc_status convert_graph(const Onnx__GraphProto *gp, const char *path,
                                   sleapc_onnx_graph *g);

static sleapc_status convert_attr(const Onnx__AttributeProto *ap, const char *path,
                                  sleapc_onnx_attr *a)
{
    a->name = dup_or_empty(ap->name);
    if (!a->name)
        return nomem(path);
    a->type = ap->has_type ? (sleapc_onnx_attr_type)ap->type : SLEAPC_ONNX_ATTR_UNDEFINED;
    a->f = ap->f;
    a->i = ap->i;
    if (ap->has_s) {
        a->s = sleapc__malloc(ap->s.len + 1);
        if (!a->s)
            return nomem(path);
        if (ap->s.len)
            memcpy(a->s, ap->s.data, ap->s.len);
        a->s[ap->s.len] = '\0';
    }
    sleapc_status st = check_count(ap->n_floats + ap->n_ints, "attribute values", path);
    if (st)
        return st;
    /* A list attribute always gets an array, also when empty (protobuf then
     * has none), so that its readers can copy n values from it. */
    if (ap->n_floats || a->type == SLEAPC_ONNX_ATTR_FLOATS) {
        a->floats = sleapc__malloc((ap->n_floats ? ap->n_floats : 1) * sizeof *a->floats);
        if (!a->floats)
            return nomem(path);
        if (ap->n_floats)
            memcpy(a->floats, ap->floats, ap->n_floats * sizeof *a->floats);
        a->n_floats = (int)ap->n_floats;
    }
    if (ap->n_ints || a->type == SLEAPC_ONNX_ATTR_INTS) {
        a->ints = sleapc__malloc((ap->n_ints ? ap->n_ints : 1) * sizeof *a->ints);
        if (!a->ints)
            return nomem(path);
        if (ap->n_ints)
            memcpy(a->ints, ap->ints, ap->n_ints * sizeof *a->ints);
        a->n_ints = (int)ap->n_ints;
    }
    if (ap->t) {
        a->t = sleapc__calloc(1, sizeof *a->t);
        if (!a->t)
            return nomem(path);
        st = sleapc__onnx_tensor_from_proto(ap->t, path, a->t);
        if (st)
            return st;
    }
    if (ap->g) {
        a->g = sleapc__calloc(1, sizeof *a->g);
        if (!a->g)
            return nomem(path);
        st = convert_graph(ap->g, path, a->g);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

static sleapc_status convert_node(const Onnx__NodeProto *np, const char *path, sleapc_onnx_node *n)
{
    n->name = dup_or_empty(np->name);
    n->op_type = dup_or_empty(np->op_type);
    n->domain = dup_or_empty(np->domain);
    if (!n->name || !n->op_type || !n->domain)
        return nomem(path);
    sleapc_status st = copy_strings(np->input, np->n_input, path, &n->inputs, &n->n_inputs);
    if (!st)
        st = copy_strings(np->output, np->n_output, path, &n->outputs, &n->n_outputs);
    if (!st)
        st = check_count(np->n_attribute, "attributes", path);
    if (st)
        return st;
    n->attrs = sleapc__calloc(np->n_attribute ? np->n_attribute : 1, sizeof *n->attrs);
    if (!n->attrs)
        return nomem(path);
    n->n_attrs = (int)np->n_attribute;
    for (size_t i = 0; i < np->n_attribute; i++) {
        st = convert_attr(np->attribute[i], path, &n->attrs[i]);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

static sleapc_status convert_value(const Onnx__ValueInfoProto *vp, const char *path,
                                   sleapc_onnx_value *v)
{
    v->name = dup_or_empty(vp->name);
    if (!v->name)
        return nomem(path);
    v->ndim = -1;
    if (!vp->type || vp->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        !vp->type->tensor_type)
        return SLEAPC_OK;
    const Onnx__TypeProto__Tensor *tt = vp->type->tensor_type;
    if (tt->has_elem_type)
        v->dtype = (sleapc_onnx_dtype)tt->elem_type;
    if (!tt->shape)
        return SLEAPC_OK;
    if (tt->shape->n_dim > SLEAPC_ONNX_MAX_DIMS)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "read ONNX: %s: \"%s\" has %zu dimensions",
                            path, v->name, tt->shape->n_dim);
    v->ndim = (int)tt->shape->n_dim;
    for (int i = 0; i < v->ndim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        bool known = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                     d->dim_value >= 0;
        v->shape[i] = known ? d->dim_value : -1;
    }
    return SLEAPC_OK;
}

static sleapc_status convert_values(Onnx__ValueInfoProto *const *src, size_t n, const char *path,
                                    sleapc_onnx_value **dst, int *n_dst)
{
    sleapc_status st = check_count(n, "graph inputs or outputs", path);
    if (st)
        return st;
    *dst = sleapc__calloc(n ? n : 1, sizeof **dst);
    if (!*dst)
        return nomem(path);
    *n_dst = (int)n;
    for (size_t i = 0; i < n; i++) {
        st = convert_value(src[i], path, &(*dst)[i]);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

static sleapc_status convert_graph(const Onnx__GraphProto *gp, const char *path,
                                   sleapc_onnx_graph *g)
{
    g->name = dup_or_empty(gp->name);
    if (!g->name)
        return nomem(path);
    sleapc_status st = check_count(gp->n_node, "nodes", path);
    if (!st)
        st = check_count(gp->n_initializer, "initializers", path);
    if (st)
        return st;
    if (gp->n_sparse_initializer)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "read ONNX: %s: sparse initializers", path);
    g->nodes = sleapc__calloc(gp->n_node ? gp->n_node : 1, sizeof *g->nodes);
    g->initializers =
        sleapc__calloc(gp->n_initializer ? gp->n_initializer : 1, sizeof *g->initializers);
    if (!g->nodes || !g->initializers)
        return nomem(path);
    g->n_nodes = (int)gp->n_node;
    for (size_t i = 0; i < gp->n_node; i++) {
        st = convert_node(gp->node[i], path, &g->nodes[i]);
        if (st)
            return st;
    }
    g->n_initializers = (int)gp->n_initializer;
    for (size_t i = 0; i < gp->n_initializer; i++) {
        st = sleapc__onnx_tensor_from_proto(gp->initializer[i], path, &g->initializers[i]);
        if (st)
            return st;
    }
    st = convert_values(gp->input, gp->n_input, path, &g->inputs, &g->n_inputs);
    if (!st)
        st = convert_values(gp->output, gp->n_output, path, &g->outputs, &g->n_outputs);
    return st;
}

static sleapc_status convert_model(const Onnx__ModelProto *mp, const char *path,
                                   sleapc_onnx_model *m)
{
    if (!mp->graph)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read ONNX: %s: the model has no graph", path);
    m->ir_version = mp->has_ir_version ? mp->ir_version : 0;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
        bool default_domain = !o->domain || !o->domain[0] || strcmp(o->domain, "ai.onnx") == 0;
        if (default_domain && o->has_version)
            m->opset = o->version;
    }
    if (m->opset == 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read ONNX: %s: the model imports no "
                                               "default-domain (ai.onnx) opset", path);
    if (m->opset < SLEAPC_ONNX_MIN_OPSET || m->opset > SLEAPC_ONNX_MAX_OPSET)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "read ONNX: %s: opset %lld is not "
                                                    "supported (sleapc runs opsets %d to %d; "
                                                    "export again with --opset-version 17)",
                            path, (long long)m->opset, SLEAPC_ONNX_MIN_OPSET,
                            SLEAPC_ONNX_MAX_OPSET);
    size_t n = strlen(mp->producer_name ? mp->producer_name : "") +
               strlen(mp->producer_version ? mp->producer_version : "") + 2;
    m->producer = sleapc__malloc(n);
    if (!m->producer)
        return nomem(path);
    snprintf(m->producer, n, "%s%s%s", mp->producer_name ? mp->producer_name : "",
             mp->producer_version && mp->producer_version[0] ? " " : "",
             mp->producer_version ? mp->producer_version : "");
    sleapc_status st = check_count(mp->n_metadata_props, "metadata entries", path);
    if (st)
        return st;
    size_t np = mp->n_metadata_props;
    m->prop_keys = sleapc__calloc(np ? np : 1, sizeof *m->prop_keys);
    m->prop_values = sleapc__calloc(np ? np : 1, sizeof *m->prop_values);
    if (!m->prop_keys || !m->prop_values)
        return nomem(path);
    m->n_props = (int)np;
    for (size_t i = 0; i < np; i++) {
        m->prop_keys[i] = dup_or_empty(mp->metadata_props[i]->key);
        m->prop_values[i] = dup_or_empty(mp->metadata_props[i]->value);
        if (!m->prop_keys[i] || !m->prop_values[i])
            return nomem(path);
    }
    return convert_graph(mp->graph, path, &m->graph);
}

sleapc_status sleapc__onnx_parse(const uint8_t *data, size_t size, const char *path,
                                 sleapc_onnx_model **out)
{
    *out = NULL;
    if (size == 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read ONNX: %s: the file is empty", path);
    if (size > ONNX_MAX_FILE_BYTES)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "read ONNX: %s: %zu bytes is over protobuf's 2 GiB limit", path, size);
    sleapc_status st = sleapc__onnx_wire_check(data, size, &onnx__model_proto__descriptor, path);
    if (st)
        return st;
    pb_heap heap = {0};
    ProtobufCAllocator alloc = {.alloc = pb_alloc, .free = pb_free, .allocator_data = &heap};
    Onnx__ModelProto *mp = onnx__model_proto__unpack(&alloc, size, data);
    if (!mp)
        return heap.failed ? nomem(path)
                           : sleapc__fail(SLEAPC_ERR_FORMAT,
                                          "read ONNX: %s: not a valid ONNX protobuf", path);
    sleapc_onnx_model *m = sleapc__calloc(1, sizeof *m);
    if (!m) {
        onnx__model_proto__free_unpacked(mp, &alloc);
        return nomem(path);
    }
    m->path = sleapc__strdup(path);
    st = m->path ? convert_model(mp, path, m) : nomem(path);
    onnx__model_proto__free_unpacked(mp, &alloc);
    if (st) {
        sleapc__onnx_destroy(m);
        return st;
    }
    *out = m;
    return SLEAPC_OK;
}

sleapc_status sleapc__onnx_read(const char *path, sleapc_onnx_model **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sleapc__fail(SLEAPC_ERR_IO, "read ONNX: %s: cannot open", path);
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return sleapc__fail(SLEAPC_ERR_IO, "read ONNX: %s: not a regular file", path);
    }
    if (sb.st_size <= 0 || (uint64_t)sb.st_size > ONNX_MAX_FILE_BYTES) {
        fclose(f);
        return sb.st_size <= 0
                   ? sleapc__fail(SLEAPC_ERR_FORMAT, "read ONNX: %s: the file is empty", path)
                   : sleapc__fail(SLEAPC_ERR_FORMAT,
                                  "read ONNX: %s: %lld bytes is over protobuf's 2 GiB limit", path,
                                  (long long)sb.st_size);
    }
    size_t size = (size_t)sb.st_size;
    uint8_t *buf = sleapc__malloc(size);
    if (!buf) {
        fclose(f);
        return nomem(path);
    }
    size_t got = fread(buf, 1, size, f);
    fclose(f);
    sleapc_status st = got == size ? sleapc__onnx_parse(buf, size, path, out)
                                   : sleapc__fail(SLEAPC_ERR_IO, "read ONNX: %s: short read", path);
    sleapc__free(buf);
    return st;
}
