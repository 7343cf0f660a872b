/* extra_nets.h -- networks beyond the zoo for the export tests, written to
 * reach the exporter's glue: an FC reading a 4-D tensor directly (implicit
 * flatten), BatchNorm and LRN on [1, N] tensors (4-D views), Add of a 2-D
 * and a 4-D tensor, Sum of three, ReLU6, dilated depthwise convolution,
 * asymmetric pads, ceil_mode, count_include_pad, and an MLP whose input is
 * a plain feature vector; the mobile networks' and ConvNeXt's kinds, which
 * the exporter writes in their opset-13 forms (HardSwish as HardSigmoid and
 * Mul, LayerNorm and GELU decomposed, ChannelShuffle as Reshape-Transpose-
 * Reshape) and the importer fuses back. */
#ifndef DSE_EXTRA_NETS_H
#define DSE_EXTRA_NETS_H

static const char *const extra_nets[] = {
    "{\"format\": \"dse-network\", \"version\": 1, \"name\": \"glue\","
    " \"input\": {\"name\": \"img\", \"shape\": [8, 6, 6]},"
    " \"layers\": ["
    "  {\"name\": \"c1\", \"kind\": \"Conv\", \"inputs\": [\"img\"], \"out_channels\": 4,"
    "   \"kernel\": [3, 3], \"pads\": [1, 1, 1, 1]},"
    "  {\"name\": \"c2\", \"kind\": \"Conv\", \"inputs\": [\"c1\"], \"out_channels\": 4,"
    "   \"kernel\": [3, 3], \"dilation\": [2, 2], \"pads\": [2, 2, 2, 2], \"groups\": 4, \"bias\": false},"
    "  {\"name\": \"mp\", \"kind\": \"MaxPool\", \"inputs\": [\"c2\"], \"kernel\": [2, 3],"
    "   \"stride\": [1, 2], \"pads\": [0, 1, 1, 0]},"
    "  {\"name\": \"ap\", \"kind\": \"AveragePool\", \"inputs\": [\"mp\"], \"kernel\": [3, 3],"
    "   \"stride\": [2, 2], \"pads\": [1, 1, 1, 1], \"ceil_mode\": true, \"count_include_pad\": true},"
    "  {\"name\": \"fc1\", \"kind\": \"FC\", \"inputs\": [\"ap\"], \"out_features\": 10},"
    "  {\"name\": \"bn1\", \"kind\": \"BatchNorm\", \"inputs\": [\"fc1\"], \"epsilon\": 0.001},"
    "  {\"name\": \"r6\", \"kind\": \"ReLU\", \"inputs\": [\"bn1\"], \"max\": 6},"
    "  {\"name\": \"drop\", \"kind\": \"Dropout\", \"inputs\": [\"r6\"]},"
    "  {\"name\": \"fc2\", \"kind\": \"FC\", \"inputs\": [\"drop\"], \"out_features\": 4, \"bias\": false},"
    "  {\"name\": \"gap\", \"kind\": \"GlobalAveragePool\", \"inputs\": [\"c2\"]},"
    "  {\"name\": \"add\", \"kind\": \"Add\", \"inputs\": [\"fc2\", \"gap\"]},"
    "  {\"name\": \"lrn\", \"kind\": \"LRN\", \"inputs\": [\"add\"], \"size\": 3, \"alpha\": 0.0002,"
    "   \"beta\": 0.5, \"k\": 2},"
    "  {\"name\": \"fc3\", \"kind\": \"FC\", \"inputs\": [\"gap\"], \"out_features\": 4},"
    "  {\"name\": \"sum3\", \"kind\": \"Add\", \"inputs\": [\"lrn\", \"gap\", \"fc3\"]},"
    "  {\"name\": \"cat\", \"kind\": \"Concat\", \"inputs\": [\"sum3\", \"gap\"]},"
    "  {\"name\": \"flat\", \"kind\": \"Flatten\", \"inputs\": [\"cat\"]},"
    "  {\"name\": \"prob\", \"kind\": \"Softmax\", \"inputs\": [\"flat\"]}"
    " ]}",
    "{\"format\": \"dse-network\", \"version\": 1, \"name\": \"mlp\","
    " \"input\": {\"name\": \"features\", \"shape\": [20, 1, 1]},"
    " \"layers\": ["
    "  {\"name\": \"h1\", \"kind\": \"FC\", \"inputs\": [\"features\"], \"out_features\": 16},"
    "  {\"name\": \"a1\", \"kind\": \"ReLU\", \"inputs\": [\"h1\"]},"
    "  {\"name\": \"h2\", \"kind\": \"FC\", \"inputs\": [\"a1\"], \"out_features\": 16},"
    "  {\"name\": \"res\", \"kind\": \"Add\", \"inputs\": [\"h2\", \"a1\"]},"
    "  {\"name\": \"both\", \"kind\": \"Concat\", \"inputs\": [\"res\", \"h1\"]},"
    "  {\"name\": \"out\", \"kind\": \"FC\", \"inputs\": [\"both\"], \"out_features\": 5},"
    "  {\"name\": \"prob\", \"kind\": \"Softmax\", \"inputs\": [\"out\"]}"
    " ]}",
    "{\"format\": \"dse-network\", \"version\": 1, \"name\": \"pixelsoftmax\","
    " \"input\": {\"name\": \"x\", \"shape\": [3, 5, 7]},"
    " \"layers\": ["
    "  {\"name\": \"conv\", \"kind\": \"Conv\", \"inputs\": [\"x\"], \"out_channels\": 6,"
    "   \"kernel\": [1, 3], \"stride\": [2, 1], \"pads\": [0, 1, 0, 1]},"
    "  {\"name\": \"sm\", \"kind\": \"Softmax\", \"inputs\": [\"conv\"]}"
    " ]}",
    "{\"format\": \"dse-network\", \"version\": 1, \"name\": \"mobile\","
    " \"input\": {\"name\": \"x\", \"shape\": [8, 6, 6]},"
    " \"layers\": ["
    "  {\"name\": \"c1\", \"kind\": \"Conv\", \"inputs\": [\"x\"], \"out_channels\": 8, \"kernel\": 1},"
    "  {\"name\": \"hs\", \"kind\": \"HardSigmoid\", \"inputs\": [\"c1\"], \"alpha\": 0.25, \"beta\": 0.4},"
    "  {\"name\": \"hw\", \"kind\": \"HardSwish\", \"inputs\": [\"c1\"]},"
    "  {\"name\": \"sig\", \"kind\": \"Sigmoid\", \"inputs\": [\"hw\"]},"
    "  {\"name\": \"silu\", \"kind\": \"Mul\", \"inputs\": [\"hw\", \"sig\"]},"
    "  {\"name\": \"gap\", \"kind\": \"GlobalAveragePool\", \"inputs\": [\"silu\"]},"
    "  {\"name\": \"se\", \"kind\": \"Mul\", \"inputs\": [\"silu\", \"gap\"]},"
    "  {\"name\": \"rmx\", \"kind\": \"ReduceMax\", \"inputs\": [\"se\"], \"over_channels\": true},"
    "  {\"name\": \"sa\", \"kind\": \"Mul\", \"inputs\": [\"se\", \"rmx\"]},"
    "  {\"name\": \"rmc\", \"kind\": \"ReduceMean\", \"inputs\": [\"sa\"], \"over_channels\": true},"
    "  {\"name\": \"cat\", \"kind\": \"Concat\", \"inputs\": [\"sa\", \"rmc\"]},"
    "  {\"name\": \"sl\", \"kind\": \"Slice\", \"inputs\": [\"cat\"], \"start\": 1, \"channels\": 8},"
    "  {\"name\": \"sh\", \"kind\": \"ChannelShuffle\", \"inputs\": [\"sl\"], \"groups\": 2},"
    "  {\"name\": \"ln\", \"kind\": \"LayerNorm\", \"inputs\": [\"sh\"], \"epsilon\": 1e-06},"
    "  {\"name\": \"ge\", \"kind\": \"GELU\", \"inputs\": [\"ln\"]},"
    "  {\"name\": \"sc\", \"kind\": \"Scale\", \"inputs\": [\"ge\"]},"
    "  {\"name\": \"add\", \"kind\": \"Add\", \"inputs\": [\"sc\", \"hs\"]},"
    "  {\"name\": \"gmx\", \"kind\": \"ReduceMax\", \"inputs\": [\"add\"], \"over_height\": true, \"over_width\": true},"
    "  {\"name\": \"ca\", \"kind\": \"Mul\", \"inputs\": [\"add\", \"gmx\"]},"
    "  {\"name\": \"rmw\", \"kind\": \"ReduceMean\", \"inputs\": [\"ca\"], \"over_width\": true},"
    "  {\"name\": \"fc\", \"kind\": \"FC\", \"inputs\": [\"rmw\"], \"out_features\": 5},"
    "  {\"name\": \"ln2\", \"kind\": \"LayerNorm\", \"inputs\": [\"fc\"]},"
    "  {\"name\": \"g2\", \"kind\": \"GELU\", \"inputs\": [\"ln2\"]}"
    " ]}",
    /* detectors' activations and nearest upsampling (issue 16's round:
     * networks people bring) */
    "{\"format\": \"dse-network\", \"version\": 1, \"name\": \"detector\","
    " \"input\": {\"name\": \"x\", \"shape\": [4, 6, 8]},"
    " \"layers\": ["
    "  {\"name\": \"c1\", \"kind\": \"Conv\", \"inputs\": [\"x\"], \"out_channels\": 6, \"kernel\": 3, \"pads\": [1, 1, 1, 1]},"
    "  {\"name\": \"lr\", \"kind\": \"LeakyReLU\", \"inputs\": [\"c1\"], \"alpha\": 0.125},"
    "  {\"name\": \"pr\", \"kind\": \"PReLU\", \"inputs\": [\"lr\"]},"
    "  {\"name\": \"el\", \"kind\": \"ELU\", \"inputs\": [\"pr\"], \"alpha\": 0.5},"
    "  {\"name\": \"th\", \"kind\": \"Tanh\", \"inputs\": [\"el\"]},"
    "  {\"name\": \"cl\", \"kind\": \"Clip\", \"inputs\": [\"th\"], \"min\": -0.5, \"max\": 0.75},"
    "  {\"name\": \"zpad\", \"kind\": \"Pad\", \"inputs\": [\"cl\"], \"pads\": [0, 0, 1, 1]},"
    "  {\"name\": \"pool0\", \"kind\": \"MaxPool\", \"inputs\": [\"zpad\"], \"kernel\": 2, \"stride\": 1},"
    "  {\"name\": \"pool\", \"kind\": \"MaxPool\", \"inputs\": [\"pool0\"], \"kernel\": 2},"
    "  {\"name\": \"up\", \"kind\": \"Upsample\", \"inputs\": [\"pool\"], \"scale\": [2, 2]},"
    "  {\"name\": \"bl\", \"kind\": \"Bilinear\", \"inputs\": [\"pool\"], \"size\": [6, 8]},"
    "  {\"name\": \"bl2\", \"kind\": \"Bilinear\", \"inputs\": [\"cl\"], \"size\": [6, 8], \"align_corners\": true},"
    "  {\"name\": \"cat\", \"kind\": \"Concat\", \"inputs\": [\"up\", \"cl\", \"bl\", \"bl2\"]},"
    "  {\"name\": \"gap\", \"kind\": \"GlobalAveragePool\", \"inputs\": [\"cat\"]},"
    "  {\"name\": \"up2\", \"kind\": \"Upsample\", \"inputs\": [\"gap\"], \"scale\": [1, 3]},"
    "  {\"name\": \"fc\", \"kind\": \"FC\", \"inputs\": [\"up2\"], \"out_features\": 5},"
    "  {\"name\": \"lr2\", \"kind\": \"LeakyReLU\", \"inputs\": [\"fc\"], \"alpha\": -0.25},"
    "  {\"name\": \"pr2\", \"kind\": \"PReLU\", \"inputs\": [\"lr2\"]}"
    " ]}",
    /* decoders' learned upsampling: ConvTranspose 2x2 stride 2 (U-Net),
     * 3x3 stride 2 with output padding, and a grouped, dilated one with
     * unequal strides, cropping pads and no bias; GroupNorm (of 3 groups
     * and of one, torch.onnx's pattern of three nodes and a scale and shift) */
    "{\"format\": \"dse-network\", \"version\": 1, \"name\": \"decoder\","
    " \"input\": {\"name\": \"x\", \"shape\": [6, 5, 7]},"
    " \"layers\": ["
    "  {\"name\": \"c1\", \"kind\": \"Conv\", \"inputs\": [\"x\"], \"out_channels\": 8, \"kernel\": 3, \"pads\": [1, 1, 1, 1]},"
    "  {\"name\": \"up1\", \"kind\": \"ConvTranspose\", \"inputs\": [\"c1\"], \"out_channels\": 6, \"kernel\": 2, \"stride\": 2},"
    "  {\"name\": \"r1\", \"kind\": \"ReLU\", \"inputs\": [\"up1\"]},"
    "  {\"name\": \"up2\", \"kind\": \"ConvTranspose\", \"inputs\": [\"r1\"], \"out_channels\": 4, \"kernel\": 3, \"stride\": 2, \"pads\": [1, 1, 1, 1], \"output_padding\": [1, 1]},"
    "  {\"name\": \"up3\", \"kind\": \"ConvTranspose\", \"inputs\": [\"up2\"], \"out_channels\": 6, \"kernel\": [3, 2], \"stride\": [1, 2], \"dilation\": [2, 1], \"pads\": [2, 0, 1, 1], \"output_padding\": [0, 1], \"groups\": 2, \"bias\": false},"
    "  {\"name\": \"in1\", \"kind\": \"InstanceNorm\", \"inputs\": [\"up3\"], \"epsilon\": 0.001},"
    "  {\"name\": \"gn1\", \"kind\": \"GroupNorm\", \"inputs\": [\"in1\"], \"groups\": 3, \"epsilon\": 0.0001},"
    "  {\"name\": \"gn2\", \"kind\": \"GroupNorm\", \"inputs\": [\"gn1\"], \"groups\": 1},"
    "  {\"name\": \"rpad\", \"kind\": \"Pad\", \"inputs\": [\"gn2\"], \"pads\": [2, 1, 0, 3], \"reflect\": true},"
    "  {\"name\": \"epad\", \"kind\": \"Pad\", \"inputs\": [\"rpad\"], \"pads\": [1, 0, 2, 1], \"edge\": true},"
    "  {\"name\": \"c2\", \"kind\": \"Conv\", \"inputs\": [\"epad\"], \"out_channels\": 8, \"kernel\": 3},"
    "  {\"name\": \"ps\", \"kind\": \"PixelShuffle\", \"inputs\": [\"c2\"], \"factor\": 2},"
    "  {\"name\": \"ps2\", \"kind\": \"PixelShuffle\", \"inputs\": [\"c2\"], \"factor\": 2, \"dcr\": true},"
    "  {\"name\": \"pcat\", \"kind\": \"Concat\", \"inputs\": [\"ps\", \"ps2\"]},"
    "  {\"name\": \"gap\", \"kind\": \"GlobalAveragePool\", \"inputs\": [\"pcat\"]},"
    "  {\"name\": \"fc\", \"kind\": \"FC\", \"inputs\": [\"gap\"], \"out_features\": 3}"
    " ]}",
    /* crops and space to depth: YOLOv5's Focus (four strided crops, each
     * read by the Concat), a crop with an origin, a count and a column
     * step, both orders of PixelUnshuffle (and by 1) and their difference
     * (an Add that subtracts), a nearest resize to 5 x 7, a Mish, split
     * attention's softmaxes across branches (ResNeSt's, in 5 groups, and
     * SKNet's) and sum of branches, L2 normalisations
     * of a map (F.normalize's eps) and of the output vector (no floor) */
    "{\"format\": \"dse-network\", \"version\": 1, \"name\": \"crops\","
    " \"input\": {\"name\": \"x\", \"shape\": [3, 12, 16]},"
    " \"layers\": ["
    "  {\"name\": \"f00\", \"kind\": \"Slice\", \"inputs\": [\"x\"], \"start\": 0, \"channels\": 3, \"step\": [2, 2]},"
    "  {\"name\": \"f10\", \"kind\": \"Slice\", \"inputs\": [\"x\"], \"start\": 0, \"channels\": 3, \"origin\": [1, 0], \"step\": [2, 2]},"
    "  {\"name\": \"f01\", \"kind\": \"Slice\", \"inputs\": [\"x\"], \"start\": 0, \"channels\": 3, \"origin\": [0, 1], \"step\": [2, 2]},"
    "  {\"name\": \"f11\", \"kind\": \"Slice\", \"inputs\": [\"x\"], \"start\": 0, \"channels\": 3, \"origin\": [1, 1], \"step\": [2, 2]},"
    "  {\"name\": \"focus\", \"kind\": \"Concat\", \"inputs\": [\"f00\", \"f10\", \"f01\", \"f11\"]},"
    "  {\"name\": \"c1\", \"kind\": \"Conv\", \"inputs\": [\"focus\"], \"out_channels\": 8, \"kernel\": 3, \"pads\": [1, 1, 1, 1]},"
    "  {\"name\": \"c1n\", \"kind\": \"L2Norm\", \"inputs\": [\"c1\"]},"
    "  {\"name\": \"crop\", \"kind\": \"Slice\", \"inputs\": [\"c1n\"], \"start\": 2, \"channels\": 5, \"origin\": [1, 0], \"size\": [3, 3], \"step\": [1, 2]},"
    "  {\"name\": \"pu\", \"kind\": \"PixelUnshuffle\", \"inputs\": [\"c1\"], \"factor\": 2},"
    "  {\"name\": \"pu2\", \"kind\": \"PixelUnshuffle\", \"inputs\": [\"c1\"], \"factor\": 2, \"dcr\": true},"
    "  {\"name\": \"pdiff\", \"kind\": \"Add\", \"inputs\": [\"pu\", \"pu2\"], \"subtract\": true},"
    "  {\"name\": \"pcat\", \"kind\": \"Concat\", \"inputs\": [\"pu\", \"pdiff\"]},"
    "  {\"name\": \"c2\", \"kind\": \"Conv\", \"inputs\": [\"pcat\"], \"out_channels\": 5, \"kernel\": [1, 2], \"stride\": [1, 1]},"
    "  {\"name\": \"cat\", \"kind\": \"Concat\", \"inputs\": [\"crop\", \"c2\"]},"
    "  {\"name\": \"nr\", \"kind\": \"Nearest\", \"inputs\": [\"cat\"], \"size\": [5, 7]},"
    "  {\"name\": \"mish\", \"kind\": \"Mish\", \"inputs\": [\"nr\"]},"
    "  {\"name\": \"bsm\", \"kind\": \"BranchSoftmax\", \"inputs\": [\"mish\"], \"branches\": 2, \"cardinality\": 5},"
    "  {\"name\": \"bsm1\", \"kind\": \"BranchSoftmax\", \"inputs\": [\"bsm\"], \"branches\": 5},"
    "  {\"name\": \"bsum\", \"kind\": \"BranchSum\", \"inputs\": [\"bsm1\"], \"branches\": 2},"
    "  {\"name\": \"pu1\", \"kind\": \"PixelUnshuffle\", \"inputs\": [\"bsum\"], \"factor\": 1},"
    "  {\"name\": \"gap\", \"kind\": \"GlobalAveragePool\", \"inputs\": [\"pu1\"]},"
    "  {\"name\": \"fc\", \"kind\": \"FC\", \"inputs\": [\"gap\"], \"out_features\": 3},"
    "  {\"name\": \"fcn\", \"kind\": \"L2Norm\", \"inputs\": [\"fc\"], \"epsilon\": 0}"
    " ]}",
};
#define N_EXTRA_NETS ((int)(sizeof extra_nets / sizeof extra_nets[0]))

#endif
