/* Finding objects in a file: kinds, group members, attribute names, groups. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/h5/h5_impl.h"

static bool is_root(const char *obj)
{
    return obj[0] == '\0' || strcmp(obj, "/") == 0;
}

static sleapc_h5_kind kind_of_id(hid_t o)
{
    switch (H5Iget_type(o)) {
    case H5I_GROUP:
        return SLEAPC_H5_KIND_GROUP;
    case H5I_DATASET:
        return SLEAPC_H5_KIND_DATASET;
    default:
        return SLEAPC_H5_KIND_OTHER;
    }
}

/* Kind of one link whose parents are known to be groups. External links
 * are never followed: a label file must not make us open other files. */
static sleapc_h5_kind link_kind(hid_t fid, const char *name)
{
    if (H5Lexists(fid, name, H5P_DEFAULT) <= 0)
        return SLEAPC_H5_KIND_NONE;
    H5L_info_t li;
    if (H5Lget_info(fid, name, &li, H5P_DEFAULT) < 0)
        return SLEAPC_H5_KIND_NONE;
    if (li.type != H5L_TYPE_HARD && li.type != H5L_TYPE_SOFT)
        return SLEAPC_H5_KIND_OTHER;
    hid_t o = H5Oopen(fid, name, H5P_DEFAULT);
    if (o < 0)
        return SLEAPC_H5_KIND_OTHER;
    sleapc_h5_kind k = kind_of_id(o);
    H5Oclose(o);
    return k;
}

sleapc_h5_kind sleapc__h5_kind(sleapc_h5 *f, const char *obj)
{
    if (!f || !obj || f->fid < 0)
        return SLEAPC_H5_KIND_NONE;
    sleapc__h5_quiet();
    if (is_root(obj))
        return SLEAPC_H5_KIND_GROUP;
    size_t n = strlen(obj);
    /* Object paths are short; a heap copy only for unusual ones. */
    char small[256];
    char *prefix = n < sizeof small ? small : sleapc__malloc(n + 1);
    if (!prefix)
        return SLEAPC_H5_KIND_NONE;
    /* H5Lexists needs every parent to exist, so walk the path one component
     * at a time; each parent must be a group. */
    sleapc_h5_kind k = SLEAPC_H5_KIND_NONE;
    for (size_t i = 1; i <= n; i++) {
        if (obj[i] != '/' && obj[i] != '\0')
            continue;
        if (obj[i - 1] == '/')
            continue;
        memcpy(prefix, obj, i);
        prefix[i] = '\0';
        k = link_kind(f->fid, prefix);
        if (i < n && k != SLEAPC_H5_KIND_GROUP) {
            k = SLEAPC_H5_KIND_NONE;
            break;
        }
    }
    if (prefix != small)
        sleapc__free(prefix);
    H5Eclear2(H5E_DEFAULT);
    return k;
}

bool sleapc__h5_is_group(sleapc_h5 *f, const char *obj)
{
    return sleapc__h5_kind(f, obj) == SLEAPC_H5_KIND_GROUP;
}

bool sleapc__h5_is_dataset(sleapc_h5 *f, const char *obj)
{
    return sleapc__h5_kind(f, obj) == SLEAPC_H5_KIND_DATASET;
}

hid_t sleapc__h5_open_dataset(sleapc_h5 *f, const char *dset)
{
    if (sleapc__h5_kind(f, dset) != SLEAPC_H5_KIND_DATASET)
        return H5I_INVALID_HID;
    return H5Dopen2(f->fid, dset, H5P_DEFAULT);
}

hid_t sleapc__h5_open_attr(sleapc_h5 *f, const char *obj, const char *name)
{
    sleapc_h5_kind k = sleapc__h5_kind(f, obj);
    if (k != SLEAPC_H5_KIND_GROUP && k != SLEAPC_H5_KIND_DATASET)
        return H5I_INVALID_HID;
    const char *o = is_root(obj) ? "/" : obj;
    if (H5Aexists_by_name(f->fid, o, name, H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return H5I_INVALID_HID;
    }
    return H5Aopen_by_name(f->fid, o, name, H5P_DEFAULT, H5P_DEFAULT);
}

bool sleapc__h5_attr_exists(sleapc_h5 *f, const char *obj, const char *name)
{
    hid_t a = sleapc__h5_open_attr(f, obj, name);
    if (a < 0)
        return false;
    H5Aclose(a);
    return true;
}

void sleapc__h5_free_strings(char **strs, int64_t n)
{
    if (!strs)
        return;
    for (int64_t i = 0; i < n; i++)
        sleapc__free(strs[i]);
    sleapc__free(strs);
}

typedef struct name_list {
    char **names;
    int64_t n, cap;
    bool nomem;
} name_list;

static herr_t add_name(name_list *l, const char *name)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 16;
        char **p = sleapc__realloc(l->names, (size_t)cap * sizeof *p);
        if (!p) {
            l->nomem = true;
            return -1;
        }
        l->names = p;
        l->cap = cap;
    }
    if (!(l->names[l->n] = sleapc__strdup(name))) {
        l->nomem = true;
        return -1;
    }
    l->n++;
    return 0;
}

