"""onnxeval.py -- a small float64 NumPy evaluator for the ONNX operators that
dse's export writes (and the Concat/Sum and HSplit that AutoDiCE's splitter inserts), so
the tests can run whole models and AutoDiCE's sub-models without an ONNX
runtime (Debian 12's python3-onnx 1.12 has no reference evaluator).  Written
from the ONNX operator specifications; independent of dse's kernels.
"""
import numpy as np
from onnx import numpy_helper


def attrs(node):
    out = {}
    for a in node.attribute:
        if a.type == a.INT:
            out[a.name] = a.i
        elif a.type == a.FLOAT:
            out[a.name] = a.f
        elif a.type == a.INTS:
            out[a.name] = list(a.ints)
        elif a.type == a.STRING:
            out[a.name] = a.s.decode()
    return out


def _windows(x, kh, kw, sh, sw, dh, dw):
    """x: [C, H, W] (already padded) -> [C, OH, OW, kh, kw] views."""
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    v = np.lib.stride_tricks.sliding_window_view(x, (ekh, ekw), axis=(1, 2))
    return v[:, ::sh, ::sw, ::dh, ::dw]


def _pad(x, pads, value=0.0):
    t, l, b, r = pads
    return np.pad(x, ((0, 0), (t, b), (l, r)), constant_values=value)


def conv(x, w, b, a):
    g = a.get("group", 1)
    kh, kw = w.shape[2], w.shape[3]
    sh, sw = a.get("strides", [1, 1])
    dh, dw = a.get("dilations", [1, 1])
    pads = a.get("pads", [0, 0, 0, 0])
    xp = _pad(x[0], [pads[0], pads[1], pads[2], pads[3]])
    cg, mg = x.shape[1] // g, w.shape[0] // g
    outs = []
    for k in range(g):
        win = _windows(xp[k * cg:(k + 1) * cg], kh, kw, sh, sw, dh, dw)
        outs.append(np.tensordot(w[k * mg:(k + 1) * mg], win, axes=([1, 2, 3], [0, 3, 4])))
    y = np.concatenate(outs, axis=0)
    if b is not None:
        y = y + b[:, None, None]
    return y[None]


