/* A bounds-checking walk over the protobuf wire format, guided by the
 * protobuf-c descriptors, run before protobuf_c_message_unpack. protobuf-c
 * checks lengths itself but recurses into sub-messages without a depth limit
 * and allocates a struct per message, so a small hostile file could exhaust
 * the stack or the heap; this walk refuses both up front. */
#include "io/onnx/onnx_impl.h"

#include <stdbool.h>

#include "core/error.h"

/* ONNX nests ModelProto > GraphProto > NodeProto > AttributeProto > GraphProto
 * (If branches) > ... : 64 levels is far beyond any real export. */
#define WIRE_MAX_DEPTH 64

typedef struct wire {
    const char *path;
    uint64_t budget; /* bytes protobuf-c may still allocate for structs */
} wire;

static bool read_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (*pos >= n)
            return false;
        uint8_t b = p[(*pos)++];
        if (i == 9 && b > 1)
            return false; /* more than 64 bits */
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static sleapc_status spend(wire *w, uint64_t bytes, const char *what)
{
    if (bytes > w->budget)
        return sleapc__fail(
            SLEAPC_ERR_FORMAT,
            "read ONNX: %s: too many %s for the file size (corrupt or hostile file)", w->path,
            what);
    w->budget -= bytes;
    return SLEAPC_OK;
}

static sleapc_status check_message(wire *w, const uint8_t *p, size_t n,
                                   const ProtobufCMessageDescriptor *d, int depth)
{
    if (depth > WIRE_MAX_DEPTH)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read ONNX: %s: messages nested deeper than %d",
                            w->path, WIRE_MAX_DEPTH);
    sleapc_status st = spend(w, d->sizeof_message, "messages");
    if (st)
        return st;
    size_t pos = 0;
    while (pos < n) {
        uint64_t key = 0, v = 0;
        if (!read_varint(p, n, &pos, &key))
            return sleapc__fail(SLEAPC_ERR_FORMAT, "read ONNX: %s: truncated field key in %s",
                                w->path, d->short_name);
        uint64_t field = key >> 3;
        unsigned wire_type = (unsigned)(key & 7);
        if (field == 0 || field > 0x1fffffff)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "read ONNX: %s: invalid field number in %s",
                                w->path, d->short_name);
        /* Every field occurrence costs protobuf-c at most a slot in an array or
         * an unknown-field record. */
        st = spend(w, 32, "fields");
        if (st)
            return st;
        switch (wire_type) {
        case 0:
            if (!read_varint(p, n, &pos, &v))
                return sleapc__fail(SLEAPC_ERR_FORMAT, "read ONNX: %s: truncated varint in %s",
                                    w->path, d->short_name);
            break;
        case 1:
        case 5: {
            size_t len = wire_type == 1 ? 8 : 4;
            if (n - pos < len)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "read ONNX: %s: truncated fixed field in %s",
                                    w->path, d->short_name);
            pos += len;
            break;
        }
        case 2: {
            const ProtobufCFieldDescriptor *f =
                protobuf_c_message_descriptor_get_field(d, (unsigned)field);
            if (!read_varint(p, n, &pos, &v) || v > n - pos)
                return sleapc__fail(
                    SLEAPC_ERR_FORMAT,
                    "read ONNX: %s: field %s (%llu) of %s runs past the end of its message",
                    w->path, f ? f->name : "?", (unsigned long long)field, d->short_name);
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                st = check_message(w, p + pos, (size_t)v, f->descriptor, depth + 1);
            } else {
                /* Bytes are copied once; a packed array of 1-byte varints
                 * becomes up to 8 bytes per element. */
                bool packed =
                    f && f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_BYTES;
                st = spend(w, packed ? 8 * v : v + 1, "values");
            }
            if (st)
                return st;
            pos += (size_t)v;
            break;
        }
        default:
            return sleapc__fail(SLEAPC_ERR_FORMAT, "read ONNX: %s: wire type %u in %s is not valid",
                                w->path, wire_type, d->short_name);
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__onnx_wire_check(const uint8_t *data, size_t size,
                                      const ProtobufCMessageDescriptor *desc, const char *path)
{
    /* Tensor bytes dominate real files (structs are a few percent of the
     * size); a file of tiny nested messages is what this budget stops. */
    wire w = {.path = path, .budget = (uint64_t)64 << 20};
    w.budget += 16 * (uint64_t)size;
    return check_message(&w, data, size, desc, 0);
}
