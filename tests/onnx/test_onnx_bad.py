#!/usr/bin/python3
"""test_onnx_bad.py -- every way an ONNX file can be refused: `dse net import
BAD.onnx -o NET.json --weights W.bin` must exit 2, print exactly one line on
stderr naming the file and the reason, and leave neither output file
behind.  The bad files are crafted here with onnx.helper or by cutting
bytes.  Controls (the same models made good) must import, so that each
refusal is the one intended.

usage: test_onnx_bad.py DSE_BIN
Exit 77 (skipped) when this python has no onnx module.
"""
import json
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import check, need_onnx, summary  # noqa: E402

np, onnx, TensorProto, helper, numpy_helper = need_onnx()

DSE = sys.argv[1]



def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(nodes, inputs, outputs, inits=(), opset=13, value_info=()):
    g = helper.make_graph(nodes, "bad", inputs, outputs, list(inits), value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def conv_model(w_dtype=np.float32, in_c=3, w_in_c=3, inp=None, out_shape=None, attrs=None,
               vinfo=()):
    w = np.full((4, w_in_c, 3, 3), 0.1, dtype=w_dtype)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", kernel_shape=[3, 3],
                            **(attrs or {}))
    return model([node], [inp or vi("x", [1, in_c, 8, 8])],
                 [vi("y", out_shape or [1, 4, 6, 6])], [init("w", w)], value_info=vinfo)


def run_import(tmp, name, data, stem=None):
    path = os.path.join(tmp, (stem or name) + ".onnx")
    with open(path, "wb") as f:
        f.write(data)
    js, wb = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + ".bin")
    p = subprocess.run([DSE, "net", "import", path, "-o", js, "--weights", wb],
                       capture_output=True, text=True, timeout=300)  # a hang fails, not stalls
    return path, js, wb, p


def bad(tmp, name, m, reason, raw=None):
    data = raw if raw is not None else m.SerializeToString()
    path, js, wb, p = run_import(tmp, name, data)
    lines = p.stderr.splitlines()
    check(p.returncode == 2, "%s: exit %d, expected 2 (stderr %r)" % (name, p.returncode, p.stderr))
    check(len(lines) == 1, "%s: %d stderr lines, expected one: %r" % (name, len(lines), p.stderr))
    check(path in p.stderr, "%s: stderr does not name %s: %r" % (name, path, p.stderr))
    check(reason in p.stderr, "%s: stderr does not say %r: %r" % (name, reason, p.stderr))
    check(not os.path.exists(js) and not os.path.exists(wb), "%s: output left on disk" % name)
    check(p.stdout == "", "%s: printed on stdout: %r" % (name, p.stdout))


def good(tmp, name, m, save=None):
    if save:
        path = save(tmp)
        js, wb = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + ".bin")
        p = subprocess.run([DSE, "net", "import", path, "-o", js, "--weights", wb],
                           capture_output=True, text=True)
    else:
        path, js, wb, p = run_import(tmp, name, m.SerializeToString())
    check(p.returncode == 0, "control %s: exit %d: %s" % (name, p.returncode, p.stderr))
    check(os.path.exists(js) and os.path.exists(wb), "control %s: no output" % name)


