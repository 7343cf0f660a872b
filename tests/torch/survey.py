#!/usr/bin/python3
"""survey.py DSE_BIN [MODEL...] -- export torchvision's classification CNNs
(opset 13, constant folding, as users do) and record, per model, the ONNX
operators it uses, PyTorch's params and MACs (tvzoo.count), and what
`dse net import` says (imported with its params/MACs, or its error line).
Prints one line per model; a survey, not a test (it never fails)."""
import os
import subprocess
import sys
import tempfile
import json

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tvzoo  # noqa: E402

DSE = sys.argv[1]
only = sys.argv[2:]


def main():
    names = [m for fam in tvzoo.FAMILIES.values() for m in fam] + tvzoo.TRANSFORMERS
    if only:
        names = [n for n in names if n in only]
    with tempfile.TemporaryDirectory(prefix="cov-survey-") as tmp:
        for name in names:
            model = tvzoo.build(name)
            s = tvzoo.input_size(name)
            x = torch.rand(1, 3, s, s)
            params, macs, _ = tvzoo.count(model, x)
            path = os.path.join(tmp, name + ".onnx")
            tvzoo.export(model, x, path)
            ops = tvzoo.onnx_ops(path)
            p = subprocess.run([DSE, "net", "show", path, "--json"], capture_output=True, text=True)
            if p.returncode == 0:
                t = json.loads(p.stdout)["totals"]
                res = "IMPORTS params %d (%s) MACs %d (%s)" % (
                    t["params"], "=" if t["params"] == params else "torch %d" % params,
                    t["macs"], "=" if t["macs"] == macs else "torch %d" % macs)
            else:
                res = "REFUSED " + p.stderr.strip().split(": ", 1)[-1][:160]
            print("%-20s %5.1fM params %6.2f GMACs | %s | %s" % (
                name, params / 1e6, macs / 1e9, res,
                " ".join("%s:%d" % kv for kv in sorted(ops.items()))), flush=True)
            for f in os.listdir(tmp):
                os.unlink(os.path.join(tmp, f))
            del model


if __name__ == "__main__":
    main()