def _pool_out(n, k, s, p0, p1, ceil):
    span = n + p0 + p1 - k
    return (-(-span // s) if ceil else span // s) + 1


def pool(x, a, kind):
    kh, kw = a["kernel_shape"]
    sh, sw = a.get("strides", [1, 1])
    pads = a.get("pads", [0, 0, 0, 0])
    ceil = a.get("ceil_mode", 0)
    C, H, W = x.shape[1:]
    oh = _pool_out(H, kh, sh, pads[0], pads[2], ceil)
    ow = _pool_out(W, kw, sw, pads[1], pads[3], ceil)
    # extra padding on the bottom/right for ceil_mode windows
    xb = pads[2] + max(0, (oh - 1) * sh + kh - (H + pads[0] + pads[2]))
    xr = pads[3] + max(0, (ow - 1) * sw + kw - (W + pads[1] + pads[3]))
    if kind == "max":
        xp = _pad(x[0], [pads[0], pads[1], xb, xr], -np.inf)
        return _windows(xp, kh, kw, sh, sw, 1, 1)[:, :oh, :ow].max(axis=(3, 4))[None]
    xp = _pad(x[0], [pads[0], pads[1], xb, xr], 0.0)
    s = _windows(xp, kh, kw, sh, sw, 1, 1)[:, :oh, :ow].sum(axis=(3, 4))
    if a.get("count_include_pad", 0):
        ones = _pad(np.ones((1, H, W)), [pads[0], pads[1], pads[2], pads[3]], 1.0)
        ones = np.pad(ones, ((0, 0), (0, xb - pads[2]), (0, xr - pads[3])))
    else:
        ones = _pad(np.ones((1, H, W)), [pads[0], pads[1], xb, xr], 0.0)
    cnt = _windows(ones, kh, kw, sh, sw, 1, 1)[:, :oh, :ow].sum(axis=(3, 4))
    return (s / cnt)[None]


def lrn(x, a):
    size, alpha, beta, bias = a["size"], a.get("alpha", 1e-4), a.get("beta", 0.75), a.get("bias", 1.0)
    C = x.shape[1]
    sq = x * x
    s = np.zeros_like(x)
    lo, hi = (size - 1) // 2, size // 2  # ONNX: floor((size-1)/2) before, ceil((size-1)/2) after
    for c in range(C):
        s[:, c] = sq[:, max(0, c - lo):min(C, c + hi + 1)].sum(axis=1)
    return x / (bias + alpha / size * s) ** beta


def run_node(node, env):
    op, a = node.op_type, attrs(node)
    i = [env[n] if n else None for n in node.input]
    if op == "Conv":
        y = conv(i[0], i[1], i[2] if len(i) > 2 else None, a)
    elif op == "Gemm":
        A, B = i[0], i[1]
        if a.get("transA", 0):
            A = A.T
        if a.get("transB", 0):
            B = B.T
        y = a.get("alpha", 1.0) * A @ B
        if len(i) > 2 and i[2] is not None:
            y = y + a.get("beta", 1.0) * i[2]
    elif op == "Relu":
        y = np.maximum(i[0], 0)
    elif op == "Clip":
        lo = i[1] if len(i) > 1 and i[1] is not None else -np.inf
        hi = i[2] if len(i) > 2 and i[2] is not None else np.inf
        y = np.clip(i[0], lo, hi)
    elif op == "LRN":
        y = lrn(i[0], a)
    elif op == "MaxPool":
        y = pool(i[0], a, "max")
    elif op == "AveragePool":
        y = pool(i[0], a, "avg")
    elif op == "GlobalAveragePool":
        y = i[0].mean(axis=(2, 3), keepdims=True)
    elif op == "BatchNormalization":
        x, sc, bi, mu, var = i
        eps = a.get("epsilon", 1e-5)
        sh = (1, -1, 1, 1)
        y = (x - mu.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * sc.reshape(sh) + bi.reshape(sh)
    elif op == "Flatten":
        y = i[0].reshape(1, -1)
    elif op == "Reshape":
        shape = [int(v) for v in i[1]]
        y = i[0].reshape([i[0].shape[k] if v == 0 else v for k, v in enumerate(shape)])
    elif op in ("Dropout", "Identity"):
        y = i[0]
    elif op == "Softmax":
        ax = a.get("axis", 1)
        e = np.exp(i[0] - i[0].max(axis=ax, keepdims=True))
        y = e / e.sum(axis=ax, keepdims=True)
    elif op == "Concat":
        y = np.concatenate(i, axis=a["axis"])
    elif op in ("Add", "Sum"):
        y = i[0]
        for t in i[1:]:
            y = y + t
    elif op == "Mul":
        y = i[0] * i[1]
    elif op == "Sigmoid":
        y = 1 / (1 + np.exp(-i[0]))
    elif op == "HSplit":  # AutoDiCE's own (horizontal_split): output k is the
        # input's [starts[k], ends[k]) along ncnn's CHW axis (0 channels, 1
        # rows, 2 columns), ends past the edge clamped as ncnn's crop does
        ax = a["axis"] + 1
        for o, s0, s1 in zip(node.output, a["starts"], a["ends"]):
            env[o] = np.take(i[0], range(s0, min(s1, i[0].shape[ax])), axis=ax)
        return
    else:
        raise NotImplementedError("operator %s" % op)
    env[node.output[0]] = y


def initializers(graph):
    return {t.name: numpy_helper.to_array(t).astype(np.float64 if t.data_type == 1 else np.int64)
            for t in graph.initializer}


def run_graph(graph, env):
    """Run every node of graph (in order) over env (tensor name -> array),
    adding its initializers and every node output to env."""
    env.update(initializers(graph))
    for node in graph.node:
        run_node(node, env)
    return env
