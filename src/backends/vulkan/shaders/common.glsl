// Shared by the compute shaders: one layout for every op (binding 0 the
// output, 1-2 the inputs, 3 the weights, 4 the bias) and the activations.
#extension GL_GOOGLE_include_directive : require
layout(std430, set = 0, binding = 0) buffer Dst { float dst[]; };
layout(std430, set = 0, binding = 1) readonly buffer Src0 { float src0[]; };
layout(std430, set = 0, binding = 2) readonly buffer Src1 { float src1[]; };
layout(std430, set = 0, binding = 3) readonly buffer Wts { float wts[]; };
layout(std430, set = 0, binding = 4) readonly buffer Bias { float bias[]; };

// The IR's fused activations (model_heads.h): 0 none, 1 relu, 2 sigmoid, 4 gelu.
// (Softmax, 3, has its own shader.)
float erf_approx(float x)
{
    // Abramowitz & Stegun 7.1.26 refined: |error| < 1.5e-7.
    float s = sign(x);
    x = abs(x);
    float t = 1.0 / (1.0 + 0.3275911 * x);
    float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t +
                     0.254829592) * t * exp(-x * x);
    return s * y;
}

float activate(float v, int act)
{
    if (act == 1)
        return max(v, 0.0);
    if (act == 2)
        return 1.0 / (1.0 + exp(-v));
    if (act == 4)
        return 0.5 * v * (1.0 + erf_approx(v * 0.70710678118654752));
    return v;
}