def main():
    relu = helper.make_node("Relu", ["x"], ["y"], name="r")
    with tempfile.TemporaryDirectory(prefix="dse-onnx-bad-") as tmp:
        good_conv = conv_model()
        good(tmp, "control_conv", good_conv)
        good(tmp, "control_relu", model([relu], [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])]))

        # Unsupported operator.
        softsign = helper.make_node("Softsign", ["x"], ["y"], name="act")
        bad(tmp, "unsupported_op", model([softsign], [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])]),
            "node act (Softsign): unsupported operator Softsign")
        bad(tmp, "unsupported_attr", conv_model(attrs={"foo": 1}), "unsupported attribute foo")
        # The fuzzer's findings (tests/onnx/regress/): an empty op_type looped
        # forever; a missing first input of Mul read before the tensor table; a
        # Reshape target's product overflowed.
        x4 = [vi("x", [1, 3, 4, 4])]
        bad(tmp, "empty_op_type", model([helper.make_node("", ["x"], ["y"], name="e")], x4,
                                        [vi("y", [1, 3, 4, 4])]), "unsupported operator")
        bad(tmp, "mul_missing_input",
            model([helper.make_node("Mul", ["", "c"], ["y"], name="m")], x4, [vi("y", [1, 3, 4, 4])],
                  inits=[init("c", np.full([1], 2, np.float32))]), "node m (Mul): input 0 is missing")
        bad(tmp, "reshape_overflow",
            model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")], x4, [vi("y", [1, 48])],
                  inits=[init("s", np.array([1, 1 << 40, 1 << 40, 4, 4], np.int64))]),
            "node rs (Reshape)")
        bad(tmp, "other_domain", model([helper.make_node("Relu", ["x"], ["y"], name="r",
                                                         domain="com.example")],
                                       [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])]),
            "domain com.example")
        bad(tmp, "opset_too_new", model([relu], [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])],
                                        opset=99), "opset 99")

        # Dynamic shapes.
        bad(tmp, "symbolic_height", conv_model(inp=vi("x", [1, 3, "H", 8]), out_shape=[1, 4, "H", 6]),
            "dynamic shape: dimension 2 is symbolic \"H\"")
        bad(tmp, "missing_dim", conv_model(inp=helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                           None)),
            "has no shape (dynamic shape)")
        bad(tmp, "unknown_dim", conv_model(inp=vi("x", [1, 3, None, 8])),
            "dimension 2 is unknown")
        bad(tmp, "batch_4", conv_model(inp=vi("x", [4, 3, 8, 8]), out_shape=[4, 4, 6, 6]),
            "batch 4; dse needs batch 1")
        bad(tmp, "rank_3", model([relu], [vi("x", [1, 3, 4])], [vi("y", [1, 3, 4])]),
            "input x is 3-D")

        # Wrong data types.
        bad(tmp, "input_float16", model([relu], [vi("x", [1, 3, 4, 4], TensorProto.FLOAT16)],
                                        [vi("y", [1, 3, 4, 4], TensorProto.FLOAT16)]),
            "data type float16; dse needs float32")
        bad(tmp, "weight_float64", conv_model(w_dtype=np.float64),
            "node conv1 (Conv): weight w: data type float64, dse needs float32")

        # Not ONNX at all, or cut short.
        good_bytes = good_conv.SerializeToString()
        bad(tmp, "truncated", None, "not an ONNX model", raw=good_bytes[:len(good_bytes) // 2])
        bad(tmp, "text_file", None, "not an ONNX model",
            raw=b'{"format": "dse-network", "layers": []}\n')
        bad(tmp, "empty_file", None, "not an ONNX model", raw=b"")
        p = subprocess.run([DSE, "net", "import", os.path.join(tmp, "nonexistent.onnx"), "-o",
                            os.path.join(tmp, "ne.json")], capture_output=True, text=True)
        check(p.returncode == 2 and "nonexistent.onnx: cannot open" in p.stderr and
              len(p.stderr.splitlines()) == 1, "missing file: %d %r" % (p.returncode, p.stderr))

        # External data: present imports, missing is refused.
        ext = conv_model()

        def save_ext(d):
            path = os.path.join(d, "ext_ok.onnx")
            m = onnx.ModelProto()
            m.CopyFrom(ext)
            onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                      location="ext_ok.weights", size_threshold=0)
            return path

        good(tmp, "control_external", None, save=save_ext)
        m = onnx.ModelProto()
        m.CopyFrom(ext)
        onnx.external_data_helper.convert_model_to_external_data(
            m, all_tensors_to_one_file=True, location="gone.weights", size_threshold=0)
        bad(tmp, "external_missing", m, "external data file")
        check("is missing" in subprocess.run(
            [DSE, "net", "import", os.path.join(tmp, "external_missing.onnx"), "-o",
             os.path.join(tmp, "x.json")], capture_output=True, text=True).stderr,
            "external_missing: message does not say the file is missing")

        # Graph structure.
        two_out = model([helper.make_node("Relu", ["x"], ["y"], name="r1"),
                         helper.make_node("Relu", ["y"], ["z"], name="r2")],
                        [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4]), vi("z", [1, 3, 4, 4])])
        # A Pad before an AveragePool with ceil_mode cannot be folded into it: a Pad layer.
        pads = init("p", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))
        good(tmp, "pad_avgpool_ceil", model([helper.make_node("Pad", ["x", "p"], ["xp"], name="pad"),
                                             helper.make_node("AveragePool", ["xp"], ["y"], name="ap",
                                                              kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
                                            [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 3, 3])], [pads]))
        good(tmp, "two_outputs", two_out)  # joined, flattened, into one layer (docs/onnx.md)
        many = [helper.make_node("Relu", ["x"], ["y%d" % k], name="r%d" % k) for k in range(17)]
        bad(tmp, "seventeen_outputs", model(many, [vi("x", [1, 3, 4, 4])],
                                            [vi("y%d" % k, [1, 3, 4, 4]) for k in range(17)]),
            "the graph has 17 outputs; dse joins at most 16")
        bad(tmp, "output_is_input", model([helper.make_node("Relu", ["x"], ["y"], name="r1")],
                                          [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4]), vi("x", [1, 3, 4, 4])]),
            "graph output x is the graph input itself")
        bad(tmp, "second_output_shape",
            model([helper.make_node("Relu", ["x"], ["y"], name="r1"), helper.make_node("Relu", ["y"], ["z"], name="r2")],
                  [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4]), vi("z", [1, 3, 5, 4])]),
            "graph output z has shape 1x3x5x4 but the layers give 1x3x4x4")
        two_in = model([helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                       [vi("a", [1, 3, 4, 4]), vi("b", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])])
        bad(tmp, "two_inputs", two_in, "the graph has 2 inputs")
        bad(tmp, "dangling", model([helper.make_node("Relu", ["x"], ["y"], name="r1"),
                                    helper.make_node("Relu", ["x"], ["z"], name="r2")],
                                   [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])]),
            "2 outputs (layers without consumers")

        # Shapes that disagree with what the layers give.
        bad(tmp, "output_shape", conv_model(out_shape=[1, 4, 7, 7]),
            "graph output y has shape 1x4x7x7 but the layers give 1x4x6x6")
        bad(tmp, "value_info_shape",
            model([helper.make_node("Relu", ["x"], ["h"], name="r1"),
                   helper.make_node("Relu", ["h"], ["y"], name="r2")],
                  [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])],
                  value_info=[vi("h", [1, 3, 5, 4])]),
            "value_info h has shape 1x3x5x4")
        bad(tmp, "weight_channels", conv_model(in_c=3, w_in_c=5),
            "weight w fits 5 input channels, the input has 3")

        # Operators used in ways dse cannot represent.
        w = init("w", np.ones((5, 6), np.float32))
        bad(tmp, "gemm_transA", model([helper.make_node("Gemm", ["x", "w"], ["y"], name="g",
                                                        transA=1)],
                                      [vi("x", [1, 6])], [vi("y", [1, 5])], [w]),
            "transA=1")
        bad(tmp, "clip_min_above_max", model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="c")],
                                             [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])],
                                             [init("lo", np.float32(2)), init("hi", np.float32(1))]),
            "Clip with min 2 above max 1")
        # Resize: nearest upsampling by integer factors, read as floor(i / s).
        x4 = [vi("x", [1, 3, 4, 4])]
        def resize(name, scales, reason, **attrs):
            nd = helper.make_node("Resize", ["x", "", "s"], ["y"], name="up", **attrs)
            bad(tmp, name, model([nd], x4, [vi("y", [1, 3, 8, 8])], [init("s", np.array(scales, np.float32))]),
                reason)
        resize("resize_cubic", [1, 1, 2, 2], "mode cubic: dse imports nearest and linear", mode="cubic")
        resize("resize_linear_asymmetric", [1, 1, 2, 2], "linear resize with coordinate mode other than",
               mode="linear", coordinate_transformation_mode="asymmetric")
        resize("resize_fraction", [1, 1, 1.5, 2], "nearest resize from 4x4 to 6x8: dse resizes by "
               "integer factors, or to any size reading input floor(o H / h)", mode="nearest")
        good(tmp, "control_resize_fraction_floor",  # PyTorch's nearest: a Nearest layer
             model([helper.make_node("Resize", ["x", "", "s"], ["y"], name="up", mode="nearest",
                                     coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
                   x4, [vi("y", [1, 3, 6, 8])], [init("s", np.array([1, 1, 1.5, 2], np.float32))]))
        nd = helper.make_node("Resize", ["x", "s"], ["y"], name="up", mode="linear")
        bad(tmp, "resize10_linear", model([nd], x4, [vi("y", [1, 3, 8, 8])], [init("s", np.array([1, 1, 2, 2], np.float32))],
                                          opset=10), "Resize in mode linear below opset 11")
        resize("resize_pytorch_half_pixel_one_row", [1, 1, 0.25, 2], "pytorch_half_pixel to one row",
               mode="linear", coordinate_transformation_mode="pytorch_half_pixel")
        resize("resize_tf_half_pixel_identity", [1, 1, 1, 1], "do not read input floor(i / scale)",
               mode="nearest", coordinate_transformation_mode="tf_half_pixel_for_nn", nearest_mode="ceil")
        resize("resize_fractional_rows", [1, 1, 1.3, 2], "scale 1.3 of 4 rows is not a whole number",
               mode="linear")
        resize("resize_channels", [1, 2, 2, 2], "scales the batch or channel axis", mode="nearest")
        resize("resize_half_pixel_floor", [1, 1, 2, 2], "do not read input floor(i / scale)",
               mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="floor")
        resize("resize_asymmetric_round3", [1, 1, 3, 3], "do not read input floor(i / scale)",
               mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="round_prefer_floor")
        # ConvTranspose: weight [C, M/group, kh, kw] must match the input,
        # and what it cannot express is refused in one line.
        def deconv(name, wshape, reason, yshape=(1, 2, 8, 8), xshape=(1, 3, 4, 4), **attrs):
            nd = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", **attrs)
            bad(tmp, name, model([nd], [vi("x", list(xshape))], [vi("y", list(yshape))],
                                 [init("w", np.full(wshape, 0.1, np.float32))]), reason)
        deconv("deconv_in_channels", (4, 2, 2, 2), "weight w has 4 input channels, the input has 3",
               strides=[2, 2])
        deconv("deconv_group", (3, 2, 2, 2), "group 2 does not divide the input's 3 channels",
               strides=[2, 2], group=2)
        deconv("deconv_valid_shape", (3, 2, 2, 2), "auto_pad VALID with output_shape",
               strides=[2, 2], auto_pad="VALID", output_shape=[8, 8])
        deconv("deconv_shape_channels", (3, 2, 2, 2), "output_shape has 5 channels, the weight gives 2",
               strides=[2, 2], output_shape=[1, 5, 8, 8])
        deconv("deconv_shape_batch", (3, 2, 2, 2), "output_shape's batch 2 is not 1",
               strides=[2, 2], output_shape=[2, 2, 8, 8])
        deconv("deconv_crop_all", (3, 2, 1, 1), "leave no output", yshape=(1, 2, 1, 1),
               xshape=(1, 3, 1, 1), pads=[1, 0, 1, 0])
        deconv("deconv_1d", (3, 2, 2), "is 3-D", yshape=(1, 2, 8), xshape=(1, 3, 4), strides=[2])
        deconv("deconv_shape", (3, 2, 2, 2), "has shape 1x2x9x8 but the layers give 1x2x8x8", yshape=(1, 2, 9, 8),
               strides=[2, 2])
        good(tmp, "deconv_output_shape",
             model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", strides=[2, 2],
                                     output_shape=[9, 10])],
                   [vi("x", [1, 3, 4, 4])], [vi("y", [1, 2, 9, 10])],
                   [init("w", np.full((3, 2, 2, 2), 0.1, np.float32))]))
        good(tmp, "deconv_output_shape_nchw",
             model([helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", strides=[2, 2],
                                     output_shape=[1, 2, 8, 8])],
                   [vi("x", [1, 3, 4, 4])], [vi("y", [1, 2, 8, 8])],
                   [init("w", np.full((3, 2, 2, 2), 0.1, np.float32))]))
        # A pixel shuffle written as 6-D Reshape, Transpose, Reshape (torch.onnx below
        # opset 11: CRD; DepthToSpace's definition: DCR) is a PixelShuffle layer of that
        # order; other 6-D views and transposes are refused in one line.
        def ps6(name, view, perm, reason=None, dcr=None, xshape=(1, 12, 3, 5), out=(1, 3, 6, 10)):
            nodes = [helper.make_node("Reshape", ["x", "s6"], ["v"], name="v6"),
                     helper.make_node("Transpose", ["v"], ["t"], name="t6", perm=perm),
                     helper.make_node("Reshape", ["t", "s4"], ["y"], name="ps")]
            m = model(nodes, [vi("x", list(xshape))], [vi("y", list(out))],
                      [init("s6", np.array(view, np.int64)), init("s4", np.array(out, np.int64))])
            if reason:
                bad(tmp, name, m, reason)
                return
            good(tmp, name, m)
            layers = json.load(open(os.path.join(tmp, name + ".json")))["layers"]
            check([(L["kind"], L.get("factor"), L.get("dcr")) for L in layers] ==
                  [("PixelShuffle", 2, dcr)],
                  "%s: imported as %r" % (name, [(L["kind"], L.get("dcr")) for L in layers]))
        ps6("ps6_crd", [1, 3, 2, 2, 3, 5], [0, 1, 4, 2, 5, 3], dcr=False)
        ps6("ps6_dcr", [1, 2, 2, 3, 3, 5], [0, 3, 4, 1, 5, 2], dcr=True)
        ps6("ps6_other_perm", [1, 3, 2, 2, 3, 5], [0, 1, 4, 3, 5, 2],
            "dse takes only a pixel shuffle's")
        ps6("ps6_dcr_perm_on_crd_view", [1, 3, 2, 2, 3, 5], [0, 3, 4, 1, 5, 2],
            "Transpose of the 6-D view [1, 3, 2, 2, H, W]")
        ps6("ps6_wrong_target", [1, 3, 2, 2, 3, 5], [0, 1, 4, 2, 5, 3],
            "Reshape of a pixel shuffle's 6-D view to other than [1, 3, 6, 10]", out=(1, 3, 10, 6))
        # Pad modes: reflect and edge are layers; wrap and reflecting more than the map are not.
        def pad(name, mode, pads, yshape, reason=None):
            nd = helper.make_node("Pad", ["x", "p"], ["y"], name="pad", mode=mode)
            m = model([nd], [vi("x", [1, 3, 4, 4])], [vi("y", yshape)], [init("p", np.array(pads, np.int64))])
            if reason:
                bad(tmp, name, m, reason)
            else:
                good(tmp, name, m)
        pad("pad_wrap", "wrap", [0, 0, 1, 1, 0, 0, 1, 1], [1, 3, 6, 6], "wrap padding is unsupported")
        bad(tmp, "pad_inf", model([helper.make_node("Pad", ["x", "p", "v"], ["y"], name="pad")],
                                  [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 6, 6])],
                                  [init("p", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)),
                                   init("v", np.float32(-np.inf))]),
            "padding with -inf: dse pads with finite values")
        pad("pad_reflect_big", "reflect", [0, 0, 4, 0, 0, 0, 0, 0], [1, 3, 8, 4], "must be smaller than the map")
        pad("pad_reflect", "reflect", [0, 0, 3, 1, 0, 0, 2, 0], [1, 3, 9, 5])
        pad("pad_edge", "edge", [0, 0, 5, 1, 0, 0, 2, 6], [1, 3, 11, 11])
        nd = helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], name="inorm")
        bad(tmp, "instnorm_scale_shape", model([nd], [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])],
                                               [init("s", np.ones((1, 3, 1, 1), np.float32)),
                                                init("b", np.zeros(3, np.float32))]),
            "scale s must be one value per channel ([3])")
        # GroupNorm's pattern (Reshape [1, G, -1], InstanceNormalization,
        # Reshape back): a scale per channel instead of per group; the view
        # read by anything else; the view reshaped to another shape
        g3 = init("g", np.array([1, 3, -1], np.int64))
        gnb = [init("gs", np.ones(3, np.float32)), init("gb", np.zeros(3, np.float32))]
        back = init("s4", np.array([1, 6, 4, 4], np.int64))
        bad(tmp, "groupnorm_scale_shape",
            model([helper.make_node("Reshape", ["x", "g"], ["v"], name="view"),
                   helper.make_node("InstanceNormalization", ["v", "s", "gb"], ["n"], name="gnorm"),
                   helper.make_node("Reshape", ["n", "s4"], ["y"], name="back")],
                  [vi("x", [1, 6, 4, 4])], [vi("y", [1, 6, 4, 4])],
                  [g3, back, gnb[1], init("s", np.ones(6, np.float32))]),
            "scale s must be one value per group of the GroupNorm's view ([3])")
        bad(tmp, "groupnorm_view_elsewhere",
            model([helper.make_node("Reshape", ["x", "g"], ["v"], name="view"),
                   helper.make_node("Relu", ["v"], ["y"], name="relu")],
                  [vi("x", [1, 6, 4, 4])], [vi("y", [1, 3, 32])], [g3]),
            "a 3-D view [1, G, -1] (dse takes only a GroupNorm's)")
        bad(tmp, "groupnorm_back_shape",
            model([helper.make_node("Reshape", ["x", "g"], ["v"], name="view"),
                   helper.make_node("InstanceNormalization", ["v", "gs", "gb"], ["n"], name="gnorm"),
                   helper.make_node("Reshape", ["n", "s4"], ["y"], name="back")],
                  [vi("x", [1, 6, 4, 4])], [vi("y", [1, 6, 2, 8])],
                  [g3, gnb[0], gnb[1], init("s4", np.array([1, 6, 2, 8], np.int64))]),
            "Reshape of a GroupNorm's 3-D view to other than [1, 6, 4, 4]")
        # a max over channels without keepdims: only Unsqueeze(1) may read it
        bad(tmp, "reducemax_squeezed_read",
            model([helper.make_node("ReduceMax", ["x"], ["m"], name="rmax", axes=[1], keepdims=0),
                   helper.make_node("Relu", ["m"], ["y"], name="relu")],
                  [vi("x", [1, 6, 4, 4])], [vi("y", [1, 4, 4])]),
            "is a reduction over channels without keepdims (dse takes it only unsqueezed back")
        bad(tmp, "reducemax_unsqueeze_axis",
            model([helper.make_node("ReduceMax", ["x"], ["m"], name="rmax", axes=[1], keepdims=0),
                   helper.make_node("Unsqueeze", ["m", "ax"], ["y"], name="unsq")],
                  [vi("x", [1, 6, 4, 4])], [vi("y", [1, 4, 4, 1])], [init("ax", np.array([3], np.int64))]),
            "dse takes only axes [1]")
        # GroupNormalization (opset 18): num_groups dividing the channels,
        # scale and bias one per group (per channel from opset 21)
        gnn = lambda **kw: helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], name="gn", **kw)
        bad(tmp, "groupnormalization_groups",
            model([gnn(num_groups=4)], [vi("x", [1, 6, 4, 4])], [vi("y", [1, 6, 4, 4])],
                  [init("s", np.ones(4, np.float32)), init("b", np.zeros(4, np.float32))], opset=18),
            "num_groups 4 does not divide 6 channels")
        bad(tmp, "groupnormalization_scale18",
            model([gnn(num_groups=3)], [vi("x", [1, 6, 4, 4])], [vi("y", [1, 6, 4, 4])],
                  [init("s", np.ones(6, np.float32)), init("b", np.zeros(6, np.float32))], opset=18),
            "scale s must be one value per group of the GroupNorm's view ([3])")
        bad(tmp, "groupnormalization_scale21",
            model([gnn(num_groups=3)], [vi("x", [1, 6, 4, 4])], [vi("y", [1, 6, 4, 4])],
                  [init("s", np.ones(3, np.float32)), init("b", np.zeros(3, np.float32))], opset=21),
            "scale s must be one value per channel ([6])")
        bad(tmp, "groupnorm_two_readers",
            model([helper.make_node("Reshape", ["x", "g"], ["v"], name="view"),
                   helper.make_node("InstanceNormalization", ["v", "gs", "gb"], ["n"], name="gnorm"),
                   helper.make_node("Reshape", ["n", "s4"], ["b1"], name="back"),
                   helper.make_node("Reshape", ["n", "s4"], ["b2"], name="back2"),
                   helper.make_node("Add", ["b1", "b2"], ["y"], name="sum")],
                  [vi("x", [1, 6, 4, 4])], [vi("y", [1, 6, 4, 4])], [g3, back, gnb[0], gnb[1]]),
            "read by 2 nodes; dse fuses the pattern only when one Reshape reads it")
        bad(tmp, "prelu_slope_shape",
            model([helper.make_node("PRelu", ["x", "a"], ["y"], name="p")], x4, [vi("y", [1, 3, 4, 4])],
                  [init("a", np.full((4,), 0.25, np.float32))]),
            "slope a has a shape dse does not broadcast")
        bad(tmp, "softmax_w", model([helper.make_node("Softmax", ["x"], ["y"], name="s", axis=3)],
                                    [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])]),
            "Softmax over axis 3")
        bad(tmp, "softmax_old_4d", model([helper.make_node("Softmax", ["x"], ["y"], name="s")],
                                         [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])],
                                         opset=11),
            "Softmax (opset < 13) over C*H*W")
        bad(tmp, "concat_axis", model([helper.make_node("Relu", ["x"], ["h"], name="r"),
                                       helper.make_node("Concat", ["x", "h"], ["y"], name="cat",
                                                        axis=2)],
                                      [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 8, 4])]),
            "Concat along axis 2")
        bad(tmp, "add_const", model([helper.make_node("Add", ["x", "k"], ["y"], name="a")],
                                    [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])],
                                    [init("k", np.ones((1, 3, 4, 4), np.float32))]),
            "constant k is not one value per channel of x")
        bad(tmp, "sub_from_const", model([helper.make_node("Sub", ["k", "x"], ["y"], name="s")],
                                         [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])],
                                         [init("k", np.ones((1, 3, 1, 1), np.float32))]),
            "Sub is imported only as x - mean(x) of a LayerNorm, an activation minus a constant, or the "
            "difference of two activations")
        bad(tmp, "sub_shapes", model([helper.make_node("GlobalAveragePool", ["x"], ["g"], name="g"),
                                      helper.make_node("Sub", ["x", "g"], ["y"], name="s")],
                                     [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])]),
            "Add of different shapes 3x4x4 and 3x1x1")
        # a constant added after a bias-free Conv folds into its bias only
        # when it runs along the channels: [4] broadcasts along the width
        bad(tmp, "conv_add_width", model([helper.make_node("Conv", ["x", "w"], ["c"], name="cv",
                                                           kernel_shape=[1, 1]),
                                          helper.make_node("Add", ["c", "k"], ["y"], name="a")],
                                         [vi("x", [1, 3, 4, 4])], [vi("y", [1, 4, 4, 4])],
                                         [init("w", np.ones((4, 3, 1, 1), np.float32)),
                                          init("k", np.arange(4, dtype=np.float32))]),
            "constant k is not one value per channel")
        bad(tmp, "imagescaler_bias", model([helper.make_node("ImageScaler", ["x"], ["y"], name="s",
                                                             bias=[1.0, 2.0])],
                                           [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])], opset=8),
            "bias has 2 values, the input 3 channels")
        bad(tmp, "reshape_numel", model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
                                        [vi("x", [1, 3, 4, 4])], [vi("y", [1, 7])],
                                        [init("s", np.array([1, 7], np.int64))]),
            "Reshape to [1, 7] of a tensor of 48 elements")
        bad(tmp, "reshape_4d", model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
                                     [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 16, 1])],
                                     [init("s", np.array([1, 3, 16, 1], np.int64))]),
            "Reshape to 4-D")
        bad(tmp, "dropout_training",
            model([helper.make_node("Dropout", ["x", "", "t"], ["y"], name="d")],
                  [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])],
                  [init("t", np.array(True))]),
            "training_mode=true")
        bnp = [init(n, np.ones(3, np.float32)) for n in "sbmv"]
        bad(tmp, "bn_training",
            model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                    name="bn", training_mode=1)],
                  [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])], bnp, opset=15),
            "training_mode=1")
        bad(tmp, "maxpool_dilation",
            model([helper.make_node("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[2, 2],
                                    dilations=[2, 2])],
                  [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 2, 2])]),
            "dse pools have no dilation")
        bad(tmp, "weight_input", model([helper.make_node("Conv", ["x", "w"], ["y"], name="c")],
                                       [vi("x", [1, 3, 8, 8]), vi("w", [4, 3, 3, 3])],
                                       [vi("y", [1, 4, 6, 6])]),
            "the graph has 2 inputs")
        # Attention (vision transformers), patterns left unfinished, NHWC
        # views where NCHW is needed, slices and splits off the channels.
        x4 = [vi("x", [1, 3, 4, 4])]
        y4 = [vi("y", [1, 3, 4, 4])]
        bad(tmp, "attention", model([helper.make_node("Relu", ["x"], ["h"], name="r"),
                                     helper.make_node("MatMul", ["x", "h"], ["y"], name="qk")],
                                    x4, y4),
            "node qk (MatMul): attention is not supported (a product of two computed tensors, as in vision "
            "transformers)")
        bad(tmp, "erf_alone", model([helper.make_node("Erf", ["x"], ["y"], name="e")], x4, y4),
            "Erf is imported only as erf(x / sqrt 2) of a GELU")
        bad(tmp, "centred_only", model([helper.make_node("ReduceMean", ["x"], ["m"], name="m", axes=[1]),
                                        helper.make_node("Sub", ["x", "m"], ["y"], name="d")], x4, y4),
            "graph output y is x - mean(x) of a LayerNorm")
        bad(tmp, "gelu_half_done",
            model([helper.make_node("Div", ["x", "r2"], ["d"], name="d"),
                   helper.make_node("Erf", ["d"], ["e"], name="e"),
                   helper.make_node("Relu", ["e"], ["y"], name="r")], x4, y4,
                  [init("r2", np.float32(np.sqrt(2)))]),
            "node r (Relu): input e is erf(x / sqrt 2) of a GELU")
        bad(tmp, "nhwc_conv", model([helper.make_node("Transpose", ["x"], ["t"], name="t", perm=[0, 2, 3, 1]),
                                     helper.make_node("Conv", ["t", "w"], ["y"], name="c", kernel_shape=[1, 1])],
                                    x4, [vi("y", [1, 3, 4, 3])], [init("w", np.ones((3, 4, 1, 1), np.float32))]),
            "node c (Conv): input t is in NHWC order")
        bad(tmp, "transpose_hw", model([helper.make_node("Transpose", ["x"], ["y"], name="t", perm=[0, 1, 3, 2])],
                                       x4, y4), "Transpose [0,1,3,2] of a 4-D NCHW activation")
        good(tmp, "control_split_h", model([helper.make_node("Split", ["x"], ["a", "b"], name="s", axis=2),
                                            helper.make_node("Add", ["a", "b"], ["y"], name="add")],
                                           x4, [vi("y", [1, 3, 2, 4])], opset=11))  # crops
        bad(tmp, "split_batch", model([helper.make_node("Split", ["x"], ["a"], name="s", axis=0),
                                       helper.make_node("Relu", ["a"], ["y"], name="r")],
                                      x4, y4, opset=11),
            "Split along axis 0; dse splits the channels (axis 1), rows or columns")
        bad(tmp, "split_w_sizes", model([helper.make_node("Split", ["x"], ["a", "b"], name="s", axis=3,
                                                          split=[1, 2]),
                                         helper.make_node("Concat", ["a", "b"], ["y"], name="c", axis=3)],
                                        x4, [vi("y", [1, 3, 4, 3])], opset=11),
            "split sizes add up to 3 of 4 columns")
        bad(tmp, "split_c_over", model([helper.make_node("Split", ["x"], ["a", "b", "c"], name="s", axis=1,
                                                         split=[2, 1, 1]),
                                        helper.make_node("Concat", ["a", "b", "c"], ["y"], name="cat", axis=1)],
                                       x4, [vi("y", [1, 4, 4, 4])], opset=11),
            "split sizes add up to more than the 3 channels")
        sl = lambda st, en, ax, sp, y=[1, 2, 4, 4]: model(
            [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="sl")], x4,
            [vi("y", y)],
            [init("st", np.array(st, np.int64)), init("en", np.array(en, np.int64)),
             init("ax", np.array(ax, np.int64)), init("sp", np.array(sp, np.int64))])
        bad(tmp, "slice_step", sl([0], [3], [1], [2]), "Slice with step 2 along axis 1")
        bad(tmp, "slice_flip", sl([3], [-5], [2], [-1]), "Slice with step -1 along axis 2")
        bad(tmp, "slice_empty", sl([1, 3], [3, 3], [1, 3], [1, 1]), "Slice of nothing: [3, 3) of axis 3")
        bad(tmp, "slice_batch", sl([1], [2], [0], [1]), "Slice of nothing: [1, 1) of axis 0")
        pad = lambda p, y: model([helper.make_node("Pad", ["x", "p"], ["y"], name="pd")], x4, [vi("y", y)],
                                 [init("p", np.array(p, np.int64))])
        bad(tmp, "pad_crop_grow", pad([0, 0, -1, 1, 0, 0, 0, 0], [1, 3, 3, 5]),
            "pads [-1, 1, 0, 0] both crop and pad, or crop the batch or channel axis")
        bad(tmp, "pad_crop_chan", pad([0, -1, 0, 0, 0, 0, 0, 0], [1, 2, 4, 4]), "crop the batch or channel axis")
        bad(tmp, "pad_crop_all", pad([0, 0, -2, 0, 0, 0, -2, 0], [1, 3, 0, 4]), "crop all of a 4x4 map")
        good(tmp, "control_pad_crop", pad([0, 0, -1, 0, 0, 0, -2, -1], [1, 3, 1, 3]))
        # crops (YOLOv5's Focus, a U-Net's skip)
        good(tmp, "control_slice_h", sl([1], [3], [2], [1], [1, 3, 2, 4]))
        good(tmp, "control_slice_hw", sl([1, 0, -3], [3, 99, 9], [1, 3, 2], [1, 2, 2], [1, 2, 2, 2]))
        good(tmp, "control_slice", sl([1], [3], [1], [1]))
        bad(tmp, "reducemean_c_flat",
            model([helper.make_node("ReduceMean", ["x"], ["y"], name="m", axes=[1], keepdims=0)],
                  x4, [vi("y", [1, 4, 4])]),
            "graph output y is a reduction over channels without keepdims (dse takes it only unsqueezed back")
        bad(tmp, "reducemean_hc_flat",
            model([helper.make_node("ReduceMean", ["x"], ["y"], name="m", axes=[1, 2], keepdims=0)],
                  x4, [vi("y", [1, 4])]), "keepdims=0 over these axes")
        # L2 normalisation: over the channels, floored by Clip's min only.
        bad(tmp, "reducel2_h", model([helper.make_node("ReduceL2", ["x"], ["r"], name="r", axes=[2], keepdims=1),
                                      helper.make_node("Div", ["x", "r"], ["y"], name="d")], x4, y4),
            "ReduceL2 is imported only over the channels with keepdims")
        bad(tmp, "l2_clip_max", model([helper.make_node("ReduceL2", ["x"], ["r"], name="r", axes=[1], keepdims=1),
                                       helper.make_node("Clip", ["r", "lo", "hi"], ["rc"], name="c"),
                                       helper.make_node("Div", ["x", "rc"], ["y"], name="d")], x4, y4,
                                      [init("lo", np.float32(1e-12)), init("hi", np.float32(3))]),
            "Clip of an L2 norm to [1e-12, 3]")
        bad(tmp, "expand_act", model([helper.make_node("Expand", ["x", "s"], ["y"], name="e")], x4, y4,
                                     [init("s", np.array([1, 3, 4, 4], np.int64))]),
            "Expand is imported only as the broadcast of an L2 normalisation's norm")
        bad(tmp, "lpnorm_p1", model([helper.make_node("LpNormalization", ["x"], ["y"], name="n", axis=1, p=1)],
                                    x4, y4), "LpNormalization with p 1 along axis 1")
        bad(tmp, "l2_of_other", model([helper.make_node("ReduceL2", ["x"], ["r"], name="r", axes=[1], keepdims=1),
                                       helper.make_node("Relu", ["x"], ["z"], name="z"),
                                       helper.make_node("Div", ["z", "r"], ["y"], name="d")], x4, y4),
            "Div is imported only by a constant, or as the last step of a LayerNorm or of an L2 normalisation")
        # Split attention: 5-D views of branches only where dse knows them.
        U = lambda i, o, ax=(1,): helper.make_node("Unsqueeze", [i, "ax" + "".join(map(str, ax))], [o], name=o)
        axes = [init("ax1", np.array([1], np.int64)), init("ax2", np.array([2], np.int64)),
                init("sh4", np.array([1, 6, 4, 4], np.int64)), init("sh3", np.array([1, 6, 16], np.int64)),
                init("shr", np.array([1, 1, 3, -1], np.int64))]
        def stack(*tail, outs=y4, opset=13, inits=()):
            return model([U("x", "u0"), helper.make_node("Relu", ["x"], ["r"], name="r"), U("r", "u1"),
                          helper.make_node("Concat", ["u0", "u1"], ["st"], name="st", axis=1)] + list(tail),
                         x4, outs, axes + list(inits), opset=opset)
        good(tmp, "control_stack_sum", stack(helper.make_node("ReduceSum", ["st", "ax1"], ["y"], name="s",
                                                              keepdims=0)))
        bad(tmp, "reducesum_act", model([helper.make_node("ReduceSum", ["x", "ax1"], ["y"], name="s")], x4,
                                        [vi("y", [1, 1, 4, 4])], axes),
            "ReduceSum of an activation: dse takes only the sum over axis 1 of a 5-D view of branches")
        bad(tmp, "unsqueeze_axis2", model([U("x", "u", (2,)), helper.make_node("Relu", ["u"], ["y"], name="r")],
                                          x4, [vi("y", [1, 3, 1, 4, 4])], axes),
            "Unsqueeze of a 4-D activation: dse takes only axes [1]")
        bad(tmp, "stack_relu", stack(helper.make_node("Relu", ["st"], ["y"], name="z")),
            "input st is a 5-D view [1, 2, 3, 4, 4] of branches")
        bad(tmp, "stack_sum_axis2", stack(helper.make_node("ReduceSum", ["st", "ax2"], ["y"], name="s", keepdims=0)),
            "dse sums only over axis 1 (the branches)")
        bad(tmp, "stack_concat_axis2", model([U("x", "u0"), U("x", "u1"),
                                              helper.make_node("Concat", ["u0", "u1"], ["y"], name="c", axis=2)],
                                             x4, [vi("y", [1, 1, 6, 4, 4])], axes),
            "Concat of 5-D views of branches along axis 2")
        bad(tmp, "stack_concat_4d", model([U("x", "u0"), helper.make_node("Concat", ["u0", "x"], ["y"], name="c", axis=1)],
                                          x4, [vi("y", [1, 4, 3, 4, 4])], axes),
            "concatenates a 5-D view of branches and x, which is none")
        bad(tmp, "stack_mul_4d", stack(helper.make_node("Mul", ["st", "x"], ["p"], name="m"),
                                       helper.make_node("ReduceSum", ["p", "ax1"], ["y"], name="s", keepdims=0)),
            "multiplies a 5-D view of branches by another tensor")
        bad(tmp, "stack_softmax_axis2", stack(helper.make_node("Softmax", ["st"], ["sm"], name="sm", axis=2),
                                              helper.make_node("ReduceSum", ["sm", "ax1"], ["y"], name="s", keepdims=0)),
            "Softmax over axis 2 of a 5-D view of branches")
        bad(tmp, "stack_softmax11", model([helper.make_node("Unsqueeze", ["x"], ["u0"], name="u0", axes=[1]),
                                           helper.make_node("Unsqueeze", ["x"], ["u1"], name="u1", axes=[1]),
                                           helper.make_node("Concat", ["u0", "u1"], ["st"], name="st", axis=1),
                                           helper.make_node("Softmax", ["st"], ["sm"], name="sm", axis=1),
                                           helper.make_node("ReduceSum", ["sm"], ["y"], name="s", axes=[1], keepdims=0)],
                                          x4, y4, opset=11),
            "Softmax before opset 13 of a 5-D view of branches")
        bad(tmp, "stack_output", model([helper.make_node("Relu", ["x"], ["r"], name="r"), U("r", "y")], x4,
                                       [vi("y", [1, 1, 3, 4, 4])], axes),
            "graph output y is a 5-D view of branches")
        bad(tmp, "stack_reshape3", stack(helper.make_node("Reshape", ["st", "sh3"], ["y"], name="v"),
                                         outs=[vi("y", [1, 6, 16])]),
            "Reshape of a 5-D view of branches to 3-D")
        # a view of branches is not its 4-D tensor: no LayerNorm's centring, no L2 normalisation
        bad(tmp, "view_centred", model([helper.make_node("Reshape", ["x", "sh5"], ["v"], name="v"),
                                        helper.make_node("ReduceMean", ["x"], ["m"], name="m", axes=[1], keepdims=1),
                                        helper.make_node("Sub", ["v", "m"], ["y"], name="d")], x4,
                                       [vi("y", [1, 3, 1, 4, 4])], axes + [init("sh5", np.array([1, 3, 1, 4, 4], np.int64))]),
            "input v is a 5-D view [1, 3, 1, 4, 4] of branches")
        good(tmp, "control_stack_reshape4", stack(helper.make_node("Reshape", ["st", "sh4"], ["y"], name="v"),
                                                  outs=[vi("y", [1, 6, 4, 4])]))
        bad(tmp, "radix_transpose", model([helper.make_node("Reshape", ["x", "shr"], ["v"], name="v"),
                                           helper.make_node("Transpose", ["v"], ["y"], name="t", perm=[0, 1, 3, 2])],
                                          x4, [vi("y", [1, 1, 16, 3])], axes),
            "Transpose of a 4-D view [1, G, K, -1]: dse takes only a radix softmax's [0, 2, 1, 3]")
        bad(tmp, "radix_read_twice", model([helper.make_node("Reshape", ["x", "shr"], ["v"], name="v"),
                                            helper.make_node("Transpose", ["v"], ["t"], name="t", perm=[0, 2, 1, 3]),
                                            helper.make_node("Softmax", ["t"], ["sm"], name="sm", axis=1),
                                            helper.make_node("Reshape", ["sm", "shx"], ["y"], name="b"),
                                            helper.make_node("Relu", ["sm"], ["z"], name="z")],
                                           x4, y4, axes + [init("shx", np.array([1, 3, 4, 4], np.int64))]),
            "the radix softmax sm is read by 2 nodes")
        # A Softplus read by a Reshape is a layer (not held for a Mish).
        good(tmp, "control_softplus_flat",
             model([helper.make_node("Softplus", ["x"], ["sp"], name="sp"),
                    helper.make_node("Shape", ["sp"], ["sh"], name="sh"),
                    helper.make_node("Gather", ["sh", "z"], ["b"], name="g", axis=0),
                    helper.make_node("Unsqueeze", ["b", "z1"], ["b1"], name="u"),
                    helper.make_node("Concat", ["b1", "m1"], ["s2"], name="c", axis=0),
                    helper.make_node("Reshape", ["sp", "s2"], ["y"], name="r")], x4, [vi("y", [1, 48])],
                   [init("z", np.array(0, np.int64)), init("z1", np.array([0], np.int64)),
                    init("m1", np.array([-1], np.int64))]))
        # The weights of a weighted fusion are folded (1-D), not a matrix's softmax.
        bad(tmp, "softmax_const_2d",
            model([helper.make_node("Softmax", ["k"], ["kn"], name="sm", axis=1),
                   helper.make_node("Mul", ["x", "kn"], ["y"], name="m")], x4, y4,
                  [init("k", np.ones((3, 1), np.float32))]),
            "Softmax of a 2-D constant; dse folds 1-D float ones")
        bad(tmp, "reducesum_int_const",
            model([helper.make_node("ReduceSum", ["k"], ["ks"], name="rs", keepdims=0),
                   helper.make_node("Relu", ["x"], ["y"], name="r")], x4, y4,
                  [init("k", np.ones(3, np.int64))]),
            "ReduceSum of an integer constant")
        # A scaling by a constant with no pattern around it is a Scale layer.
        good(tmp, "control_scale", model([helper.make_node("Mul", ["x", "h"], ["y"], name="m")], x4, y4,
                                         [init("h", np.float32(0.5))]))
        # Names: an unnamed node gets its output's name (Op_index when that
        # is empty), a duplicate name a suffix.
        dup = model([helper.make_node("Relu", ["x"], ["h"], name="same"),
                     helper.make_node("Relu", ["h"], ["g"], name="same"),
                     helper.make_node("Relu", ["g"], ["y"])],
                    [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])])
        path, js, wb, p = run_import(tmp, "names", dup.SerializeToString())
        check(p.returncode == 0, "names: %s" % p.stderr)
        if p.returncode == 0:
            with open(js) as f:
                names = [l["name"] for l in json.load(f)["layers"]]
            check(names == ["same", "same_2", "y"], "names: %s" % names)
    return summary("test_onnx_bad")


if __name__ == "__main__":
    sys.exit(main())
