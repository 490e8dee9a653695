/* MOT parameter presets and overrides (see mot_params.h). */
#include "pipeline/tracking/mot/mot_params.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static const char *const TRACKERS[SLEAPC_MOT_N_TRACKERS] = {
    "sort", "deepsort", "strongsort", "bytetrack", "botsort", "ocsort", "deepocsort"};

int sleapc__mot_tracker_from_name(const char *name)
{
    for (int i = 0; name && i < SLEAPC_MOT_N_TRACKERS; i++)
        if (!strcmp(name, TRACKERS[i]))
            return i;
    return -1;
}

const char *sleapc__mot_tracker_name(sleapc_mot_tracker t)
{
    return t >= 0 && t < SLEAPC_MOT_N_TRACKERS ? TRACKERS[t] : "?";
}

bool sleapc__mot_params_link(const sleapc_mot_params *p)
{
    return p->link_tracklets || p->max_tracks >= 0;
}

/* ---- fields ------------------------------------------------------------ */

typedef enum ftype {
    F_BOOL,
    F_INT,
    F_FLOAT,
    F_UNIT,
    F_CHOICE,
    F_OPT_INT,
    F_OPT_FLOAT,
    F_APPEARANCE
} ftype;

static const char *const SIMILARITIES[] = {"auto", "iou", "oks", "centroid", NULL};
static const char *const SCORE_MODES[] = {"auto", "instance", "none", NULL};
static const char *const KALMANS[] = {"auto", "xywh", "xyah", "xysr", NULL};
static const char *const TIME_BASES[] = {"auto", "frames", "steps", NULL};

typedef struct field {
    const char *name;
    ftype type;
    size_t off;
    const char *const *choices;
} field;

#define FLD(n, t)                                                                                  \
    {                                                                                              \
#n, t, offsetof(sleapc_mot_params, n), NULL                                                \
    }
#define CHO(n, c)                                                                                  \
    {                                                                                              \
#n, F_CHOICE, offsetof(sleapc_mot_params, n), c                                            \
    }

/* MOTParams' fields (less tracker and preset), in its order. */
static const field FIELDS[] = {
    CHO(similarity, SIMILARITIES),
    FLD(body_size, F_OPT_FLOAT),
    FLD(oks_stddev, F_FLOAT),
    FLD(box_padding, F_FLOAT),
    CHO(score_mode, SCORE_MODES),
    FLD(normalize_scores, F_BOOL),
    CHO(kalman, KALMANS),
    CHO(time_base, TIME_BASES),
    FLD(track_buffer, F_INT),
    FLD(min_hits, F_INT),
    FLD(track_high_threshold, F_UNIT),
    FLD(track_low_threshold, F_UNIT),
    FLD(new_track_threshold, F_UNIT),
    FLD(min_match_similarity, F_UNIT),
    FLD(low_stage_min_similarity, F_UNIT),
    FLD(unconfirmed_min_similarity, F_UNIT),
    FLD(duplicate_similarity, F_UNIT),
    FLD(fuse_score, F_BOOL),
    FLD(appearance_threshold, F_APPEARANCE),
    FLD(proximity_threshold, F_UNIT),
    FLD(ema_alpha, F_UNIT),
    FLD(adaptive_ema, F_BOOL),
    FLD(gallery_size, F_INT),
    FLD(gallery_budget, F_INT),
    FLD(mc_lambda, F_UNIT),
    FLD(nsa, F_BOOL),
    FLD(delta_t, F_INT),
    FLD(inertia, F_FLOAT),
    FLD(use_byte, F_BOOL),
    FLD(w_assoc_emb, F_FLOAT),
    FLD(aw_param, F_FLOAT),
    FLD(aw_off, F_BOOL),
    FLD(rescue, F_BOOL),
    FLD(rescue_min_similarity, F_UNIT),
    FLD(link_tracklets, F_BOOL),
    FLD(max_tracks, F_OPT_INT),
    FLD(link_swap_correction, F_BOOL),
    FLD(link_spatial_gate_frames, F_INT),
};
enum { N_FIELDS = sizeof FIELDS / sizeof FIELDS[0] };

static const field *find_field(const char *name)
{
    for (int i = 0; i < N_FIELDS; i++)
        if (!strcmp(FIELDS[i].name, name))
            return &FIELDS[i];
    return NULL;
}

