#!/usr/bin/python3
"""test_onnx_patterns.py -- the operators of the mobile networks and
ConvNeXt as exporters write them, in models built here with onnx.helper:
imported by `dse net import` and run by `dse exec` on one rank, the output
compared with this script's own numpy evaluation of the ONNX graph (every
operator written from the ONNX specification, sharing nothing with dse),
and the layers dse made compared with what each pattern must become.

  convnext   depthwise Conv, NHWC Transpose, LayerNorm decomposed (as
             torch.onnx writes it below opset 17) with its affine Mul/Add,
             per-pixel MatMul + bias, GELU decomposed, layer scale,
             residual, ReduceMean over H and W (keepdims 0), Gemm
  convnext17 the same with LayerNormalization (opset 17) and the halving of
             GELU done first
  shuffle    Split and Slice on channels (sizes from Shape arithmetic:
             Shape, Gather, Div, Mul, Unsqueeze, Concat), the channel
             shuffle (Reshape 5-D, Transpose, Reshape with -1)
  mobile     HardSwish as HardSigmoid(1/6, 1/2) + Mul (opset 13), SE with a
             HardSigmoid gate multiplied first, SiLU, Mul by a scalar and
             by a per-channel constant (Scale), Div by a constant
  gelu20     Gelu (opset 20, both approximations; not checked by onnx's
             checker, which knows opsets up to 17 here)
  normalize  an exported model's input normalization: Sub of a per-channel
             mean, Div by a per-channel deviation; Add of a per-channel
             constant and Sub of a scalar after a ReLU (shift layers)
  convsub    a constant subtracted after a Conv: its bias (none yet) or a shift
  padvalue   constant padding with 0.75 (opset 13: an input; opset 9: an attribute)
  scaler     ImageScaler (opset 8, tiny-YOLOv2's first node; not checked
             by onnx's checker, which no longer knows it)
  pixel6     a pixel shuffle as 6-D Reshape, Transpose, Reshape: CRD
             (torch.onnx below opset 11) and DCR (DepthToSpace's definition)
  cbam       CBAM's attention: channel attention from a global average
             and a global max pool (GlobalMaxPool, as tf2onnx writes it;
             torch.onnx's MaxPool of the map's size is in tests/torch)
             through shared 1x1 convolutions, spatial attention
             from the mean and the max over channels (ReduceMax) through a
             7x7 convolution, a gate of 1 x H x W multiplying every channel,
             ReduceMax over H and W without keepdims; cbam11, cbam13: the
             mean and max over channels without keepdims, then Unsqueeze(1)
  focus      YOLOv5's Focus: Slices of rows and columns with step 2 and
             ends INT64_MAX, concatenated along the channels (a Slice of
             a Slice read by nothing else: one Slice layer)
  crop9, 13  a U-Net's centre crop (a Slice of rows and columns [2, -2))
             before the concatenation of its skip connection
  nhwccrop   strided Slices of rows and columns of an NHWC view (Swin's
             patch merging)
  unshuffle_crd, _dcr, _op  space to depth: pixel_unshuffle as torch.onnx
             writes it (6-D view, Transpose, Reshape), the view in
             SpaceToDepth's order, and the SpaceToDepth operator
  nearest_sizes, _scales, _down  nearest resizing to sizes no multiple of
             the map's (asymmetric, floor: PyTorch's), by a scale of 1.5, down
  bifpn_fast, _dim0, _softmax  EfficientDet's weighted fusion: Relu,
             ReduceSum (every axis, or axes [0]), Add, Div or Softmax of an
             initializer, folded; each weight (Gather) scaling one input
  split_sk, _resnest, _stack11  SKNet's and ResNeSt's split attention
             (torch.stack as Unsqueeze and Concat, 5-D views, ReduceSum and
             Softmax over the branches, the radix softmax's Transpose)
  l2norm_eps, _big, _lp  F.normalize(x, dim=1) (ReduceL2, Clip, Expand,
             Div; eps 1e-12, or one the norms fall below) and
             LpNormalization, then a per-channel scale (SSD's L2Norm)
  mish_fused, _sp_read, _tanh_read, _op  x tanh(softplus(x)) as torch.onnx
             writes it (one Mish layer; three when the Softplus or the
             Tanh is also read elsewhere), and the Mish operator (opset 18)
  poolformer pool(x) - x: Sub of two activations (an Add that subtracts)
  splithw    Split along the rows and along the columns (crops)
  padcrop    F.pad with negative pads (a crop, asymmetric) before a Concat
  groupnorm  nn.GroupNorm as torch.onnx writes it: Reshape [0, G, -1],
             InstanceNormalization (here with a scale and shift per group
             besides torch's ones and zeros), Reshape back to Shape(x), Mul
             and Add per channel (folded, or Unsqueezed as without constant
             folding); groupnormalization18, 21: the operator itself (scale
             and bias per group at opset 18, per channel from 21; not
             checked by onnx's checker, which knows opsets up to 17 here)

Tolerance: 1e-4 relative + 1e-5 of the output's range.
usage: test_onnx_patterns.py DSE_BIN     (exit 77 without onnx/numpy)
"""
import json
import math
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import check, need_onnx, summary  # noqa: E402

np, onnx, TensorProto, helper, numpy_helper = need_onnx()

DSE = sys.argv[1]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
rng = np.random.default_rng(17)



def R(*shape, s=0.3):
    return (rng.standard_normal(shape) * s).astype(np.float32)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def N(op, ins, outs, **kw):
    return helper.make_node(op, ins, outs if isinstance(outs, list) else [outs], name=(
        outs if isinstance(outs, str) else outs[0]), **kw)


# ---- a numpy evaluation of ONNX graphs (the operators used here) ----

erf = np.vectorize(math.erf)


def conv(x, w, b, a):
    g = a.get("group", 1)
    s = a.get("strides", [1, 1])
    p = a.get("pads", [0, 0, 0, 0])
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    oh, ow = (h - kh) // s[0] + 1, (wd - kw) // s[1] + 1
    y = np.zeros((1, m, oh, ow), np.float64)
    mg = m // g
    for o in range(m):
        gi = o // mg
        for i in range(kh):
            for j in range(kw):
                patch = x[0, gi * cg:(gi + 1) * cg, i:i + s[0] * oh:s[0], j:j + s[1] * ow:s[1]]
                y[0, o] += np.tensordot(w[o, :, i, j], patch, axes=(0, 0))
        if b is not None:
            y[0, o] += b[o]
    return y


