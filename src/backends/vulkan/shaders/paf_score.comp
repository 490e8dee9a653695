#version 450
#ifdef SLEAPC_FP16
#extension GL_EXT_shader_16bit_storage : require
#define ELEM float16_t
#else
#define ELEM float
#endif
// sleapc__paf_score_lines (core/paf.c, sleap-nn's scoring) on the
// device, one invocation per candidate line: n_points samples p_j = src +
// ((dst - src) / (1 + eps)) * t_j, each looked up at the nearest cell
// (round half to even, clipped to the map), dotted with the unit vector,
// summed in Torch's order (torch_row_sum), averaged, plus the distance
// penalty. Every step as the host takes it, in its order, without fused
// multiply-adds (precise) except the one the host fuses. Vulkan does not make
// a GPU round division (2.5 ulp; Mesa divides as a * (1 / b)), square root
// or fma (which may run unfused, as on lavapipe) as IEEE does: the unit
// vector, the slope, the mean and the penalty may then differ from the
// host's by an ulp or two, the score by a few ulp of its terms.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(std430, set = 0, binding = 0) buffer Dst { float scores[]; };
// fp16: the maps are binary16, each widened as the host widens them.
layout(std430, set = 0, binding = 1) readonly buffer Src { ELEM pafs[]; };
struct Line {
    int frame, edge;
    float sx, sy, dx, dy;
};
layout(std430, set = 0, binding = 2) readonly buffer Lines { Line lines[]; };
layout(std430, set = 0, binding = 3) readonly buffer T { float t[]; };
layout(push_constant) uniform P {
    int n, n_points, c, h, w, stride;
    float max_len, weight, inv_stride; // inv_stride > 0: stride a power of two
} p;

#define MAX_POINTS 64 // VK_PAF_MAX_POINTS
float dots[MAX_POINTS];

// make_line_subs: round(x / stride) half to even, clipped to [0, size - 1].
int grid_index(float coord, int size)
{
    precise float q = p.inv_stride > 0.0 ? coord * p.inv_stride : coord / float(p.stride);
    precise float r = roundEven(q);
    if (!(r >= 0.0))
        return 0;
    if (r > float(size - 1))
        return size - 1;
    return int(r);
}

// row_sum with 4 partial sums (paf.c: multi_row_sum stays in its tail loop
// for the at most 16 rows of MAX_POINTS points).
float row_sum(int base, int stride, int n)
{
    precise float p0 = 0.0, p1 = 0.0, p2 = 0.0, p3 = 0.0;
    int n_ilp = n / 4;
    for (int i = 0; i < n_ilp; i++) {
        p0 = p0 + dots[base + (4 * i) * stride];
        p1 = p1 + dots[base + (4 * i + 1) * stride];
        p2 = p2 + dots[base + (4 * i + 2) * stride];
        p3 = p3 + dots[base + (4 * i + 3) * stride];
    }
    for (int i = n_ilp * 4; i < n; i++)
        p0 = p0 + dots[base + i * stride];
    p0 = p0 + p1;
    p0 = p0 + p2;
    p0 = p0 + p3;
    return p0;
}

// torch_row_sum: below 8 items scalar, else 8 lanes added after the tail.
float torch_row_sum(int n)
{
    if (n < 8)
        return row_sum(0, 1, n);
    int n_vec = n / 8;
    precise float acc = 0.0;
    for (int k = n_vec * 8; k < n; k++)
        acc = acc + dots[k];
    for (int l = 0; l < 8; l++)
        acc = acc + row_sum(l, 8, n_vec);
    return acc;
}

void main()
{
    int c = int(gl_GlobalInvocationID.x);
    if (c >= p.n)
        return;
    Line ln = lines[c];
    precise float vx = ln.dx - ln.sx;
    precise float vy = ln.dy - ln.sy;
    // torch.norm fuses the second multiply-add.
    precise float sq = fma(vy, vy, vx * vx);
    if (sq == 0.0) {
        scores[c] = uintBitsToFloat(0x7fc00000u); // 0 / 0, as on the host
        return;
    }
    precise float len = sqrt(sq);
    precise float ux = vx / len;
    precise float uy = vy / len;
    const float interp_den = 1.0 + 1.1920928955078125e-7; // 1 + FLT_EPSILON
    precise float slope_x = vx / interp_den;
    precise float slope_y = vy / interp_den;
    uint plane = uint(p.h) * uint(p.w);
    uint px = (uint(ln.frame) * uint(p.c) + 2u * uint(ln.edge)) * plane;
    uint py = px + plane;
    for (int j = 0; j < p.n_points; j++) {
        precise float x = ln.sx + slope_x * t[j];
        precise float y = ln.sy + slope_y * t[j];
        uint at = uint(grid_index(y, p.h)) * uint(p.w) + uint(grid_index(x, p.w));
        precise float dot = float(pafs[px + at]) * ux;
        dot = dot + float(pafs[py + at]) * uy;
        dots[j] = dot;
    }
    precise float mean = torch_row_sum(p.n_points) / float(p.n_points);
    // compute_distance_penalty: reciprocal(len) * max_len.
    precise float pen = (1.0 / len) * p.max_len;
    pen = pen - 1.0;
    if (pen > 0.0)
        pen = 0.0;
    pen = pen * p.weight;
    scores[c] = mean + pen;
}
