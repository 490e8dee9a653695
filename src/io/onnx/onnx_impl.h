/* Private to src/io/onnx: the protobuf-c side of the reader. */
#ifndef SLEAPC_IO_ONNX_ONNX_IMPL_H
#define SLEAPC_IO_ONNX_ONNX_IMPL_H

#include <protobuf-c/protobuf-c.h>

#include "io/onnx/onnx_read.h"
#include "onnx.pb-c.h" /* generated from onnx.proto at build time */

/* Walk the wire format of one message of type desc before protobuf-c unpacks
 * it: every key, varint and length must fit the buffer, sub-messages nest at
 * most a fixed depth (protobuf-c recurses without a limit), and the structs
 * protobuf-c will allocate stay within a budget proportional to the size.
 * SLEAPC_ERR_FORMAT naming path when not. */
sleapc_status sleapc__onnx_wire_check(const uint8_t *data, size_t size,
                                      const ProtobufCMessageDescriptor *desc, const char *path);

/* Copy a TensorProto out (raw_data or the typed repeated field, checked
 * against the shape). On failure *out is cleared. */
sleapc_status sleapc__onnx_tensor_from_proto(const Onnx__TensorProto *tp, const char *path,
                                             sleapc_onnx_tensor *out);

/* Free what the structs own and zero them; accept zeroed or half-filled ones. */
void sleapc__onnx_tensor_clear(sleapc_onnx_tensor *t);
void sleapc__onnx_graph_clear(sleapc_onnx_graph *g);

#endif
