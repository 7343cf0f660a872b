#!/usr/bin/python3
"""test_onnx_models.py -- models no zoo entry matches, built here with
onnx.helper, imported with `dse net import`, and checked against shapes,
MACs, parameter counts and weight values computed in this script from the
textbook formulas (never from dse's output):

  inception  four parallel branches (1x1; 1x1-3x3; 1x1-5x5; pool-1x1)
             joined by Concat, then GAP, Flatten, Gemm(transB=1), Softmax
  resnet     bottleneck block with a projection shortcut (strided 1x1 conv
             + BN), SAME_UPPER padding on the strided 3x3, Add, Relu
  dense      Reshape by a Constant shape, Gemm transB=0 with alpha/beta,
             MatMul + Add (folded into one FC), Clip(0, 6) with constant
             inputs, Dropout, Identity, Gemm transB=1 without bias
  old        opset 7: Clip with attributes, LRN, AveragePool with
             count_include_pad, BatchNormalization with spatial, Softmax
             over a 2-D tensor

usage: test_onnx_models.py DSE_BIN
Exit 77 (skipped) when this python has no onnx module.
"""
import json
import os
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import check, need_onnx, run, summary  # noqa: E402

np, onnx, TensorProto, helper, numpy_helper = need_onnx()

DSE = sys.argv[1]
rng = np.random.default_rng(7)



def conv_out(n, k, s=1, p0=0, p1=0, d=1):
    return (n + p0 + p1 - d * (k - 1) - 1) // s + 1


def pool_out(n, k, s, p0=0, p1=0, ceil=False):
    span = n + p0 + p1 - k
    o = -(-span // s) + 1 if ceil else span // s + 1
    if ceil and (o - 1) * s >= n + p0:
        o -= 1
    return o


def W(*shape):
    return (rng.standard_normal(shape) * 0.1).astype(np.float32)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


class Expect:
    """Per layer: kind, shape (C, H, W), MACs, params, weight floats."""

    def __init__(self):
        self.layers = {}
        self.weights = {}  # layer -> expected float array in dse's layout

    def conv(self, name, cin, cout, k, hin, win, s=1, pads=(0, 0, 0, 0), g=1, bias=True, d=1):
        pt, pl, pb, pr = pads
        ho, wo = conv_out(hin, k, s, pt, pb, d), conv_out(win, k, s, pl, pr, d)
        per = cin // g * k * k
        self.layers[name] = ("Conv", [cout, ho, wo], cout * ho * wo * per,
                             cout * per + (cout if bias else 0))
        return ho, wo

    def fc(self, name, nin, nout, bias=True):
        self.layers[name] = ("FC", [nout, 1, 1], nin * nout, nin * nout + (nout if bias else 0))

    def other(self, name, kind, shape, params=0):
        self.layers[name] = (kind, list(shape), 0, params)


def dse(*args):
    return run(DSE, *args)


def import_and_check(tmp, model, exp, name, weights_check=True):
    path = os.path.join(tmp, name + ".onnx")
    onnx.checker.check_model(model, full_check=True)  # the test models themselves are valid
    onnx.save(model, path)
    js, wb = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + ".bin")
    rc, out, err = dse("net", "import", path, "-o", js, "--weights", wb)
    check(rc == 0, "%s: import exit %d: %s" % (name, rc, err))
    if rc:
        return None
    with open(js) as f:
        doc = json.load(f)
    check(doc["weights"] == name + ".bin", "%s: weights path %r not relative to the JSON" %
          (name, doc["weights"]))
    rc, out, err = dse("net", "show", js, "--json")
    check(rc == 0, "%s: net show: %s" % (name, err))
    shown = json.loads(out)
    got = {l["name"]: l for l in shown["layers"]}
    check(set(got) == set(exp.layers), "%s: layers %s, expected %s" %
          (name, sorted(got), sorted(exp.layers)))
    total_macs = total_params = 0
    for lname, (kind, shape, macs, params) in exp.layers.items():
        total_macs += macs
        total_params += params
        l = got.get(lname)
        if not l:
            continue
        check(l["kind"] == kind, "%s/%s: kind %s, expected %s" % (name, lname, l["kind"], kind))
        check(l["shape"] == shape, "%s/%s: shape %s, expected %s" % (name, lname, l["shape"], shape))
        if kind in ("Conv", "FC"):
            check(l["macs"] == macs, "%s/%s: %d MACs, expected %d" % (name, lname, l["macs"], macs))
        check(l["params"] == params, "%s/%s: %d params, expected %d" %
              (name, lname, l["params"], params))
    check(shown["totals"]["macs"] == total_macs, "%s: total MACs %d, expected %d" %
          (name, shown["totals"]["macs"], total_macs))
    check(shown["totals"]["params"] == total_params, "%s: total params %d, expected %d" %
          (name, shown["totals"]["params"], total_params))
    # The same through --network model.onnx (net_load of a .onnx path).
    rc, out2, err = dse("net", "show", path, "--json")
    check(rc == 0 and json.loads(out2)["totals"] == shown["totals"],
          "%s: net show of the .onnx differs: %s" % (name, err))
    if weights_check:
        data = np.fromfile(wb, dtype="<f4")
        order = [l["name"] for l in doc["layers"]]
        off = 0
        for lname in order:
            want = exp.weights.get(lname)
            kind = exp.layers[lname][0]
            if want is None:
                check(kind not in ("Conv", "FC", "BatchNorm"), "%s/%s: no expected weights" %
                      (name, lname))
                continue
            seg = data[off:off + want.size]
            check(seg.size == want.size and np.array_equal(seg, want.astype(np.float32)),
                  "%s/%s: weights differ from the model's initializers in dse's layout" %
                  (name, lname))
            off += want.size
        check(off == data.size, "%s: weights file has %d floats, expected %d" %
              (name, data.size, off))
    return doc


