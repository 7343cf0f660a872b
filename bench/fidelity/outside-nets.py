#!/usr/bin/python3
# outside-nets.py OUTDIR -- networks outside the zoo, as users bring them:
# written in PyTorch in their published layouts, random weights, exported
# with torch.onnx (opset 13).  yolotiny: YOLOv3-tiny (LeakyReLU 0.1,
# ZeroPad2d before a stride-1 MaxPool, nearest upsampling, two heads),
# 416 x 416; unet: a small U-Net (ELU, PReLU, nearest upsampling, skip
# concatenations, Tanh), 128 x 160; unet-ct: U-Net's own layout (2x2
# transposed-convolution up-steps, BatchNorm, ReLU) at a quarter of its
# width, 192 x 192; autoenc: a convolutional autoencoder (3x3 stride-2
# transposed convolutions with output padding), 256 x 256; narrow: 3x3
# convolutions to few channels, 32 x 128 x 128.  Used by
# bench/README.md ("Branches on the data", "Transposed convolutions").  Needs /usr/bin/python3 with torch (scripts/bootstrap --torch).
import os
import sys

import torch
import torch.nn as nn
def cbl(ci, co, k=3, s=1):
    return nn.Sequential(nn.Conv2d(ci, co, k, s, k // 2, bias=False), nn.BatchNorm2d(co), nn.LeakyReLU(0.1))
class YoloTiny(nn.Module):  # YOLOv3-tiny's layout, 416 input, 80 classes
    def __init__(s):
        super().__init__()
        L = []; c = 3
        for i, co in enumerate([16, 32, 64, 128, 256]):
            L += [cbl(c, co), nn.MaxPool2d(2, 2)]; c = co
        s.b1 = nn.Sequential(*L[:-1]); s.b2 = nn.Sequential(L[-1], cbl(256, 512), nn.ZeroPad2d((0, 1, 0, 1)), nn.MaxPool2d(2, 1), cbl(512, 1024), cbl(1024, 256, 1))
        s.h1 = nn.Sequential(cbl(256, 512), nn.Conv2d(512, 255, 1))
        s.l = cbl(256, 128, 1); s.up = nn.Upsample(scale_factor=2)
        s.h2 = nn.Sequential(cbl(384, 256), nn.Conv2d(256, 255, 1))
    def forward(s, x):
        a = s.b1(x); b = s.b2(a)
        return s.h1(b), s.h2(torch.cat([s.up(s.l(b)), a], 1))
class UNet(nn.Module):
    def __init__(s):
        super().__init__()
        def blk(ci, co): return nn.Sequential(nn.Conv2d(ci, co, 3, 1, 1), nn.BatchNorm2d(co), nn.ELU(), nn.Conv2d(co, co, 3, 1, 1), nn.PReLU(co))
        s.d1 = blk(3, 16); s.d2 = blk(16, 32); s.d3 = blk(32, 64)
        s.u2 = blk(96, 32); s.u1 = blk(48, 16); s.o = nn.Conv2d(16, 2, 1)
    def forward(s, x):
        a = s.d1(x); b = s.d2(nn.functional.max_pool2d(a, 2)); c = s.d3(nn.functional.max_pool2d(b, 2))
        u = s.u2(torch.cat([nn.functional.interpolate(c, scale_factor=2), b], 1))
        u = s.u1(torch.cat([nn.functional.interpolate(u, scale_factor=2), a], 1))
        return torch.tanh(s.o(u))
class UNetCT(nn.Module):  # Ronneberger et al.'s layout at a quarter width: 2x2 up-convolutions
    def __init__(s):
        super().__init__()
        def blk(ci, co): return nn.Sequential(nn.Conv2d(ci, co, 3, 1, 1), nn.BatchNorm2d(co), nn.ReLU(), nn.Conv2d(co, co, 3, 1, 1), nn.BatchNorm2d(co), nn.ReLU())
        w = [16, 32, 64, 128, 256]
        s.down = nn.ModuleList([blk(3 if i == 0 else w[i - 1], w[i]) for i in range(5)])
        s.up = nn.ModuleList([nn.ConvTranspose2d(w[i + 1], w[i], 2, 2) for i in range(4)])
        s.dec = nn.ModuleList([blk(2 * w[i], w[i]) for i in range(4)])
        s.o = nn.Conv2d(16, 2, 1)
    def forward(s, x):
        f = []
        for i, b in enumerate(s.down):
            x = b(x if i == 0 else nn.functional.max_pool2d(x, 2)); f.append(x)
        for i in range(3, -1, -1):
            x = s.dec[i](torch.cat([s.up[i](x), f[i]], 1))
        return s.o(x)
class AutoEnc(nn.Module):  # a convolutional autoencoder: strided 3x3 down, ConvTranspose 3x3 s2 (output_padding 1) up
    def __init__(s):
        super().__init__()
        c = [3, 32, 64, 128]
        s.enc = nn.Sequential(*[m for i in range(3) for m in (nn.Conv2d(c[i], c[i + 1], 3, 2, 1), nn.ReLU())])
        s.dec = nn.Sequential(*[m for i in range(3, 0, -1) for m in (nn.ConvTranspose2d(c[i], c[i - 1] if i > 1 else 16, 3, 2, 1, output_padding=1), nn.ReLU())],
                              nn.Conv2d(16, 3, 3, 1, 1), nn.Sigmoid())
    def forward(s, x):
        return s.dec(s.enc(x))
class Narrow(nn.Module):  # 3x3 convolutions from 32 channels to 1, 4, 8, 16, 24, 32, 48 (bench/README, "Narrow convolutions")
    def __init__(s):
        super().__init__()
        s.c = nn.ModuleList([nn.Conv2d(32, co, 3, 1, 1) for co in (1, 4, 8, 16, 24, 32, 48)])
    def forward(s, x):
        return torch.cat([c(x) for c in s.c], 1)
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(OUT, exist_ok=True)
for n, m, sz in (("yolotiny", YoloTiny(), (416, 416)), ("unet", UNet(), (128, 160)),
                 ("unet-ct", UNetCT(), (192, 192)), ("autoenc", AutoEnc(), (256, 256)),
                 ("narrow", Narrow(), (128, 128))):
    cin = 32 if n == "narrow" else 3
    torch.onnx.export(m.eval(), torch.randn(1, cin, *sz), os.path.join(OUT, n + ".onnx"), opset_version=13)
    print("wrote", os.path.join(OUT, n + ".onnx"))
