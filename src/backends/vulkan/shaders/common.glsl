// Shared by the compute shaders: one layout for every op (binding 0 the
// output, 1-2 the inputs, 3 the weights, 4 the bias) and the activations.
//
// Built twice: as is (float32 buffers) and with SLEAPC_FP16 (every buffer
// binary16, --precision fp16). A shader reads an element as float(buf[i]),
// computes and accumulates in float32, and writes through to_store(), which
// rounds to binary16 (nearest) in the fp16 variant.
//
// The convolutions (conv2d, dwconv, linear) are built a third time with
// SLEAPC_FP16_MATH too, for devices with shaderFloat16: each product of two
// binary16 values is computed in binary16 (rounded once, nearest) and still
// accumulated in float32. prod16(a, b) is that product of two elements as
// float, float(a) * float(b) (exact in float32) in the other variants.
#extension GL_GOOGLE_include_directive : require
#ifdef SLEAPC_FP16
#extension GL_EXT_shader_16bit_storage : require
#define ELEM float16_t
#define to_store(v) float16_t(v)
#else
#define ELEM float
#define to_store(v) (v)
#endif
#ifdef SLEAPC_FP16_MATH
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define prod16(a, b) float((a) * (b))
#else
#define prod16(a, b) (float(a) * float(b))
#endif
layout(std430, set = 0, binding = 0) buffer Dst { ELEM dst[]; };
layout(std430, set = 0, binding = 1) readonly buffer Src0 { ELEM src0[]; };
layout(std430, set = 0, binding = 2) readonly buffer Src1 { ELEM src1[]; };
layout(std430, set = 0, binding = 3) readonly buffer Wts { ELEM wts[]; };
layout(std430, set = 0, binding = 4) readonly buffer Bias { ELEM bias[]; };

// The IR's fused activations (model_heads.h): 0 none, 1 relu, 2 sigmoid, 4 gelu.
// (Softmax, 3, has its own shader.)
// erf as the native backend computes it: a rational function on [-4, 4]
// (the float approximation Eigen and XLA use, within a few ulp of erff).
float erf_approx(float a)
{
    float x = clamp(a, -4.0, 4.0);
    float x2 = x * x;
    float p = -2.72614225801306e-10;
    p = p * x2 + 2.77068142495902e-08;
    p = p * x2 + -2.10102402082508e-06;
    p = p * x2 + -5.69250639462346e-05;
    p = p * x2 + -7.34990630326855e-04;
    p = p * x2 + -2.95459980854025e-03;
    p = p * x2 + -1.60960333262415e-02;
    p = p * x;
    float q = -1.45660718464996e-05;
    q = q * x2 + -2.13374055278905e-04;
    q = q * x2 + -1.68282697438203e-03;
    q = q * x2 + -7.37332916720468e-03;
    q = q * x2 + -1.42647390514189e-02;
    return p / q;
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
