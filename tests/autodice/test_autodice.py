#!/usr/bin/python3
"""test_autodice.py -- dse's AutoDiCE files against AutoDiCE's reading rules,
AutoDiCE-written files through dse, and the warnings and exit codes
(issue 18, docs/mapping-format.md "AutoDiCE's files").

The rules are re-implemented here from AutoDiCE's source
(github.com/parrotsky/AutoDiCE, tools/distributed/vertical/interface.py
Interface.__init__ and GenerateRankFile; horizontal/interface.py
HorizontalInplace; */onnx_split.py format_onnx, onnx_extract,
horizontal_split), independently of dse's code:

* a key is key.split('_') == [host, resource]; resource "cpu"/"arm" + one
  digit per core (the rankfile's slots) or "gpu"; the host is the name the
  hostfile uses for the device's board (this machine's host name for
  localhost);
* names are ONNX node names after format_onnx (node -> its first output,
  '/' -> '_'), and every node of the model is listed (its consistency
  check);
* horizontal.json ends are used literally as cumulative end channels;
  "height" entries are band heights, cut by horizontal_split's own
  arithmetic (autodice_height), right only for a Conv without top or bottom
  padding; its front end then stops on its HSplit node (a warning);
* onnx_extract keeps only initializers that are graph inputs.

usage: test_autodice.py DSE_BIN [--frontend]
--frontend: also run AutoDiCE's own front end (run_autodice.py) on dse's
files; needs DSE_AUTODICE_DIR = AutoDiCE's tools/distributed (else exit 77).
Exit 77 (skipped) when this python has no onnx module.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import check, need_onnx, run, summary  # noqa: E402

np, onnx, TensorProto, helper, numpy_helper = need_onnx()

DSE = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import onnxeval  # noqa: E402



def dse(*args, env=None):
    return run(DSE, *args, env=env)


def load(path):
    with open(path) as f:
        return json.load(f)


def save(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def platform_json(name, devices, boards_link=True):
    """devices: (name, board, kind, cores)."""
    return {"format": "dse-platform", "name": name,
            "devices": [{"name": n, "board": b, "kind": k, "freq_mhz": 1000, "cores": c,
                         "memory_mb": 8000, "idle_w": 1, "busy_w": 5} for n, b, k, c in devices],
            "links": {"same_board": {"latency_us": 10, "bandwidth_mbs": 1000},
                      "network": {"latency_us": 100, "bandwidth_mbs": 100}}}


# ---- AutoDiCE's reading rules ----

LOCAL = ("localhost", "127.0.0.1", "::1")


def hostfile_name(board):
    """docs/runtime.md: this machine's boards are written as its host name."""
    me = socket.gethostname()
    if board in LOCAL or board == me or board == me.split(".")[0]:
        return me
    return board


def autodice_key(key):
    """Interface.__init__: (host, hardware, rankfile slots)."""
    parts = key.split("_")
    if len(parts) != 2:
        return None
    host, res = parts
    if res == "gpu":
        return host, "gpu", "5"
    for kind in ("cpu", "arm"):
        if res.startswith(kind) and res[3:].isdigit():
            return host, "cpu", ",".join(res[3:])
    return None


def format_names(model):
    """format_onnx: every node renamed to its first output, '/' -> '_'."""
    return [n.output[0].replace("/", "_") for n in model.graph.node]


def out_channels(model):
    """Output channels of each node (by format_onnx name), from shape inference."""
    inf = onnx.shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(inf.graph.value_info) + list(inf.graph.output)}
    return {n.output[0].replace("/", "_"): shapes[n.output[0]][1]
            for n in model.graph.node if n.output[0] in shapes}


def out_heights(model):
    """Output height of every node (AutoDiCE's node names), by onnx's own
    shape inference."""
    inf = onnx.shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(inf.graph.value_info) + list(inf.graph.output)}
    return {n.output[0].replace("/", "_"): shapes[n.output[0]][2]
            for n in model.graph.node if n.output[0] in shapes and len(shapes[n.output[0]]) == 4}


def out_widths(model):
    """Output width of every node, alike."""
    inf = onnx.shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(inf.graph.value_info) + list(inf.graph.output)}
    return {n.output[0].replace("/", "_"): shapes[n.output[0]][3]
            for n in model.graph.node if n.output[0] in shapes and len(shapes[n.output[0]]) == 4}


