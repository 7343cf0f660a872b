#!/usr/bin/python3
"""test_tvzoo.py DSE_BIN [--all] [MODEL[:VARIANT]...] -- torchvision's
classification CNNs (tvzoo.FAMILIES) exported with torch.onnx.export as
users export them, imported by `dse net import`, and run by `dse exec`.

For each model and export variant (opset, constant folding, fixed or
dynamic batch), against figures dse did not compute:

  - parameters: PyTorch's count when exported without folding (BatchNorm
    kept); with folding, the count of the weights the file's layers read
    (float tensors of more than one value, Identity aliases followed, a
    shared tensor counted once per reader, BatchNorm's running statistics
    left out), from the ONNX file by onnx's own reader;
  - MACs: forward hooks on every Conv2d and Linear (tvzoo.count);
  - output: PyTorch's on one input, dse on 1 rank and on 2 ranks with a
    hybrid mapping (every Conv and FC split in halves across the ranks, the
    other layers alternating between them) and with a mixed mapping
    (tvzoo.mixed_mapping: every layer at random whole, or cut by rows, by
    columns or by channels as `dse net show` allows, in two unequal parts,
    a third of the bands recomputing their halos):
    every output within 1e-4 relative (+1e-5 of the output's range);
  - a short campaign (dse run on local-2) and `dse validate` of its best
    points (soak: each family's first model; torch: the families that
    brought new layer kinds, CAMPAIGN_FAMILIES).

BatchNorm statistics and affine parameters, LayerNorm's and ConvNeXt's
layer scale are drawn at random first: as initialised (BN the identity,
layer scale 1e-6) they would hide errors in what they scale.

Selections (label "torch" runs the default; "soak" runs --all):
  default   the first model of each family, opset 13, folded, fixed batch
            (with DSE_SHORT=1, as scripts/test and CI run the torch label:
            SHORT, the smallest network of every family, same checks; one
            campaign; vit_b_16's refusal)
  --all     every model at opset 13, and per family its first model at
            opsets 9 and 17, folded and not, fixed and dynamic batch
            (with DSE_SHORT=1: three small families' variants, import only);
            a variant PyTorch itself cannot export is said and skipped
  MODEL[:OPSET[f|n][d]]  given ones, e.g. convnext_tiny:9nd (--campaign: with
            a campaign and its validation)

Transformers (tvzoo.TRANSFORMERS) must be refused with one line saying
attention is not supported.  Exit 77 without torch.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pycheck  # noqa: E402
from pycheck import check, summary  # noqa: E402

try:
    import numpy as np
    import onnx
    import torch
except ImportError:
    print("SKIP: /usr/bin/python3 has no torch/torchvision/onnx (scripts/bootstrap --torch)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tvzoo  # noqa: E402

DSE = os.path.abspath(sys.argv[1])  # the campaign runs from the network's folder
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")



def run(*args, timeout=3600):
    return pycheck.run(*args, env=ENV, timeout=timeout)


def platform(path, n):
    devs = [{"name": "r%d" % i, "board": "localhost", "kind": "cpu", "freq_mhz": 2000, "cores": 1,
             "memory_mb": 65536, "idle_w": 1, "busy_w": 2} for i in range(n)]
    json.dump({"format": "dse-platform", "version": 1, "name": "local-%d" % n, "devices": devs,
               "links": {"same_board": {"latency_us": 2, "bandwidth_mbs": 4000}}}, open(path, "w"))


def compare(got, ref):
    """(number of outputs out of tolerance, max relative error)."""
    if got.size != ref.size:
        return ref.size, float("inf")
    scale = float(np.abs(ref).max())
    err = np.abs(got - ref)
    bad = int((err > 1e-4 * np.abs(ref) + 1e-5 * scale).sum())
    rel = float((err / np.maximum(np.abs(ref), 0.1 * scale)).max())
    return bad, rel


def randomise(model, seed):
    """Non-trivial BatchNorm/LayerNorm statistics and scales, layer scale."""
    g = torch.Generator().manual_seed(seed)

    def u(t, lo, hi):
        t.copy_(torch.rand(t.shape, generator=g) * (hi - lo) + lo)

    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                u(m.weight, 0.5, 1.5), u(m.bias, -0.2, 0.2)
                u(m.running_mean, -0.2, 0.2), u(m.running_var, 0.5, 1.5)
            elif isinstance(m, torch.nn.LayerNorm):
                u(m.weight, 0.5, 1.5), u(m.bias, -0.2, 0.2)
            if hasattr(m, "layer_scale") and isinstance(m.layer_scale, torch.nn.Parameter):
                u(m.layer_scale, 0.5, 1.5)


def file_params(path):
    """Weights the file's layers read (see the module comment)."""
    m = onnx.load(path, load_external_data=False)
    size, alias = {}, {}
    for t in m.graph.initializer:
        if t.data_type == onnx.TensorProto.FLOAT:
            size[t.name] = int(np.prod(t.dims)) if len(t.dims) else 1
    for nd in m.graph.node:
        if nd.op_type == "Identity":
            alias[nd.output[0]] = nd.input[0]
        if nd.op_type == "Constant":
            for a in nd.attribute:
                if a.name == "value" and a.t.data_type == onnx.TensorProto.FLOAT:
                    size[nd.output[0]] = int(np.prod(a.t.dims)) if len(a.t.dims) else 1
    total = 0
    for nd in m.graph.node:
        if nd.op_type in ("Identity", "Constant"):
            continue
        for i, name in enumerate(nd.input):
            while name in alias:
                name = alias[name]
            if nd.op_type == "BatchNormalization" and i >= 3:
                continue
            if size.get(name, 0) > 1:
                total += size[name]
    return total


