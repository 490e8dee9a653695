/* The exported path (sleap-nn inference/layers/exported.py, inference.md
 * §7.8): layers over an export's model.onnx, whose backend already did the
 * resize, peak finding, crops and coordinate ladder inside the graph
 * (baked_postproc). Frames go to the graph as they are; the layers only turn
 * the graph's fixed-size outputs into sleapc's layer outputs, plus the
 * grouping and identity steps the graphs leave to the host. */
#ifndef SLEAPC_LAYERS_EXPORTED_H
#define SLEAPC_LAYERS_EXPORTED_H

#include "backends/backend.h"
#include "layers/layer.h"

/* The graph behind an exported layer. */
typedef struct sleapc_exported_stage {
    const sleapc_model *model;  /* borrowed */
    sleapc_backend *be;         /* baked_postproc */
    sleapc_precision precision;
    int64_t in_c;               /* channels the graph takes */
    int64_t warm_shape[4];      /* input shape the backend last warmed up for */
    uint8_t *coerced;           /* frames converted to in_c channels */
    size_t coerced_cap;
    sleapc_tensor_map out;      /* the last forward's outputs (backend-owned) */
} sleapc_exported_stage;

/* Create the backend for m (m->baked) and check the graph declares every
 * output in `outputs` (NULL-terminated), so a mismatch fails here. */
sleapc_status sleapc__exported_stage_init(sleapc_exported_stage *s, const sleapc_model *m,
                                          const sleapc_predictor_opts *o,
                                          const char *const *outputs);
void sleapc__exported_stage_free(sleapc_exported_stage *s);

/* Run the graph on b frames (b, c, h, w) uint8. Frames whose channel count
 * differs from the graph's are converted first (grayscale <-> RGB, as
 * sleap-nn's ensure_* steps convert), which sleap-nn's exported path leaves
 * to the caller. */
sleapc_status sleapc__exported_stage_run(sleapc_exported_stage *s, const uint8_t *frames,
                                         int64_t b, int64_t c, int64_t h, int64_t w);

/* What the stage runs on (the layers' stages op). */
sleapc_stage_info sleapc__exported_stage_info(const sleapc_exported_stage *s);

/* Output `name` of the last run, checked: dtype, ndim, and each dims[i] that
 * is >= 0 (dims[0] is the batch). */
sleapc_status sleapc__exported_stage_output(const sleapc_exported_stage *s, const char *name,
                                            sleapc_dtype dtype, int ndim, const int64_t *dims,
                                            const sleapc_tensor **out);

/* Run the stage and take the peaks a bottom-up export gives: peaks (b, n, k, 2),
 * peak_vals (b, n, k) and peak_mask (b, n, k) uint8, k read from peaks. */
sleapc_status sleapc__exported_stage_peaks(sleapc_exported_stage *s, const uint8_t *frames,
                                           int64_t b, int64_t c, int64_t h, int64_t w, int64_t n,
                                           const sleapc_tensor **peaks, const sleapc_tensor **vals,
                                           const sleapc_tensor **mask, int64_t *k);

/* Constructors, by export kind (m->export_meta.kind). */
sleapc_status sleapc__exported_points_layer_create(const sleapc_model *m,
                                                   const sleapc_predictor_opts *o,
                                                   sleapc_layer **out);
sleapc_status sleapc__exported_topdown_multiclass_layer_create(const sleapc_model *m,
                                                               const sleapc_predictor_opts *o,
                                                               sleapc_layer **out);
sleapc_status sleapc__exported_bottomup_layer_create(const sleapc_model *m,
                                                     const sleapc_predictor_opts *o,
                                                     sleapc_layer **out);
sleapc_status sleapc__exported_bottomup_multiclass_layer_create(const sleapc_model *m,
                                                                const sleapc_predictor_opts *o,
                                                                sleapc_layer **out);

/* sleap-nn's _select_export_layer: the adapter for m's export kind. */
sleapc_status sleapc__exported_layer_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                            sleapc_layer **out);

/* The runtime peak gate of the bottom-up adapters: sleap-nn's
 * from_export_dir defaults it to the threshold baked into the graph, else
 * 0.2 (its CLI drops --peak_threshold for exports). */
double sleapc__exported_peak_gate(const sleapc_model *m);

#endif