def check_rules(tag, d, model, plat):
    """The files in d against AutoDiCE's rules, and against dse-mapping.json
    decoded independently.  plat: the platform JSON."""
    mj, hj = load(os.path.join(d, "mapping.json")), load(os.path.join(d, "horizontal.json"))
    tr = load(os.path.join(d, "autodice-devices.json"))
    ours = load(os.path.join(d, "dse-mapping.json"))["layers"]
    devs = {x["name"]: x for x in plat["devices"]}
    check(tr["format"] == "dse-autodice-devices" and tr["version"] == 1, tag + ": translation header")
    key_dev = {v: k for k, v in tr["devices"].items()}
    check(len(key_dev) == len(tr["devices"]), tag + ": translation not one to one")
    # keys: grammar, host, kind, distinct cores within each host's cores
    cores_of_host = {}
    for k, dev in key_dev.items():
        p = autodice_key(k)
        if not check(p is not None, "%s: key %s does not parse as AutoDiCE's" % (tag, k)):
            continue
        host, hw, slots = p
        D = devs[dev]
        check(host == hostfile_name(D["board"]), "%s: key %s host for board %s" % (tag, k, D["board"]))
        check(hw == D["kind"], "%s: key %s kind %s for a %s" % (tag, k, hw, D["kind"]))
        if hw == "cpu":
            cs = [int(c) for c in slots.split(",")]
            check(len(cs) == D["cores"] and len(set(cs)) == len(cs),
                  "%s: key %s has cores %s for %d" % (tag, k, cs, D["cores"]))
            used = cores_of_host.setdefault(host, set())
            check(not (used & set(cs)), "%s: key %s reuses cores of its host" % (tag, k))
            used |= set(cs)
    for host, used in cores_of_host.items():
        total = sum(x["cores"] for x in plat["devices"]
                    if x["kind"] == "cpu" and hostfile_name(x["board"]) == host)
        check(max(used) < total, "%s: host %s cores %s beyond its %d" % (tag, host, used, total))
    check(all(k in key_dev for k in mj), tag + ": a mapping.json key is not in the translation")
    # hosts = AutoDiCE's platforms: the keys' hosts in key order, each once
    hosts = []
    for k in mj:
        h = k.split("_")[0]
        if h not in hosts:
            hosts.append(h)
    check(tr["hosts"] == hosts, "%s: hosts %s, want %s" % (tag, tr["hosts"], hosts))
    # names: exactly the model's nodes (ConsistencyCheck), each known
    names = format_names(model)
    listed = set(n for v in mj.values() for n in v)
    check(listed == set(names), "%s: mapping.json names differ from the model's nodes: %s" %
          (tag, sorted(listed ^ set(names))[:6]))
    # rank order follows the platform
    order = [x["name"] for x in plat["devices"]]
    check([order.index(key_dev[k]) for k in mj] == sorted(order.index(key_dev[k]) for k in mj),
          tag + ": keys not in platform order")
    # horizontal.json: lop, cumulative ends, last = channel count; height,
    # band heights summing to the output height, on a Conv AutoDiCE's
    # horizontal_split computes right (no top or bottom pad, no dilation,
    # fed by a node); width, band widths summing to the output width, where
    # its width split (the height's stride, kernel and top pad, no dilation)
    # computes right: no top, left or right pad, square stride and kernel
    cc, hh, ww = out_channels(model), out_heights(model), out_widths(model)
    nodes = {n.output[0].replace("/", "_"): n for n in model.graph.node}
    for layer, (way, ends, keys) in hj.items():
        check(way in ("lop", "height", "width"), "%s: %s partitioning %s" % (tag, layer, way))
        check(len(ends) == len(keys) >= 2, "%s: %s ends/keys" % (tag, layer))
        if way in ("height", "width"):
            node = nodes.get(layer)
            a = {x.name: list(x.ints) for x in node.attribute} if node else {}
            if way == "height":
                right = a["pads"][0] == 0 and a["pads"][2] == 0 and a["dilations"][0] == 1
            else:
                right = (a["pads"][0] == 0 and a["pads"][1] == 0 and a["pads"][3] == 0 and
                         a["dilations"][1] == 1 and a["strides"][0] == a["strides"][1] and
                         a["kernel_shape"][0] == a["kernel_shape"][1])
            check(node is not None and node.op_type == "Conv" and right and node.input[0] in nodes,
                  "%s: %s cut by %s, which AutoDiCE gets wrong" % (tag, layer, way))
            size = (hh if way == "height" else ww).get(layer)
            check(all(isinstance(e, int) and e > 0 for e in ends) and sum(ends) == size,
                  "%s: %s %ss %s, output %s %s" % (tag, layer, way, ends, way, size))
            continue
        check(all(isinstance(e, int) for e in ends) and ends == sorted(set(ends)) and ends[0] > 0,
              "%s: %s ends %s not increasing" % (tag, layer, ends))
        check(ends[-1] == cc.get(layer), "%s: %s last end %s, channels %s" %
              (tag, layer, ends[-1], cc.get(layer)))
        for k in keys:
            check(layer in mj.get(k, []), "%s: %s split onto %s, which does not list it" %
                  (tag, layer, k))
    # onnx_extract: a node's weights survive only as graph inputs
    ginputs = {i.name for i in model.graph.input}
    inits = {t.name for t in model.graph.initializer}
    check(inits <= ginputs, "%s: initializers missing from graph.input: %s" %
          (tag, sorted(inits - ginputs)[:4]))
    # the same mapping as dse-mapping.json, decoded here
    dec = {}
    for k, lst in mj.items():
        for n in lst:
            dec.setdefault(n, []).append(key_dev[k])
    for layer, (way, ends, keys) in hj.items():
        if way in ("height", "width"):  # counts: rows [sum of those above, + height)
            ends = [sum(ends[:i + 1]) for i in range(len(ends))]
        starts = [0] + ends[:-1]
        dec[layer] = [[key_dev[k], s, e - s] for k, s, e in zip(keys, starts, ends)]
    for layer, v in ours.items():
        want = [[v, 0, cc.get(layer.replace("/", "_"))]] if isinstance(v, str) else v
        if isinstance(v, dict):
            cut, way = ("rows", "height") if "rows" in v else ("columns", "width")
            want = v[cut]
            check(hj.get(layer.replace("/", "_"), [""])[0] == way,
                  "%s: %s cut by %s, not by %s in horizontal.json" % (tag, layer, cut, way))
        got = dec.get(layer.replace("/", "_"))
        if isinstance(got, list) and got and isinstance(got[0], str):
            got = [[got[0], 0, cc.get(layer.replace("/", "_"))]] if len(got) == 1 else got
        check(got == want, "%s: layer %s decodes to %s, dse-mapping.json says %s" %
              (tag, layer, got, want))


def hazards(mj, hj, model):
    """What AutoDiCE gets wrong with files it reads (docs/mapping-format.md):
    a split grouped Conv (horizontal_split copies `group` onto each slice);
    a name listed under a split layer's key that contains the layer's name
    (HorizontalInplace's str.replace renames it too)."""
    out = []
    group = {n.output[0].replace("/", "_"): a.i for n in model.graph.node
             for a in n.attribute if n.op_type == "Conv" and a.name == "group"}
    for layer, (way, _, keys) in hj.items():
        if way in ("height", "width"):  # its HSplit node, which its own onnx.checker call rejects
            out.append("HSplit " + layer)
        elif group.get(layer, 1) > 1:
            out.append("group=%d" % group[layer])
        for k in keys:
            out += ["renames the split layer " + layer for n in mj[k] if n != layer and layer in n]
    return out


def check_onnx_autodice(tag, path, dse_net):
    """--autodice: valid ONNX; input 0 the network input, then every
    initializer with its type and shape; dse imports it to the same net."""
    m = onnx.load(path)
    try:
        onnx.checker.check_model(m, full_check=True)
        ok = True
    except Exception as e:  # noqa: BLE001
        ok = False
        print(e)
    check(ok, tag + ": onnx.checker rejects the --autodice export")
    inits = list(m.graph.initializer)
    gi = list(m.graph.input)
    check([i.name for i in gi[1:]] == [t.name for t in inits], tag + ": initializers as inputs")
    for i, t in zip(gi[1:], inits):
        tt = i.type.tensor_type
        check(tt.elem_type == t.data_type and [d.dim_value for d in tt.shape.dim] == list(t.dims),
              "%s: input %s type/shape" % (tag, i.name))
    rc, a, _ = dse("net", "show", path, "--json")
    rc2, b, _ = dse("net", "show", dse_net, "--json")
    ja, jb = json.loads(a), json.loads(b)
    check(rc == 0 and rc2 == 0 and len(ja["layers"]) == len(jb["layers"]),
          tag + ": dse does not import its --autodice export to the same layers")
    return m