def parse_variant(v):
    """'13fd' -> (13, True, True): opset, f(olded)/n(ot), d(ynamic batch)."""
    digits = "".join(ch for ch in v if ch.isdigit())
    return int(digits or 13), "n" not in v, "d" in v


def variant_name(opset, fold, dyn):
    return "%d%s%s" % (opset, "f" if fold else "n", "d" if dyn else "")


def campaign(tag, sub, line):
    """A short campaign on this machine's two ranks (local-2), run from the
    network's folder by a relative path, and `dse validate` of its best
    points: each must run and give the single-device output."""
    db = os.path.join(sub, "c.db")
    p = subprocess.run([DSE, "run", "--network", "net.json", "--platform", "local-2", "--chromosome",
                        "hybrid", "--pop", "8", "--gens", "2", "--seed", "1", "--db", db, "--quiet"],
                       capture_output=True, text=True, env=ENV, cwd=sub, timeout=3600)
    if not check(p.returncode == 0 and p.stdout.startswith("campaign "),
                 "%s: dse run: %s" % (tag, p.stderr.strip()[-300:])):
        return line
    cid = p.stdout.split()[1]
    rc, out, err = run(DSE, "validate", "--campaign", cid, "--db", db, "--top", "best", "--rounds", "1", "--bench", "1,1")
    rows = [l for l in out.splitlines() if l.startswith("best ")]
    check(rc == 0 and rows and all(l.rstrip().endswith("| ok") for l in rows),
          "%s: dse validate exit %d: %s %s" % (tag, rc, out.strip()[-400:], err.strip()[-200:]))
    return line + "  campaign+validate %d points ok" % len(rows)


