/* test_onnx_conformance.c -- the importer against the ONNX project's own
 * test suite (Debian's libonnx-testdata), data no one here wrote.
 *
 * Every test model of data/{node,pytorch-converted,pytorch-operator,simple}
 * whose operators are all ones the importer knows must appear in cases[]:
 * either it imports and the net's output shape equals the dims of the
 * reference output_0.pb (a graph of several outputs: their element counts
 * add up to the one layer the importer joins them into), or it is listed
 * with the reason dse cannot take it
 * and the importer must refuse it with that reason (a one-line error
 * containing the given text).  A model missing from the table fails the
 * test, so nothing is filtered out silently.
 *
 * Two preparations, both of which keep the reference's meaning:
 *  - node tests feed weights as extra graph inputs; the test binds graph
 *    inputs 1.. to their test_data_set_0/input_K.pb values as initializers
 *    (what a deployed model does with weights);
 *  - models of batch B > 1 are re-declared with batch 1 and the per-sample
 *    shape (dims 1..) is compared, the batch dim being checked to be B.
 *    Only operators that treat samples independently are run that way;
 *    a Flatten at axis 0 (which folds the batch in) is listed as refused.
 */
#include "net.h"
#include "onnx.h"
#include "check.h"
#include "onnxprep.h"
#include "tfile.h"
#include "onnx.pb-c.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DATA "/usr/share/libonnx-testdata/data"

/* err == NULL: must import with the reference shape.  Otherwise the import
 * must fail with a message containing err; why says why dse refuses it. */
typedef struct {
    const char *dir, *err, *why;
} tcase;