def inception(tmp):
    C, H = 16, 12
    e = Expect()
    nodes, inits = [], []

    def conv(name, x, cin, cout, k, pad, hin):
        w, b = W(cout, cin, k, k), W(cout)
        inits.extend([init(name + "_w", w), init(name + "_b", b)])
        nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [name + "_y"],
                                      name=name, kernel_shape=[k, k], pads=[pad] * 4))
        e.conv(name, cin, cout, k, hin, hin, pads=(pad,) * 4)
        e.weights[name] = np.concatenate([w.ravel(), b])
        return name + "_y"

    def relu(name, x, c):
        nodes.append(helper.make_node("Relu", [x], [name + "_y"], name=name))
        e.other(name, "ReLU", (c, H, H))
        return name + "_y"

    b1 = conv("b1_1x1", "x", C, 8, 1, 0, H)
    b2 = conv("b2_3x3", relu("b2_relu", conv("b2_1x1", "x", C, 6, 1, 0, H), 6), 6, 10, 3, 1, H)
    b3 = conv("b3_5x5", relu("b3_relu", conv("b3_1x1", "x", C, 4, 1, 0, H), 4), 4, 6, 5, 2, H)
    nodes.append(helper.make_node("MaxPool", ["x"], ["b4_pool_y"], name="b4_pool",
                                  kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]))
    e.other("b4_pool", "MaxPool", (C, pool_out(H, 3, 1, 1, 1), pool_out(H, 3, 1, 1, 1)))
    b4 = conv("b4_1x1", "b4_pool_y", C, 5, 1, 0, H)
    cat = 8 + 10 + 6 + 5
    nodes.append(helper.make_node("Concat", [b1, b2, b3, b4], ["cat_y"], name="cat", axis=1))
    e.other("cat", "Concat", (cat, H, H))
    nodes.append(helper.make_node("GlobalAveragePool", ["cat_y"], ["gap_y"], name="gap"))
    e.other("gap", "GlobalAveragePool", (cat, 1, 1))
    nodes.append(helper.make_node("Flatten", ["gap_y"], ["flat_y"], name="flat", axis=1))
    e.other("flat", "Flatten", (cat, 1, 1))
    fw, fb = W(10, cat), W(10)
    inits.extend([init("fc_w", fw), init("fc_b", fb)])
    nodes.append(helper.make_node("Gemm", ["flat_y", "fc_w", "fc_b"], ["fc_y"], name="fc",
                                  transB=1))
    e.fc("fc", cat, 10)
    e.weights["fc"] = np.concatenate([fw.ravel(), fb])
    nodes.append(helper.make_node("Softmax", ["fc_y"], ["prob"], name="softmax", axis=1))
    e.other("softmax", "Softmax", (10, 1, 1))
    g = helper.make_graph(nodes, "inception", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [1, C, H, H])], [helper.make_tensor_value_info(
            "prob", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    m = onnx.shape_inference.infer_shapes(m)  # value_info for the cross-check
    check(len(m.graph.value_info) > 5, "inception: shape inference gave no value_info")
    doc = import_and_check(tmp, m, e, "inception")
    if doc:
        # Concat order = input order; MaxPool keeps channels.
        cat_l = [l for l in doc["layers"] if l["name"] == "cat"][0]
        check(cat_l["inputs"] == ["b1_1x1", "b2_3x3", "b3_5x5", "b4_1x1"],
              "inception: concat inputs %s" % cat_l["inputs"])


def resnet(tmp):
    C, H = 8, 16
    e = Expect()
    nodes, inits = [], []

    def bn(name, x, c, hw):
        p = [W(c) + 1, W(c), W(c), np.abs(W(c)) + 0.5]
        for r, a in zip(("s", "b", "m", "v"), p):
            inits.append(init(name + "_" + r, a.astype(np.float32)))
        nodes.append(helper.make_node("BatchNormalization", [x] + [name + "_" + r for r in "sbmv"],
                                      [name + "_y"], name=name, epsilon=1e-3))
        e.other(name, "BatchNorm", (c, hw, hw), params=2 * c)
        e.weights[name] = np.concatenate(p)  # scale, shift, mean, var
        return name + "_y"

    def conv(name, x, cin, cout, k, s, hin, same=False, bias=False):
        w = W(cout, cin, k, k)
        inits.append(init(name + "_w", w))
        ins = [x, name + "_w"]
        wl = [w.ravel()]
        if bias:
            b = W(cout)
            inits.append(init(name + "_b", b))
            ins.append(name + "_b")
            wl.append(b)
        kw = dict(kernel_shape=[k, k], strides=[s, s])
        if same:
            kw["auto_pad"] = "SAME_UPPER"
            out = -(-hin // s)
            tot = max((out - 1) * s + k - hin, 0)
            pads = (tot // 2, tot // 2, tot - tot // 2, tot - tot // 2)
        else:
            pads = (0, 0, 0, 0)
        nodes.append(helper.make_node("Conv", ins, [name + "_y"], name=name, **kw))
        ho, _ = e.conv(name, cin, cout, k, hin, hin, s=s, pads=pads, bias=bias)
        e.weights[name] = np.concatenate(wl)
        return name + "_y", ho, pads

    def relu(name, x, c, hw):
        nodes.append(helper.make_node("Relu", [x], [name + "_y"], name=name))
        e.other(name, "ReLU", (c, hw, hw))
        return name + "_y"

    a, ha, _ = conv("a", "x", C, 4, 1, 1, H)
    a = relu("a_relu", bn("a_bn", a, 4, ha), 4, ha)
    b, hb, bpads = conv("b", a, 4, 4, 3, 2, ha, same=True)
    b = relu("b_relu", bn("b_bn", b, 4, hb), 4, hb)
    c, hc, _ = conv("c", b, 4, 16, 1, 1, hb, bias=True)
    c = bn("c_bn", c, 16, hc)
    s, hs, _ = conv("proj", "x", C, 16, 1, 2, H)
    s = bn("proj_bn", s, 16, hs)
    check(hs == hc == 8, "resnet: the test itself expects 8x8 branches")
    nodes.append(helper.make_node("Add", [c, s], ["add_y"], name="add"))
    e.other("add", "Add", (16, hc, hc))
    nodes.append(helper.make_node("Relu", ["add_y"], ["out"], name="out_relu"))
    e.other("out_relu", "ReLU", (16, hc, hc))
    g = helper.make_graph(nodes, "resnet_block", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [1, C, H, H])], [helper.make_tensor_value_info(
            "out", TensorProto.FLOAT, [1, 16, 8, 8])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])
    m.ir_version = 8
    doc = import_and_check(tmp, m, e, "resnet")
    if doc:
        bl = [l for l in doc["layers"] if l["name"] == "b"][0]
        check(bl["pads"] == [bpads[0], bpads[1], bpads[2], bpads[3]] and bpads == (0, 0, 1, 1),
              "resnet: SAME_UPPER pads %s, expected %s" % (bl["pads"], bpads))
        add = [l for l in doc["layers"] if l["name"] == "add"][0]
        check(add["inputs"] == ["c_bn", "proj_bn"], "resnet: add inputs %s" % add["inputs"])
        check([l["name"] for l in doc["layers"]][-1] == "out_relu", "resnet: output not last")


def dense(tmp):
    C, H = 3, 8
    n0 = C * H * H
    e = Expect()
    w1, c1 = W(n0, 20), W(20)  # Gemm transB=0: B is [K, N]
    w2, b2 = W(20, 12), W(12)  # MatMul + Add
    w3 = W(5, 12)  # Gemm transB=1, no C
    inits = [init("w1", w1), init("c1", c1), init("w2", w2), init("b2", b2), init("w3", w3),
             init("lo", np.float32(0)), init("hi", np.float32(6))]
    nodes = [
        helper.make_node("Constant", [], ["shape"], name="shape_const",
                         value=numpy_helper.from_array(np.array([1, -1], dtype=np.int64))),
        helper.make_node("Reshape", ["x", "shape"], ["flat"], name="flatten_by_reshape"),
        helper.make_node("Gemm", ["flat", "w1", "c1"], ["g1"], name="fc1", alpha=0.5, beta=2.0),
        helper.make_node("Relu", ["g1"], ["r1"], name="relu1"),
        helper.make_node("Identity", ["r1"], ["r1i"], name="ident"),
        helper.make_node("MatMul", ["r1i", "w2"], ["mm"], name="fc2"),
        helper.make_node("Add", ["mm", "b2"], ["fc2_y"], name="fc2_bias"),
        helper.make_node("Clip", ["fc2_y", "lo", "hi"], ["r6"], name="relu6"),
        helper.make_node("Dropout", ["r6"], ["d"], name="drop"),
        helper.make_node("Gemm", ["d", "w3"], ["g3"], name="fc3", transB=1),
        helper.make_node("Softmax", ["g3"], ["prob"], name="softmax"),
    ]
    e.other("flatten_by_reshape", "Flatten", (n0, 1, 1))
    e.fc("fc1", n0, 20)
    e.weights["fc1"] = np.concatenate([(0.5 * w1).T.astype(np.float32).ravel(),
                                       (2.0 * c1).astype(np.float32)])
    e.other("relu1", "ReLU", (20, 1, 1))
    e.fc("fc2", 20, 12)
    e.weights["fc2"] = np.concatenate([w2.T.ravel(), b2])
    e.other("relu6", "ReLU", (12, 1, 1))
    e.other("drop", "Dropout", (12, 1, 1))
    e.fc("fc3", 12, 5, bias=False)
    e.weights["fc3"] = w3.ravel()
    e.other("softmax", "Softmax", (5, 1, 1))
    g = helper.make_graph(nodes, "dense", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [1, C, H, H])], [helper.make_tensor_value_info(
            "prob", TensorProto.FLOAT, [1, 5])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    doc = import_and_check(tmp, m, e, "dense")
    if doc:
        r6 = [l for l in doc["layers"] if l["name"] == "relu6"][0]
        check(r6.get("max") == 6, "dense: Clip(0, 6) became %s" % r6)
        f2 = [l for l in doc["layers"] if l["name"] == "fc2"][0]
        check(f2["bias"] is True and f2["inputs"] == ["relu1"],
              "dense: MatMul + Add not folded into one FC with bias: %s" % f2)


def old_opset(tmp):
    C, H = 3, 10
    e = Expect()
    w, b = W(6, C, 3, 3), W(6)
    bnp = [W(6) + 1, W(6), W(6), np.abs(W(6)) + 0.5]
    fw, fb = W(4, 6), W(4)  # Gemm-7 needs C
    inits = [init("w", w), init("b", b), init("fw", fw), init("fb", fb)] + \
        [init("bn_" + r, a.astype(np.float32)) for r, a in zip("sbmv", bnp)]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 0, 0, 1]),
        helper.make_node("BatchNormalization", ["c", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"],
                         name="bn", spatial=1, epsilon=1e-4),
        helper.make_node("LRN", ["bn"], ["lrn"], name="lrn", size=3, alpha=2e-4, beta=0.75,
                         bias=2.0),
        helper.make_node("Clip", ["lrn"], ["r6"], name="relu6", min=0.0, max=6.0),
        helper.make_node("AveragePool", ["r6"], ["ap"], name="avg", kernel_shape=[2, 2],
                         strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
        helper.make_node("GlobalAveragePool", ["ap"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flat"),
        helper.make_node("Gemm", ["flat", "fw", "fb"], ["fc"], name="fc", transB=1),
        helper.make_node("Softmax", ["fc"], ["prob"], name="softmax"),
    ]
    ho, wo = e.conv("conv", C, 6, 3, H, H, s=2, pads=(1, 0, 0, 1))
    e.weights["conv"] = np.concatenate([w.ravel(), b])
    e.other("bn", "BatchNorm", (6, ho, wo), params=12)
    e.weights["bn"] = np.concatenate(bnp)
    e.other("lrn", "LRN", (6, ho, wo))
    e.other("relu6", "ReLU", (6, ho, wo))
    e.other("avg", "AveragePool", (6, pool_out(ho, 2, 2, 1, 1), pool_out(wo, 2, 2, 1, 1)))
    e.other("gap", "GlobalAveragePool", (6, 1, 1))
    e.other("flat", "Flatten", (6, 1, 1))
    e.fc("fc", 6, 4)
    e.weights["fc"] = np.concatenate([fw.ravel(), fb])
    e.other("softmax", "Softmax", (4, 1, 1))
    g = helper.make_graph(nodes, "old", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [1, C, H, H])], [helper.make_tensor_value_info(
            "prob", TensorProto.FLOAT, [1, 4])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 7)])
    m.ir_version = 3
    # IR 3 lists initializers among the graph inputs.
    for i in inits:
        m.graph.input.append(helper.make_tensor_value_info(i.name, TensorProto.FLOAT, list(i.dims)))
    doc = import_and_check(tmp, m, e, "old")
    if doc:
        lrn = [l for l in doc["layers"] if l["name"] == "lrn"][0]
        check(lrn["size"] == 3 and lrn["alpha"] == 2e-4 and lrn["beta"] == 0.75 and lrn["k"] == 2,
              "old: LRN attributes %s" % lrn)
        bn = [l for l in doc["layers"] if l["name"] == "bn"][0]
        check(bn["epsilon"] == 1e-4, "old: BN epsilon %s" % bn["epsilon"])
        ap = [l for l in doc["layers"] if l["name"] == "avg"][0]
        check(ap["count_include_pad"] is True and ap["pads"] == [1, 1, 1, 1],
              "old: AveragePool attributes %s" % ap)


def main():
    with tempfile.TemporaryDirectory(prefix="dse-onnx-models-") as tmp:
        for f in (inception, resnet, dense, old_opset):
            f(tmp)
    return summary("test_onnx_models")


if __name__ == "__main__":
    sys.exit(main())
