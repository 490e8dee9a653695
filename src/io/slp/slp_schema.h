/* The .slp tables (formats D.4): one C record per row of /frames,
 * /instances, /points and /pred_points, and the member lists that map them
 * to the file's packed compound types. Shared by the reader and writer. */
#ifndef SLEAPC_IO_SLP_SCHEMA_H
#define SLEAPC_IO_SLP_SCHEMA_H

#include <stdint.h>

#include "io/h5/h5_file.h"

/* format_id written: sleap-io 0.9.5 writes 1.4 for labels with no ROIs,
 * masks, identities or other later additions (write_metadata); readers
 * since SLEAP 1.3 accept it, and 1.4 only changes how embedded images'
 * channels are read. */
#define SLEAPC_SLP_FORMAT_ID 1.4
/* The sleap-io release whose file layouts the writers follow. */
#define SLEAPC_SLEAP_IO_LAYOUT "0.9.5"
#define SLEAPC_SLP_INSTANCE_USER 0
#define SLEAPC_SLP_INSTANCE_PREDICTED 1

typedef struct sleapc_slp_frame_rec {
    uint64_t frame_id;
    uint32_t video;
    uint64_t frame_idx;
    uint64_t instance_id_start;
    uint64_t instance_id_end;
} sleapc_slp_frame_rec;

typedef struct sleapc_slp_instance_rec {
    int64_t instance_id;
    uint8_t instance_type;
    uint64_t frame_id;
    uint32_t skeleton;
    int32_t track;
    int64_t from_predicted;
    float score;
    uint64_t point_id_start;
    uint64_t point_id_end;
    float tracking_score; /* format >= 1.2; zero when absent */
} sleapc_slp_instance_rec;

/* /points rows use x, y, visible, complete; /pred_points add score. */
typedef struct sleapc_slp_point_rec {
    double x, y;
    uint8_t visible, complete;
    double score;
} sleapc_slp_point_rec;

#define SLEAPC_SLP_FRAME_FIELDS 5
#define SLEAPC_SLP_INSTANCE_FIELDS 10
#define SLEAPC_SLP_POINT_FIELDS 4
#define SLEAPC_SLP_PRED_POINT_FIELDS 5

/* Member name, C type, offset and on-disk type, in sleap-io's order. */
extern const sleapc_h5_field sleapc__slp_frame_fields[SLEAPC_SLP_FRAME_FIELDS];
extern const sleapc_h5_field sleapc__slp_instance_fields[SLEAPC_SLP_INSTANCE_FIELDS];
/* The first 4 entries are the /points members. */
extern const sleapc_h5_field sleapc__slp_point_fields[SLEAPC_SLP_PRED_POINT_FIELDS];

#endif