/* A field's value as parsed: is_none for "none" of an optional field. */
typedef struct value {
    bool is_none;
    bool b;
    long long i;
    double d;
} value;

static void store(sleapc_mot_params *p, const field *f, const value *v)
{
    char *at = (char *)p + f->off;
    switch (f->type) {
    case F_BOOL:
        *(bool *)at = v->b;
        break;
    case F_INT:
    case F_OPT_INT:
        *(int *)at = (int)v->i;
        break;
    case F_CHOICE:
        *(int *)at = (int)v->i;
        break;
    default:
        *(double *)at = v->d;
        break;
    }
}

/* ---- presets ----------------------------------------------------------- */

static void class_defaults(sleapc_mot_params *p)
{
    *p = (sleapc_mot_params){.similarity = SLEAPC_MOT_SIM_AUTO,
                             .body_size = NAN,
                             .oks_stddev = 0.1,
                             .box_padding = 0.1,
                             .score_mode = SLEAPC_MOT_SCORE_AUTO,
                             .normalize_scores = false,
                             .kalman = SLEAPC_MOT_KALMAN_AUTO,
                             .time_base = SLEAPC_MOT_TIME_AUTO,
                             .track_buffer = 30,
                             .min_hits = 3,
                             .track_high_threshold = 0.5,
                             .track_low_threshold = 0.1,
                             .new_track_threshold = 0.6,
                             .min_match_similarity = 0.3,
                             .low_stage_min_similarity = 0.5,
                             .unconfirmed_min_similarity = 0.3,
                             .duplicate_similarity = 0.85,
                             .fuse_score = false,
                             .appearance_threshold = NAN,
                             .proximity_threshold = 0.5,
                             .ema_alpha = 0.8,
                             .adaptive_ema = false,
                             .gallery_size = 30,
                             .gallery_budget = 100,
                             .mc_lambda = 0.98,
                             .nsa = false,
                             .delta_t = 3,
                             .inertia = 0.2,
                             .use_byte = false,
                             .w_assoc_emb = 0.75,
                             .aw_param = 0.5,
                             .aw_off = false,
                             .rescue = true,
                             .rescue_min_similarity = 0.15,
                             .link_tracklets = false,
                             .max_tracks = -1,
                             .link_swap_correction = true,
                             .link_spatial_gate_frames = 300};
}

/* The published constants of each tracker (params.py _PAPER). */
static void paper(sleapc_mot_params *p)
{
    p->normalize_scores = false;
    switch (p->tracker) {
    case SLEAPC_MOT_SORT:
        p->kalman = SLEAPC_MOT_KALMAN_XYSR, p->min_hits = 3, p->track_buffer = 1;
        p->track_high_threshold = p->track_low_threshold = p->new_track_threshold = 0.0;
        p->min_match_similarity = 0.3, p->fuse_score = false;
        break;
    case SLEAPC_MOT_DEEPSORT:
        p->kalman = SLEAPC_MOT_KALMAN_XYAH, p->min_hits = 3;
        p->track_high_threshold = p->track_low_threshold = p->new_track_threshold = 0.8;
        p->min_match_similarity = 0.3, p->appearance_threshold = 0.8;
        p->gallery_budget = 100, p->fuse_score = false;
        break;
    case SLEAPC_MOT_STRONGSORT:
        p->kalman = SLEAPC_MOT_KALMAN_XYAH, p->nsa = true, p->min_hits = 3;
        p->track_high_threshold = p->track_low_threshold = p->new_track_threshold = 0.6;
        p->min_match_similarity = 0.3, p->appearance_threshold = 0.7, p->ema_alpha = 0.9;
        p->mc_lambda = 0.98, p->fuse_score = false;
        break;
    case SLEAPC_MOT_BYTETRACK:
        p->kalman = SLEAPC_MOT_KALMAN_XYAH, p->min_hits = 2, p->track_high_threshold = 0.5;
        p->track_low_threshold = 0.1, p->new_track_threshold = 0.6;
        p->min_match_similarity = 0.2, p->low_stage_min_similarity = 0.5;
        p->unconfirmed_min_similarity = 0.3, p->duplicate_similarity = 0.85;
        p->fuse_score = true;
        break;
    case SLEAPC_MOT_BOTSORT:
        p->kalman = SLEAPC_MOT_KALMAN_XYWH, p->min_hits = 2, p->track_high_threshold = 0.6;
        p->track_low_threshold = 0.1, p->new_track_threshold = 0.7;
        p->min_match_similarity = 0.2, p->low_stage_min_similarity = 0.5;
        p->unconfirmed_min_similarity = 0.3, p->duplicate_similarity = 0.85;
        p->fuse_score = true, p->proximity_threshold = 0.5, p->appearance_threshold = 0.5;
        p->ema_alpha = 0.9;
        break;
    case SLEAPC_MOT_OCSORT:
        p->kalman = SLEAPC_MOT_KALMAN_XYSR, p->min_hits = 3, p->track_high_threshold = 0.6;
        p->track_low_threshold = 0.1, p->new_track_threshold = 0.6;
        p->min_match_similarity = 0.3, p->delta_t = 3, p->inertia = 0.2;
        p->use_byte = false, p->fuse_score = false;
        break;
    case SLEAPC_MOT_DEEPOCSORT:
        p->kalman = SLEAPC_MOT_KALMAN_XYWH, p->min_hits = 3, p->track_high_threshold = 0.6;
        p->track_low_threshold = 0.1, p->new_track_threshold = 0.6;
        p->min_match_similarity = 0.3, p->delta_t = 3, p->inertia = 0.2;
        p->adaptive_ema = true, p->ema_alpha = 0.95, p->w_assoc_emb = 0.75;
        p->aw_param = 0.5, p->rescue = false, p->fuse_score = false;
        break;
    default:
        break;
    }
}

