/* Public model functions: the class (identity) names of multi-class models. */
#include "model/model_impl.h"
#include "sleapc/model.h"

static bool is_multiclass(const sleapc_model *m)
{
    sleapc_model_type t = m->cfg.model_type;
    return t == SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP || t == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN;
}

int sleapc_model_n_classes(const sleapc_model *m)
{
    if (!m || !is_multiclass(m))
        return 0;
    if (m->cfg.n_classes > 0)
        return m->cfg.n_classes;
    return m->has_export_meta ? m->export_meta.n_classes : 0;
}

const char *sleapc_model_class_name(const sleapc_model *m, int i)
{
    if (!m || i < 0 || i >= sleapc_model_n_classes(m))
        return NULL;
    return m->cfg.n_classes > 0 ? m->cfg.classes[i] : m->export_meta.class_names[i];
}