# ---- the networks ----

def glue_net(path):
    """'/' in names, an FC straight after a conv (glue Flatten) and a
    split-hazard name."""
    save(path, {"format": "dse-network", "name": "gluey", "input": {"name": "data", "shape": [3, 16, 16]},
                "layers": [
                    {"name": "blk/conv", "kind": "Conv", "inputs": ["data"], "out_channels": 8,
                     "kernel": 3, "pads": 1},
                    {"name": "blk/relu", "kind": "ReLU", "inputs": ["blk/conv"]},
                    {"name": "pool", "kind": "MaxPool", "inputs": ["blk/relu"], "kernel": 2},
                    {"name": "fc", "kind": "FC", "inputs": ["pool"], "out_features": 12},
                    {"name": "fc_relu", "kind": "ReLU", "inputs": ["fc"]},
                    {"name": "head", "kind": "FC", "inputs": ["fc_relu"], "out_features": 5},
                    {"name": "prob", "kind": "Softmax", "inputs": ["head"]}]})


def rowy_net(path, bias=True):
    """Convolutions AutoDiCE's height split gets right (unpadded, with a
    bias, fed by a layer: 1x1, and 3x3 stride 2) and wrong (padded; dilated;
    reading the network input; without a bias: bias=False), and a ReLU."""
    save(path, {"format": "dse-network", "name": "rowy", "input": {"name": "data", "shape": [3, 16, 16]},
                "layers": [
                    {"name": "conv1", "kind": "Conv", "inputs": ["data"], "out_channels": 8, "kernel": 3,
                     "bias": True},
                    {"name": "relu1", "kind": "ReLU", "inputs": ["conv1"]},
                    {"name": "conv2", "kind": "Conv", "inputs": ["relu1"], "out_channels": 16,
                     "kernel": 1, "bias": bias},
                    {"name": "relu2", "kind": "ReLU", "inputs": ["conv2"]},
                    {"name": "conv3", "kind": "Conv", "inputs": ["relu2"], "out_channels": 16,
                     "kernel": 3, "pads": 1, "bias": True},
                    {"name": "conv4", "kind": "Conv", "inputs": ["conv3"], "out_channels": 16,
                     "kernel": 3, "stride": 2, "bias": True},
                    {"name": "conv5", "kind": "Conv", "inputs": ["conv4"], "out_channels": 8,
                     "kernel": 3, "dilation": 2, "bias": True},
                    {"name": "gap", "kind": "GlobalAveragePool", "inputs": ["conv5"]},
                    {"name": "flatten", "kind": "Flatten", "inputs": ["gap"]},
                    {"name": "fc", "kind": "FC", "inputs": ["flatten"], "out_features": 10},
                    {"name": "prob", "kind": "Softmax", "inputs": ["fc"]}]})


def autodice_height(x, w, b, a, heights):
    """Layer output as AutoDiCE's height split computes it (onnx_split.py
    horizontal_split, axis 1, and its HSplit node): band k reads input rows
    [start, end) by its arithmetic and is convolved with the layer's own
    attributes; the bands are concatenated along the height."""
    check(b is not None, "AutoDiCE's height split copies a bias it does not check for")
    S, K, off, outs = a["strides"][0], a["kernel_shape"][0], -a["pads"][0], []
    for h in heights:
        start, end = max(off, 0), off + (h - 1) * S
        off = end + S
        outs.append(onnxeval.conv(x[:, :, start:max(end + K, 0)], w, b, a))
    return np.concatenate(outs, axis=2)