def one(name, opset, fold, dyn, tmp, run_it=True, camp=False):
    t0 = time.time()
    tag = "%s opset %d %s %s" % (name, opset, "folded" if fold else "unfolded",
                                 "dynamic batch" if dyn else "fixed batch")
    model = tvzoo.build(name)
    randomise(model, 99)
    s = tvzoo.input_size(name)
    torch.manual_seed(7)
    x = torch.rand(1, 3, s, s) * 2 - 1
    params, macs, y = tvzoo.count(model, x)
    y = y.detach().numpy().astype(np.float32).ravel()
    sub = tempfile.mkdtemp(prefix="m-", dir=tmp)
    path = os.path.join(sub, name + ".onnx")
    try:
        tvzoo.export(model, x, path, opset=opset, fold=fold, dynamic=dyn)
    except torch.onnx.errors.OnnxExporterError as e:
        # A file PyTorch cannot write is no file a user brings (e.g.
        # shufflenet's chunk with a dynamic batch below opset 11): said, not
        # failed -- except for the default variant, which must export.
        if (opset, fold, dyn) == (13, True, False):
            raise
        print("%-20s %-4s not exportable by PyTorch %s: %s" % (
            name, variant_name(opset, fold, dyn), torch.__version__, str(e).split("\n")[0][:120]),
            flush=True)
        subprocess.run(["rm", "-rf", sub])
        return
    del model
    want_params = params if not fold else file_params(path)
    netj, wbin = os.path.join(sub, "net.json"), os.path.join(sub, "w.bin")
    rc, out, err = run(DSE, "net", "import", path, "-o", netj, "--weights", wbin)
    if not check(rc == 0, "%s: import failed: %s" % (tag, err.strip())):
        subprocess.run(["rm", "-rf", sub])
        return
    rc, out, err = run(DSE, "net", "show", netj, "--json")
    net = json.loads(out)
    tot = net["totals"]
    check(tot["params"] == want_params, "%s: %d params, %s has %d" %
          (tag, tot["params"], "PyTorch" if not fold else "the file's layers", want_params))
    check(tot["macs"] == macs, "%s: %d MACs, PyTorch's hooks count %d" % (tag, tot["macs"], macs))
    line = "%-20s %-4s %4d layers %11d params %12d MACs" % (name, variant_name(opset, fold, dyn),
                                                             len(net["layers"]), tot["params"], tot["macs"])
    if run_it:
        x.numpy().astype(np.float32).tofile(os.path.join(sub, "in.f32"))
        p1, p2 = os.path.join(tmp, "p1.json"), os.path.join(tmp, "p2.json")
        o1, o2 = os.path.join(sub, "o1.f32"), os.path.join(sub, "o2.f32")
        rc, out, err = run(DSE, "mpirun", "-np", "1", DSE, "exec", "--network", netj, "--platform", p1,
                           "--single", "0", "--input", os.path.join(sub, "in.f32"), "--output", o1)
        if check(rc == 0, "%s: 1 rank: %s" % (tag, err.strip()[-400:])):
            bad, rel = compare(np.fromfile(o1, np.float32), y)
            check(bad == 0, "%s: 1 rank: %d of %d outputs differ from PyTorch (max rel %.3g)" %
                  (tag, bad, y.size, rel))
            line += "  1 rank %.1e" % rel
        mp = os.path.join(sub, "map.json")
        nsplit = tvzoo.hybrid_mapping(net, mp)
        rc, out, err = run(DSE, "mpirun", "-np", "2", DSE, "exec", "--network", netj, "--platform", p2,
                           "--mapping", mp, "--input", os.path.join(sub, "in.f32"), "--output", o2)
        if check(rc == 0, "%s: 2 ranks: %s" % (tag, err.strip()[-400:])):
            bad, rel = compare(np.fromfile(o2, np.float32), y)
            check(bad == 0, "%s: 2 ranks (%d layers split): %d of %d outputs differ from PyTorch "
                  "(max rel %.3g)" % (tag, nsplit, bad, y.size, rel))
            line += "  2 ranks %.1e" % rel
        # Mixed cuts: bands of rows and columns beside channel slices, on
        # every family's own layers (a seed of its own, fixed: reproducible).
        nrows, nchan = tvzoo.mixed_mapping(net, mp, sum(map(ord, name)), recompute=True)
        o3 = os.path.join(sub, "o3.f32")
        rc, out, err = run(DSE, "mpirun", "-np", "2", DSE, "exec", "--network", netj, "--platform", p2,
                           "--mapping", mp, "--input", os.path.join(sub, "in.f32"), "--output", o3)
        if check(rc == 0, "%s: 2 ranks, mixed cuts: %s" % (tag, err.strip()[-400:])):
            bad, rel = compare(np.fromfile(o3, np.float32), y)
            check(bad == 0, "%s: 2 ranks, mixed cuts (%d layers by rows or columns, %d by channels): "
                  "%d of %d outputs differ from PyTorch (max rel %.3g)" % (tag, nrows, nchan, bad, y.size, rel))
            line += "  mixed (%d banded, %d sliced) %.1e" % (nrows, nchan, rel)
        if camp:
            line = campaign(tag, sub, line)
    print("%s  %.0f s" % (line, time.time() - t0), flush=True)
    subprocess.run(["rm", "-rf", sub])


def transformers(tmp, names):
    for name in names:
        model = tvzoo.build(name)
        path = os.path.join(tmp, name + ".onnx")
        tvzoo.export(model, torch.rand(1, 3, 224, 224), path, opset=13)
        del model
        rc, out, err = run(DSE, "net", "import", path, "-o", os.path.join(tmp, "t.json"))
        lines = err.strip().splitlines()
        check(rc == 2 and len(lines) == 1 and "attention is not supported" in err,
              "%s: want one line saying attention is not supported, got exit %d: %s" %
              (name, rc, err.strip()[:300]))
        print("%-20s refused: %s" % (name, lines[0] if lines else ""), flush=True)
        os.unlink(path)


