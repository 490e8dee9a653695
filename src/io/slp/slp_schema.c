/* Member tables of the .slp compound types (sleap-io write_lfs dtypes). */
#include "io/slp/slp_schema.h"

#include <stddef.h>

#define FIELD(rec, name, type)                                                                     \
    {                                                                                              \
#name, type, offsetof(rec, name), SLEAPC_H5_TYPE_DEFAULT, false                            \
    }

const sleapc_h5_field sleapc__slp_frame_fields[SLEAPC_SLP_FRAME_FIELDS] = {
    FIELD(sleapc_slp_frame_rec, frame_id, SLEAPC_H5_U64),
    FIELD(sleapc_slp_frame_rec, video, SLEAPC_H5_U32),
    FIELD(sleapc_slp_frame_rec, frame_idx, SLEAPC_H5_U64),
    FIELD(sleapc_slp_frame_rec, instance_id_start, SLEAPC_H5_U64),
    FIELD(sleapc_slp_frame_rec, instance_id_end, SLEAPC_H5_U64),
};

const sleapc_h5_field sleapc__slp_instance_fields[SLEAPC_SLP_INSTANCE_FIELDS] = {
    FIELD(sleapc_slp_instance_rec, instance_id, SLEAPC_H5_I64),
    FIELD(sleapc_slp_instance_rec, instance_type, SLEAPC_H5_U8),
    FIELD(sleapc_slp_instance_rec, frame_id, SLEAPC_H5_U64),
    FIELD(sleapc_slp_instance_rec, skeleton, SLEAPC_H5_U32),
    FIELD(sleapc_slp_instance_rec, track, SLEAPC_H5_I32),
    FIELD(sleapc_slp_instance_rec, from_predicted, SLEAPC_H5_I64),
    FIELD(sleapc_slp_instance_rec, score, SLEAPC_H5_F32),
    FIELD(sleapc_slp_instance_rec, point_id_start, SLEAPC_H5_U64),
    FIELD(sleapc_slp_instance_rec, point_id_end, SLEAPC_H5_U64),
    /* Absent before format 1.2 (formats D.7): read as 0, like sleap-io. */
    {"tracking_score", SLEAPC_H5_F32, offsetof(sleapc_slp_instance_rec, tracking_score),
     SLEAPC_H5_TYPE_DEFAULT, true},
};

const sleapc_h5_field sleapc__slp_point_fields[SLEAPC_SLP_PRED_POINT_FIELDS] = {
    FIELD(sleapc_slp_point_rec, x, SLEAPC_H5_F64),
    FIELD(sleapc_slp_point_rec, y, SLEAPC_H5_F64),
    FIELD(sleapc_slp_point_rec, visible, SLEAPC_H5_BOOL),
    FIELD(sleapc_slp_point_rec, complete, SLEAPC_H5_BOOL),
    FIELD(sleapc_slp_point_rec, score, SLEAPC_H5_F64),
};