def row_cuts(T, presets):
    """Row cuts (docs/spatial.md) as AutoDiCE's height split, where it
    computes them right; elsewhere one line and dse-mapping.json alone; a
    height entry read back.  Returns the folders to give AutoDiCE's front
    end."""
    rowy_net(T("rowy.json"))
    rc, _, err = dse("net", "export", T("rowy.json"), "-o", T("rowy-dse.onnx"), "--autodice")
    check(rc == 0, "net export rowy: " + err)
    model = check_onnx_autodice("rowy", T("rowy-dse.onnx"), T("rowy.json"))
    names = ["conv1", "relu1", "conv2", "relu2", "conv3", "conv4", "conv5", "gap", "flatten", "fc",
             "prob"]
    base = {n: "rank0" for n in names}
    keys = {}
    for tag, cuts, want in (
            ("rowy-h", {"conv2": {"rows": [["rank0", 0, 5], ["rank1", 5, 9]]}, "relu2": "rank1"},
             {"conv2": [5, 9]}),
            ("rowy-h2", {"conv2": {"rows": [["rank1", 0, 6], ["rank0", 6, 8]]},
                         "fc": [["rank1", 0, 3], ["rank0", 3, 7]]}, {"conv2": [6, 8]}),
            ("rowy-h3", {"conv4": {"rows": [["rank0", 0, 2], ["rank1", 2, 4]]}}, {"conv4": [2, 4]}),
            ("rowy-w", {"conv2": {"columns": [["rank0", 0, 5], ["rank1", 5, 9]]}, "relu2": "rank1"},
             {"conv2": [5, 9]}),
            ("rowy-w2", {"conv4": {"columns": [["rank0", 0, 4], ["rank1", 4, 2]]}}, {"conv4": [4, 2]})):
        save(T(tag + ".json"), {"format": "dse-mapping", "layers": dict(base, **cuts)})
        rc, _, err = dse("export", "--network", T("rowy.json"), "--platform", "local-2",
                         "--mapping", T(tag + ".json"), "-o", T(tag))
        check(rc == 0, "%s: rc %d %r" % (tag, rc, err))
        layer = list(want)[0]
        cut = "columns" if "columns" in cuts[layer] else "rows"
        way = "width" if cut == "columns" else "height"
        one_line(tag, err, "warning", "AutoDiCE's front end fails", way + " split of " + layer,
                 "HSplit")
        check_rules(tag, T(tag), model, presets["local-2"])
        hj = load(T(tag, "horizontal.json"))
        check(hazards(load(T(tag, "mapping.json")), hj, model)[0] == "HSplit " + layer,
              tag + ": the test's hazards miss the height split")
        tr = load(T(tag, "autodice-devices.json"))["devices"]
        (layer, heights), = want.items()
        keys = [tr[x[0]] for x in cuts[layer][cut]]
        check(hj.get(layer) == [way, heights, keys],
              "%s: horizontal.json %s, want %s %s on %s" % (tag, hj, layer, heights, keys))
        rc1, a, err = dse("eval", "--network", T("rowy.json"), "--platform", "local-2",
                          "--mapping", T(tag), "--json")
        rc2, b, _ = dse("eval", "--network", T("rowy.json"), "--platform", "local-2",
                        "--mapping", T(tag + ".json"), "--json")
        check(rc1 == 0 and a == b, "%s: the folder read back is another mapping: %s" % (tag, err))
    # on paper: AutoDiCE's arithmetic on the heights written equals the
    # whole convolution (conv2), and on a padded one it would not (conv3)
    inits = onnxeval.initializers(model.graph)
    rng = np.random.default_rng(5)
    for layer, heights, right, side in (("conv2", [5, 9], True, 14), ("conv2", [6, 8], True, 14),
                                        ("conv4", [2, 4], True, 14), ("conv4", [5, 1], True, 14),
                                        ("conv3", [7, 7], False, 14)):
        node = [n for n in model.graph.node if n.output[0] == layer][0]
        a = onnxeval.attrs(node)
        w, b = inits[node.input[1]], inits[node.input[2]]
        x = rng.standard_normal((1, w.shape[1] * a.get("group", 1), side, side))
        whole, bands = onnxeval.conv(x, w, b, a), autodice_height(x, w, b, a, heights)
        same = whole.shape == bands.shape and np.allclose(whole, bands, rtol=0, atol=1e-12)
        check(same == right, "%s cut %s by AutoDiCE's height arithmetic: shape %s against %s%s"
              % (layer, heights, bands.shape, whole.shape, "" if right else ", yet equal"))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    rc, out, err = dse("mpirun", "-np", 2, DSE, "exec", "--network", T("rowy.json"), "--platform",
                       "local-2", "--mapping", T("rowy-h"), "--json", env=env)
    ok = rc == 0 and json.loads(out)["check"]["ok"]
    check(ok, "dse exec of a folder with a height split: rc %d %s" % (rc, err[-300:]))
    rc, out, err = dse("mpirun", "-np", 2, DSE, "exec", "--network", T("rowy.json"), "--platform",
                       "local-2", "--mapping", T("rowy-w"), "--json", env=env)
    ok = rc == 0 and json.loads(out)["check"]["ok"]
    check(ok, "dse exec of a folder with a width split: rc %d %s" % (rc, err[-300:]))
    # what AutoDiCE's height and width splits get wrong: dse-mapping.json
    # alone, one line
    rowy_net(T("rowynb-net.json"), bias=False)
    for tag, layer, words, net in (("rowy-pad", "conv3", "padding (1, 1)", "rowy"),
                                   ("rowy-relu", "relu1", "Conv layers alone, not ReLU", "rowy"),
                                   ("rowy-input", "conv1", "network input", "rowy"),
                                   ("rowy-dil", "conv5", "dilation in height (2)", "rowy"),
                                   ("rowy-nb", "conv2", "needs a bias", "rowynb-net"),
                                   ("rowy-wpad", "conv3", "left and right padding (1, 1)", "rowy"),
                                   ("rowy-wdil", "conv5", "dilation in width (2)", "rowy"),
                                   ("rowy-wswap", "conv2", "names band 0's node by its position",
                                    "rowy")):
        h = {"conv5": 1}.get(layer, 7)
        cut = "columns" if "-w" in tag else "rows"
        first, second = ("rank1", "rank0") if tag == "rowy-wswap" else ("rank0", "rank1")
        save(T(tag + ".json"), {"format": "dse-mapping", "layers": dict(
            base, **{layer: {cut: [[first, 0, h], [second, h, h]]}})})
        rc, _, err = dse("export", "--network", T(net + ".json"), "--platform", "local-2",
                         "--mapping", T(tag + ".json"), "-o", T(tag))
        check(rc == 0, "%s: exit %d" % (tag, rc))
        one_line(tag, err, "AutoDiCE's files not written", layer, "cut by " + cut, words)
        check(sorted(os.listdir(T(tag))) == ["dse-mapping.json"], "%s: files %s" %
              (tag, os.listdir(T(tag))))
    # height entries dse cannot read: exit 2, one line naming the file
    mj = load(T("rowy-h", "mapping.json"))
    k0, k1 = list(mj)
    for tag, hz, words in (
            ("short", {"conv2": ["height", [5, 8], [k0, k1]]}, "must end at the layer's row count 14"),
            ("zero", {"conv2": ["height", [0, 14], [k0, k1]]}, "band height 0"),
            ("wzero", {"conv2": ["width", [0, 14], [k0, k1]]}, "band width 0"),
            ("lip", {"conv2": ["lip", [5, 9], [k0, k1]]}, "partitioning \"lip\" is not supported"),
            ("width", {"conv2": ["width", [5, 9], [k0, k1]]}, None),
            ("fcrows", {"conv2": ["height", [5, 9], [k0, k1]], "fc": ["height", [1, 0], [k0, k1]]},
             "cannot be cut by rows"),
            ("one", {"conv2": ["height", [14], [k0]]}, None)):
        d = T("rbad-" + tag)
        os.makedirs(d)
        m = {k: list(v) for k, v in mj.items()}
        if tag == "fcrows":
            m[k1].append("fc")
        if tag == "one":
            m[k1].remove("conv2")
        save(os.path.join(d, "mapping.json"), m)
        save(os.path.join(d, "horizontal.json"), hz)
        shutil.copy(T("rowy-h", "autodice-devices.json"), d)
        rc, _, err = dse("eval", "--network", T("rowy.json"), "--platform", "local-2",
                         "--mapping", d)
        if words is None:  # columns; one band of every row: the whole layer on one device
            check(rc == 0, "height %s: exit %d %s" % (tag, rc, err))
            continue
        check(rc == 2, "height %s: exit %d" % (tag, rc))
        one_line("height " + tag, err, "horizontal.json", words)
    return {d: T("rowy-dse.onnx") for d in ("rowy-h", "rowy-h2", "rowy-h3")}  # AutoDiCE stops on all