# The families whose layers came with issue 17 (the torch label runs their
# campaign and validation; soak runs every family's).
CAMPAIGN_FAMILIES = ("shufflenet", "mobilenet_v3", "mnasnet", "efficientnet", "convnext")

# The torch label's short form (DSE_SHORT=1: scripts/test, CI): the
# smallest network of every family, every check of the default selection
# (params, MACs, 1 and 2 ranks against PyTorch).  Name -> campaign and
# validation too; the comment says what the family brought.
SHORT = {
    "alexnet": False,             # adaptive average pooling, Dropout, Flatten + Gemm
    "vgg11": False,               # plain 3x3 stacks (Winograd layers)
    "resnet18": False,            # residual Add
    "resnext50_32x4d": False,     # grouped convolutions (32 groups)
    "wide_resnet50_2": False,     # wide bottlenecks
    "squeezenet1_1": False,       # fire modules: Concat of two branches
    "densenet121": False,         # dense blocks: Concat chains, BN before Conv
    "inception_v3": False,        # 299x299, asymmetric kernels (1x7, 7x1)
    "googlenet": False,           # four-branch inception blocks, transform_input
    "shufflenet_v2_x0_5": False,  # channel shuffle (Reshape-Transpose-Reshape), Split, Concat
    "mobilenet_v2": False,        # depthwise convolutions, ReLU6 (Clip)
    "mobilenet_v3_small": True,   # HardSigmoid, HardSwish, SE (pool, FC, scale by Mul)
    "mnasnet0_5": False,          # ReduceMean as the final pooling
    "efficientnet_b0": False,     # SiLU (Sigmoid * x), SE with Sigmoid gates
    "efficientnet_v2_s": False,   # fused MBConv (3x3 expansion convolutions)
    "regnet_x_400mf": False,      # grouped bottlenecks without SE
    "regnet_y_400mf": False,      # SE over grouped convolutions
    "convnext_tiny": False,       # NHWC Transpose + MatMul as 1x1 Conv, LayerNorm and GELU
}                                 # decomposed at opset 13, layer scale


def main():
    args = sys.argv[2:]
    short = os.environ.get("DSE_SHORT") == "1"
    jobs = []  # (model, opset, fold, dyn, run)
    if "--all" in args:
        if short:  # import only: a dynamic-batch unfolded file at a low opset, a folded opset-17 one
            for name, low in (("shufflenet_v2_x0_5", 11), ("mnasnet0_5", 9), ("convnext_tiny", 9)):
                # shufflenet: PyTorch 1.13 exports its chunk with a dynamic batch from opset 11 only
                jobs += [(name, low, False, True, False, False), (name, 17, True, False, False, False)]
        else:
            for fam, models in tvzoo.FAMILIES.items():
                jobs += [(m, 13, True, False, True, m == models[0]) for m in models]
                jobs += [(models[0], 9, True, False, True, False), (models[0], 9, False, True, True, False),
                         (models[0], 17, True, True, True, False), (models[0], 17, False, False, True, False)]
    elif [a for a in args if not a.startswith("--")]:
        for a in [a for a in args if not a.startswith("--")]:
            m, _, v = a.partition(":")
            jobs.append((m,) + parse_variant(v) + (True, "--campaign" in args))
    elif short:
        jobs = [(m, 13, True, False, True, camp) for m, camp in SHORT.items()]
    else:
        jobs = [(models[0], 13, True, False, True, fam in CAMPAIGN_FAMILIES)
                for fam, models in tvzoo.FAMILIES.items()]
    tmp = tempfile.mkdtemp(prefix="dse-tvzoo-")
    platform(os.path.join(tmp, "p1.json"), 1)
    platform(os.path.join(tmp, "p2.json"), 2)
    for m, opset, fold, dyn, run_it, camp in jobs:
        try:
            one(m, opset, fold, dyn, tmp, run_it, camp)
        except Exception as e:  # an exporter or a subprocess timing out
            check(False, "%s %s: %s" % (m, variant_name(opset, fold, dyn), e))
    if not [a for a in args if not a.startswith("--")] and not ("--all" in args and short):
        transformers(tmp, tvzoo.TRANSFORMERS[:1] if short else tvzoo.TRANSFORMERS)
    subprocess.run(["rm", "-rf", tmp])
    return summary("test_tvzoo")


if __name__ == "__main__":
    sys.exit(main())
