"""tvzoo.py -- torchvision's classification CNNs as the torch tests and the
survey see them: the families, how a user exports a model (opset, constant
folding, fixed or dynamic batch), and figures dse did not compute:

  - params: PyTorch's own count (sum of the parameters' sizes);
  - MACs: forward hooks on every Conv2d and Linear, counted from the shapes
    PyTorch actually ran (Conv: output elements * in/groups * kh * kw;
    Linear: output elements * in_features, so a Linear applied per pixel,
    as in ConvNeXt, counts every pixel).

Nothing is downloaded: weights=None, random initialisation from a seed.
"""
import io
import json
import os
import warnings

import torch
import torchvision

# Family -> models (torchvision 0.14), the first of each is the CI one.
FAMILIES = {
    "alexnet": ["alexnet"],
    "vgg": ["vgg11_bn", "vgg11", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"],
    "resnet": ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152"],
    "resnext": ["resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d"],
    "wide_resnet": ["wide_resnet50_2", "wide_resnet101_2"],
    "squeezenet": ["squeezenet1_1", "squeezenet1_0"],
    "densenet": ["densenet121", "densenet161", "densenet169", "densenet201"],
    "inception": ["inception_v3"],
    "googlenet": ["googlenet"],
    "shufflenet": ["shufflenet_v2_x1_0", "shufflenet_v2_x0_5", "shufflenet_v2_x1_5",
                   "shufflenet_v2_x2_0"],
    "mobilenet_v2": ["mobilenet_v2"],
    "mobilenet_v3": ["mobilenet_v3_large", "mobilenet_v3_small"],
    "mnasnet": ["mnasnet1_0", "mnasnet0_5", "mnasnet0_75", "mnasnet1_3"],
    "efficientnet": ["efficientnet_b0"] + ["efficientnet_b%d" % i for i in range(1, 8)],
    "efficientnet_v2": ["efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l"],
    "regnet_x": ["regnet_x_400mf", "regnet_x_800mf", "regnet_x_1_6gf", "regnet_x_3_2gf",
                 "regnet_x_8gf", "regnet_x_16gf", "regnet_x_32gf"],
    "regnet_y": ["regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf", "regnet_y_3_2gf",
                 "regnet_y_8gf", "regnet_y_16gf", "regnet_y_32gf", "regnet_y_128gf"],
    "convnext": ["convnext_tiny", "convnext_small", "convnext_base", "convnext_large"],
}
# Out of scope (attention): the importer must refuse them with one clear line.
TRANSFORMERS = ["vit_b_16", "swin_t", "maxvit_t"]


def input_size(name):
    """torchvision's default input size: 224, inception_v3 299."""
    return 299 if name == "inception_v3" else 224


def build(name, seed=1234):
    torch.manual_seed(seed)
    kw = {"aux_logits": False, "init_weights": True} if name in ("inception_v3", "googlenet") else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = getattr(torchvision.models, name)(weights=None, **kw)
    return m.eval()


def count(model, x):
    """(params, MACs) counted by PyTorch: parameters and Conv/Linear hooks."""
    params = sum(t.numel() for t in model.parameters())
    macs = [0]

    def conv_hook(mod, inp, out):
        k = mod.kernel_size[0] * mod.kernel_size[1]
        macs[0] += out.numel() * (mod.in_channels // mod.groups) * k

    def fc_hook(mod, inp, out):
        macs[0] += out.numel() * mod.in_features

    hooks = []
    for mod in model.modules():
        if isinstance(mod, torch.nn.Conv2d):
            hooks.append(mod.register_forward_hook(conv_hook))
        elif isinstance(mod, torch.nn.Linear):
            hooks.append(mod.register_forward_hook(fc_hook))
    with torch.no_grad():
        y = model(x)
    for h in hooks:
        h.remove()
    return params, macs[0], y


def export(model, x, path, opset=13, fold=True, dynamic=False):
    """torch.onnx.export as a user calls it.  fold=False keeps BatchNorm
    (TrainingMode.PRESERVE, no constant folding), as test_onnx_torch.py
    does; fold=True is the default export (BatchNorm folded into Conv).
    Models over protobuf's 2 GB go to external data (torch does that)."""
    kw = {}
    if dynamic:
        kw["dynamic_axes"] = {"data": {0: "batch"}, "out": {0: "batch"}}
    if not fold:
        kw["training"] = torch.onnx.TrainingMode.PRESERVE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, x, path, opset_version=opset, do_constant_folding=fold,
                          input_names=["data"], output_names=["out"], **kw)


def onnx_ops(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    ops = {}
    for nd in m.graph.node:
        ops[nd.op_type] = ops.get(nd.op_type, 0) + 1
    return ops


def hybrid_mapping(net, path):
    """Conv/ConvTranspose/FC split in halves across r0 and r1; other layers follow the
    previous split layer's first half, alternating the owner each time."""
    layers, owner = {}, "r0"
    for L in net["layers"]:
        c = L["shape"][0]
        if L["kind"] in ("Conv", "ConvTranspose", "FC") and c >= 2:
            owner = "r1" if owner == "r0" else "r0"
            other = "r1" if owner == "r0" else "r0"
            layers[L["name"]] = [[owner, 0, c // 2], [other, c // 2, c - c // 2]]
        else:
            layers[L["name"]] = owner
    json.dump({"format": "dse-mapping", "version": 1, "layers": layers}, open(path, "w"))
    return sum(1 for v in layers.values() if isinstance(v, list))


def mixed_mapping(net, path, seed, recompute=False):
    """Every layer cut at random by what `dse net show --json` says it
    allows: output rows into two bands of unequal height ("rows"), output
    columns into two bands of unequal width ("columns"), output channels
    into two unequal slices ("splittable"), or whole on one of r0 and r1.
    recompute: a third of the bands (drawn apart, so the cuts are those of
    recompute=False) recompute the rows their consumers read beyond them
    instead of fetching them (never the last layer's: docs/mapping-format.md).
    Returns (layers cut by rows or columns, by channels)."""
    import random
    rnd = random.Random(seed)
    rre = random.Random(seed + 1)
    layers, nrows, nchan = {}, 0, 0
    last = net["layers"][-1]["name"]
    for L in net["layers"]:
        c, h, w = L["shape"]
        ways = ["whole"] + (["rows"] if L.get("rows") else []) + \
               (["columns"] if L.get("columns") else []) + \
               (["chan"] if L.get("splittable") and c >= 2 else [])
        way = rnd.choice(ways)
        first, second = ("r0", "r1") if rnd.random() < 0.5 else ("r1", "r0")
        if way in ("rows", "columns"):
            size = h if way == "rows" else w
            k = rnd.randint(1, size - 1)
            layers[L["name"]] = {way: [[first, 0, k], [second, k, size - k]]}
            if recompute and L["name"] != last and rre.random() < 1 / 3:
                layers[L["name"]]["recompute"] = True
            nrows += 1
        elif way == "chan":
            k = rnd.randint(1, c - 1)
            layers[L["name"]] = [[first, 0, k], [second, k, c - k]]
            nchan += 1
        else:
            layers[L["name"]] = first
    json.dump({"format": "dse-mapping", "version": 1, "layers": layers}, open(path, "w"))
    return nrows, nchan