/* sleap-nn's animal defaults on top of the paper ones (params.py _ANIMAL). */
static void animal(sleapc_mot_params *p)
{
    p->normalize_scores = true;
    switch (p->tracker) {
    case SLEAPC_MOT_SORT:
        p->track_buffer = 30;
        p->track_high_threshold = p->track_low_threshold = p->new_track_threshold = 0.1;
        break;
    case SLEAPC_MOT_DEEPSORT:
        p->kalman = SLEAPC_MOT_KALMAN_XYWH, p->track_high_threshold = 0.5;
        p->track_low_threshold = 0.1, p->new_track_threshold = 0.1;
        p->appearance_threshold = NAN, p->gallery_budget = 30;
        break;
    case SLEAPC_MOT_STRONGSORT:
        p->kalman = SLEAPC_MOT_KALMAN_XYWH, p->track_high_threshold = 0.5;
        p->track_low_threshold = 0.1, p->new_track_threshold = 0.1;
        p->appearance_threshold = NAN, p->ema_alpha = 0.8;
        break;
    case SLEAPC_MOT_BYTETRACK:
        p->kalman = SLEAPC_MOT_KALMAN_XYWH;
        break;
    case SLEAPC_MOT_BOTSORT:
        p->appearance_threshold = NAN, p->ema_alpha = 0.8;
        break;
    case SLEAPC_MOT_DEEPOCSORT:
        p->appearance_threshold = NAN, p->rescue = true;
        break;
    default:
        break;
    }
}

/* ---- parsing (parse_mot_param) ------------------------------------------ */

/* Python's str.strip() of s[0..n) into buf. */
static void strip(const char *s, size_t n, char *buf, size_t cap)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    n = n < cap - 1 ? n : cap - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
}