static herr_t link_cb(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    (void)g;
    (void)info;
    return add_name(data, name);
}

static herr_t attr_cb(hid_t o, const char *name, const H5A_info_t *info, void *data)
{
    (void)o;
    (void)info;
    return add_name(data, name);
}

/* Iterate by creation order when the object tracks it (the index exists),
 * otherwise by name, as h5py's default iteration does. */
static sleapc_status iterate(sleapc_h5 *f, const char *obj, bool attrs, char ***names, int64_t *n)
{
    const char *action = attrs ? "list attributes" : "list";
    sleapc_h5_kind k = sleapc__h5_kind(f, obj);
    if (attrs ? k != SLEAPC_H5_KIND_GROUP && k != SLEAPC_H5_KIND_DATASET
              : k != SLEAPC_H5_KIND_GROUP)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, action, obj,
                               attrs ? "no such group or dataset" : "no such group");
    hid_t o = H5Oopen(f->fid, is_root(obj) ? "/" : obj, H5P_DEFAULT);
    if (o < 0)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, action, obj, "cannot open");
    name_list l = {0};
    herr_t rc = -1;
    /* Without tracking, HDF5 may still "iterate by creation order" in
     * storage order; ask the creation properties instead of trying. */
    hid_t plist = k == SLEAPC_H5_KIND_GROUP ? H5Gget_create_plist(o) : H5Dget_create_plist(o);
    unsigned flags = 0;
    if (plist >= 0) {
        if (attrs)
            H5Pget_attr_creation_order(plist, &flags);
        else
            H5Pget_link_creation_order(plist, &flags);
        H5Pclose(plist);
    }
    for (int pass = (flags & H5P_CRT_ORDER_TRACKED) ? 0 : 1; pass < 2 && rc < 0 && !l.nomem;
         pass++) {
        H5_index_t idx = pass == 0 ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
        sleapc__h5_free_strings(l.names, l.n);
        memset(&l, 0, sizeof l);
        if (attrs) {
            hsize_t pos = 0;
            rc = H5Aiterate2(o, idx, H5_ITER_INC, &pos, attr_cb, &l);
        } else {
            hsize_t pos = 0;
            rc = H5Literate(o, idx, H5_ITER_INC, &pos, link_cb, &l);
        }
    }
    H5Oclose(o);
    if (rc < 0) {
        sleapc__h5_free_strings(l.names, l.n);
        if (l.nomem)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "%s HDF5: %s: %s: out of memory", action, f->path,
                                obj);
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, action, obj, "cannot iterate");
    }
    H5Eclear2(H5E_DEFAULT);
    *names = l.names;
    *n = l.n;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_list(sleapc_h5 *f, const char *group, char ***names, int64_t *n)
{
    *names = NULL;
    *n = 0;
    return iterate(f, group, false, names, n);
}

sleapc_status sleapc__h5_attr_names(sleapc_h5 *f, const char *obj, char ***names, int64_t *n)
{
    *names = NULL;
    *n = 0;
    return iterate(f, obj, true, names, n);
}

sleapc_status sleapc__h5_create_group(sleapc_h5 *f, const char *group)
{
    if (!f->writable)
        return sleapc__h5_fail(SLEAPC_ERR_STATE, f, "write", group, "file is read-only");
    sleapc_h5_kind k = sleapc__h5_kind(f, group);
    if (k == SLEAPC_H5_KIND_GROUP)
        return SLEAPC_OK;
    if (k != SLEAPC_H5_KIND_NONE)
        return sleapc__h5_fail(SLEAPC_ERR_INVALID_ARG, f, "write", group, "exists, not a group");
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    hid_t g = H5I_INVALID_HID;
    /* No timestamps, so the same content always gives the same bytes. */
    if (lcpl >= 0 && gcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0 &&
        H5Pset_obj_track_times(gcpl, 0) >= 0)
        g = H5Gcreate2(f->fid, group, lcpl, gcpl, H5P_DEFAULT);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    if (gcpl >= 0)
        H5Pclose(gcpl);
    if (g < 0)
        return sleapc__h5_fail(SLEAPC_ERR_IO, f, "write", group, "cannot create the group");
    H5Gclose(g);
    return SLEAPC_OK;
}
