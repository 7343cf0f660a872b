#!/usr/bin/python3
"""run_autodice.py -- feed what `dse export` and `dse net export --autodice`
write to AutoDiCE's own front end (its Python partitioner: Interface,
HorizontalInplace, ModelSplit, GenerateComm, EngineCode) and check what it
makes of them:

  run_autodice.py AUTODICE_DISTRIBUTED_DIR MODEL.onnx EXPORT_DIR WORK_DIR
                  [--expect-wrong | --expect-crash]

AUTODICE_DISTRIBUTED_DIR is tools/distributed of a checkout of
github.com/parrotsky/AutoDiCE (vertical/ and horizontal/).  The front end runs
in WORK_DIR as its tutorial runs it (format_onnx, then the interface on
EXPORT_DIR/mapping.json, horizontal.json when it splits layers, and the
hosts of autodice-devices.json as its `platforms`).  Then:

* its consistency check must pass (every node of the model mapped);
* its rankfile must give rank i the host and cores of the i-th key;
* running its sub-models (models/KEY.onnx) as its generated program would --
  each node when the tensors it reads exist (its ranks extract outputs one by
  one, waiting for a received tensor only when needed), tensors passed by
  name -- must give
  the whole model's output (float64, onnxeval.py), or, with --expect-wrong,
  must not (a split grouped convolution, which AutoDiCE computes wrongly);
* with --expect-crash, its front end must fail (a name that the renaming
  of a split layer breaks).

Exit 0 when all holds, 1 otherwise; prints one line per finding.
"""
import contextlib
import io
import json
import os
import shutil
import sys
import types

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnxeval  # noqa: E402


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    expect_wrong = "--expect-wrong" in sys.argv
    expect_crash = "--expect-crash" in sys.argv
    adir, model, export, work = [os.path.abspath(a) for a in args]
    mapping = load(os.path.join(export, "mapping.json"))
    horizontal = load(os.path.join(export, "horizontal.json"))
    hosts = load(os.path.join(export, "autodice-devices.json"))["hosts"]
    os.makedirs(os.path.join(work, "models"), exist_ok=True)
    shutil.copy(model, os.path.join(work, "model.onnx"))
    with open(os.path.join(work, "horizontal.json"), "w") as f:
        json.dump(horizontal, f)
    os.chdir(work)
    # AutoDiCE imports psutil but never calls it in the front end.
    try:
        import psutil  # noqa: F401
    except ImportError:
        sys.modules["psutil"] = types.ModuleType("psutil")
    kind = "horizontal" if horizontal else "vertical"
    sys.path.insert(0, os.path.join(adir, "vertical"))  # code_generator, cpp_generator
    sys.path.insert(0, os.path.join(adir, kind))
    import interface as I  # AutoDiCE's

    out = io.StringIO()
    try:
        frontend(I, kind, mapping, hosts, out)
    except Exception as e:  # noqa: BLE001 -- whatever AutoDiCE raises
        print("%s: AutoDiCE's front end fails: %s: %s" % (os.path.basename(export),
                                                          type(e).__name__, e))
        return 0 if expect_crash else 1
    if expect_crash:
        print("FAIL: AutoDiCE's front end did not fail")
        return 1
    return check(mapping, horizontal, export, out.getvalue(), expect_wrong)


def frontend(I, kind, mapping, hosts, out):
    """AutoDiCE's front end as its interface.py __main__ runs it."""
    with contextlib.redirect_stdout(out):
        fmodel = I.format_onnx("model.onnx")
        if kind == "vertical":
            spec = I.Interface(model=fmodel, mappings=mapping, platforms=hosts)
        else:
            spec = I.Interface(model=fmodel, mappings=json.loads(json.dumps(mapping)),
                               platforms=hosts)
            spec.HorizontalInplace("horizontal.json")
            spec.ConsistencyCheck()
            spec.GenerateRankFile()
            spec.ModelSplit()
            spec.GenerateComm()
        I.EngineCode(CppName="./models/multinode", Platforms=spec.platforms,
                     NodesList=spec.nodes, ComputingNodes=spec.computingnodes,
                     ValueInfos=spec.value_map, Inputs=spec.inputs, Outputs=spec.outputs,
                     Benchmark=False)


def check(mapping, horizontal, export, log, expect_wrong):
    bad = 0
    if "Consistency Check Pass." not in log:
        print("FAIL: AutoDiCE's consistency check did not pass:\n" + log)
        bad += 1
    # rankfile: rank i = key i's host, its cores as AutoDiCE spells them
    with open("models/rankfile") as f:
        ranks = [l.split() for l in f if l.strip()]
    keys = list(mapping.keys())
    for i, key in enumerate(keys):
        host, res = key.split("_")
        cores = "5" if res == "gpu" else ",".join(res[3:])
        want = ["rank", "%d=%s" % (i, host), "slots=" + cores]
        if ranks[i] != want:
            print("FAIL: rankfile line %d is %s, want %s" % (i, ranks[i], want))
            bad += 1
    # the whole model against AutoDiCE's sub-models run as its program would
    whole = onnx.load("model.onnx").graph
    inp = [x for x in whole.input if x.name not in {t.name for t in whole.initializer}][0]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape)
    ref = onnxeval.run_graph(whole, {inp.name: x})[whole.output[0].name]
    # Each rank extracts its outputs lazily (ncnn's extractor), waiting for
    # a received tensor only when a node needs it: run the sub-models' nodes
    # as data flow, activations shared by name, weights per sub-model.
    env = {inp.name: x}
    subs = {k: onnx.load("models/%s.onnx" % k).graph for k in keys}
    weights = {k: onnxeval.initializers(subs[k]) for k in keys}
    todo = {k: list(subs[k].node) for k in keys}
    progress = True
    while progress and any(todo.values()):
        progress = False
        for k in keys:
            for node in list(todo[k]):
                if all(not t or t in env or t in weights[k] for t in node.input):
                    local = dict(weights[k])
                    local.update({t: env[t] for t in node.input if t and t in env})
                    onnxeval.run_node(node, local)
                    env.update({o: local[o] for o in node.output if o})
                    todo[k].remove(node)
                    progress = True
    if any(todo.values()):
        print("FAIL: nodes %s wait for tensors nobody computes" %
              [n.name for k in keys for n in todo[k]])
        return 1
    got = env.get(whole.output[0].name)
    if got is None:
        print("FAIL: no sub-model computes the output %s" % whole.output[0].name)
        return 1
    err = float(np.max(np.abs(got - ref)))
    scale = float(np.max(np.abs(ref)))
    same = err <= 1e-9 * max(scale, 1e-30)
    print("%s: %d ranks (%s), %d split layers, max |sub-models - whole| = %.3g (output scale %.3g)"
          % (os.path.basename(export), len(keys), ", ".join(keys), len(horizontal), err, scale))
    if same == expect_wrong:
        print("FAIL: AutoDiCE's sub-models %s the whole model" %
              ("equal" if same else "differ from"))
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
