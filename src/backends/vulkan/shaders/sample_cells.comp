#version 450
#ifdef SLEAPC_FP16
#extension GL_EXT_shader_16bit_storage : require
#define ELEM float16_t
#else
#define ELEM float
#endif
// A head's maps read at cells (the contract's device_sample_head): one
// invocation per (cell, channel), values[i * c + ch] = maps[sample, ch, y, x]
// for cell i = (sample, y, x). A copy, no arithmetic: float32 maps come back
// bit for bit, binary16 ones widened exactly (as the host widens them).
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Dst { float values[]; };
layout(std430, set = 0, binding = 1) readonly buffer Src { ELEM maps[]; };
layout(std430, set = 0, binding = 2) readonly buffer Cells { int cells[]; };
layout(push_constant) uniform P {
    int n, c, h, w; // cells, channels, map height and width
} p;

void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= p.n * p.c)
        return;
    int cell = i / p.c, ch = i - cell * p.c;
    int s = cells[3 * cell], y = cells[3 * cell + 1], x = cells[3 * cell + 2];
    values[i] = float(maps[((s * p.c + ch) * p.h + y) * p.w + x]);
}