def mini_bvlc(path):
    """A model in the ONNX model zoo's bvlcalexnet-9 convention (opset 9, IR
    3, nameless nodes named by their outputs conv1_1, conv1_2, ...,
    initializers among the inputs, Reshape OC2_DUMMY_0), with small
    channel counts: what AutoDiCE's example mapping.json names."""
    rng = np.random.default_rng(1)
    inits, nodes = [], []

    def w(name, shape):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32),
                                             name))
        return name

    def conv(x, y, cin, cout, k, s=1, p=0, g=1):
        nodes.append(helper.make_node("Conv", [x, w(y + "_w", [cout, cin // g, k, k]),
                                               w(y + "_b", [cout])], [y], kernel_shape=[k, k],
                                      strides=[s, s], pads=[p] * 4, group=g))

    def op(t, x, y, **a):
        nodes.append(helper.make_node(t, [x], [y], **a))

    conv("data_0", "conv1_1", 3, 8, 11, 4, 0)
    op("Relu", "conv1_1", "conv1_2")
    op("LRN", "conv1_2", "norm1_1", size=5, alpha=1e-4, beta=0.75, bias=1.0)
    op("MaxPool", "norm1_1", "pool1_1", kernel_shape=[3, 3], strides=[2, 2])
    conv("pool1_1", "conv2_1", 8, 16, 5, 1, 2, 2)
    op("Relu", "conv2_1", "conv2_2")
    op("LRN", "conv2_2", "norm2_1", size=5, alpha=1e-4, beta=0.75, bias=1.0)
    op("MaxPool", "norm2_1", "pool2_1", kernel_shape=[3, 3], strides=[2, 2])
    conv("pool2_1", "conv3_1", 16, 24, 3, 1, 1)
    op("Relu", "conv3_1", "conv3_2")
    conv("conv3_2", "conv4_1", 24, 24, 3, 1, 1, 2)
    op("Relu", "conv4_1", "conv4_2")
    conv("conv4_2", "conv5_1", 24, 16, 3, 1, 1, 2)
    op("Relu", "conv5_1", "conv5_2")
    op("MaxPool", "conv5_2", "pool5_1", kernel_shape=[3, 3], strides=[2, 2])
    inits.append(numpy_helper.from_array(np.array([1, 400], dtype=np.int64), "OC2_DUMMY_1"))
    nodes.append(helper.make_node("Reshape", ["pool5_1", "OC2_DUMMY_1"], ["OC2_DUMMY_0"]))
    for i, (x, cin, cout) in enumerate([("OC2_DUMMY_0", 400, 64), ("fc6_3", 64, 64),
                                        ("fc7_3", 64, 10)]):
        n = 6 + i
        nodes.append(helper.make_node("Gemm", [x, w("fc%d_w" % n, [cout, cin]),
                                               w("fc%d_b" % n, [cout])], ["fc%d_1" % n],
                                      transB=1))
        if n < 8:
            op("Relu", "fc%d_1" % n, "fc%d_2" % n)
            op("Dropout", "fc%d_2" % n, "fc%d_3" % n, ratio=0.5)
    op("Softmax", "fc8_1", "prob_1")
    inputs = [helper.make_tensor_value_info("data_0", TensorProto.FLOAT, [1, 3, 224, 224])]
    inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    g = helper.make_graph(nodes, "mini-bvlc", inputs,
                          [helper.make_tensor_value_info("prob_1", TensorProto.FLOAT, [1, 10])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)])
    m.ir_version = 3
    onnx.save(m, path)


# AutoDiCE's own example, tools/distributed/vertical/mapping.json (its
# tutorial: "lenovo" is the host name; two ranks on cores 0 and 1).
AUTODICE_EXAMPLE = {
    "lenovo_cpu0": ["conv1_1", "conv1_2", "norm1_1", "pool1_1", "conv2_1", "conv2_2", "norm2_1",
                    "pool2_1", "conv3_1", "conv3_2", "conv4_1", "conv4_2", "conv5_1", "conv5_2",
                    "pool5_1", "OC2_DUMMY_0", "fc6_1", "fc6_2"],
    "lenovo_cpu1": ["fc6_3", "fc7_1", "fc7_2", "fc7_3", "fc8_1", "prob_1"]}


def one_line(tag, err, *words):
    lines = [l for l in err.splitlines() if l.strip()]
    ok = len(lines) == 1 and all(w in lines[0] for w in words)
    return check(ok, "%s: want one stderr line with %s, got %r" % (tag, words, err))


def main():
    adir = os.environ.get("DSE_AUTODICE_DIR")
    if "--frontend" in sys.argv and (not adir or not os.path.isdir(os.path.join(adir, "vertical"))):
        print("SKIP: DSE_AUTODICE_DIR must name AutoDiCE's tools/distributed")
        return 77
    with tempfile.TemporaryDirectory(prefix="dse-autodice-") as tmp:
        T = lambda *p: os.path.join(tmp, *p)  # noqa: E731
        presets = {}
        for name in ("local-2", "jetson-nx-8-cpugpu"):
            rc, out, _ = dse("platform", "show", name, "--json")
            presets[name] = json.loads(out)

        # 1. campaigns, exported as a user would: AutoDiCE's rules hold, and
        # the warnings come exactly when AutoDiCE would go wrong
        mini_bvlc(T("bvlc.onnx"))
        for net, plat in (("toy6", "local-2"), ("branchy", "jetson-nx-8-cpugpu"),
                          (T("bvlc.onnx"), "jetson-nx-8-cpugpu")):
            tag = os.path.basename(net).replace(".onnx", "")
            db = T(tag + ".db")
            rc, _, err = dse("run", "--network", net, "--platform", plat, "--chromosome", "hybrid",
                             "--pop", 16, "--gens", 4, "--seed", 3, "--db", db, "--quiet")
            check(rc == 0, "run %s: %s" % (tag, err))
            onnx_path = T(tag + "-dse.onnx")
            rc, _, err = dse("net", "export", net, "-o", onnx_path, "--autodice")
            check(rc == 0, "net export %s: %s" % (tag, err))
            model = check_onnx_autodice(tag, onnx_path, net)
            rc, out, _ = dse("front", "--campaign", 1, "--db", db, "--json")
            npts = len(json.loads(out)["points"])
            splits = warned = 0
            for i in range(npts):
                d = T("%s-%d" % (tag, i))
                rc, out, err = dse("export", "--campaign", 1, "--db", db, "--point", i, "-o", d)
                check(rc == 0, "export %s %d: %s" % (tag, i, err))
                check_rules("%s point %d" % (tag, i), d, model, presets[plat])
                mj, hj = load(os.path.join(d, "mapping.json")), load(os.path.join(d, "horizontal.json"))
                splits += len(hj)
                hz = hazards(mj, hj, model)
                if hz:
                    warned += 1
                    one_line("%s point %d" % (tag, i), err, "warning", hz[0],
                             *(["more problem"] if len(hz) > 1 else []))
                else:
                    check(err == "", "%s point %d: stderr %r" % (tag, i, err))
                # the folder read back is the same mapping
                rc1, a, _ = dse("eval", "--network", net, "--platform", plat, "--mapping", d, "--json")
                rc2, b, _ = dse("eval", "--network", net, "--platform", plat, "--mapping",
                                os.path.join(d, "dse-mapping.json"), "--json")
                check(rc1 == 0 and a == b, "%s point %d: eval of the folder differs" % (tag, i))
            print("%s on %s: %d front points, %d split layers, %d warned of, all by AutoDiCE's rules"
                  % (tag, plat, npts, splits, warned))
            check(plat == "local-2" or splits > 0, tag + ": no split layer exported")

        # 2. a platform with two CPU devices on one board and a GPU; '/' in
        # names, glue nodes, a name the renaming of a split layer breaks
        plat = platform_json("mixed", [("pi-a", "pi", "cpu", 4), ("pi-b", "pi", "cpu", 4),
                                       ("jx-cpu", "jx", "cpu", 6), ("jx-gpu", "jx", "gpu", 384)])
        save(T("mixed.json"), plat)
        glue_net(T("gluey.json"))
        rc, _, err = dse("net", "export", T("gluey.json"), "-o", T("gluey.onnx"), "--autodice")
        check(rc == 0, "net export gluey: " + err)
        gm = check_onnx_autodice("gluey", T("gluey.onnx"), T("gluey.json"))
        check("fc.flat" in [n.name for n in gm.graph.node], "gluey: no glue node")
        vertical = {"format": "dse-mapping", "layers": {
            "blk/conv": [["pi-a", 0, 3], ["pi-b", 3, 5]], "blk/relu": "pi-b", "pool": "pi-b",
            "fc": "jx-cpu", "fc_relu": "jx-cpu", "head": [["jx-gpu", 0, 2], ["pi-a", 2, 3]],
            "prob": "pi-a"}}
        save(T("g1.json"), vertical)
        rc, out, err = dse("export", "--network", T("gluey.json"), "--platform", T("mixed.json"),
                           "--mapping", T("g1.json"), "-o", T("g1"))
        check(rc == 0 and err == "", "gluey g1: rc %d %r" % (rc, err))
        check_rules("gluey g1", T("g1"), gm, plat)
        mj = load(T("g1", "mapping.json"))
        check(list(mj) == ["pi_cpu0123", "pi_cpu4567", "jx_cpu012345", "jx_gpu"],
              "gluey g1 keys %s" % list(mj))
        check(mj["jx_cpu012345"] == ["fc.flat", "fc", "fc_relu"], "gluey g1: glue %s" % mj)
        check(mj["pi_cpu0123"][0] == "blk_conv", "gluey g1: '/' -> '_' %s" % mj)
        # split fc: its glue and fc_relu are renamed by AutoDiCE too
        hazard = dict(vertical["layers"], fc=[["jx-cpu", 0, 6], ["pi-b", 6, 6]], fc_relu="pi-b")
        save(T("g2.json"), {"format": "dse-mapping", "layers": hazard})
        rc, out, err = dse("export", "--network", T("gluey.json"), "--platform", T("mixed.json"),
                           "--mapping", T("g2.json"), "-o", T("g2"))
        check(rc == 0, "gluey g2 rc %d" % rc)
        one_line("gluey g2", err, "warning", "renames the split layer fc", "and 2 more problems")
        check(os.path.exists(T("g2", "mapping.json")), "gluey g2: files not written")
        check_rules("gluey g2", T("g2"), gm, plat)
        # the round trip through the folder (translation) and without it
        for d in ("g1", "g2"):
            rc, _, err = dse("export", "--network", T("gluey.json"), "--platform", T("mixed.json"),
                             "--mapping", T(d), "-o", T(d + "-back"))
            check(rc == 0 and load(T(d, "dse-mapping.json")) == load(T(d + "-back", "dse-mapping.json")),
                  "gluey %s: folder round trip %s" % (d, err))
            os.remove(T(d, "autodice-devices.json"))
            rc, _, err = dse("export", "--network", T("gluey.json"), "--platform", T("mixed.json"),
                             "--mapping", T(d), "-o", T(d + "-back2"))
            check(rc == 0 and load(T(d, "dse-mapping.json")) == load(T(d + "-back2", "dse-mapping.json")),
                  "gluey %s: round trip by board and kind %s" % (d, err))

        # hybrid mappings AutoDiCE can run (no grouped split, no name the
        # renaming of a split layer breaks): branches, Add and Concat across
        # devices, CPU and GPU keys of one board
        crafted = {
            "toy6-h": ("toy6", "local-2", {
                "conv": [["rank1", 0, 7], ["rank0", 7, 13]], "relu": "rank0", "pool": "rank1",
                "flatten": "rank1", "fc": [["rank0", 0, 4], ["rank1", 4, 6]], "softmax": "rank0"}),
            "branchy-h": ("branchy", "jetson-nx-8-cpugpu", {
                "stem": [["nx0-cpu", 0, 5], ["nx0-gpu", 5, 3]], "stem_relu": "nx1-cpu",
                "left": "nx1-cpu", "right": [["nx2-cpu", 0, 2], ["nx3-gpu", 2, 3], ["nx1-gpu", 5, 3]],
                "add": "nx2-cpu", "side_pool": "nx3-cpu", "cat": "nx3-cpu",
                "head": [["nx4-cpu", 0, 9], ["nx2-gpu", 9, 7]], "head_relu": "nx5-cpu",
                "gap": "nx5-cpu", "flatten": "nx5-cpu", "fc": [["nx6-cpu", 0, 3], ["nx5-cpu", 3, 7]],
                "softmax": "nx6-cpu"}),
        }
        for d, (net, pname, layers) in crafted.items():
            save(T(d + ".json"), {"format": "dse-mapping", "layers": layers})
            rc, _, err = dse("export", "--network", net, "--platform", pname, "--mapping",
                             T(d + ".json"), "-o", T(d))
            check(rc == 0 and err == "", "%s: rc %d %r" % (d, rc, err))
            check_rules(d, T(d), onnx.load(T(net + "-dse.onnx")), presets[pname])

        # exported on another machine: local-2's keys name that machine; the
        # translation file still finds the devices, the keys alone do not
        me = socket.gethostname()
        os.makedirs(T("moved"))
        for f in ("mapping.json", "horizontal.json", "autodice-devices.json"):
            with open(T("toy6-h", f)) as a, open(T("moved", f), "w") as b:
                b.write(a.read().replace('"%s_' % me, '"elsewhere_').replace('"%s"' % me,
                                                                             '"elsewhere"'))
        check("elsewhere_cpu1" in load(T("moved", "mapping.json")), "moved: keys not rewritten")
        rc1, a, err = dse("eval", "--network", "toy6", "--platform", "local-2", "--mapping",
                          T("moved"), "--json")
        rc2, b, _ = dse("eval", "--network", "toy6", "--platform", "local-2", "--mapping",
                        T("toy6-h.json"), "--json")
        check(rc1 == 0 and a == b, "moved: the translation does not find the devices: " + err)
        os.remove(T("moved", "autodice-devices.json"))
        rc, _, err = dse("eval", "--network", "toy6", "--platform", "local-2", "--mapping", T("moved"))
        check(rc == 2, "moved without translation: exit %d" % rc)
        one_line("moved without translation", err, "elsewhere_cpu", "no device on host elsewhere")

        # 3. what AutoDiCE cannot express: dse-mapping.json alone, one line, exit 0
        single = lambda dev: {"format": "dse-mapping", "layers": {  # noqa: E731
            l: dev for l in ("conv", "relu", "pool", "flatten", "fc", "softmax")}}
        cases = [
            ("underscore", [("nx_1-cpu", "nx_1", "cpu", 4)], "has a \"_\""),
            ("cores", [("big", "srv", "cpu", 12)], "one digit per core"),
            ("cores2", [("a", "srv", "cpu", 6), ("b", "srv", "cpu", 6)], "cores 6..11"),
            ("gpus", [("g0", "srv", "gpu", 100), ("g1", "srv", "gpu", 100)], "second GPU"),
        ]
        for tag, devices, words in cases:
            save(T(tag + ".json"), platform_json(tag, devices))
            save(T(tag + "-m.json"), single(devices[-1][0]))
            d = T(tag)
            os.makedirs(d)
            for f in ("mapping.json", "horizontal.json", "autodice-devices.json"):
                save(os.path.join(d, f), {"stale": 1})  # an earlier export's
            rc, out, err = dse("export", "--network", "toy6", "--platform", T(tag + ".json"),
                               "--mapping", T(tag + "-m.json"), "-o", d)
            check(rc == 0, "%s: exit %d" % (tag, rc))
            one_line(tag, err, "AutoDiCE's files not written", words)
            check(sorted(os.listdir(d)) == ["dse-mapping.json"], "%s: files %s" % (tag, os.listdir(d)))
            # an idle inexpressible device does not matter
            if len(devices) == 2:
                save(T(tag + "-m0.json"), single(devices[0][0]))
                rc, out, err = dse("export", "--network", "toy6", "--platform", T(tag + ".json"),
                                   "--mapping", T(tag + "-m0.json"), "-o", T(tag + "0"))
                check(rc == 0 and err == "" and len(os.listdir(T(tag + "0"))) == 4,
                      "%s: idle device: %r %s" % (tag, err, os.listdir(T(tag + "0"))))
        # an output path that cannot be used is bad usage: exit 2, one line,
        # nothing written (a folder where a file must go, a missing parent)
        os.makedirs(T("blocked", "horizontal.json"))
        save(T("blk-m.json"), single("pi-a"))
        rc, out, err = dse("export", "--network", "toy6", "--platform", T("mixed.json"),
                           "--mapping", T("blk-m.json"), "-o", T("blocked"))
        check(rc == 2 and sorted(os.listdir(T("blocked"))) == ["horizontal.json"],
              "blocked: rc %d, files %s" % (rc, os.listdir(T("blocked"))))
        one_line("blocked", err, "horizontal.json", "folder")
        rc, out, err = dse("export", "--campaign", 1, "--db", T("toy6.db"), "--point", 0, "-o",
                           T("no", "such", "dir"))
        check(rc == 2 and not os.path.exists(T("no")), "missing parent: rc %d" % rc)
        one_line("missing parent", err, "does not exist")

        # 3b. row cuts: AutoDiCE's height split where it computes them right
        rowy = row_cuts(T, presets)

        # 4. AutoDiCE-written files through dse
        save(T("lenovo.json"), platform_json("lenovo", [("lenovo-a", "lenovo", "cpu", 1),
                                                        ("lenovo-b", "lenovo", "cpu", 1)]))
        os.makedirs(T("example"))
        save(T("example", "mapping.json"), AUTODICE_EXAMPLE)
        for cmd in ("eval", "plan"):
            rc, _, err = dse(cmd, "--network", T("bvlc.onnx"), "--platform", T("lenovo.json"),
                             "--mapping", T("example"))
            check(rc == 0, "AutoDiCE's example through dse %s: %s" % (cmd, err))
        rc, _, err = dse("export", "--network", T("bvlc.onnx"), "--platform", T("lenovo.json"),
                         "--mapping", T("example"), "-o", T("example-dse"))
        check(rc == 0, "AutoDiCE's example converted: " + err)
        if rc == 0:
            got = load(T("example-dse", "dse-mapping.json"))["layers"]
            want = {n: "lenovo-a" for n in AUTODICE_EXAMPLE["lenovo_cpu0"]}
            want.update({n: "lenovo-b" for n in AUTODICE_EXAMPLE["lenovo_cpu1"]})
            check(got == want, "AutoDiCE's example: %s" % got)
            # and written back, AutoDiCE's example again
            check(load(T("example-dse", "mapping.json")) == AUTODICE_EXAMPLE,
                  "AutoDiCE's example does not come back: %s" % load(T("example-dse", "mapping.json")))
        # keys like nx01_arm0123 / nx01_gpu, a horizontal split
        save(T("nx.json"), platform_json("nx", [("nx01-cpu", "nx01", "cpu", 6),
                                                ("nx01-gpu", "nx01", "gpu", 384),
                                                ("nx02-cpu", "nx02", "cpu", 6)]))
        hm = {"nx01_arm0123": AUTODICE_EXAMPLE["lenovo_cpu0"][:4] + ["conv3_1"],
              "nx02_arm012345": ["conv3_1"] + AUTODICE_EXAMPLE["lenovo_cpu0"][4:8] +
              AUTODICE_EXAMPLE["lenovo_cpu0"][9:] + ["fc6_3", "fc7_1"],
              "nx01_gpu": ["fc7_1", "fc7_2", "fc7_3", "fc8_1", "prob_1"]}
        hz = {"conv3_1": ["lop", [10, 24], ["nx02_arm012345", "nx01_arm0123"]],
              "fc7_1": ["lop", [40, 64], ["nx01_gpu", "nx02_arm012345"]]}
        os.makedirs(T("hx"))
        save(T("hx", "mapping.json"), hm)
        save(T("hx", "horizontal.json"), hz)
        rc, _, err = dse("export", "--network", T("bvlc.onnx"), "--platform", T("nx.json"),
                         "--mapping", T("hx"), "-o", T("hx-dse"))
        check(rc == 0, "nx01_arm0123 files: " + err)
        if rc == 0:
            got = load(T("hx-dse", "dse-mapping.json"))["layers"]
            check(got["conv3_1"] == [["nx02-cpu", 0, 10], ["nx01-cpu", 10, 14]] and
                  got["fc7_1"] == [["nx01-gpu", 0, 40], ["nx02-cpu", 40, 24]] and
                  got["conv1_1"] == "nx01-cpu" and got["prob_1"] == "nx01-gpu",
                  "nx01_arm0123 files: %s" % got)
        # bad keys: exit 2, one line naming the file and key
        for key, words in (("nx03_cpu0", "no device on host nx03"), ("nx01_cpu6", "core 6"),
                           ("nx01_cpu0_1", "AutoDiCE key"), ("nx02_gpu", "0 GPUs")):
            os.makedirs(T("bad-" + key))
            save(T("bad-" + key, "mapping.json"), {key: format_names(onnx.load(T("bvlc.onnx")))})
            rc, _, err = dse("eval", "--network", T("bvlc.onnx"), "--platform", T("nx.json"),
                             "--mapping", T("bad-" + key))
            check(rc == 2, "bad key %s: exit %d" % (key, rc))
            one_line("bad key " + key, err, "mapping.json", key, words)
        rc, _, err = dse("eval", "--network", "toy6", "--platform", "local-2", "--mapping", tmp)
        check(rc == 2, "a folder without mapping.json: exit %d" % rc)
        one_line("no mapping.json", err, "no mapping.json")
        # dse exec takes the folder too (localhost_ keys on this machine)
        os.makedirs(T("local"))
        save(T("local", "mapping.json"), {"localhost_cpu0": ["conv", "relu", "pool", "flatten"],
                                         "localhost_cpu1": ["fc", "softmax"]})
        save(T("local", "horizontal.json"), {"fc": ["lop", [4, 10], ["localhost_cpu1",
                                                                     "localhost_cpu0"]]})
        m = load(T("local", "mapping.json"))
        m["localhost_cpu0"].append("fc")
        save(T("local", "mapping.json"), m)
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        rc, out, err = dse("mpirun", "-np", 2, DSE, "exec", "--network", "toy6", "--platform",
                           "local-2", "--mapping", T("local"), "--json", env=env)
        ok = rc == 0
        if ok:
            rec = json.loads(out)
            ok = rec["check"]["ok"] and [d["steps"] > 0 for d in rec["devices"]] == [True, True]
        check(ok, "dse exec with an AutoDiCE folder: rc %d %s" % (rc, err[-300:]))

        # 5. AutoDiCE's own front end on dse's files (by hand or --frontend)
        if "--frontend" in sys.argv:
            # every campaign point: run as AutoDiCE runs it; where dse warned,
            # AutoDiCE must go wrong as warned (wrong numbers or a crash)
            runs = {}
            for x in sorted(os.listdir(tmp)):
                if not x.startswith(("toy6-", "branchy-", "bvlc-")) or "." in x or x == "bvlc-dse":
                    continue
                model = T(x.split("-")[0] + "-dse.onnx")
                hz = hazards(load(T(x, "mapping.json")), load(T(x, "horizontal.json")),
                             onnx.load(model))
                if not hz:
                    runs[x] = (model, [])
                elif all(h.startswith(("renames", "HSplit")) for h in hz):
                    runs[x] = (model, ["--expect-crash"])
                elif all(h.startswith("group=") for h in hz):
                    runs[x] = (model, ["--expect-wrong"])
            runs["g1-back"] = (T("gluey.onnx"), [])
            runs["g2-back"] = (T("gluey.onnx"), ["--expect-crash"])
            # a grouped convolution split: AutoDiCE computes it wrongly
            split2 = {"format": "dse-mapping", "layers": {n: "nx01-cpu" for n in
                                                          format_names(onnx.load(T("bvlc.onnx")))}}
            split2["layers"]["conv2_1"] = [["nx01-cpu", 0, 8], ["nx02-cpu", 8, 8]]
            save(T("split2.json"), split2)
            rc, _, err = dse("export", "--network", T("bvlc.onnx"), "--platform", T("nx.json"),
                             "--mapping", T("split2.json"), "-o", T("split2"))
            one_line("split2", err, "group=2")
            runs["split2"] = (T("bvlc-dse.onnx"), ["--expect-wrong"])
            runs["hx-dse"] = (T("bvlc-dse.onnx"), [])
            runs.update({d: (model, ["--expect-crash"]) for d, model in rowy.items()})
            for d, (model, flags) in runs.items():
                p = subprocess.run([sys.executable, os.path.join(HERE, "run_autodice.py"), adir,
                                    model, T(d), T("work-" + d)] + flags,
                                   capture_output=True, text=True)
                print(p.stdout.strip())
                check(p.returncode == 0, "AutoDiCE's front end on %s: %s" % (d, p.stderr[-600:]))
    return summary("test_autodice")


if __name__ == "__main__":
    sys.exit(main())