static bool parse_int(const char *s, long long *out)
{
    char tmp[128];
    size_t k = 0;
    for (const char *c = s; *c && k + 1 < sizeof tmp; c++)
        if (*c != '_')
            tmp[k++] = *c; /* int() accepts digit separators */
    tmp[k] = 0;
    if (!tmp[0])
        return false;
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(tmp, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

static bool parse_float(const char *s, double *out)
{
    if (!*s)
        return false;
    char *end = NULL;
    const double v = strtod(s, &end);
    if (*end)
        return false;
    *out = v;
    return true;
}

static void lower(const char *s, char *buf, size_t cap)
{
    size_t k = 0;
    for (; s[k] && k + 1 < cap; k++)
        buf[k] = (char)tolower((unsigned char)s[k]);
    buf[k] = 0;
}

static sleapc_status bad(const char *text, const char *msg)
{
    return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "--mot_param \"%s\": %s", text, msg);
}

/* One KEY=VALUE: *f (NULL for preset, then *paper_out set) and the value. */
static sleapc_status parse_one(const char *text, const field **f, value *v, int *preset_out)
{
    const char *eq = strchr(text, '=');
    if (!eq)
        return bad(text, "expected KEY=VALUE");
    char key[64], raw[128], low[128];
    strip(text, (size_t)(eq - text), key, sizeof key);
    strip(eq + 1, strlen(eq + 1), raw, sizeof raw);
    lower(raw, low, sizeof low);
    *f = NULL;
    *v = (value){0};
    if (!strcmp(key, "preset")) {
        if (strcmp(raw, "animal") && strcmp(raw, "paper"))
            return bad(text, "preset must be one of animal, paper");
        *preset_out = !strcmp(raw, "paper");
        return SLEAPC_OK;
    }
    const field *fd = find_field(key);
    if (!fd)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--mot_param \"%s\": unknown MOT parameter \"%s\"", text, key);
    *f = fd;
    if (fd->type == F_APPEARANCE) {
        if (!strcmp(low, "auto")) {
            v->d = NAN;
            return SLEAPC_OK;
        }
        if (!parse_float(raw, &v->d) || !(v->d >= -1.0 && v->d <= 1.0))
            return bad(text, "appearance_threshold must be 'auto' or a cosine in [-1, 1]");
        return SLEAPC_OK;
    }
    if (!strcmp(low, "none")) {
        if (fd->type != F_OPT_INT && fd->type != F_OPT_FLOAT) {
            char m[96];
            snprintf(m, sizeof m, "%s cannot be None", key);
            return bad(text, m);
        }
        v->is_none = true;
        return SLEAPC_OK;
    }
    char m[128];
    switch (fd->type) {
    case F_BOOL:
        if (!strcmp(low, "true") || !strcmp(low, "1") || !strcmp(low, "yes") || !strcmp(low, "on"))
            v->b = true;
        else if (!strcmp(low, "false") || !strcmp(low, "0") || !strcmp(low, "no") ||
                 !strcmp(low, "off"))
            v->b = false;
        else
            return snprintf(m, sizeof m, "%s expects a boolean", key), bad(text, m);
        return SLEAPC_OK;
    case F_INT:
    case F_OPT_INT:
        if (!parse_int(raw, &v->i) || v->i < -1000000000LL || v->i > 1000000000LL)
            return snprintf(m, sizeof m, "%s expects an integer", key), bad(text, m);
        return SLEAPC_OK;
    case F_CHOICE:
        for (int c = 0; fd->choices[c]; c++)
            if (!strcmp(raw, fd->choices[c])) {
                v->i = c;
                return SLEAPC_OK;
            }
        snprintf(m, sizeof m, "%s must be one of", key);
        {
            char all[256];
            int k = snprintf(all, sizeof all, "%s", m);
            for (int c = 0; fd->choices[c] && k > 0 && k < (int)sizeof all; c++)
                k += snprintf(all + k, sizeof all - (size_t)k, "%s %s", c ? "," : "",
                              fd->choices[c]);
            return bad(text, all);
        }
    default:
        if (!parse_float(raw, &v->d))
            return snprintf(m, sizeof m, "%s expects a number", key), bad(text, m);
        return SLEAPC_OK;
    }
}

/* ---- validation (MOTParams' validators) -------------------------------- */

static sleapc_status check(const sleapc_mot_params *p)
{
    for (int i = 0; i < N_FIELDS; i++) {
        const field *f = &FIELDS[i];
        if (f->type != F_UNIT)
            continue;
        const double v = *(const double *)((const char *)p + f->off);
        if (!(v >= 0.0 && v <= 1.0))
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s must be in [0, 1], got %g", f->name, v);
    }
    if (!isnan(p->body_size) && !(isfinite(p->body_size) && p->body_size > 0))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "body_size must be > 0 (or None), got %g",
                            p->body_size);
    if (p->track_buffer < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "track_buffer must be >= 0, got %d",
                            p->track_buffer);
    if (p->min_hits < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "min_hits must be >= 1, got %d", p->min_hits);
    if (!(isfinite(p->oks_stddev) && p->oks_stddev > 0))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "oks_stddev must be a finite number > 0, got %g", p->oks_stddev);
    if (p->gallery_size < 1 || p->gallery_budget < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "gallery_size and gallery_budget must be >= 1");
    if (p->delta_t < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "delta_t must be >= 1, got %d", p->delta_t);
    if (p->max_tracks != -1 && p->max_tracks < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "max_tracks must be >= 1, got %d",
                            p->max_tracks);
    if (p->track_low_threshold > p->track_high_threshold)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "track_low_threshold must be <= track_high_threshold, got %g > %g",
                            p->track_low_threshold, p->track_high_threshold);
    return SLEAPC_OK;
}