def evaluate(model, x):
    g = model.graph
    v = {t.name: numpy_helper.to_array(t).astype(np.float64) if t.data_type == TensorProto.FLOAT
         else numpy_helper.to_array(t) for t in g.initializer}
    v[g.input[0].name] = x.astype(np.float64)
    for nd in g.node:
        a = {at.name: helper.get_attribute_value(at) for at in nd.attribute}
        i = [v[n] if n else None for n in nd.input]
        op = nd.op_type
        if op == "Conv":
            y = conv(i[0], i[1], i[2] if len(i) > 2 else None, a)
        elif op == "Relu":
            y = np.maximum(i[0], 0)
        elif op == "AveragePool":  # stride 1, same padding, the pads not counted
            k = a["kernel_shape"][0]
            p = a["pads"][0]
            xp = np.pad(i[0], ((0, 0), (0, 0), (p, p), (p, p)))
            ones = np.pad(np.ones_like(i[0]), ((0, 0), (0, 0), (p, p), (p, p)))
            h, w = i[0].shape[2], i[0].shape[3]
            s = sum(xp[:, :, r:r + h, q:q + w] for r in range(k) for q in range(k))
            cnt = sum(ones[:, :, r:r + h, q:q + w] for r in range(k) for q in range(k))
            assert a.get("count_include_pad", 0) == 0 and a.get("strides", [1, 1]) == [1, 1]
            y = s / cnt
        elif op == "Softplus":
            y = np.log1p(np.exp(i[0].astype(np.float64)))
        elif op == "Tanh":
            y = np.tanh(i[0])
        elif op == "Mish":
            y = i[0] * np.tanh(np.log1p(np.exp(i[0].astype(np.float64))))
        elif op == "ReduceL2":
            y = np.sqrt(np.sum(i[0].astype(np.float64) ** 2, axis=tuple(a["axes"]),
                               keepdims=bool(a.get("keepdims", 1))))
        elif op == "Clip":  # min (and max) as inputs, opset 11+
            y = np.clip(i[0], i[1] if len(i) > 1 and i[1] is not None else -np.inf,
                        i[2] if len(i) > 2 and i[2] is not None else np.inf)
        elif op == "Expand":
            y = i[0] * np.ones([int(s) for s in i[1]], i[0].dtype)
        elif op == "LpNormalization":
            assert a.get("p", 2) == 2
            y = i[0] / np.sqrt(np.sum(i[0].astype(np.float64) ** 2, axis=a.get("axis", -1), keepdims=True))
        elif op == "ReduceSum":
            ax = tuple(a["axes"]) if "axes" in a else tuple(int(k) for k in i[1]) if len(i) > 1 else None
            y = np.sum(i[0], axis=ax, keepdims=bool(a.get("keepdims", 1)))
        elif op == "Softmax":
            e = np.exp(i[0] - i[0].max(axis=a.get("axis", -1), keepdims=True))
            y = e / e.sum(axis=a.get("axis", -1), keepdims=True)
        elif op == "Sigmoid":
            y = 1 / (1 + np.exp(-i[0]))
        elif op == "HardSigmoid":
            y = np.clip(a.get("alpha", 0.2) * i[0] + a.get("beta", 0.5), 0, 1)
        elif op in ("Add", "Sub", "Mul", "Div", "Pow"):
            f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
                 "Pow": np.power}[op]
            y = f(i[0], i[1])
            if i[0].dtype.kind == "i" and op == "Div":
                y = i[0] // i[1]
        elif op == "Resize":  # nearest, asymmetric, floor: input floor(o / scale) per axis
            st = {k: a.get(k, b"").decode() for k in ("mode", "coordinate_transformation_mode", "nearest_mode")}
            assert st == {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                          "nearest_mode": "floor"}, st
            if len(i) > 3 and i[3] is not None and np.size(i[3]):  # sizes: scale = out / in
                out = [int(s) for s in i[3]]
                sc = [out[k] / i[0].shape[k] for k in range(4)]
            else:
                sc = [float(s) for s in i[2]]
                out = [int(math.floor(i[0].shape[k] * sc[k])) for k in range(4)]
            idx = [np.minimum(np.floor(np.arange(out[k]) / sc[k]).astype(int), i[0].shape[k] - 1)
                   for k in range(4)]
            y = i[0][np.ix_(*idx)]
        elif op == "Pad":  # constant mode
            p = [int(t) for t in (a["pads"] if "pads" in a else i[1])]
            val = a.get("value", 0.0) if len(i) < 3 or i[2] is None else float(i[2])
            r = i[0].ndim  # negative pads remove (ONNX): crop, then pad
            t = i[0][tuple(slice(max(0, -p[k]), i[0].shape[k] - max(0, -p[k + r])) for k in range(r))]
            y = np.pad(t, [(max(0, p[k]), max(0, p[k + r])) for k in range(r)], constant_values=val)
        elif op == "ImageScaler":
            y = a.get("scale", 1.0) * i[0] + np.asarray(a["bias"], np.float64).reshape(1, -1, 1, 1)
        elif op == "Sqrt":
            y = np.sqrt(i[0])
        elif op == "Erf":
            y = erf(i[0])
        elif op == "Gelu":
            t = i[0]
            y = (0.5 * t * (1 + np.tanh(math.sqrt(2 / math.pi) * (t + 0.044715 * t ** 3))))
            if a.get("approximate", b"none") in (b"none", "none"):
                y = 0.5 * t * (1 + erf(t / math.sqrt(2)))
        elif op == "Transpose":
            y = np.transpose(i[0], a["perm"])
        elif op == "SpaceToDepth":  # the operator's definition: reshape, transpose, reshape
            b = a["blocksize"]
            n_, c, h, w = i[0].shape
            t = i[0].reshape(n_, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
            y = t.reshape(n_, c * b * b, h // b, w // b)
        elif op == "ReduceMean":
            y = np.mean(i[0], axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))
        elif op == "ReduceMax":
            y = np.max(i[0], axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))
        elif op == "GlobalMaxPool":
            y = np.max(i[0], axis=(2, 3), keepdims=True)
        elif op == "LayerNormalization":
            ax = a.get("axis", -1) % i[0].ndim
            axes = tuple(range(ax, i[0].ndim))
            mu = i[0].mean(axis=axes, keepdims=True)
            var = ((i[0] - mu) ** 2).mean(axis=axes, keepdims=True)
            y = (i[0] - mu) / np.sqrt(var + a.get("epsilon", 1e-5)) * i[1] + i[2]
        elif op == "GroupNormalization":  # scale and bias per group (opset 18) or per channel (21)
            G = a["num_groups"]
            c = i[0].shape[1]
            gv = i[0].reshape(1, G, -1)
            mu = gv.mean(axis=2, keepdims=True)
            var = ((gv - mu) ** 2).mean(axis=2, keepdims=True)
            gv = ((gv - mu) / np.sqrt(var + a.get("epsilon", 1e-5))).reshape(i[0].shape)
            sc, b = (i[1], i[2]) if i[1].size == c else (np.repeat(i[1], c // G), np.repeat(i[2], c // G))
            y = gv * sc.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1)
        elif op == "InstanceNormalization":  # over every axis after the channels
            axes = tuple(range(2, i[0].ndim))
            mu = i[0].mean(axis=axes, keepdims=True)
            var = ((i[0] - mu) ** 2).mean(axis=axes, keepdims=True)
            cs = (1, -1) + (1,) * (i[0].ndim - 2)
            y = (i[0] - mu) / np.sqrt(var + a.get("epsilon", 1e-5)) * i[1].reshape(cs) + i[2].reshape(cs)
        elif op == "MatMul":
            y = np.matmul(i[0], i[1])
        elif op == "Gemm":
            y = i[0] @ (i[1].T if a.get("transB") else i[1]) + i[2]
        elif op == "GlobalAveragePool":
            y = i[0].mean(axis=(2, 3), keepdims=True)
        elif op == "Flatten":
            y = i[0].reshape(1, -1)
        elif op == "Concat":
            y = np.concatenate(i, axis=a["axis"])
        elif op == "Reshape":
            shp = [int(s) for s in i[1]]
            shp = [i[0].shape[k] if s == 0 else s for k, s in enumerate(shp)]
            y = i[0].reshape(shp)
        elif op == "Shape":
            y = np.array(i[0].shape, np.int64)
        elif op == "Gather":
            y = np.take(i[0], i[1], axis=a.get("axis", 0))
        elif op == "Unsqueeze":
            y = np.expand_dims(i[0], tuple(int(k) for k in (a["axes"] if "axes" in a else i[1])))
        elif op == "Slice":
            st, en, ax = (a["starts"], a["ends"], a["axes"]) if "starts" in a else i[1:4]
            sp = i[4] if len(i) > 4 else [1] * len(st)
            sl = [slice(None)] * i[0].ndim
            for k, axis in enumerate(ax):
                sl[int(axis)] = slice(int(st[k]), int(en[k]), int(sp[k]))
            y = i[0][tuple(sl)]
        elif op == "Split":
            if "split" in a or len(i) > 1:
                sizes = a["split"] if "split" in a else [int(s) for s in i[1]]
                parts = np.split(i[0], np.cumsum(sizes)[:-1], axis=a["axis"])
            else:  # equal parts
                parts = np.split(i[0], len(nd.output), axis=a["axis"])
            for name, part in zip(nd.output, parts):
                v[name] = part
            continue
        else:
            raise ValueError("no reference for " + op)
        v[nd.output[0]] = y
    return v[g.output[0].name]


# ---- the models ----

def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def model(name, nodes, inits, xshape, yshape, opset):
    g = helper.make_graph(nodes, name, [vi("x", xshape)], [vi("y", yshape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def layernorm_steps(x, c, pre, eps, inits, last_axis):
    """torch.onnx's LayerNorm below opset 17 (over axis -1), with affine."""
    inits += [init(pre + "two", np.float32(2)), init(pre + "eps", np.float32(eps)),
              init(pre + "w", R(c) + 1), init(pre + "b", R(c))]
    ax = [-1] if last_axis else [1]
    return [N("ReduceMean", [x], pre + "mean", axes=ax),
            N("Sub", [x, pre + "mean"], pre + "d"),
            N("Pow", [pre + "d", pre + "two"], pre + "sq"),
            N("ReduceMean", [pre + "sq"], pre + "var", axes=ax),
            N("Add", [pre + "var", pre + "eps"], pre + "ve"),
            N("Sqrt", [pre + "ve"], pre + "sd"),
            N("Div", [pre + "d", pre + "sd"], pre + "n"),
            N("Mul", [pre + "n", pre + "w"], pre + "nw"),
            N("Add", [pre + "nw", pre + "b"], pre + "out")]


def gelu_steps(x, pre, inits, half_first=False):
    inits += [init(pre + "r2", np.float32(math.sqrt(2))), init(pre + "one", np.float32(1)),
              init(pre + "half", np.float32(0.5))]
    n = [N("Div", [x, pre + "r2"], pre + "dv"), N("Erf", [pre + "dv"], pre + "e"),
         N("Add", [pre + "e", pre + "one"], pre + "e1")]
    if half_first:
        return n + [N("Mul", [x, pre + "half"], pre + "hx"),
                    N("Mul", [pre + "hx", pre + "e1"], pre + "out")]
    return n + [N("Mul", [x, pre + "e1"], pre + "xe"), N("Mul", [pre + "xe", pre + "half"], pre + "out")]


def convnext(fused):
    C, H = 8, 6
    inits = [init("dw_w", R(C, 1, 3, 3)), init("dw_b", R(C)), init("fc1", R(C, 4 * C)),
             init("fc1_b", R(4 * C)), init("fc2", R(4 * C, C)), init("fc2_b", R(C)),
             init("gamma", R(C, 1, 1) + 1), init("head_w", R(5, C)), init("head_b", R(5))]
    nodes = [N("Conv", ["x", "dw_w", "dw_b"], "dw", group=C, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Transpose", ["dw"], "nhwc", perm=[0, 2, 3, 1])]
    if fused:
        inits += [init("ln_w", R(C) + 1), init("ln_b", R(C))]
        nodes.append(N("LayerNormalization", ["nhwc", "ln_w", "ln_b"], "ln_out", axis=-1, epsilon=1e-6))
    else:
        nodes += layernorm_steps("nhwc", C, "ln_", 1e-6, inits, True)
    nodes += [N("MatMul", ["ln_out", "fc1"], "mm1"), N("Add", ["fc1_b", "mm1"], "h1")]
    nodes += gelu_steps("h1", "g_", inits, half_first=fused)
    nodes += [N("MatMul", ["g_out", "fc2"], "mm2"), N("Add", ["mm2", "fc2_b"], "h2"),
              N("Transpose", ["h2"], "nchw", perm=[0, 3, 1, 2]),
              N("Mul", ["gamma", "nchw"], "scaled"), N("Add", ["scaled", "x"], "res"),
              N("ReduceMean", ["res"], "pooled", axes=[2, 3], keepdims=0),
              N("Gemm", ["pooled", "head_w", "head_b"], "y", transB=1)]
    kinds = {"Conv": 3, "LayerNorm": 1, "GELU": 1, "Scale": 1, "Add": 1, "GlobalAveragePool": 1,
             "FC": 1}
    return model("convnext17" if fused else "convnext", nodes, inits, [1, C, H, H], [1, 5],
                 17 if fused else 13), kinds


def shuffle(opset):
    C, H = 8, 5
    i64 = lambda *v: np.array(v, np.int64)
    inits = [init("w0", R(C, C, 1, 1)), init("w1", R(C // 2, C // 2, 3, 3)),
             init("one", i64(1)), init("two", i64(2)), init("zero", i64(0)), init("ax0", i64(0)),
             init("g5", i64(1, 2, C // 2, H, H)), init("back", i64(1, -1, H, H)),
             init("s0", i64(0)), init("s1", i64(2)), init("ax1", i64(1))]
    nodes = [N("Conv", ["x", "w0"], "c0", kernel_shape=[1, 1]),
             # the half of the channels, as torch.onnx computes chunk(2) from x.size()
             N("Shape", ["c0"], "sh"), N("Gather", ["sh", "one"], "cdim", axis=0),
             N("Div", ["cdim", "two"], "half"), N("Unsqueeze", ["half", "ax0"], "half1"),
             N("Unsqueeze", ["zero", "ax0"], "z1"), N("Mul", ["half1", "two"], "end2"),
             N("Slice", ["c0", "z1", "half1", "ax1"], "lo"),
             N("Slice", ["c0", "half1", "end2", "ax1"], "hi"),
             N("Conv", ["hi", "w1"], "c1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Concat", ["lo", "c1"], "cat", axis=1),
             N("Reshape", ["cat", "g5"], "grp"), N("Transpose", ["grp"], "swp", perm=[0, 2, 1, 3, 4]),
             N("Reshape", ["swp", "back"], "shuf"),
             N("Split", ["shuf"], ["a", "b"], axis=1, split=[3, 5]),
             N("Slice", ["b", "s0", "s1", "ax1"], "b2"),
             N("Concat", ["a", "b2"], "y", axis=1)]
    kinds = {"Conv": 2, "Slice": 4, "Concat": 2, "ChannelShuffle": 1}  # b2 of b: one Slice
    if opset >= 13:  # Split's sizes became an input
        nodes[-3] = N("Split", ["shuf", "sizes"], ["a", "b"], axis=1)
        inits.append(init("sizes", i64(3, 5)))
    else:  # below opset 10 Slice takes attributes, below 13 Unsqueeze too: torch uses Split
        nodes = [N("Conv", ["x", "w0"], "c0", kernel_shape=[1, 1]),
                 N("Split", ["c0"], ["lo", "hi"], axis=1, split=[C // 2, C // 2]),
                 N("Conv", ["hi", "w1"], "c1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                 N("Concat", ["lo", "c1"], "cat", axis=1),
                 N("Reshape", ["cat", "g5"], "grp"),
                 N("Transpose", ["grp"], "swp", perm=[0, 2, 1, 3, 4]),
                 N("Reshape", ["swp", "back"], "shuf"),
                 N("Split", ["shuf"], ["a", "b"], axis=1, split=[3, 5]),
                 N("Slice", ["b"], "b2", starts=[0], ends=[2], axes=[1]),
                 N("Concat", ["a", "b2"], "y", axis=1)]
    return model("shuffle%d" % opset, nodes, inits, [1, C, H, H], [1, 5, H, H], opset), kinds


def mobile():
    C, H = 6, 5
    inits = [init("w0", R(C, C, 1, 1)), init("se1", R(3, C, 1, 1)), init("se1b", R(3)),
             init("se2", R(C, 3, 1, 1)), init("se2b", R(C)), init("k", np.float32(0.75)),
             init("pc", R(1, C, 1, 1) + 1), init("dv", np.float32(4))]
    nodes = [N("Conv", ["x", "w0"], "c0", kernel_shape=[1, 1]),
             N("HardSigmoid", ["c0"], "hs", alpha=1 / 6, beta=0.5), N("Mul", ["c0", "hs"], "hsw"),
             N("GlobalAveragePool", ["hsw"], "sq"), N("Conv", ["sq", "se1", "se1b"], "f1", kernel_shape=[1, 1]),
             N("Relu", ["f1"], "r1"), N("Conv", ["r1", "se2", "se2b"], "f2", kernel_shape=[1, 1]),
             N("HardSigmoid", ["f2"], "gate", alpha=1 / 6, beta=0.5), N("Mul", ["gate", "hsw"], "se"),
             N("Sigmoid", ["se"], "sg"), N("Mul", ["se", "sg"], "silu"),
             N("Mul", ["silu", "k"], "k1"), N("Relu", ["k1"], "r2"),
             N("Mul", ["r2", "pc"], "s2"), N("Div", ["s2", "dv"], "y")]
    kinds = {"Conv": 3, "HardSwish": 1, "HardSigmoid": 1, "Mul": 2, "Sigmoid": 1, "Scale": 3,
             "ReLU": 2, "GlobalAveragePool": 1}
    return model("mobile", nodes, inits, [1, C, H, H], [1, C, H, H], 13), kinds


def gelu20(tanh):
    nodes = [N("Gelu", ["x"], "y", approximate="tanh" if tanh else "none")]
    return model("gelu20" + ("t" if tanh else ""), nodes, [], [1, 4, 3, 3], [1, 4, 3, 3], 20), {"GELU": 1}


def normalize():
    C, H = 3, 6
    inits = [init("mean", R(1, C, 1, 1, s=0.5)), init("std", np.abs(R(1, C, 1, 1)) + 0.2),
             init("w", R(4, C, 3, 3)), init("b", R(4)), init("sh", R(1, 4, 1, 1)),
             init("half", np.float32(0.5))]
    nodes = [N("Sub", ["x", "mean"], "xm"), N("Div", ["xm", "std"], "xn"),
             N("Conv", ["xn", "w", "b"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Relu", ["c"], "r"), N("Add", ["r", "sh"], "rs"), N("Sub", ["rs", "half"], "y")]
    kinds = {"BatchNorm": 3, "Scale": 1, "Conv": 1, "ReLU": 1}
    return model("normalize", nodes, inits, [1, C, H, H], [1, 4, H, H], 13), kinds


def convsub():
    """A constant subtracted after a bias-free Conv is its bias; after a
    Conv that has one, a shift layer."""
    C, H = 3, 5
    inits = [init("w", R(4, C, 3, 3)), init("m", R(1, 4, 1, 1)), init("w2", R(2, 4, 1, 1)),
             init("b2", R(2)), init("m2", R(1, 2, 1, 1))]
    nodes = [N("Conv", ["x", "w"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Sub", ["c", "m"], "cm"), N("Relu", ["cm"], "r"),
             N("Conv", ["r", "w2", "b2"], "c2", kernel_shape=[1, 1]), N("Sub", ["c2", "m2"], "y")]
    return model("convsub", nodes, inits, [1, C, H, H], [1, 2, H, H], 13), \
        {"Conv": 2, "ReLU": 1, "BatchNorm": 1}


def padvalue(opset):
    """Constant padding with a value other than 0 (a Pad layer: a window's
    zeros could not hold it), as opset 11+ (an input) and 9 (an attribute)
    write it."""
    C, H = 3, 5
    inits = [init("w", R(2, C, 3, 3))]
    if opset >= 11:
        inits += [init("p", np.array([0, 0, 2, 1, 0, 0, 0, 3], np.int64)), init("v", np.float32(0.75))]
        nodes = [N("Pad", ["x", "p", "v"], "xp")]
    else:
        nodes = [N("Pad", ["x"], "xp", pads=[0, 0, 2, 1, 0, 0, 0, 3], value=0.75)]
    nodes.append(N("Conv", ["xp", "w"], "y", kernel_shape=[3, 3]))
    return (model("padvalue%d" % opset, nodes, inits, [1, C, H, H], [1, 2, H, H + 2], opset),
            {"Pad": 1, "Conv": 1})


def scaler():
    C, H = 3, 5
    inits = [init("w", R(2, C, 1, 1))]
    nodes = [N("ImageScaler", ["x"], "s", scale=1 / 255, bias=[-0.4, 0.1, 0.25]),
             N("Conv", ["s", "w"], "y", kernel_shape=[1, 1])]
    return model("scaler", nodes, inits, [1, C, H, H], [1, 2, H, H], 8), {"BatchNorm": 1, "Conv": 1}


def pixel6(dcr):
    C, r, H, W = 2, 3, 4, 5
    view = [1, r, r, C, H, W] if dcr else [1, C, r, r, H, W]
    perm = [0, 3, 4, 1, 5, 2] if dcr else [0, 1, 4, 2, 5, 3]
    inits = [init("w", R(C * r * r, 3, 3, 3)), init("v6", np.array(view, np.int64)),
             init("s4", np.array([1, C, H * r, W * r], np.int64))]
    nodes = [N("Conv", ["x", "w"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Reshape", ["c", "v6"], "v"), N("Transpose", ["v"], "t", perm=perm),
             N("Reshape", ["t", "s4"], "y")]
    return (model("pixel6" + ("dcr" if dcr else "crd"), nodes, inits, [1, 3, H, W],
                  [1, C, H * r, W * r], 9), {"Conv": 1, "PixelShuffle": 1})


def unshuffle(form):
    """Space to depth by 2: PyTorch's pixel_unshuffle as torch.onnx writes
    it (6-D Reshape, Transpose [0,1,3,5,2,4], Reshape: "crd"), the same
    view transposed in SpaceToDepth's order ([0,3,5,1,2,4]: "dcr"), and
    the SpaceToDepth operator ("op")."""
    C, r, H, W = 3, 2, 6, 8
    inits = [init("w0", R(C, 3, 3, 3)), init("w1", R(4, C * r * r, 1, 1)),
             init("v6", np.array([1, C, H // r, r, W // r, r], np.int64)),
             init("s4", np.array([1, -1, H // r, W // r], np.int64))]
    nodes = [N("Conv", ["x", "w0"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    if form == "op":
        nodes.append(N("SpaceToDepth", ["c"], "t4", blocksize=r))
    else:
        perm = [0, 3, 5, 1, 2, 4] if form == "dcr" else [0, 1, 3, 5, 2, 4]
        nodes += [N("Reshape", ["c", "v6"], "v"), N("Transpose", ["v"], "t", perm=perm),
                  N("Reshape", ["t", "s4"], "t4")]
    nodes.append(N("Conv", ["t4", "w1"], "y", kernel_shape=[1, 1]))
    return (model("unshuffle_" + form, nodes, inits, [1, 3, H, W], [1, 4, H // r, W // r], 13),
            {"Conv": 2, "PixelUnshuffle": 1})


def cbam(unsqueeze=0):
    """unsqueeze: the mean and max over channels without keepdims, then
    Unsqueeze(1) (the original CBAM code's ChannelPool), at opset 11 (axes
    an attribute) or 13 (an input)."""
    C, H, W = 8, 6, 7
    inits = [init("w", R(C, 3, 3, 3)), init("f1", R(2, C, 1, 1)), init("f2", R(C, 2, 1, 1)),
             init("ws", R(1, 2, 7, 7))]
    nodes = [N("Conv", ["x", "w"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("GlobalAveragePool", ["c"], "avg"), N("GlobalMaxPool", ["c"], "mx"),
             N("Conv", ["avg", "f1"], "a1", kernel_shape=[1, 1]), N("Relu", ["a1"], "a2"),
             N("Conv", ["a2", "f2"], "a3", kernel_shape=[1, 1]),
             N("Conv", ["mx", "f1"], "m1", kernel_shape=[1, 1]), N("Relu", ["m1"], "m2"),
             N("Conv", ["m2", "f2"], "m3", kernel_shape=[1, 1]),
             N("Add", ["a3", "m3"], "ca"), N("Sigmoid", ["ca"], "cg"), N("Mul", ["c", "cg"], "x1"),
             N("ReduceMean", ["x1"], "sm", axes=[1]), N("ReduceMax", ["x1"], "sx", axes=[1]),
             N("Concat", ["sm", "sx"], "s2", axis=1),
             N("Conv", ["s2", "ws"], "s3", kernel_shape=[7, 7], pads=[3, 3, 3, 3]),
             N("Sigmoid", ["s3"], "sg"), N("Mul", ["sg", "x1"], "x2"),
             N("ReduceMax", ["x2"], "y", axes=[2, 3], keepdims=0)]
    if unsqueeze:
        at = nodes.index(next(n for n in nodes if n.name == "sm"))
        ax = {"axes": [1]} if unsqueeze == 11 else {}
        ins = [] if unsqueeze == 11 else ["one"]
        if unsqueeze != 11:
            inits.append(init("one", np.array([1], np.int64)))
        nodes[at:at + 2] = [N("ReduceMean", ["x1"], "sm0", axes=[1], keepdims=0),
                            N("Unsqueeze", ["sm0"] + ins, "sm", **ax),
                            N("ReduceMax", ["x1"], "sx0", axes=[1], keepdims=0),
                            N("Unsqueeze", ["sx0"] + ins, "sx", **ax)]
    return (model("cbam" + (str(unsqueeze) if unsqueeze else ""), nodes, inits, [1, 3, H, W], [1, C],
                  unsqueeze or 13),
            {"Conv": 6, "GlobalAveragePool": 1, "ReLU": 2, "Add": 1, "Sigmoid": 2,
             "Mul": 2, "ReduceMean": 1, "ReduceMax": 3, "Concat": 1})


def groupnorm18(opset):
    """GroupNormalization itself: scale and bias per group at opset 18, per
    channel at 21 (the operator's definition changed)."""
    C, G, H, W = 6, 3, 5, 4
    n = C if opset >= 21 else G
    inits = [init("w", R(C, 3, 3, 3)), init("s", R(n) + 1), init("b", R(n))]
    nodes = [N("Conv", ["x", "w"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("GroupNormalization", ["c", "s", "b"], "y", num_groups=G, epsilon=1e-3)]
    return (model("groupnormalization%d" % opset, nodes, inits, [1, 3, H, W], [1, C, H, W], opset),
            {"Conv": 1, "GroupNorm": 1})


def groupnorm(fold):
    C, G, H, W = 6, 3, 5, 4
    inits = [init("w", R(C, 3, 3, 3)), init("g3", np.array([0, G, -1], np.int64)),
             init("gs", R(G) + 1), init("gb", R(G)), init("cs", R(C) + 1), init("cb", R(C))]
    nodes = [N("Conv", ["x", "w"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Reshape", ["c", "g3"], "v"),
             N("InstanceNormalization", ["v", "gs", "gb"], "n", epsilon=1e-3),
             N("Shape", ["c"], "shp"), N("Reshape", ["n", "shp"], "b")]
    if fold:
        inits[-2:] = [init("cs", R(C, 1, 1) + 1), init("cb", R(C, 1, 1))]
        nodes += [N("Mul", ["b", "cs"], "m"), N("Add", ["m", "cb"], "y")]
    else:
        inits.append(init("ax", np.array([1, 2], np.int64)))
        nodes += [N("Unsqueeze", ["cs", "ax"], "cs3"), N("Mul", ["b", "cs3"], "m"),
                  N("Unsqueeze", ["cb", "ax"], "cb3"), N("Add", ["m", "cb3"], "y")]
    return (model("groupnorm" + ("" if fold else "_unfolded"), nodes, inits, [1, 3, H, W],
                  [1, C, H, W], 13), {"Conv": 1, "GroupNorm": 1})


def focus():
    """YOLOv5's Focus, x[..., ::2, ::2] and its three shifts as torch.onnx
    writes them (opset 13: a Slice per axis, ends INT64_MAX, steps 2),
    concatenated along the channels, then a Conv: each pair of Slices one
    layer."""
    C, H, W = 3, 8, 10
    big = np.iinfo(np.int64).max
    i64 = lambda *v: np.array(v, np.int64)
    inits = [init("w", R(8, 4 * C, 3, 3)), init("z", i64(0)), init("o", i64(1)), init("e", i64(big)),
             init("a2", i64(2)), init("a3", i64(3)), init("s2", i64(2))]
    nodes = []
    for k, (r, c) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
        nodes += [N("Slice", ["x", "zo"[r], "e", "a2", "s2"], "r%d" % k),
                  N("Slice", ["r%d" % k, "zo"[c], "e", "a3", "s2"], "q%d" % k)]
    nodes += [N("Concat", ["q0", "q1", "q2", "q3"], "cat", axis=1),
              N("Conv", ["cat", "w"], "y", kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    return (model("focus", nodes, inits, [1, C, H, W], [1, 8, H // 2, W // 2], 13),
            {"Slice": 4, "Concat": 1, "Conv": 1})


def crop(opset):
    """A U-Net's skip connection with unpadded convolutions: the encoder's
    map cropped to the decoder's (rows and columns [2, -2), one Slice over
    both axes; below opset 10 with attributes), then concatenated."""
    C, H, W = 4, 12, 11
    inits = [init("w0", R(C, 3, 3, 3)), init("w1", R(C, C, 3, 3)), init("w2", R(C, C, 3, 3)),
             init("w3", R(5, 2 * C, 1, 1))]
    sl = N("Slice", ["c0"], "sk", starts=[2, 2], ends=[-2, -2], axes=[2, 3])
    if opset >= 10:
        i64 = lambda *v: np.array(v, np.int64)
        inits += [init("st", i64(2, 2)), init("en", i64(-2, -2)), init("ax", i64(2, 3))]
        sl = N("Slice", ["c0", "st", "en", "ax"], "sk")
    nodes = [N("Conv", ["x", "w0"], "c0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Conv", ["c0", "w1"], "c1", kernel_shape=[3, 3]), N("Relu", ["c1"], "r1"),
             N("Conv", ["r1", "w2"], "c2", kernel_shape=[3, 3]), sl,
             N("Concat", ["sk", "c2"], "cat", axis=1),
             N("Conv", ["cat", "w3"], "y", kernel_shape=[1, 1])]
    return (model("crop%d" % opset, nodes, inits, [1, 3, H, W], [1, 5, H - 4, W - 4], opset),
            {"Conv": 4, "ReLU": 1, "Slice": 1, "Concat": 1})


def nhwccrop():
    """Swin's patch merging's strided slices, x[:, 1::2, 0::2, :], on an
    NHWC view (a Transpose), then back to NCHW."""
    C, H, W = 4, 8, 6
    i64 = lambda *v: np.array(v, np.int64)
    inits = [init("w0", R(C, 3, 3, 3)), init("w1", R(5, C, 1, 1)), init("st", i64(1, 0)),
             init("en", i64(99, 99)), init("ax", i64(1, 2)), init("sp", i64(2, 2))]
    nodes = [N("Conv", ["x", "w0"], "c0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Transpose", ["c0"], "t", perm=[0, 2, 3, 1]), N("Slice", ["t", "st", "en", "ax", "sp"], "s"),
             N("Transpose", ["s"], "b", perm=[0, 3, 1, 2]), N("Conv", ["b", "w1"], "y", kernel_shape=[1, 1])]
    return (model("nhwccrop", nodes, inits, [1, 3, H, W], [1, 5, H // 2, W // 2], 13),
            {"Conv": 2, "Slice": 1})


def splithw():
    """Split along the rows (sizes given) and the columns (equal parts):
    each part a crop, here summed and pooled."""
    C, H, W = 4, 8, 6
    inits = [init("w0", R(C, 3, 3, 3)), init("w1", R(3, C, 1, 1)), init("sz", np.array([3, 5], np.int64))]
    nodes = [N("Conv", ["x", "w0"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Split", ["c", "sz"], ["top", "bot"], axis=2), N("Split", ["bot"], ["l", "r"], axis=3),
             N("Add", ["l", "r"], "lr"), N("Conv", ["top", "w1"], "t1", kernel_shape=[1, 1]),
             N("GlobalAveragePool", ["t1"], "g1"), N("GlobalAveragePool", ["lr"], "g2"),
             N("Concat", ["g1", "g2"], "y", axis=1)]
    return (model("splithw", nodes, inits, [1, 3, H, W], [1, 3 + C, 1, 1], 13),
            {"Conv": 2, "Slice": 4, "Add": 1, "GlobalAveragePool": 2, "Concat": 1})


def nearest(form):
    """PyTorch's F.interpolate(mode="nearest") to a size that is no
    multiple of the map's (an FPN's top-down path at an odd input size:
    5 x 6 to 9 x 13, "sizes"), by a scale of 1.5 that gives whole rows
    ("scales"), and down to 3 x 4 ("down")."""
    C, H, W = 4, 5, 6
    out = {"sizes": (9, 13), "scales": (7, 9), "down": (3, 4)}[form]
    inits = [init("w0", R(C, 3, 3, 3)), init("w1", R(2, C, 3, 3))]
    if form == "scales":
        H, W = 6, 8
        out = (9, 12)
        inits.append(init("sc", np.array([1, 1, 1.5, 1.5], np.float32)))
        rs = N("Resize", ["c", "", "sc"], "r", mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor")
    else:
        inits.append(init("sz", np.array([1, C, out[0], out[1]], np.int64)))
        rs = N("Resize", ["c", "", "", "sz"], "r", mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor")
    nodes = [N("Conv", ["x", "w0"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]), rs,
             N("Conv", ["r", "w1"], "y", kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    return (model("nearest_" + form, nodes, inits, [1, 3, H, W], [1, 2, out[0], out[1]], 13),
            {"Conv": 2, "Nearest": 1})


def bifpn(form):
    """EfficientDet's weighted feature fusion, its learned weights left as
    arithmetic on an initializer (as torch.onnx exports them): "fast",
    relu(w) / (sum(w) + eps) with torch.sum(w) (ReduceSum over every axis),
    "dim0" with torch.sum(w, dim=0) (axes [0]), and "softmax"; each weight
    (a Gather) scales one input of the sum."""
    C, H, W = 4, 6, 8
    inits = [init("w0", R(C, 3, 3, 3)), init("w1", R(C, C, 3, 3)), init("w2", R(2, C, 1, 1)),
             init("fw", np.array([0.7, -0.2 if form != "softmax" else 1.3], np.float32)),
             init("eps", np.float32(1e-4)), init("i0", np.array(0, np.int64)), init("i1", np.array(1, np.int64)),
             init("ax0", np.array([0], np.int64)), init("s2", np.array([1, 1, 2, 2], np.float32))]
    nodes = [N("Conv", ["x", "w0"], "a", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Conv", ["a", "w1"], "b", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
             N("Resize", ["b", "", "s2"], "bu", mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor")]
    if form == "softmax":
        nodes.append(N("Softmax", ["fw"], "wn", axis=0))
    else:
        nodes += [N("Relu", ["fw"], "wr"),
                  N("ReduceSum", ["wr", "ax0"] if form == "dim0" else ["wr"], "ws", keepdims=0),
                  N("Add", ["ws", "eps"], "we"), N("Div", ["wr", "we"], "wn")]
    nodes += [N("Gather", ["wn", "i0"], "g0", axis=0), N("Gather", ["wn", "i1"], "g1", axis=0),
              N("Mul", ["g0", "a"], "m0"), N("Mul", ["g1", "bu"], "m1"), N("Add", ["m0", "m1"], "s"),
              N("Conv", ["s", "w2"], "y", kernel_shape=[1, 1])]
    return (model("bifpn_" + form, nodes, inits, [1, 3, H, W], [1, 2, H, W], 13),
            {"Conv": 3, "Upsample": 1, "Scale": 2, "Add": 1})


def poolformer():
    """PoolFormer's token mixer, pool(x) - x: a 3x3 average pool (stride 1,
    pads not counted) minus its own input, two activations."""
    C, H, W = 4, 6, 7
    inits = [init("w0", R(C, 3, 3, 3)), init("w1", R(2, C, 1, 1))]
    nodes = [N("Conv", ["x", "w0"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("AveragePool", ["c"], "p", kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0),
             N("Sub", ["p", "c"], "d"), N("Conv", ["d", "w1"], "y", kernel_shape=[1, 1])]
    return (model("poolformer", nodes, inits, [1, 3, H, W], [1, 2, H, W], 13),
            {"Conv": 2, "AveragePool": 1, "Add": 1})


def l2norm(form):
    """F.normalize(x, dim=1) as torch.onnx writes it: ReduceL2 over the
    channels, Clip at eps (1e-12; "big": 0.5, which the norms of a map
    scaled small fall below), Expand to Shape(x), Div; scaled per channel
    afterwards (SSD's conv4_3 L2Norm); "lp": ONNX's LpNormalization."""
    C, H, W = 5, 4, 6
    eps = 0.5 if form == "big" else 1e-12
    inits = [init("w0", R(C, 3, 3, 3, s=0.05 if form == "big" else 0.3)), init("w1", R(2, C, 1, 1)),
             init("eps", np.float32(eps)), init("sc", R(1, C, 1, 1) + 1)]
    nodes = [N("Conv", ["x", "w0"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    if form == "lp":
        nodes.append(N("LpNormalization", ["c"], "n", axis=1, p=2))
    else:
        nodes += [N("ReduceL2", ["c"], "r", axes=[1], keepdims=1), N("Clip", ["r", "eps"], "rc"),
                  N("Shape", ["c"], "sh"), N("Expand", ["rc", "sh"], "re"), N("Div", ["c", "re"], "n")]
    nodes += [N("Mul", ["sc", "n"], "m"), N("Conv", ["m", "w1"], "y", kernel_shape=[1, 1])]
    return (model("l2norm_" + form, nodes, inits, [1, 3, H, W], [1, 2, H, W], 13),
            {"Conv": 2, "L2Norm": 1, "Scale": 1})


def mish(form):
    """YOLOv4's Mish, x tanh(softplus(x)), as torch.onnx writes it: one
    layer ("fused"); with the softplus ("sp_read") or the tanh of it
    ("tanh_read") also read by another node: the three layers, as written;
    tanh(softplus(c)) gating another tensor ("other"); ONNX's Mish operator
    (opset 18, "op")."""
    C, H, W = 4, 5, 6
    inits = [init("w0", R(C, 3, 3, 3, s=0.8)), init("w1", R(2, C, 1, 1))]
    nodes = [N("Conv", ["x", "w0"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    if form == "op":
        nodes.append(N("Mish", ["c"], "m"))
    elif form == "other":  # the gate multiplies another tensor: the layers realised at the Mul
        inits.append(init("wg", R(C, 3, 3, 3)))
        nodes += [N("Conv", ["x", "wg"], "g", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  N("Softplus", ["c"], "sp"), N("Tanh", ["sp"], "t"), N("Mul", ["g", "t"], "m")]
    else:
        nodes += [N("Softplus", ["c"], "sp"), N("Tanh", ["sp"], "t"), N("Mul", ["c", "t"], "m")]
    kinds = {"Conv": 2, "Mish": 1} if form != "other" else {"Conv": 3, "Softplus": 1, "Tanh": 1, "Mul": 1}
    if form in ("sp_read", "tanh_read"):
        nodes += [N("Add", ["m", "sp" if form == "sp_read" else "t"], "m2")]
        kinds = {"Conv": 2, "Softplus": 1, "Tanh": 1, "Mul": 1, "Add": 1}
    nodes.append(N("Conv", ["m2" if form in ("sp_read", "tanh_read") else "m", "w1"], "y",
                   kernel_shape=[1, 1]))
    return (model("mish_" + form, nodes, inits, [1, 3, H, W], [1, 2, H, W], 18 if form == "op" else 13),
            kinds)


def split(form):
    """Split attention as torch.onnx writes it.  "sk" (SKNet): three
    branches unsqueezed and concatenated (torch.stack), summed over axis 1,
    pooled, a 1x1 Conv to 3 C, a 5-D Reshape, Softmax over axis 1, the
    stack times it, summed; every intermediate shape stated (5-D ones
    included).  "resnest": one Conv of radix 2 x C channels viewed 5-D,
    summed, pooled, a grouped 1x1 Conv, the radix softmax (Reshape [1, G,
    K, -1], Transpose, Softmax, Reshape [1, -1], [1, -1, 1, 1], 5-D), the
    product summed.  "stack11": opset 11's Unsqueeze and ReduceSum (axes
    attributes), keepdims, a Reshape back to 4-D."""
    C, H, W = 4, 5, 6
    inits = [init("w1", R(2, C, 1, 1))]
    if form in ("sk", "stack11"):
        K = 3
        inits += [init("wb%d" % k, R(C, 3, 3, 3)) for k in range(K)]
        nodes = [N("Conv", ["x", "wb%d" % k], "b%d" % k, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
                 for k in range(K)]
        if form == "stack11":
            nodes += [N("Unsqueeze", ["b%d" % k], "u%d" % k, axes=[1]) for k in range(K)]
            nodes += [N("Concat", ["u%d" % k for k in range(K)], "st", axis=1),
                      N("ReduceSum", ["st"], "s", axes=[1], keepdims=1),
                      N("Reshape", ["s", "sh4"], "s4"), N("Conv", ["s4", "w1"], "y", kernel_shape=[1, 1])]
            inits.append(init("sh4", np.array([1, C, H, W], np.int64)))
            return (model("split_" + form, nodes, inits, [1, 3, H, W], [1, 2, H, W], 11),
                    {"Conv": 4, "Concat": 1, "BranchSum": 1})
        inits += [init("one", np.array([1], np.int64)), init("wa", R(K * C, C, 1, 1)),
                  init("sh5", np.array([1, K, C, 1, 1], np.int64))]
        nodes += [N("Unsqueeze", ["b%d" % k, "one"], "u%d" % k) for k in range(K)]
        nodes += [N("Concat", ["u%d" % k for k in range(K)], "st", axis=1),
                  N("ReduceSum", ["st", "one"], "s", keepdims=0),
                  N("ReduceMean", ["s"], "g", axes=[2, 3], keepdims=1),
                  N("Conv", ["g", "wa"], "a", kernel_shape=[1, 1]), N("Reshape", ["a", "sh5"], "a5"),
                  N("Softmax", ["a5"], "sm", axis=1), N("Mul", ["st", "sm"], "p"),
                  N("ReduceSum", ["p", "one"], "o", keepdims=0),
                  N("Conv", ["o", "w1"], "y", kernel_shape=[1, 1])]
        return (model("split_" + form, nodes, inits, [1, 3, H, W], [1, 2, H, W], 13),
                {"Conv": 5, "Concat": 1, "BranchSum": 2, "GlobalAveragePool": 1, "BranchSoftmax": 1,
                 "Mul": 1})
    C, K, G = 6, 2, 3  # channels, radix, cardinality (K != G: their order matters)
    inits = [init("w1", R(2, C, 1, 1)),init("w0", R(K * C, 3 // 1, 3, 3)), init("one", np.array([1], np.int64)),
              init("wa", R(K * C, C // G, 1, 1)), init("shv", np.array([1, K, C, H, W], np.int64)),
              init("shr", np.array([1, G, K, -1], np.int64)), init("shf", np.array([1, -1], np.int64)),
              init("sh4", np.array([1, -1, 1, 1], np.int64)), init("sh5", np.array([1, K, C, 1, 1], np.int64))]
    nodes = [N("Conv", ["x", "w0"], "c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Relu", ["c"], "r"), N("Reshape", ["r", "shv"], "v"),
             N("ReduceSum", ["v", "one"], "s", keepdims=0),
             N("ReduceMean", ["s"], "g", axes=[2, 3], keepdims=1),
             N("Conv", ["g", "wa"], "a", kernel_shape=[1, 1], group=G),
             N("Reshape", ["a", "shr"], "ar"), N("Transpose", ["ar"], "at", perm=[0, 2, 1, 3]),
             N("Softmax", ["at"], "sm", axis=1), N("Reshape", ["sm", "shf"], "f"),
             N("Reshape", ["f", "sh4"], "f4"), N("Reshape", ["f4", "sh5"], "f5"),
             N("Mul", ["v", "f5"], "p"), N("ReduceSum", ["p", "one"], "o", keepdims=0),
             N("Conv", ["o", "w1"], "y", kernel_shape=[1, 1])]
    return (model("split_" + form, nodes, inits, [1, 3, H, W], [1, 2, H, W], 13),
            {"Conv": 3, "ReLU": 1, "BranchSum": 2, "GlobalAveragePool": 1, "BranchSoftmax": 1, "Mul": 1})


def padcrop():
    """F.pad with negative pads (the crop a U-Net's F.pad to the skip's size
    makes when the upsampled map is the larger), asymmetric, before a
    Concat with a map of the cropped size."""
    C, H, W = 3, 9, 10
    inits = [init("w0", R(4, C, 3, 3)), init("w1", R(4, C, 4, 2)), init("w2", R(5, 8, 1, 1)),
             init("p", np.array([0, 0, -1, 0, 0, 0, -2, -1], np.int64))]
    nodes = [N("Conv", ["x", "w0"], "c0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("Conv", ["x", "w1"], "c1", kernel_shape=[4, 2]), N("Pad", ["c0", "p"], "cr"),
             N("Concat", ["cr", "c1"], "cat", axis=1), N("Conv", ["cat", "w2"], "y", kernel_shape=[1, 1])]
    return (model("padcrop", nodes, inits, [1, C, H, W], [1, 5, 6, 9], 13),
            {"Conv": 3, "Slice": 1, "Concat": 1})


def main():
    tmp = tempfile.mkdtemp(prefix="dse-onnx-patterns-")
    plat = os.path.join(tmp, "p1.json")
    json.dump({"format": "dse-platform", "version": 1, "name": "one", "links": {},
               "devices": [{"name": "r0", "board": "localhost", "kind": "cpu", "freq_mhz": 2000,
                            "cores": 1, "memory_mb": 4096, "idle_w": 1, "busy_w": 2}]},
              open(plat, "w"))
    cases = [convnext(False), convnext(True), shuffle(9), shuffle(13), mobile(), gelu20(False),
             gelu20(True), normalize(), convsub(), padvalue(13), padvalue(9), scaler(), pixel6(False),
             pixel6(True), groupnorm(True), groupnorm(False), groupnorm18(18), groupnorm18(21), cbam(),
             cbam(11), cbam(13), focus(), crop(9), crop(13), padcrop(), nhwccrop(), splithw(), nearest("sizes"), nearest("scales"), nearest("down"),
             bifpn("fast"), bifpn("dim0"), bifpn("softmax"), poolformer(),
             l2norm("eps"), l2norm("big"), l2norm("lp"),
             mish("fused"), mish("sp_read"), mish("tanh_read"), mish("other"), mish("op"),
             unshuffle("crd"), unshuffle("dcr"), unshuffle("op"), split("sk"), split("resnest"),
             split("stack11")]
    for m, kinds in cases:
        name = m.graph.name
        if m.opset_import[0].version <= 17 and name != "scaler":
            onnx.checker.check_model(m, full_check=True)  # the models themselves are valid
        path, js, wb = (os.path.join(tmp, name + e) for e in (".onnx", ".json", ".bin"))
        if name in ("focus", "crop13", "padcrop", "unshuffle_crd", "split_sk", "split_resnest"):
            # every intermediate shape stated (as onnx-simplifier leaves a
            # model): the importer checks each against its layers', a
            # Slice merged into its Slice included
            m = onnx.shape_inference.infer_shapes(m)
            check(len(m.graph.value_info) >= 3, "%s: no value_info" % name)
        onnx.save(m, path)
        p = subprocess.run([DSE, "net", "import", path, "-o", js, "--weights", wb],
                           capture_output=True, text=True)
        if not check(p.returncode == 0, "%s: import: %s" % (name, p.stderr.strip())):
            continue
        net = json.loads(subprocess.run([DSE, "net", "show", js, "--json"], capture_output=True,
                                        text=True).stdout)
        got = {}
        for L in net["layers"]:
            got[L["kind"]] = got.get(L["kind"], 0) + 1
        check(got == kinds, "%s: layers %s, the patterns make %s" % (name, got, kinds))
        shape = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
        x = rng.uniform(-2, 2, shape).astype(np.float32)
        ref = evaluate(m, x).astype(np.float32).ravel()
        x.tofile(os.path.join(tmp, "in.f32"))
        out = os.path.join(tmp, name + ".out")
        p = subprocess.run([DSE, "mpirun", "-np", "1", DSE, "exec", "--network", js, "--platform",
                            plat, "--single", "0", "--input", os.path.join(tmp, "in.f32"),
                            "--output", out], capture_output=True, text=True, env=ENV)
        if not check(p.returncode == 0, "%s: exec: %s" % (name, p.stderr.strip()[-300:])):
            continue
        y = np.fromfile(out, np.float32)
        scale = float(np.abs(ref).max())
        bad = int((np.abs(y - ref) > 1e-4 * np.abs(ref) + 1e-5 * scale).sum()) if y.size == ref.size else -1
        check(bad == 0, "%s: %d of %d outputs differ from the ONNX graph's (got %s, want %s)" %
              (name, bad, ref.size, y[:4], ref[:4]))
        print("%-12s %d layers, output equals the graph's (%d values)" % (name, len(net["layers"]), y.size))
    subprocess.run(["rm", "-rf", tmp])
    return summary("test_onnx_patterns")


if __name__ == "__main__":
    sys.exit(main())
