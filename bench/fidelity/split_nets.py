#!/usr/bin/python3
"""split_nets.py OUTDIR -- two ImageNet-sized networks of split attention,
for issue 16's protocol on networks outside the zoo (bench/README.md,
"Split attention networks"): resnestish (ResNeSt-14-like: a deep stem and
four bottlenecks whose 3x3 Conv is timm's SplitAttn, radix 2, 2.75 GMACs)
and skish (four 1x1 Convs each followed by an SKNet SelectiveKernel block
of two branches, 0.38 GMACs); random weights (fixed seed), exported by
torch.onnx at opset 13 to OUTDIR/NAME.onnx.  Import each with
`dse net import OUTDIR/NAME.onnx -o NAME.json --weights NAME.bin`."""
import os
import sys

import torch
import torch.nn as nn

OUT = sys.argv[1]
sys.argv = sys.argv[:1] + ["dse"]  # torch_peer reads its DSE_BIN argument when imported
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "torch"))
import torch_peer as tp  # noqa: E402  (SplitAttn, SKBlock, randomise)


class Bottleneck(nn.Module):
    def __init__(self, cin, mid, cout, stride):
        super().__init__()
        self.c1 = nn.Sequential(nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU())
        self.sa = tp.SplitAttn(mid, 2, 1, max(mid // 2, 32))
        self.pool = nn.AvgPool2d(3, stride, 1) if stride > 1 else nn.Identity()
        self.c3 = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.down = nn.Sequential(nn.AvgPool2d(stride, stride) if stride > 1 else nn.Identity(),
                                  nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return torch.relu(self.c3(self.pool(self.sa(self.c1(x)))) + self.down(x))


class ResNeStish(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                                  nn.Conv2d(32, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                                  nn.Conv2d(32, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        self.layers = nn.Sequential(Bottleneck(64, 64, 256, 1), Bottleneck(256, 128, 512, 2),
                                    Bottleneck(512, 256, 1024, 2), Bottleneck(1024, 512, 2048, 2))
        self.fc = nn.Linear(2048, 1000)

    def forward(self, x):
        return self.fc(self.layers(self.stem(x)).mean((2, 3)))


class SKish(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        blocks = []
        for cin, c, st in ((64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)):
            blocks += [nn.Sequential(nn.Conv2d(cin, c, 1, st, bias=False), nn.BatchNorm2d(c), nn.ReLU()),
                       tp.SKBlock(c, 2, max(c // 16, 32))]
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(512, 1000)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


for name, cls in (("resnestish", ResNeStish), ("skish", SKish)):
    torch.manual_seed(0)
    model = tp.randomise(cls().eval())
    torch.onnx.export(model, torch.rand(1, 3, 224, 224), os.path.join(OUT, name + ".onnx"), opset_version=13)
    print("wrote", os.path.join(OUT, name + ".onnx"))