/* ---- resolve ------------------------------------------------------------ */

sleapc_status sleapc__mot_params_resolve(sleapc_mot_tracker tracker, const sleapc_mot_named *named,
                                         const char *const *overrides, int n_overrides,
                                         sleapc_mot_params *out)
{
    if (tracker < 0 || tracker >= SLEAPC_MOT_N_TRACKERS)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "unknown MOT tracker");
    /* overrides as a dict: the last value of each key wins */
    const field *keys[N_FIELDS];
    value vals[N_FIELDS];
    int n_keys = 0, preset_paper = 0;
    for (int i = 0; i < n_overrides; i++) {
        const field *f = NULL;
        value v = {0};
        int preset = preset_paper;
        sleapc_status st = parse_one(overrides[i] ? overrides[i] : "", &f, &v, &preset);
        if (st)
            return st;
        if (!f) {
            preset_paper = preset;
            continue;
        }
        int k = 0;
        while (k < n_keys && keys[k] != f)
            k++;
        keys[k] = f;
        vals[k] = v;
        n_keys = k == n_keys ? n_keys + 1 : n_keys;
    }
    /* the options given by name */
    const field *nf[11];
    value nv[11];
    int n_named = 0;
    if (named && named->appearance_threshold) {
        /* parsed as its --mot_param is: "auto" or a cosine in [-1, 1] */
        char kv[96];
        snprintf(kv, sizeof kv, "appearance_threshold=%.64s", named->appearance_threshold);
        int preset = 0;
        sleapc_status st = parse_one(kv, &nf[n_named], &nv[n_named], &preset);
        if (st)
            return st;
        n_named++;
    }
    if (named) {
#define NAMED(cond, name, member, val)                                                             \
    if (cond) {                                                                                    \
        nf[n_named] = find_field(name);                                                            \
        nv[n_named] = (value){0};                                                                  \
        nv[n_named++].member = (val);                                                              \
    }
        NAMED(named->track_buffer >= 0, "track_buffer", i, named->track_buffer);
        NAMED(named->min_hits >= 0, "min_hits", i, named->min_hits);
        NAMED(!isnan(named->track_high_threshold), "track_high_threshold", d,
              named->track_high_threshold);
        NAMED(!isnan(named->track_low_threshold), "track_low_threshold", d,
              named->track_low_threshold);
        NAMED(!isnan(named->new_track_threshold), "new_track_threshold", d,
              named->new_track_threshold);
        NAMED(!isnan(named->min_match_similarity), "min_match_similarity", d,
              named->min_match_similarity);
        NAMED(named->similarity != SLEAPC_MOT_SIM_AUTO, "similarity", i, named->similarity);
        NAMED(!isnan(named->oks_stddev), "oks_stddev", d, named->oks_stddev);
        NAMED(named->link_tracklets, "link_tracklets", b, true);
        NAMED(named->max_tracks >= 0, "max_tracks", i, named->max_tracks);
#undef NAMED
    }
    for (int a = 0; a < n_named; a++)
        for (int k = 0; k < n_keys; k++)
            if (nf[a] == keys[k])
                return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                    "MOT parameter %s given both as an option and in "
                                    "--mot_param; give it once",
                                    nf[a]->name);
    sleapc_mot_params p;
    class_defaults(&p);
    p.tracker = tracker;
    p.paper = preset_paper != 0;
    paper(&p);
    if (!p.paper)
        animal(&p);
    for (int a = 0; a < n_named; a++)
        store(&p, nf[a], &nv[a]);
    for (int k = 0; k < n_keys; k++)
        if (!vals[k].is_none) /* None means "the preset's" */
            store(&p, keys[k], &vals[k]);
    sleapc_status st = check(&p);
    if (st)
        return st;
    *out = p;
    return SLEAPC_OK;
}
