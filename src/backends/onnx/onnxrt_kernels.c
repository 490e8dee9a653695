/* The host kernel of each ONNX op type the interpreter runs. Relu, Flatten
 * and Gemm also run here when their data comes from the host (an embedding
 * export's head after its GeM pool); from a network they join its segment. */
#include <string.h>

#include "backends/onnx/onnxrt_impl.h"

static const struct {
    const char *op;
    rt_op_fn fn;
} kernels[] = {
    {"Add", sleapc__rt_op_binary},
    {"Sub", sleapc__rt_op_binary},
    {"Mul", sleapc__rt_op_binary},
    {"Div", sleapc__rt_op_binary},
    {"Mod", sleapc__rt_op_binary},
    {"Pow", sleapc__rt_op_binary},
    {"Less", sleapc__rt_op_compare},
    {"Greater", sleapc__rt_op_compare},
    {"GreaterOrEqual", sleapc__rt_op_compare},
    {"LessOrEqual", sleapc__rt_op_compare},
    {"Equal", sleapc__rt_op_compare},
    {"And", sleapc__rt_op_logic},
    {"Or", sleapc__rt_op_logic},
    {"Xor", sleapc__rt_op_logic},
    {"Max", sleapc__rt_op_max},
    {"Min", sleapc__rt_op_max},
    {"Where", sleapc__rt_op_where},
    {"Not", sleapc__rt_op_unary},
    {"Sqrt", sleapc__rt_op_unary},
    {"Reciprocal", sleapc__rt_op_unary},
    {"Neg", sleapc__rt_op_unary},
    {"Abs", sleapc__rt_op_unary},
    {"Floor", sleapc__rt_op_unary},
    {"Ceil", sleapc__rt_op_unary},
    {"Exp", sleapc__rt_op_unary},
    {"Relu", sleapc__rt_op_unary},
    {"Cast", sleapc__rt_op_cast},
    {"Clip", sleapc__rt_op_clip},
    {"Shape", sleapc__rt_op_shape},
    {"Reshape", sleapc__rt_op_reshape},
    {"Unsqueeze", sleapc__rt_op_unsqueeze},
    {"Squeeze", sleapc__rt_op_squeeze},
    {"Concat", sleapc__rt_op_concat},
    {"Slice", sleapc__rt_op_slice},
    {"Gather", sleapc__rt_op_gather},
    {"GatherElements", sleapc__rt_op_gather_elements},
    {"Expand", sleapc__rt_op_expand},
    {"ConstantOfShape", sleapc__rt_op_constant_of_shape},
    {"Range", sleapc__rt_op_range},
    {"Transpose", sleapc__rt_op_transpose},
    {"Flatten", sleapc__rt_op_flatten},
    {"Gemm", sleapc__rt_op_gemm},
    {"Pad", sleapc__rt_op_pad},
    {"Identity", sleapc__rt_op_identity},
    {"ReduceMax", sleapc__rt_op_reduce},
    {"ReduceMin", sleapc__rt_op_reduce},
    {"ReduceSum", sleapc__rt_op_reduce},
    {"ReduceMean", sleapc__rt_op_reduce},
    {"ReduceL2", sleapc__rt_op_reduce},
    {"GlobalAveragePool", sleapc__rt_op_reduce},
    {"ArgMax", sleapc__rt_op_argmax},
    {"ArgMin", sleapc__rt_op_argmax},
    {"TopK", sleapc__rt_op_topk},
    {"GridSample", sleapc__rt_op_grid_sample},
    {"Resize", sleapc__rt_op_resize},
    {"ScatterND", sleapc__rt_op_scatter_nd},
};

rt_op_fn sleapc__rt_kernel(const char *op_type)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (strcmp(kernels[i].op, op_type) == 0)
            return kernels[i].fn;
    return NULL;
}