#define B2 "batch > 1 re-declared as 1, per-sample shape compared"
static const tcase cases[] = {
    /* ---- node: Add / Sum ---- */
    {"node/test_add", "is 3-D", "3-D inputs [3, 4, 5]: not NCHW (and two graph inputs)"},
    {"node/test_add_bcast", "is 3-D", "3-D input, broadcast over a 1-D tensor"},
    {"node/test_add_uint8", "uint8", "uint8 tensors: dse is float32 only"},
    {"node/test_sum_example", "is 1-D", "1-D inputs (and three graph inputs)"},
    {"node/test_sum_one_input", "is 1-D", "1-D input: no batch axis"},
    {"node/test_sum_two_inputs", "is 1-D", "1-D inputs (and two graph inputs)"},
    /* ---- AveragePool ---- */
    {"node/test_averagepool_1d_default", "is 3-D", "1-D pooling (3-D tensor)"},
    {"node/test_averagepool_2d_ceil", NULL, NULL},
    {"node/test_averagepool_2d_default", NULL, NULL},
    {"node/test_averagepool_2d_pads", NULL, NULL},
    {"node/test_averagepool_2d_pads_count_include_pad", NULL, NULL},
    {"node/test_averagepool_2d_precomputed_pads", NULL, NULL},
    {"node/test_averagepool_2d_precomputed_pads_count_include_pad", NULL, NULL},
    {"node/test_averagepool_2d_precomputed_same_upper", NULL, NULL},
    {"node/test_averagepool_2d_precomputed_strides", NULL, NULL},
    {"node/test_averagepool_2d_same_lower", NULL, NULL},
    {"node/test_averagepool_2d_same_upper", NULL, NULL},
    {"node/test_averagepool_2d_strides", NULL, NULL},
    {"node/test_averagepool_3d_default", "is 5-D", "3-D pooling (5-D tensor)"},
    /* ---- Conv ---- */
    {"node/test_basic_conv_with_padding", NULL, NULL},
    {"node/test_basic_conv_without_padding", NULL, NULL},
    {"node/test_conv_with_autopad_same", NULL, NULL},
    {"node/test_conv_with_strides_and_asymmetric_padding", NULL, NULL},
    {"node/test_conv_with_strides_no_padding", NULL, NULL},
    {"node/test_conv_with_strides_padding", NULL, NULL},
    /* ---- Pad, InstanceNormalization ---- */
    {"node/test_constant_pad", NULL, NULL},
    {"node/test_edge_pad", "int32", "int32 tensors: dse is float32 only"},
    {"node/test_reflect_pad", "int32", "int32 tensors: dse is float32 only"},
    {"node/test_instancenorm_epsilon", NULL, B2},
    {"node/test_instancenorm_example", NULL, NULL},
    {"pytorch-converted/test_ConstantPad2d", NULL, B2},
    {"pytorch-converted/test_ReflectionPad2d", NULL, B2},
    {"pytorch-converted/test_ReplicationPad2d", NULL, B2},
    {"pytorch-converted/test_ZeroPad2d", NULL, B2},
    {"pytorch-operator/test_operator_pad", NULL, NULL},
    {"pytorch-operator/test_operator_symbolic_override", NULL, B2},
    /* ---- Softplus ---- */
    {"node/test_softplus", "is 3-D", "3-D input [3, 4, 5]: not NCHW"},
    {"node/test_softplus_example", "is 1-D", "1-D input: no batch axis"},
    {"pytorch-converted/test_Softplus", NULL, B2},
    /* ---- DepthToSpace ---- */
    {"node/test_depthtospace_crd_mode", NULL, B2},
    {"node/test_depthtospace_crd_mode_example", NULL, NULL},
    {"node/test_depthtospace_dcr_mode", NULL, B2},
    {"node/test_depthtospace_example", NULL, NULL},
    {"node/test_spacetodepth", NULL, B2},
    {"node/test_spacetodepth_example", NULL, NULL},
    /* ---- ReduceL2, Expand, LpNormalization: only as an L2 normalisation ---- */
    {"node/test_expand_dim_changed", "Expand is imported only as the broadcast of an L2", "a lone Expand: only the step of F.normalize's pattern"},
    {"node/test_expand_dim_unchanged", "Expand is imported only as the broadcast of an L2", "a lone Expand: only the step of F.normalize's pattern"},
    {"node/test_reduce_l2_default_axes_keepdims_example", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_l2_default_axes_keepdims_random", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_l2_do_not_keepdims_example", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_l2_do_not_keepdims_random", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_l2_keep_dims_example", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_l2_keep_dims_random", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_l2_negative_axes_keep_dims_example", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_l2_negative_axes_keep_dims_random", "is 3-D", "3-D input: not NCHW"},
    {"simple/test_expand_shape_model1", "is 3-D", "3-D input: not NCHW"},
    {"simple/test_expand_shape_model2", "is 3-D", "3-D input: not NCHW"},
    {"simple/test_expand_shape_model3", "is 3-D", "3-D input: not NCHW"},
    {"simple/test_expand_shape_model4", "is 3-D", "3-D input: not NCHW"},
    /* ---- ReduceSum: only over the branches of a 5-D view (split attention) ---- */
    {"node/test_reduce_sum_default_axes_keepdims_example", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_sum_default_axes_keepdims_random", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_sum_do_not_keepdims_example", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_sum_do_not_keepdims_random", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_sum_empty_axes_input_noop_example", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_sum_empty_axes_input_noop_random", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_sum_keepdims_example", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_sum_keepdims_random", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_sum_negative_axes_keepdims_example", "is 3-D", "3-D input: not NCHW"},
    {"node/test_reduce_sum_negative_axes_keepdims_random", "is 3-D", "3-D input: not NCHW"},
    {"pytorch-operator/test_operator_reduced_sum", "ReduceSum of an activation: dse takes only the sum over axis 1 of a 5-D", "a sum of a 4-D tensor: only over the branches of a 5-D view"},
    {"pytorch-operator/test_operator_reduced_sum_keepdim", "ReduceSum of an activation: dse takes only the sum over axis 1 of a 5-D", "a sum of a 4-D tensor: only over the branches of a 5-D view"},
    /* ---- ConvTranspose ---- */
    {"node/test_convtranspose", NULL, NULL},
    {"node/test_convtranspose_1d", "is 3-D", "1-D transposed convolution"},
    {"node/test_convtranspose_3d", "is 5-D", "3-D transposed convolution"},
    {"node/test_convtranspose_autopad_same", NULL, NULL},
    {"node/test_convtranspose_dilations", NULL, NULL},
    {"node/test_convtranspose_kernel_shape", NULL, NULL},
    {"node/test_convtranspose_output_shape", NULL, NULL},
    {"node/test_convtranspose_pad", NULL, NULL},
    {"node/test_convtranspose_pads", NULL, NULL},
    {"node/test_convtranspose_with_kernel", NULL, NULL},
    {"pytorch-converted/test_ConvTranspose2d", NULL, B2},
    {"pytorch-converted/test_ConvTranspose2d_no_bias", NULL, B2},
    /* ---- BatchNormalization ---- */
    {"node/test_batchnorm_epsilon", NULL, B2},
    {"node/test_batchnorm_example", NULL, B2},
    {"node/test_batchnorm_epsilon_training_mode", "training_mode=1", "training-mode BatchNorm (and its extra outputs)"},
    {"node/test_batchnorm_example_training_mode", "training_mode=1", "training-mode BatchNorm (and its extra outputs)"},
    /* ---- Clip ---- */
    {"node/test_clip", "is 3-D", "3-D input [3, 4, 5]: not NCHW"},
    {"node/test_clip_default_inbounds", "is 1-D", "1-D input: no batch axis"},
    {"node/test_clip_default_int8_inbounds", "int8", "int8 tensors: dse is float32 only"},
    {"node/test_clip_default_int8_max", "int8", "int8 tensors"},
    {"node/test_clip_default_int8_min", "int8", "int8 tensors"},
    {"node/test_clip_default_max", "is 3-D", "3-D input: not NCHW"},
    {"node/test_clip_default_min", "is 3-D", "3-D input: not NCHW"},
    {"node/test_clip_example", "is 1-D", "1-D input: no batch axis"},
    {"node/test_clip_inbounds", "is 1-D", "1-D input: no batch axis"},
    {"node/test_clip_outbounds", "is 1-D", "1-D input: no batch axis"},
    {"node/test_clip_splitbounds", "is 1-D", "1-D input: no batch axis"},
    /* ---- Concat ---- */
    {"node/test_concat_1d_axis_0", "is 1-D", "1-D inputs"},
    {"node/test_concat_1d_axis_negative_1", "is 1-D", "1-D inputs"},
    {"node/test_concat_2d_axis_0", "is a constant", "two graph inputs: dse nets have one input"},
    {"node/test_concat_2d_axis_1", "is a constant", "two graph inputs: dse nets have one input"},
    {"node/test_concat_2d_axis_negative_1", "is a constant", "two graph inputs"},
    {"node/test_concat_2d_axis_negative_2", "is a constant", "two graph inputs"},
    {"node/test_concat_3d_axis_0", "is 3-D", "3-D inputs: not NCHW"},
    {"node/test_concat_3d_axis_1", "is 3-D", "3-D inputs"},
    {"node/test_concat_3d_axis_2", "is 3-D", "3-D inputs"},
    {"node/test_concat_3d_axis_negative_1", "is 3-D", "3-D inputs"},
    {"node/test_concat_3d_axis_negative_2", "is 3-D", "3-D inputs"},
    {"node/test_concat_3d_axis_negative_3", "is 3-D", "3-D inputs"},
    /* ---- Constant, Identity ---- */
    {"node/test_constant", "no input", "no graph input at all (a constant graph)"},
    {"node/test_identity", "the graph input itself", "Identity is elided: a graph of only Identity has no layer"},
    {"node/test_identity_opt", "is not a tensor", "optional type input"},
    {"node/test_identity_sequence", "is not a tensor", "sequence type input"},
    /* ---- Dropout ---- */
    {"node/test_dropout_default", "is 3-D", "3-D input: not NCHW"},
    {"node/test_dropout_default_mask", "is 3-D", "3-D input: not NCHW"},
    {"node/test_dropout_default_mask_ratio", "is 3-D", "3-D input: not NCHW"},
    {"node/test_dropout_default_old", "is 1-D", "1-D input"},
    {"node/test_dropout_default_ratio", "is 3-D", "3-D input"},
    {"node/test_dropout_random_old", "is 3-D", "3-D input"},
    {"node/test_training_dropout", "is 3-D", "3-D input (and training mode)"},
    {"node/test_training_dropout_default", "is 3-D", "3-D input (and training mode)"},
    {"node/test_training_dropout_default_mask", "is 3-D", "3-D input: not NCHW"},
    {"node/test_training_dropout_mask", "is 3-D", "3-D input: not NCHW"},
    {"node/test_training_dropout_zero_ratio", "is 3-D", "3-D input (and training mode)"},
    {"node/test_training_dropout_zero_ratio_mask", "is 3-D", "3-D input: not NCHW"},
    /* ---- Flatten ---- */
    {"node/test_flatten_axis0", "batch 2", "axis 0 folds the batch (2) into the features: cannot be re-batched"},
    {"node/test_flatten_axis1", NULL, B2},
    {"node/test_flatten_axis2", "axis 2", "flattening at axis 2 keeps a channel axis: not a flatten of a sample"},
    {"node/test_flatten_axis3", "axis 3", "flattening at axis 3"},
    {"node/test_flatten_default_axis", NULL, B2},
    {"node/test_flatten_negative_axis1", "axis 3", "axis -1 = 3"},
    {"node/test_flatten_negative_axis2", "axis 2", "axis -2 = 2"},
    {"node/test_flatten_negative_axis3", NULL, B2},
    {"node/test_flatten_negative_axis4", "batch 2", "axis -4 = 0 folds the batch in"},
    /* ---- Gemm ---- */
    {"node/test_gemm_all_attributes", "transA=1", "transA=1 with a 4x3 input"},
    {"node/test_gemm_alpha", NULL, B2},
    {"node/test_gemm_beta", NULL, B2},
    {"node/test_gemm_default_matrix_bias", "bias", "C is a 3x4 matrix, a bias per sample and output: not a bias vector"},
    {"node/test_gemm_default_no_bias", NULL, B2},
    {"node/test_gemm_default_scalar_bias", NULL, B2},
    {"node/test_gemm_default_single_elem_vector_bias", NULL, B2},
    {"node/test_gemm_default_vector_bias", NULL, B2},
    {"node/test_gemm_default_zero_bias", NULL, B2},
    {"node/test_gemm_transposeA", "transA=1", "transA=1 with a 6x3 input"},
    {"node/test_gemm_transposeB", NULL, B2},
    /* ---- GlobalAveragePool, LRN ---- */
    {"node/test_globalaveragepool", NULL, NULL},
    {"node/test_globalaveragepool_precomputed", NULL, NULL},
    {"node/test_globalmaxpool", NULL, NULL},
    {"node/test_globalmaxpool_precomputed", NULL, NULL},
    {"node/test_lrn", NULL, B2},
    {"node/test_lrn_default", NULL, B2},
    /* ---- MatMul ---- */
    {"node/test_matmul_2d", NULL, B2},
    {"node/test_matmul_3d", "is 3-D", "batched 3-D MatMul"},
    {"node/test_matmul_4d", "MatMul of a 4-D NCHW tensor", "batched 4-D MatMul (not a fully connected layer)"},
    /* ---- MaxPool ---- */
    {"node/test_maxpool_1d_default", "is 3-D", "1-D pooling (3-D tensor)"},
    {"node/test_maxpool_2d_ceil", NULL, NULL},
    {"node/test_maxpool_2d_default", NULL, NULL},
    {"node/test_maxpool_2d_dilations", "dilations", "dilated pooling: dse pools have no dilation"},
    {"node/test_maxpool_2d_pads", NULL, NULL},
    {"node/test_maxpool_2d_precomputed_pads", NULL, NULL},
    {"node/test_maxpool_2d_precomputed_same_upper", NULL, NULL},
    {"node/test_maxpool_2d_precomputed_strides", NULL, NULL},
    {"node/test_maxpool_2d_same_lower", NULL, NULL},
    {"node/test_maxpool_2d_same_upper", NULL, NULL},
    {"node/test_maxpool_2d_strides", NULL, NULL},
    {"node/test_maxpool_2d_uint8", "uint8", "uint8 tensors"},
    {"node/test_maxpool_3d_default", "is 5-D", "3-D pooling (5-D tensor)"},
    {"node/test_maxpool_with_argmax_2d_precomputed_pads", "output 1 (z) is used", "its second output is a graph output"},
    {"node/test_maxpool_with_argmax_2d_precomputed_strides", "output 1 (z) is used", "its second output is a graph output"},
    /* ---- Relu, Reshape ---- */
    {"node/test_relu", "is 3-D", "3-D input [3, 4, 5]: not NCHW"},
    {"node/test_reshape_allowzero_reordered", "is 3-D", "3-D input"},
    {"node/test_reshape_extended_dims", "is 3-D", "3-D input [2, 3, 4]: not NCHW"},
    {"node/test_reshape_negative_dim", "is 3-D", "3-D input [2, 3, 4]: not NCHW"},
    {"node/test_reshape_negative_extended_dims", "is 3-D", "3-D input [2, 3, 4]: not NCHW"},
    {"node/test_reshape_one_dim", "is 3-D", "3-D input [2, 3, 4]: not NCHW"},
    {"node/test_reshape_reduced_dims", "is 3-D", "3-D input [2, 3, 4]: not NCHW"},
    {"node/test_reshape_reordered_all_dims", "is 3-D", "3-D input [2, 3, 4]: not NCHW"},
    {"node/test_reshape_reordered_last_dims", "is 3-D", "3-D input [2, 3, 4]: not NCHW"},
    {"node/test_reshape_zero_and_negative_dim", "is 3-D", "3-D input [2, 3, 4]: not NCHW"},
    {"node/test_reshape_zero_dim", "is 3-D", "3-D input [2, 3, 4]: not NCHW"},
    /* ---- Softmax ---- */
    {"node/test_softmax_axis_0", "is 3-D", "3-D input"},
    {"node/test_softmax_axis_1", "is 3-D", "3-D input"},
    {"node/test_softmax_axis_2", "is 3-D", "3-D input"},
    {"node/test_softmax_default_axis", "is 3-D", "3-D input"},
    {"node/test_softmax_example", NULL, NULL},
    {"node/test_softmax_large_number", NULL, B2},
    {"node/test_softmax_negative_axis", "is 3-D", "3-D input"},
    /* ---- pytorch-converted ---- */
    {"pytorch-converted/test_AvgPool2d", NULL, B2},
    {"pytorch-converted/test_AvgPool2d_stride", NULL, B2},
    {"pytorch-converted/test_AvgPool3d", "is 5-D", "3-D pooling"},
    {"pytorch-converted/test_AvgPool3d_stride", "is 5-D", "3-D pooling"},
    {"pytorch-converted/test_AvgPool3d_stride1_pad0_gpu_input", "is 5-D", "3-D pooling"},
    {"pytorch-converted/test_BatchNorm1d_3d_input_eval", "is 3-D", "BatchNorm1d on a 3-D tensor"},
    {"pytorch-converted/test_BatchNorm2d_eval", NULL, B2},
    {"pytorch-converted/test_BatchNorm2d_momentum_eval", NULL, B2},
    {"pytorch-converted/test_BatchNorm3d_eval", "is 5-D", "BatchNorm3d"},
    {"pytorch-converted/test_BatchNorm3d_momentum_eval", "is 5-D", "BatchNorm3d"},
    {"pytorch-converted/test_Conv1d", "is 3-D", "1-D convolution"},
    {"pytorch-converted/test_Conv1d_dilated", "is 3-D", "1-D convolution"},
    {"pytorch-converted/test_Conv1d_groups", "is 3-D", "1-D convolution"},
    {"pytorch-converted/test_Conv1d_pad1", "is 3-D", "1-D convolution"},
    {"pytorch-converted/test_Conv1d_pad1size1", "is 3-D", "1-D convolution"},
    {"pytorch-converted/test_Conv1d_pad2", "is 3-D", "1-D convolution"},
    {"pytorch-converted/test_Conv1d_pad2size1", "is 3-D", "1-D convolution"},
    {"pytorch-converted/test_Conv1d_stride", "is 3-D", "1-D convolution"},
    {"pytorch-converted/test_Conv2d", NULL, B2},
    {"pytorch-converted/test_Conv2d_depthwise", NULL, B2},
    {"pytorch-converted/test_Conv2d_depthwise_padded", NULL, B2},
    {"pytorch-converted/test_Conv2d_depthwise_strided", NULL, B2},
    {"pytorch-converted/test_Conv2d_depthwise_with_multiplier", NULL, B2},
    {"pytorch-converted/test_Conv2d_dilated", NULL, B2},
    {"pytorch-converted/test_Conv2d_groups", NULL, B2},
    {"pytorch-converted/test_Conv2d_groups_thnn", NULL, B2},
    {"pytorch-converted/test_Conv2d_no_bias", NULL, B2},
    {"pytorch-converted/test_Conv2d_padding", NULL, B2},
    {"pytorch-converted/test_Conv2d_strided", NULL, B2},
    {"pytorch-converted/test_Conv3d", "is 5-D", "3-D convolution"},
    {"pytorch-converted/test_Conv3d_dilated", "is 5-D", "3-D convolution"},
    {"pytorch-converted/test_Conv3d_dilated_strided", "is 5-D", "3-D convolution"},
    {"pytorch-converted/test_Conv3d_groups", "is 5-D", "3-D convolution"},
    {"pytorch-converted/test_Conv3d_no_bias", "is 5-D", "3-D convolution"},
    {"pytorch-converted/test_Conv3d_stride", "is 5-D", "3-D convolution"},
    {"pytorch-converted/test_Conv3d_stride_padding", "is 5-D", "3-D convolution"},
    {"pytorch-converted/test_Linear", NULL, B2},
    {"pytorch-converted/test_MaxPool1d", "is 3-D", "1-D pooling"},
    {"pytorch-converted/test_MaxPool1d_stride", "is 3-D", "1-D pooling"},
    {"pytorch-converted/test_MaxPool1d_stride_padding_dilation", "is 3-D", "1-D pooling"},
    {"pytorch-converted/test_MaxPool2d", NULL, NULL},
    {"pytorch-converted/test_MaxPool2d_stride_padding_dilation", "dilations", "dilated pooling"},
    {"pytorch-converted/test_MaxPool3d", "is 5-D", "3-D pooling"},
    {"pytorch-converted/test_MaxPool3d_stride", "is 5-D", "3-D pooling"},
    {"pytorch-converted/test_MaxPool3d_stride_padding", "is 5-D", "3-D pooling"},
    {"pytorch-converted/test_ReLU", NULL, B2},
    {"pytorch-converted/test_Softmax", NULL, B2},
    {"pytorch-converted/test_softmax_functional_dim3", "axis 3", "softmax over the last (W) axis of a 4-D tensor"},
    {"pytorch-converted/test_softmax_lastdim", NULL, B2},
    /* ---- pytorch-operator ---- */
    {"pytorch-operator/test_operator_add_broadcast", "float64", "float64 tensors"},
    {"pytorch-operator/test_operator_add_size1_broadcast", "float64", "float64 tensors"},
    {"pytorch-operator/test_operator_add_size1_right_broadcast", "float64", "float64 tensors"},
    {"pytorch-operator/test_operator_add_size1_singleton_broadcast", "float64", "float64 tensors"},
    {"pytorch-operator/test_operator_addconstant", "float64", "float64 tensors"},
    {"pytorch-operator/test_operator_addmm", "must be a constant", "the second Gemm multiplies by a computed tensor, not a weight"},
    {"pytorch-operator/test_operator_clip", NULL, NULL},
    {"pytorch-operator/test_operator_concat2", "is a constant", "two graph inputs"},
    {"pytorch-operator/test_operator_conv", NULL, "batch 20 re-declared as 1, per-sample shape compared"},
    {"pytorch-operator/test_operator_convtranspose", NULL, B2},
    {"pytorch-operator/test_operator_flatten", NULL, NULL},
    {"pytorch-operator/test_operator_maxpool", "is 3-D", "1-D pooling"},
    {"pytorch-operator/test_operator_mm", NULL, B2 "; the second matrix bound as the weight"},
    {"pytorch-operator/test_operator_view", "is 1-D", "1-D input"},
    /* ---- issue 17's operators (Sigmoid, HardSigmoid, HardSwish, Mul, Div, Sub, Pow,
     * Sqrt, Erf, ReduceMean, LayerNormalization, Transpose, Split, Slice and the
     * shape arithmetic folded on the way): their node tests are mostly 1-D and 3-D;
     * LayerNormalization's have three graph outputs (mean and 1/std too) ---- */
    {"node/test_cast_BFLOAT16_to_FLOAT", "data type bfloat16", "bfloat16 tensors: dse is float32 only"},
    {"node/test_cast_DOUBLE_to_FLOAT", "data type float64", "float64 tensors: dse is float32 only"},
    {"node/test_cast_DOUBLE_to_FLOAT16", "data type float64", "float64 tensors: dse is float32 only"},
    {"node/test_cast_FLOAT16_to_DOUBLE", "data type float16", "float16 tensors: dse is float32 only"},
    {"node/test_cast_FLOAT16_to_FLOAT", "data type float16", "float16 tensors: dse is float32 only"},
    {"node/test_cast_FLOAT_to_BFLOAT16", "Cast of a computed tensor: dse folds Cas", "Cast of an activation: only shape arithmetic is folded"},
    {"node/test_cast_FLOAT_to_DOUBLE", "Cast of a computed tensor: dse folds Cas", "Cast of an activation: only shape arithmetic is folded"},
    {"node/test_cast_FLOAT_to_FLOAT16", "Cast of a computed tensor: dse folds Cas", "Cast of an activation: only shape arithmetic is folded"},
    {"node/test_cast_FLOAT_to_STRING", "Cast of a computed tensor: dse folds Cas", "Cast of an activation: only shape arithmetic is folded"},
    {"node/test_cast_STRING_to_FLOAT", "data type string", "string tensors: dse is float32 only"},
    {"node/test_castlike_BFLOAT16_to_FLOAT_expanded", "data type bfloat16", "bfloat16 tensors: dse is float32 only"},
    {"node/test_castlike_DOUBLE_to_FLOAT16_expanded", "data type float64", "float64 tensors: dse is float32 only"},
    {"node/test_castlike_DOUBLE_to_FLOAT_expanded", "data type float64", "float64 tensors: dse is float32 only"},
    {"node/test_castlike_FLOAT16_to_DOUBLE_expanded", "data type float16", "float16 tensors: dse is float32 only"},
    {"node/test_castlike_FLOAT16_to_FLOAT_expanded", "data type float16", "float16 tensors: dse is float32 only"},
    {"node/test_castlike_FLOAT_to_BFLOAT16_expanded", "Cast of a computed tensor: dse folds Cas", "Cast of an activation: only shape arithmetic is folded"},
    {"node/test_castlike_FLOAT_to_DOUBLE_expanded", "Cast of a computed tensor: dse folds Cas", "Cast of an activation: only shape arithmetic is folded"},
    {"node/test_castlike_FLOAT_to_FLOAT16_expanded", "Cast of a computed tensor: dse folds Cas", "Cast of an activation: only shape arithmetic is folded"},
    {"node/test_castlike_FLOAT_to_STRING_expanded", "Cast of a computed tensor: dse folds Cas", "Cast of an activation: only shape arithmetic is folded"},
    {"node/test_castlike_STRING_to_FLOAT_expanded", "data type string", "string tensors: dse is float32 only"},
    {"node/test_constantofshape_float_ones", "data type int64", "int64 tensors: dse is float32 only"},
    {"node/test_constantofshape_int_shape_zero", "data type int64", "int64 tensors: dse is float32 only"},
    {"node/test_constantofshape_int_zeros", "data type int64", "int64 tensors: dse is float32 only"},
    {"node/test_div", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_div_bcast", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_div_example", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_div_uint8", "data type uint8", "uint8 tensors: dse is float32 only"},
    {"node/test_erf", "Erf is imported only as erf(x / sqrt 2) ", "a lone Erf: only the step of a pattern dse fuses"},
    {"node/test_gather_0", "Gather of a computed tensor: dse folds G", "Gather of an activation: only shape arithmetic is folded"},
    {"node/test_gather_1", "Gather of a computed tensor: dse folds G", "Gather of an activation: only shape arithmetic is folded"},
    {"node/test_gather_2d_indices", "Gather of a computed tensor: dse folds G", "Gather of an activation: only shape arithmetic is folded"},
    {"node/test_gather_negative_indices", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_hardsigmoid", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_hardsigmoid_default", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_hardsigmoid_example", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_hardswish", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_hardswish_expanded", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_layer_normalization_2d_axis0", "LayerNormalization from axis 0 of a 2-D NCHW tensor", "normalised over other axes than the channels"},
    {"node/test_layer_normalization_2d_axis1", "output 1 (Mean) is used", "its second output is a graph output"},
    {"node/test_layer_normalization_2d_axis_negative_1", "output 1 (Mean) is used", "its second output is a graph output"},
    {"node/test_layer_normalization_2d_axis_negative_2", "LayerNormalization from axis 0 of a 2-D NCHW tensor", "normalised over other axes than the channels"},
    {"node/test_layer_normalization_3d_axis0_epsilon", "is 3-D", "3-D input: not NCHW"},
    {"node/test_layer_normalization_3d_axis1_epsilon", "is 3-D", "3-D input: not NCHW"},
    {"node/test_layer_normalization_3d_axis2_epsilon", "is 3-D", "3-D input: not NCHW"},
    {"node/test_layer_normalization_3d_axis_negative_1_epsilon", "is 3-D", "3-D input: not NCHW"},
    {"node/test_layer_normalization_3d_axis_negative_2_epsilon", "is 3-D", "3-D input: not NCHW"},
    {"node/test_layer_normalization_3d_axis_negative_3_epsilon", "is 3-D", "3-D input: not NCHW"},
    {"node/test_layer_normalization_4d_axis0", "LayerNormalization from axis 0 of a 4-D NCHW tensor", "normalised over other axes than the channels"},
    {"node/test_layer_normalization_4d_axis1", "LayerNormalization from axis 1 of a 4-D NCHW tensor", "normalised over other axes than the channels"},
    {"node/test_layer_normalization_4d_axis2", "LayerNormalization from axis 2 of a 4-D NCHW tensor", "normalised over other axes than the channels"},
    {"node/test_layer_normalization_4d_axis3", "LayerNormalization from axis 3 of a 4-D NCHW tensor", "normalised over other axes than the channels"},
    {"node/test_layer_normalization_4d_axis_negative_1", "LayerNormalization from axis 3 of a 4-D NCHW tensor", "normalised over other axes than the channels"},
    {"node/test_layer_normalization_4d_axis_negative_2", "LayerNormalization from axis 2 of a 4-D NCHW tensor", "normalised over other axes than the channels"},
    {"node/test_layer_normalization_4d_axis_negative_3", "LayerNormalization from axis 1 of a 4-D NCHW tensor", "normalised over other axes than the channels"},
    {"node/test_layer_normalization_4d_axis_negative_4", "LayerNormalization from axis 0 of a 4-D NCHW tensor", "normalised over other axes than the channels"},
    {"node/test_layer_normalization_default_axis", "LayerNormalization from axis 3 of a 4-D NCHW tensor", "normalised over other axes than the channels"},
    {"node/test_mul", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_mul_bcast", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_mul_example", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_mul_uint8", "data type uint8", "uint8 tensors: dse is float32 only"},
    {"node/test_mvn_expanded", "ReduceMean over the batch axis", "ReduceMean over the batch axis"},
    {"node/test_pow", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_pow_bcast_array", "Pow is imported only as (x - mean(x))^2 ", "a lone Pow: only the step of a pattern dse fuses"},
    {"node/test_pow_bcast_scalar", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_pow_example", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_pow_types_float", "data type int64", "int64 tensors: dse is float32 only"},
    {"node/test_pow_types_float32_int32", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_pow_types_float32_int64", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_pow_types_float32_uint32", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_pow_types_float32_uint64", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_pow_types_int", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_pow_types_int32_float32", "data type int32", "int32 tensors: dse is float32 only"},
    {"node/test_pow_types_int32_int32", "data type int32", "int32 tensors: dse is float32 only"},
    {"node/test_pow_types_int64_float32", "data type int64", "int64 tensors: dse is float32 only"},
    {"node/test_pow_types_int64_int64", "data type int64", "int64 tensors: dse is float32 only"},
    {"node/test_reduce_max_default_axes_keepdim_example", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_max_default_axes_keepdims_random", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_max_do_not_keepdims_example", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_max_do_not_keepdims_random", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_max_keepdims_example", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_max_keepdims_random", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_max_negative_axes_keepdims_example", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_max_negative_axes_keepdims_random", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_mean_default_axes_keepdims_example", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_mean_default_axes_keepdims_random", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_mean_do_not_keepdims_example", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_mean_do_not_keepdims_random", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_mean_keepdims_example", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_mean_keepdims_random", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_mean_negative_axes_keepdims_example", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_reduce_mean_negative_axes_keepdims_random", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_shape", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_shape_clip_end", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_shape_clip_start", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_shape_end_1", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_shape_end_negative_1", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_shape_example", "graph output y is a constant", "graph output y is a constant"},
    {"node/test_shape_start_1", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_shape_start_1_end_2", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_shape_start_1_end_negative_1", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_shape_start_negative_1", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_sigmoid", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_sigmoid_example", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_slice", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_slice_default_axes", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_slice_default_steps", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_slice_end_out_of_bounds", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_slice_neg", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_slice_neg_steps", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_slice_negative_axes", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_slice_start_out_of_bounds", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_split_equal_parts_1d", "is 1-D", "1-D input: no batch axis"},
    {"node/test_split_equal_parts_2d", NULL, NULL},
    {"node/test_split_equal_parts_default_axis", "is 1-D", "1-D input: no batch axis"},
    {"node/test_split_variable_parts_1d", "is 1-D", "1-D input: no batch axis"},
    {"node/test_split_variable_parts_2d", NULL, NULL},
    {"node/test_split_variable_parts_default_axis", "is 1-D", "1-D input: no batch axis"},
    {"node/test_split_zero_size_splits", "is 1-D", "1-D input: no batch axis"},
    {"node/test_sqrt", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_sqrt_example", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_squeeze", "Squeeze of a computed tensor: dse folds ", "Squeeze of an activation: only shape arithmetic is folded"},
    {"node/test_squeeze_negative_axes", "Squeeze of a computed tensor: dse folds ", "Squeeze of an activation: only shape arithmetic is folded"},
    {"node/test_sub", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_sub_bcast", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_sub_example", "is 1-D", "1-D tensors: not NCHW"},
    {"node/test_sub_uint8", "data type uint8", "uint8 tensors: dse is float32 only"},
    {"node/test_transpose_all_permutations_0", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_transpose_all_permutations_1", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_transpose_all_permutations_2", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_transpose_all_permutations_3", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_transpose_all_permutations_4", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_transpose_all_permutations_5", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_transpose_default", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_unsqueeze_axis_0", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_unsqueeze_axis_1", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_unsqueeze_axis_2", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_unsqueeze_axis_3", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_unsqueeze_negative_axes", "Unsqueeze of a 4-D activation: dse takes only axes [1]", "Unsqueeze of an activation at axis -2: only torch.stack's axis 1 (a view of branches)"},
    {"node/test_unsqueeze_three_axes", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_unsqueeze_two_axes", "is 3-D", "3-D tensors: not NCHW"},
    {"node/test_unsqueeze_unsorted_axes", "is 3-D", "3-D tensors: not NCHW"},
    {"pytorch-converted/test_AvgPool1d", "is 3-D", "3-D tensors: not NCHW"},
    {"pytorch-converted/test_AvgPool1d_stride", "is 3-D", "3-D tensors: not NCHW"},
    {"pytorch-converted/test_Embedding", "data type int64", "int64 tensors: dse is float32 only"},
    {"pytorch-converted/test_Embedding_sparse", "data type int64", "int64 tensors: dse is float32 only"},
    {"pytorch-converted/test_GLU", NULL, NULL},
    {"pytorch-converted/test_GLU_dim", "is 3-D", "3-D tensors: not NCHW"},
    {"pytorch-converted/test_Linear_no_bias", NULL, NULL},
    {"pytorch-converted/test_PixelShuffle", NULL, NULL}, /* 6-D Reshape, Transpose, Reshape */
    {"pytorch-converted/test_Sigmoid", NULL, NULL},
    {"pytorch-operator/test_operator_chunk", "is 1-D", "1-D input: no batch axis"},
    {"pytorch-operator/test_operator_index", "Squeeze of a computed tensor: dse folds ", "Squeeze of an activation: only shape arithmetic is folded"},
    {"pytorch-operator/test_operator_non_float_params", "data type int64", "int64 tensors: dse is float32 only"},
    {"pytorch-operator/test_operator_permute2", "is 6-D", "6-D tensors: not NCHW"},
    {"pytorch-operator/test_operator_pow", "Pow is imported only as (x - mean(x))^2 ", "a lone Pow: only the step of a pattern dse fuses"},
    {"pytorch-operator/test_operator_reduced_mean", "ReduceMean with keepdims=0 over these axes gives a", "ReduceMean with keepdims=0 over these axes gives a tensor dse cannot h"},
    {"pytorch-operator/test_operator_reduced_mean_keepdim", NULL, NULL},
    {"pytorch-operator/test_operator_sqrt", "Sqrt is imported only as sqrt(variance +", "a lone Sqrt: only the step of a pattern dse fuses"},
    /* ---- LeakyRelu, PRelu, Elu, Tanh, Resize, Upsample: activations,
     * nearest upsampling by integer factors, bilinear resizing ---- */
    {"node/test_celu_expanded", NULL, NULL},
    {"node/test_elu", "is 3-D", "3-D input: not NCHW"},
    {"node/test_elu_default", "is 3-D", "3-D input: not NCHW"},
    {"node/test_elu_example", "is 1-D", "1-D input: no batch axis"},
    {"node/test_leakyrelu", "is 3-D", "3-D input: not NCHW"},
    {"node/test_leakyrelu_default", "is 3-D", "3-D input: not NCHW"},
    {"node/test_leakyrelu_example", "is 1-D", "1-D input: no batch axis"},
    {"node/test_prelu_broadcast", "is 3-D", "3-D input: not NCHW"},
    {"node/test_prelu_example", "is 3-D", "3-D input: not NCHW"},
    {"node/test_resize_downsample_scales_cubic", "mode cubic", "cubic interpolation: nearest upsampling only"},
    {"node/test_resize_downsample_scales_cubic_A_n0p5_exclude_outside", "mode cubic", "cubic interpolation: nearest upsampling only"},
    {"node/test_resize_downsample_scales_cubic_align_corners", "mode cubic", "cubic interpolation: nearest upsampling only"},
    {"node/test_resize_downsample_scales_linear", "not a whole number of them", "a scale giving fractional rows"},
    {"node/test_resize_downsample_scales_linear_align_corners", "not a whole number of them", "a scale giving fractional rows"},
    {"node/test_resize_downsample_scales_nearest", "not a whole number of them", "a scale giving fractional rows"},
    {"node/test_resize_downsample_sizes_cubic", "mode cubic", "cubic interpolation: nearest upsampling only"},
    {"node/test_resize_downsample_sizes_linear_pytorch_half_pixel", "pytorch_half_pixel to one row or column", "pytorch_half_pixel reads the first row there, dse the middle"},
    {"node/test_resize_downsample_sizes_nearest", "dse resizes by integer factors, or to any size reading input floor(o H / h)", "a size not an integer multiple, in a mode other than asymmetric floor"},
    {"node/test_resize_downsample_sizes_nearest_tf_half_pixel_for_nn", "dse resizes by integer factors, or to any size reading input floor(o H / h)", "a size not an integer multiple, in a mode other than asymmetric floor"},
    {"node/test_resize_tf_crop_and_resize", "linear resize with coordinate mode other than", "tf_crop_and_resize coordinates"},
    {"node/test_resize_upsample_scales_cubic", "mode cubic", "cubic interpolation: nearest upsampling only"},
    {"node/test_resize_upsample_scales_cubic_A_n0p5_exclude_outside", "mode cubic", "cubic interpolation: nearest upsampling only"},
    {"node/test_resize_upsample_scales_cubic_align_corners", "mode cubic", "cubic interpolation: nearest upsampling only"},
    {"node/test_resize_upsample_scales_cubic_asymmetric", "mode cubic", "cubic interpolation: nearest upsampling only"},
    {"node/test_resize_upsample_scales_linear", NULL, NULL},
    {"node/test_resize_upsample_scales_linear_align_corners", NULL, NULL},
    {"node/test_resize_upsample_scales_nearest", NULL, NULL},
    {"node/test_resize_upsample_sizes_cubic", "mode cubic", "cubic interpolation: nearest upsampling only"},
    {"node/test_resize_upsample_sizes_nearest", "dse resizes by integer factors, or to any size reading input floor(o H / h)", "a size not an integer multiple, in a mode other than asymmetric floor"},
    {"node/test_resize_upsample_sizes_nearest_ceil_half_pixel", "do not read input floor(i / scale)", "a rounding other than floor(i / scale)"},
    {"node/test_resize_upsample_sizes_nearest_floor_align_corners", "do not read input floor(i / scale)", "a rounding other than floor(i / scale)"},
    {"node/test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric", "do not read input floor(i / scale)", "a rounding other than floor(i / scale)"},
    {"node/test_tanh", "is 3-D", "3-D input: not NCHW"},
    {"node/test_tanh_example", "is 1-D", "1-D input: no batch axis"},
    {"node/test_upsample_nearest", NULL, NULL},
    {"pytorch-converted/test_ELU", "is 3-D", "3-D input: not NCHW"},
    {"pytorch-converted/test_LeakyReLU", "is 3-D", "3-D input: not NCHW"},
    {"pytorch-converted/test_LeakyReLU_with_negval", "is 3-D", "3-D input: not NCHW"},
    {"pytorch-converted/test_PReLU_1d", "is 3-D", "3-D input: not NCHW"},
    {"pytorch-converted/test_PReLU_1d_multiparam", "is 3-D", "3-D input: not NCHW"},
    {"pytorch-converted/test_PReLU_2d", NULL, NULL},
    {"pytorch-converted/test_PReLU_2d_multiparam", NULL, NULL},
    {"pytorch-converted/test_PReLU_3d", "is 5-D", "5-D input: not NCHW"},
    {"pytorch-converted/test_PReLU_3d_multiparam", "is 5-D", "5-D input: not NCHW"},
    {"pytorch-converted/test_Tanh", NULL, NULL},
    /* ---- simple ---- */
    {"simple/test_single_relu_model", NULL, NULL},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static const char *supported_ops[] = {
    "Conv", "Gemm", "MatMul", "Relu", "Clip", "LRN", "MaxPool", "AveragePool",
    "GlobalAveragePool", "BatchNormalization", "Add", "Sum", "Concat", "Flatten", "Reshape",
    "Dropout", "Softmax", "Identity", "Constant",
    /* issue 17: the mobile networks' and ConvNeXt's operators, their
     * decomposed forms, and the shape arithmetic folded on the way */
    "Sigmoid", "HardSigmoid", "HardSwish", "Mul", "Div", "Sub", "Pow", "Sqrt", "Erf", "Gelu",
    "ReduceMean", "LayerNormalization", "Transpose", "Split", "Slice", "Shape", "Gather",
    "Unsqueeze", "Squeeze", "Cast", "ConstantOfShape",
    /* detectors' and segmenters' activations and upsampling */
    "LeakyRelu", "PRelu", "Elu", "Tanh", "Resize", "Upsample",
    /* decoders' learned upsampling; style transfer's and GAN generators'
     * normalisation and padding */
    "ConvTranspose", "InstanceNormalization", "Pad",
    /* super-resolution's sub-pixel upsampling; YOLOv4's Mish (x tanh(softplus x)) */
    "DepthToSpace", "Softplus",
    /* CBAM's and other attention blocks' maxima (over channels, global) */
    "ReduceMax", "GlobalMaxPool", "GroupNormalization",
    /* space to depth (pixel unshuffle) */
    "SpaceToDepth",
    /* L2 normalisation (F.normalize; SSD, embeddings) */
    "ReduceL2", "Expand", "LpNormalization",
    /* YOLOv4's activation, fused from Softplus, Tanh and Mul or as ONNX's operator */
    "Mish",
    /* split attention (SKNet, ResNeSt): the sum over the branches of a 5-D view */
    "ReduceSum", NULL};

static int op_supported(const char *op)
{
    for (int i = 0; supported_ops[i]; i++)
        if (!strcmp(op, supported_ops[i])) return 1;
    return 0;
}

static Onnx__ModelProto *load_model(const char *path)
{
    size_t len;
    uint8_t *b = (uint8_t *)tfile_read(path, &len);
    if (!b) return NULL;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, b);
    free(b);
    return m;
}

static int all_ops_supported(const Onnx__ModelProto *m)
{
    if (!m->graph || !m->graph->n_node) return 0;
    for (size_t i = 0; i < m->graph->n_node; i++)
        if (!op_supported(m->graph->node[i]->op_type)) return 0;
    return 1;
}

static void set_batch(Onnx__ValueInfoProto *v, int64_t from, int64_t to)
{
    Onnx__TensorShapeProto__Dimension *d = onnxprep_dim0(v, 1);
    if (d && d->dim_value == from) d->dim_value = to;
}

/* Batch B > 1 re-declared as 1 (top comment); *(int64_t *)ctx = B. */
static void fix_batch(Onnx__GraphProto *g, Onnx__ValueInfoProto *first, void *ctx)
{
    int64_t *batch = ctx;
    Onnx__TensorShapeProto__Dimension *d = onnxprep_dim0(first, 2);
    *batch = 1;
    if (!d || d->dim_value <= 1) return;
    *batch = d->dim_value;
    /* Flatten at axis 0 folds the batch in: keep it so the importer refuses. */
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        if (!strcmp(nd->op_type, "Reshape")) return;
        for (size_t a = 0; a < nd->n_attribute; a++)
            if (!strcmp(nd->op_type, "Flatten") && !strcmp(nd->attribute[a]->name, "axis") &&
                (nd->attribute[a]->i == 0 || nd->attribute[a]->i == -4))
                return;
    }
    set_batch(first, *batch, 1);
    for (size_t i = 0; i < g->n_output; i++) set_batch(g->output[i], *batch, 1);
    for (size_t i = 0; i < g->n_value_info; i++) set_batch(g->value_info[i], *batch, 1);
}

/* The model of dir as a deployable file (see the top comment).  Returns
 * the serialised bytes; *batch = the original batch (1 if none). */
static uint8_t *prepare(const char *dir, size_t *len, int64_t *batch)
{
    *batch = 1;
    return onnxprep_bind(dir, len, fix_batch, batch);
}

static int find_case(const char *rel)
{
    for (int i = 0; i < NCASES; i++)
        if (!strcmp(cases[i].dir, rel)) return i;
    return -1;
}

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int run_case(const tcase *c, int survey, int *ran, int *refused)
{
    char dir[512], err[BASE_ERRLEN], pb[600];
    snprintf(dir, sizeof dir, "%s/%s", DATA, c->dir);
    size_t len;
    int64_t batch;
    uint8_t *buf = prepare(dir, &len, &batch);
    CHECK(buf != NULL, "%s: cannot prepare model", c->dir);
    if (!buf) return -1;
    err[0] = 0;
    net *n = onnx_import_buffer(buf, len, c->dir, err);
    free(buf);
    if (survey) {
        if (n) printf("SURVEY %s: ok %dx%dx%d\n", c->dir, n->layers[n->n - 1].out.c,
                      n->layers[n->n - 1].out.h, n->layers[n->n - 1].out.w);
        else printf("SURVEY %s: %s\n", c->dir, err);
    }
    if (c->err) {
        (*refused)++;
        CHECK(!n, "%s: expected a refusal (%s) but it imported", c->dir, c->why);
        CHECK(n || strstr(err, c->err), "%s: error \"%s\" does not say \"%s\"", c->dir, err, c->err);
        CHECK(n || !strchr(err, '\n'), "%s: error has more than one line", c->dir);
        CHECK(n || !strncmp(err, c->dir, strlen(c->dir)), "%s: error does not name the file: %s",
              c->dir, err);
        net_free(n);
        return 0;
    }
    (*ran)++;
    CHECK(n != NULL, "%s: import failed: %s", c->dir, err);
    if (!n) return -1;
    int64_t dims[8];
    int nd = 0;
    /* Several outputs: the importer joins them, flattened in order, into
     * one (C x 1 x 1) layer; their element counts per sample add up. */
    int64_t joined = 0;
    int nout = 0;
    for (;; nout++) {
        snprintf(pb, sizeof pb, "%s/test_data_set_0/output_%d.pb", dir, nout);
        struct stat pst;
        if (stat(pb, &pst) != 0) break;
        float *r = onnx_read_tensor(pb, dims, &nd, err);
        CHECK(r != NULL, "%s: cannot read reference output %d: %s", c->dir, nout, err);
        if (!r) break;
        int64_t per = 1;
        for (int k = 1; k < nd; k++) per *= dims[k];
        joined += per;
        free(r);
    }
    if (nout > 1) {
        net_shape o = n->layers[n->n - 1].out;
        CHECK(o.c == joined && o.h == 1 && o.w == 1, "%s: %d outputs joined into %dx%dx%d, want %lldx1x1",
              c->dir, nout, o.c, o.h, o.w, (long long)joined);
        net_free(n);
        return 0;
    }
    snprintf(pb, sizeof pb, "%s/test_data_set_0/output_0.pb", dir);
    float *ref = onnx_read_tensor(pb, dims, &nd, err);
    CHECK(ref != NULL, "%s: cannot read reference output: %s", c->dir, err);
    if (ref) {
        net_shape o = n->layers[n->n - 1].out;
        int64_t want[3] = {-1, -1, -1};
        if (nd == 4) want[0] = dims[1], want[1] = dims[2], want[2] = dims[3];
        if (nd == 2) want[0] = dims[1], want[1] = 1, want[2] = 1;
        CHECK(nd == 2 || nd == 4, "%s: reference output is %d-D", c->dir, nd);
        CHECK(nd >= 1 && dims[0] == batch, "%s: reference batch %lld, model batch %lld", c->dir,
              (long long)(nd ? dims[0] : -1), (long long)batch);
        CHECK(o.c == want[0] && o.h == want[1] && o.w == want[2],
              "%s: net output %dx%dx%d, reference %lldx%lldx%lld", c->dir, o.c, o.h, o.w,
              (long long)want[0], (long long)want[1], (long long)want[2]);
        /* The output tensor's element count per sample, independently. */
        int64_t per = 1;
        for (int k = 1; k < nd; k++) per *= dims[k];
        CHECK(net_shape_numel(o) == per, "%s: %lld elements per sample, reference %lld", c->dir,
              (long long)net_shape_numel(o), (long long)per);
        free(ref);
    }
    net_free(n);
    return 0;
}

int main(void)
{
    struct stat st;
    if (stat(DATA "/node", &st) != 0) {
        printf("SKIP: %s missing (Debian package libonnx-testdata; scripts/bootstrap)\n", DATA);
        return 77;
    }
    int survey = getenv("DSE_ONNX_SURVEY") != NULL;
    static const char *roots[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};
    int listed = 0, ran = 0, refused = 0, unsupported_ops = 0;
    char *seen[2048];
    int nseen = 0;
    for (int r = 0; r < 4; r++) {
        char root[300];
        snprintf(root, sizeof root, "%s/%s", DATA, roots[r]);
        DIR *d = opendir(root);
        CHECK(d != NULL, "cannot list %s", root);
        if (!d) continue;
        for (struct dirent *e; (e = readdir(d));) {
            if (strncmp(e->d_name, "test_", 5) || nseen == 2048) continue;
            char rel[400];
            snprintf(rel, sizeof rel, "%s/%s", roots[r], e->d_name);
            seen[nseen++] = strdup(rel);
        }
        closedir(d);
    }
    qsort(seen, (size_t)nseen, sizeof *seen, cmpstr);
    for (int i = 0; i < nseen; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s/model.onnx", DATA, seen[i]);
        Onnx__ModelProto *m = load_model(path);
        int sup = m && all_ops_supported(m);
        if (m) onnx__model_proto__free_unpacked(m, NULL);
        int c = find_case(seen[i]);
        if (!sup) {
            unsupported_ops++;
            CHECK(c < 0, "%s is listed but uses an operator dse does not import", seen[i]);
            continue;
        }
        CHECK(c >= 0, "%s uses only operators dse imports but is not listed in cases[]", seen[i]);
        if (c < 0 && survey) { /* its outcome, to write its line of cases[] */
            tcase tc = {seen[i], NULL, NULL};
            int r0 = 0, r1 = 0;
            run_case(&tc, 1, &r0, &r1);
        }
        if (c < 0) continue;
        listed++;
        run_case(&cases[c], survey, &ran, &refused);
    }
    for (int i = 0; i < NCASES; i++) {
        int found = 0;
        for (int k = 0; k < nseen && !found; k++) found = !strcmp(seen[k], cases[i].dir);
        CHECK(found, "%s is listed but not in the test data", cases[i].dir);
    }
    for (int i = 0; i < nseen; i++) free(seen[i]);
    printf("conformance: %d test models, %d with only supported operators: %d imported with "
           "the reference output shape, %d refused as listed; %d use other operators\n",
           nseen, listed, ran, refused, unsupported_ops);
    return check_done("test_onnx_conformance");
}
