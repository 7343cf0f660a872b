#!/usr/bin/python3
"""test_onnx_torch.py -- the importer on real framework exports: torchvision's
AlexNet, VGG-16, ResNet-50, DenseNet-121 and MobileNetV2 (random weights,
nothing downloaded) exported by torch.onnx (opset 13, BatchNorm kept) and
imported by `dse net import`.  Checked against figures dse did not compute:

  - parameters: sum of the PyTorch model's parameter sizes;
  - MACs: DESIGN.md's published GMACs, and the same Conv/FC layers
    (output shape, MACs, parameters, as a multiset) as dse's zoo entry;
  - weights: the weights file holds PyTorch's own tensors in dse's layout
    (first conv W[out][in][kh][kw] then bias; last FC W[out][in] then bias).

usage: test_onnx_torch.py DSE_BIN      (label "torch"; exit 77 without torch)
"""
import json
import os
import subprocess
import sys
import tempfile
import warnings
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pycheck import check, run, summary  # noqa: E402

try:
    import numpy as np
    import torch
    import torchvision
except ImportError:
    print("SKIP: /usr/bin/python3 has no torch/torchvision (scripts/bootstrap --torch)")
    sys.exit(77)

DSE = sys.argv[1]

# torchvision name, zoo name, DESIGN.md GMACs (conv + FC; the last two
# PyTorch's, counted by forward hooks: tests/torch/tvzoo.py)
MODELS = [("alexnet", "alexnet", 0.714), ("vgg16", "vgg16", 15.47),
          ("resnet50", "resnet50", 4.089), ("densenet121", "densenet121", 2.834),
          ("mobilenet_v2", "mobilenetv2", 0.301),
          ("mobilenet_v3_large", "mobilenet_v3_large", 0.217),
          ("efficientnet_b0", "efficientnet_b0", 0.386)]
# Zoo networks written layer for layer as torchvision's: every layer (kind,
# shape) must be the export's (Dropout aside: torch.onnx drops it).
SAME_LAYERS = ("mobilenet_v3_large", "efficientnet_b0")



def dse_json(*args):
    rc, out, err = run(DSE, *args)
    check(rc == 0, "dse %s: %s" % (" ".join(args), err))
    return json.loads(out) if rc == 0 else None


def splittable_signature(doc):
    return sorted((l["kind"], tuple(l["shape"]), l["macs"], l["params"])
                  for l in doc["layers"] if l["kind"] in ("Conv", "FC"))


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory(prefix="dse-onnx-torch-") as tmp:
        for tv, zoo, gmacs in MODELS:
            model = getattr(torchvision.models, tv)(weights=None).eval()
            path = os.path.join(tmp, tv + ".onnx")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(model, torch.randn(1, 3, 224, 224), path, opset_version=13,
                                  training=torch.onnx.TrainingMode.PRESERVE,
                                  do_constant_folding=False, input_names=["data"],
                                  output_names=["logits"])
            js, wb = os.path.join(tmp, tv + ".json"), os.path.join(tmp, tv + ".bin")
            p = subprocess.run([DSE, "net", "import", path, "-o", js, "--weights", wb],
                               capture_output=True, text=True)
            check(p.returncode == 0, "%s: import failed: %s" % (tv, p.stderr))
            if p.returncode:
                continue
            got = dse_json("net", "show", js, "--json")
            ref = dse_json("zoo", "show", zoo, "--json")
            if not got or not ref:
                continue
            torch_params = sum(t.numel() for t in model.parameters())
            check(got["totals"]["params"] == torch_params, "%s: %d params, PyTorch has %d" %
                  (tv, got["totals"]["params"], torch_params))
            check(round(got["totals"]["macs"] / 1e9, 3 if gmacs < 10 else 2) == gmacs,
                  "%s: %.4f GMACs, DESIGN.md says %s" % (tv, got["totals"]["macs"] / 1e9, gmacs))
            check(splittable_signature(got) == splittable_signature(ref),
                  "%s: Conv/FC layers differ from the zoo's %s" % (tv, zoo))
            if zoo in SAME_LAYERS:
                sig = lambda d: sorted((l["kind"], tuple(l["shape"]), l["params"])
                                       for l in d["layers"] if l["kind"] != "Dropout")
                check(sig(got) == sig(ref), "%s: layers differ from the zoo's %s" % (tv, zoo))
            check(got["layers"][-1]["shape"] == [1000, 1, 1], "%s: output %s" %
                  (tv, got["layers"][-1]["shape"]))
            # Weights: PyTorch's tensors, in dse's layout, at the right offsets.
            w = np.fromfile(wb, dtype="<f4")
            convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
            fcs = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
            first = torch.cat([convs[0].weight.detach().flatten()] +
                              ([convs[0].bias.detach()] if convs[0].bias is not None else []))
            check(np.array_equal(w[:first.numel()], first.numpy()),
                  "%s: first conv's weights are not PyTorch's" % tv)
            last = torch.cat([fcs[-1].weight.detach().flatten(), fcs[-1].bias.detach()])
            check(np.array_equal(w[-last.numel():], last.numpy()),
                  "%s: last FC's weights are not PyTorch's" % tv)
            print("%-13s %4d layers  %10d params  %.3f GMACs  (zoo %s: %d layers)" %
                  (tv, len(got["layers"]), got["totals"]["params"], got["totals"]["macs"] / 1e9,
                   zoo, len(ref["layers"])))
            os.unlink(path)
            os.unlink(wb)
    return summary("test_onnx_torch")


if __name__ == "__main__":
    sys.exit(main())
