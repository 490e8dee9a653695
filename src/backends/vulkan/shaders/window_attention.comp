#version 450
// Shifted-window multi-head self-attention (SLEAPC_OP_WINDOW_ATTENTION:
// torchvision's shifted_window_attention between its qkv and proj linears)
// on NCHW maps, as the native backend computes it. src0 is the (B, 3C, H, W)
// qkv map, channel part * C + head * d + e; wts the relative position bias
// table ((2k-1)^2, heads); bias the qkv bias (3C, zeros without one): the
// qkv of a padded token.
//
// One thread per (query token, window, batch * head). Padding and the cyclic
// shift are index arithmetic. A thread takes its head's channels DCHUNK at a
// time: a pass for the largest score, then exp(score - max), their sum and
// the weighted v; scores are q * scale . k + bias (- 100 across the shifted
// window mask's regions), as torchvision adds them.
#include "common.glsl"
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(push_constant) uniform P {
    int c, heads, ws, h, w, ph, pw, sh, sw, masked;
} p;

#define DCHUNK 32

// Which of torchvision's three mask slices along one axis covers pos last:
// slices (0, -ws), (-ws, -shift), (-shift, None) with Python's rules, so that
// a shift of 0 gives the whole axis to the third one (native_attention.c).
int slice_label(int pos, int len, int ws, int shift)
{
    int lo[3] = int[3](0, -ws, -shift);
    int hi[3] = int[3](-ws, -shift, len);
    int label = -1;
    for (int s = 0; s < 3; s++) {
        int a = lo[s] < 0 ? lo[s] + len : lo[s];
        int b = hi[s] < 0 ? hi[s] + len : hi[s];
        if (s == 1 && shift == 0)
            b = 0;
        if (s == 2 && shift == 0)
            a = 0;
        a = max(a, 0);
        b = min(b, len);
        if (pos >= a && pos < b)
            label = s;
    }
    return label;
}

// Source pixel of token t of window (wy, wx), or -1 for a padded one.
int token_pixel(int wy, int wx, int t)
{
    int py = wy * p.ws + t / p.ws, px = wx * p.ws + t % p.ws;
    int sy = (py + p.sh) % p.ph, sx = (px + p.sw) % p.pw;
    return sy < p.h && sx < p.w ? sy * p.w + sx : -1;
}

int token_label(int wy, int wx, int t)
{
    if (p.masked == 0)
        return 0;
    int py = wy * p.ws + t / p.ws, px = wx * p.ws + t % p.ws;
    return 3 * slice_label(py, p.ph, p.ws, p.sh) + slice_label(px, p.pw, p.ws, p.sw);
}

// Channel ch of the qkv map at pixel pix of batch base, or its bias when padded.
float qkv_at(int base, int hw, int ch, int pix)
{
    return pix >= 0 ? float(src0[base + ch * hw + pix]) : float(bias[ch]);
}

// Score of query (qpix, qlab, token i) against key token t over all d channels.
float score(int base, int hw, int d, int hd, int wy, int wx, int i, int qpix, int qlab, int t,
            float scale)
{
    int kpix = token_pixel(wy, wx, t);
    int side = 2 * p.ws - 1;
    int dy = i / p.ws - t / p.ws + p.ws - 1, dx = i % p.ws - t % p.ws + p.ws - 1;
    float s = float(wts[(dy * side + dx) * p.heads + hd]);
    for (int e = 0; e < d; e++) {
        int ch = hd * d + e;
        s += qkv_at(base, hw, ch, qpix) * scale * qkv_at(base, hw, p.c + ch, kpix);
    }
    if (p.masked != 0 && token_label(wy, wx, t) != qlab)
        s -= 100.0;
    return s;
}

void main()
{
    int n = p.ws * p.ws;
    int i = int(gl_GlobalInvocationID.x);
    if (i >= n)
        return;
    int win = int(gl_GlobalInvocationID.y);
    int bh = int(gl_GlobalInvocationID.z);
    int b = bh / p.heads, hd = bh % p.heads;
    int nwx = p.pw / p.ws;
    int wy = win / nwx, wx = win % nwx;
    int qpix = token_pixel(wy, wx, i);
    if (qpix < 0)
        return; // a padded query: cropped away
    int qlab = token_label(wy, wx, i);
    int d = p.c / p.heads, hw = p.h * p.w;
    int base = b * 3 * p.c * hw;
    float scale = 1.0 / sqrt(float(d));

    float m = score(base, hw, d, hd, wy, wx, i, qpix, qlab, 0, scale);
    for (int t = 1; t < n; t++)
        m = max(m, score(base, hw, d, hd, wy, wx, i, qpix, qlab, t, scale));
    float sum = 0.0;
    for (int t = 0; t < n; t++)
        sum += exp(score(base, hw, d, hd, wy, wx, i, qpix, qlab, t, scale) - m);
    float inv = 1.0 / sum;
    int obase = b * p.c * hw + qpix;
    for (int done = 0; done < d; done += DCHUNK) {
        int cnt = min(d - done, DCHUNK);
        float o[DCHUNK];
        for (int e = 0; e < DCHUNK; e++)
            o[e] = 0.0;
        for (int t = 0; t < n; t++) {
            float pr = exp(score(base, hw, d, hd, wy, wx, i, qpix, qlab, t, scale) - m) * inv;
            int vpix = token_pixel(wy, wx, t);
            for (int e = 0; e < cnt; e++)
                o[e] += pr * qkv_at(base, hw, 2 * p.c + hd * d + done + e, vpix);
        }
        for (int e = 0; e < cnt; e++)
            dst[obase + (hd * d + done + e) * hw] = to_store(o[e]);
    }
}
