#!/usr/bin/python3
"""torch_peer.py DSE_BIN [NAME...] -- torchvision's alexnet and resnet50 (weights=None,
fixed seed) exported with torch.onnx.export and run in PyTorch on a fixed
input; the ONNX files are imported into dse (real weights) and run with
`dse exec` on 1 rank and on 2 ranks with a hybrid mapping (every Conv and FC
split in two across the ranks, the other layers in blocks alternating between
them).  resnet18 also runs on 2 ranks with mixed cuts (issue 21): every layer
cut at random by output rows or columns into bands of unequal size (with the
halos they need), by output channels, or whole, three mappings; and so does
a 1-D CNN over raw audio written with (1, k) kernels (maps one row high:
columns are its only bands) on a 1 x 1 x 4000 input, and a small detector
in the style of YOLO's tiny models (LeakyReLU, PReLU, ELU, Tanh, Hardtanh
as Clip, nearest upsampling by 2 and by (2, 3) as Resize, concatenated
with an earlier map, an asymmetric F.pad, a ZeroPad2d before a MaxPool,
bilinear resizing, three outputs) on a 3 x 64 x 96 input; torchvision's
LR-ASPP segmenter (bilinear heads, cut into bands too) on 2 ranks with mixed cuts; a
small U-Net of transposed convolutions (tinyunet) and a style-transfer
generator (stylenet: reflection and replication padding, InstanceNorm, a
transposed convolution) and ESPCN (PixelShuffle) and a ResNet block with
GroupNorm (gnnet: groups of 4, 2 and all channels, affine weights; torch.onnx
writes it as Reshape, InstanceNormalization, Reshape, Mul, Add; its channel
cuts start inside groups) and a CBAM block (cbam: channel attention from
average and max pooling, spatial attention from the mean and the max over
channels, a 1 x H x W gate) and YOLOv5's Focus stem with a U-Net level
downsampled by a pixel unshuffle, whose skip connection is centre-cropped
(cropnet: Slices of rows and columns with steps, PixelUnshuffle), and a
feature pyramid's top-down path at an odd input size (fpnnet: nearest
resizing to sizes no multiple of the map's), a YOLOv5-style backbone and
neck (yololike: Focus, C3, SPPF, SiLU, upsampling) and EfficientDet's
weighted fusions (bifpn: their weights' arithmetic on initializers
folded), a PoolFormer block (poolformer: pool(x) - x) and SSD's L2Norm
with a face-recognition-style normalised embedding (l2net: F.normalize
of a map and of a vector) and SKNet's and ResNeSt's split attention (splitnet:
torch.stack of branches, softmax across them, radix 1, 2 and 4, cardinality
4) on 2 ranks with mixed cuts.  Outputs must agree
within 1e-4 relative (+1e-5 of the output range)."""
import json, os, subprocess, sys, tempfile

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tvzoo import hybrid_mapping, mixed_mapping  # noqa: E402

DSE = sys.argv[1]
failures = 0


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def platform(path, n):
    devs = [{"name": "r%d" % i, "board": "localhost", "kind": "cpu", "freq_mhz": 2000, "cores": 1,
             "memory_mb": 8192, "idle_w": 1, "busy_w": 2} for i in range(n)]
    json.dump({"format": "dse-platform", "version": 1, "name": "local-%d" % n, "devices": devs,
               "links": {"same_board": {"latency_us": 2, "bandwidth_mbs": 4000}}}, open(path, "w"))


def compare(name, got, ref):
    global failures
    scale = float(np.abs(ref).max())
    err = np.abs(got - ref)
    bad = int((err > 1e-4 * np.abs(ref) + 1e-5 * scale).sum())
    rel = float((err / np.maximum(np.abs(ref), 0.1 * scale)).max())
    if bad:
        failures += 1
        print("FAIL %s: %d of %d outputs differ (max rel %.3g)" % (name, bad, ref.size, rel))
    else:
        print("ok: %s equals PyTorch (max relative error %.2g over %d outputs)" % (name, rel, ref.size))


class Audio1d(torch.nn.Module):
    """Conv1d as it is often exported: Conv2d with (1, k) kernels, strides
    and pads on a C x 1 x W map, BatchNorm, ReLU, a max pool, then global
    average pooling and a classifier."""
    def __init__(self):
        super().__init__()
        nn, layers, c = torch.nn, [], 1
        for co, k, st in ((16, 9, 4), (32, 9, 2), (32, 5, 1), (64, 5, 2), (64, 3, 1)):
            layers += [nn.Conv2d(c, co, (1, k), (1, st), (0, k // 2)), nn.BatchNorm2d(co), nn.ReLU()]
            c = co
        layers.insert(6, nn.MaxPool2d((1, 3), (1, 2), (0, 1)))
        self.f = nn.Sequential(*layers)
        self.fc = nn.Linear(c, 12)

    def forward(self, x):
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(self.f(x), 1), 1))


def randomise(model):
    """BatchNorm statistics other than 0 and 1 and PReLU slopes of both
    signs: as initialised they would hide errors in what they scale."""
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.PReLU):
                mod.weight.uniform_(-0.3, 0.6)
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.2, 0.2)
                mod.running_var.uniform_(0.5, 1.5)
    return model


class TinyDet(torch.nn.Module):
    """The activations and the upsampling of small detectors and
    segmenters: a backbone of strided convolutions, a top-down path that
    upsamples (nearest) and concatenates with the earlier map, and a head
    whose branches go through the other activations."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.b1 = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.LeakyReLU(0.1))
        self.b2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, 1, 1), nn.PReLU(32))
        # YOLOv3-tiny's ZeroPad2d before a stride-1 MaxPool: a Pad layer
        # (MaxPool pads with -inf; zeros would be a different maximum)
        self.b3 = nn.Sequential(nn.Conv2d(32, 32, 3, 2, 1), nn.ELU(0.7), nn.ZeroPad2d((0, 1, 0, 1)),
                                nn.MaxPool2d(2, 1))
        self.lat = nn.Conv2d(32, 16, 1)
        self.up2 = nn.Upsample(scale_factor=2, mode="nearest")
        self.head = nn.Sequential(nn.Conv2d(48, 24, 3, 1, 0), nn.Hardtanh(-1.0, 1.5))
        self.side = nn.Sequential(nn.Conv2d(24, 8, 1, 1), nn.Tanh(), nn.PReLU())
        self.fc = nn.Linear(8 * 2 * 3, 10)

    def forward(self, x):
        f1 = self.b1(x)             # 16 x 64 x 96
        f2 = self.b2(f1)            # 32 x 32 x 48
        f3 = self.b3(f2)            # 32 x 16 x 24
        u = self.up2(self.lat(f3))  # 16 x 32 x 48
        # F.pad's pads reach ONNX as shape arithmetic (folded on import);
        # top 2, bottom 0: the pairs' order matters
        h = self.head(torch.nn.functional.pad(torch.cat([u, f2], 1), (1, 1, 2, 0)))
        s = torch.nn.functional.adaptive_avg_pool2d(self.side(h), (1, 1))  # 8 x 1 x 1
        s = torch.nn.functional.interpolate(s, scale_factor=(2, 3), mode="nearest")
        # a segmenter's bilinear resizing, both corner rules, up and down
        m = torch.nn.functional.interpolate(h, size=(45, 70), mode="bilinear", align_corners=False)
        m = torch.nn.functional.interpolate(m, size=(11, 13), mode="bilinear", align_corners=True)
        return self.fc(torch.flatten(s, 1)), s, m  # several outputs, as a detector's heads


class TinyUNet(torch.nn.Module):
    """Learned upsampling as decoders and U-Nets write it: ConvTranspose2d
    with a 2x2 stride-2 kernel (U-Net's up-convolution, skip concatenated),
    3x3 stride 2 with padding 1 and output_padding 1 (a decoder's), 4x4
    stride 2 padding 1 without bias (DCGAN's), and a grouped, dilated one
    with unequal strides and asymmetric output padding."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.e1 = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.e2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, 1, 1), nn.ReLU())
        self.e3 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(32, 48, 3, 1, 1), nn.ReLU())
        self.up1 = nn.ConvTranspose2d(48, 32, 2, 2)
        self.d1 = nn.Sequential(nn.Conv2d(64, 32, 3, 1, 1), nn.ReLU())
        self.up2 = nn.ConvTranspose2d(32, 16, 3, 2, padding=1, output_padding=1)
        self.d2 = nn.Sequential(nn.Conv2d(32, 16, 3, 1, 1), nn.ReLU())
        self.up3 = nn.ConvTranspose2d(16, 8, 4, 2, padding=1, bias=False)
        self.g = nn.ConvTranspose2d(8, 12, 3, (1, 2), padding=(2, 1), output_padding=(0, 1),
                                    groups=4, dilation=2)
        self.head = nn.Conv2d(12, 5, 1)

    def forward(self, x):
        f1 = self.e1(x)
        f2 = self.e2(f1)
        f3 = self.e3(f2)
        u = self.d1(torch.cat([self.up1(f3), f2], 1))
        u = self.d2(torch.cat([self.up2(u), f1], 1))
        return self.head(self.g(torch.relu(self.up3(u))))


class StyleNet(torch.nn.Module):
    """A fast style-transfer / CycleGAN generator in miniature: reflection
    padding, InstanceNorm (with and without affine weights), a residual
    block, a transposed-convolution upsampling, replication padding, Tanh."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.head = nn.Sequential(nn.ReflectionPad2d(4), nn.Conv2d(3, 8, 9), nn.InstanceNorm2d(8, affine=True),
                                  nn.ReLU(), nn.Conv2d(8, 16, 3, 2, 1), nn.InstanceNorm2d(16), nn.ReLU())
        self.res = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(16, 16, 3), nn.InstanceNorm2d(16, affine=True),
                                 nn.ReLU(), nn.ReflectionPad2d(1), nn.Conv2d(16, 16, 3),
                                 nn.InstanceNorm2d(16, affine=True))
        self.tail = nn.Sequential(nn.ConvTranspose2d(16, 8, 3, 2, 1, output_padding=1),
                                  nn.InstanceNorm2d(8, affine=True), nn.ReLU(), nn.ReplicationPad2d((1, 2, 0, 3)),
                                  nn.Conv2d(8, 3, 3), nn.Tanh())

    def forward(self, x):
        h = self.head(x)
        return self.tail(h + self.res(h))


class ESPCN(torch.nn.Module):
    """Shi et al.'s sub-pixel super-resolution network (x3): convolutions
    then PixelShuffle, which torch.onnx writes as DepthToSpace (CRD); its
    first activation is YOLOv4's Mish (written as x * Tanh(Softplus(x)),
    imported as one Mish layer)."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.f = nn.Sequential(nn.Conv2d(3, 16, 5, 1, 2), nn.Mish(), nn.Conv2d(16, 8, 3, 1, 1), nn.Tanh(),
                               nn.Conv2d(8, 3 * 9, 3, 1, 1), nn.PixelShuffle(3))

    def forward(self, x):
        return self.f(x)


class GNNet(torch.nn.Module):
    """A ResNet block with GroupNorm (as ResNet-GN, BiT and detection heads
    use it), then a strided convolution, GroupNorm of one group, pooling."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.GroupNorm(4, 16), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1), nn.GroupNorm(8, 16), nn.ReLU(),
                                   nn.Conv2d(16, 16, 3, 1, 1), nn.GroupNorm(8, 16))
        self.down = nn.Sequential(nn.Conv2d(16, 24, 3, 2, 1), nn.GroupNorm(1, 24), nn.SiLU())
        self.head = nn.Linear(24, 10)

    def forward(self, x):
        h = self.stem(x)
        h = torch.relu(h + self.block(h))
        return self.head(self.down(h).mean((2, 3)))


class CBAMNet(torch.nn.Module):
    """Woo et al.'s convolutional block attention module after a residual
    convolution: channel attention (shared MLP over the average- and the
    max-pooled map), spatial attention (7x7 convolution over the mean and
    the max across channels), then a classifier head."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.conv = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.mlp = nn.Sequential(nn.Conv2d(16, 4, 1), nn.ReLU(), nn.Conv2d(4, 16, 1))
        self.spatial = nn.Conv2d(2, 1, 7, padding=3)
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        x = self.conv(x)
        x = x * torch.sigmoid(self.mlp(torch.nn.functional.adaptive_avg_pool2d(x, 1)) +
                              self.mlp(torch.nn.functional.adaptive_max_pool2d(x, 1)))
        # the original code's ChannelPool: without keepdim, unsqueezed (the
        # keepdim form is in tests/onnx/test_onnx_patterns.py)
        s = torch.cat([torch.max(x, 1)[0].unsqueeze(1), torch.mean(x, 1).unsqueeze(1)], 1)
        x = x * torch.sigmoid(self.spatial(s))
        return self.head(x.amax((2, 3)))


class CropNet(torch.nn.Module):
    """YOLOv5's Focus stem (every other row and column, four shifts,
    concatenated), then a U-Net level of unpadded convolutions, downsampled
    by a pixel unshuffle (space to depth), whose skip connection is
    centre-cropped to the upsampled map (Ronneberger et al.'s crop and
    copy): Slices of rows and columns with steps and offsets."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.enc = nn.Sequential(nn.Conv2d(12, 16, 3), nn.ReLU(), nn.Conv2d(16, 16, 3), nn.ReLU())
        self.low = nn.Sequential(nn.PixelUnshuffle(2), nn.Conv2d(64, 32, 3), nn.ReLU())
        self.up = nn.ConvTranspose2d(32, 16, 2, 2)
        self.out = nn.Conv2d(32, 8, 3, padding=1)

    def forward(self, x):
        x = torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)
        skip = self.enc(x)
        u = self.up(self.low(skip))
        dh, dw = (skip.shape[2] - u.shape[2]) // 2, (skip.shape[3] - u.shape[3]) // 2
        skip = skip[:, :, dh:dh + u.shape[2], dw:dw + u.shape[3]]
        return self.out(torch.cat([skip, u], 1))


class FPNNet(torch.nn.Module):
    """A feature pyramid's top-down path at an odd input size (51 x 77):
    each coarser map resized by F.interpolate(mode="nearest") to the size
    of the finer lateral one (7 -> 13 rows, 20 -> 39 columns: no integer
    factor), added, smoothed by a 3x3 convolution, then resized down to
    22 x 33 (26 -> 22 rows and 39 -> 33 columns: sizes where PyTorch's
    float32 rule and the exact floor(o H / h) differ)."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.c1 = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU())
        self.c2 = nn.Sequential(nn.Conv2d(16, 32, 3, 2, 1), nn.ReLU())
        self.c3 = nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU())
        self.l1, self.l2, self.l3 = nn.Conv2d(16, 24, 1), nn.Conv2d(32, 24, 1), nn.Conv2d(64, 24, 1)
        self.smooth = nn.Conv2d(24, 8, 3, padding=1)

    def forward(self, x):
        f1 = self.c1(x)
        f2 = self.c2(f1)
        f3 = self.c3(f2)
        p3 = self.l3(f3)
        p2 = self.l2(f2) + torch.nn.functional.interpolate(p3, size=f2.shape[-2:], mode="nearest")
        p1 = self.l1(f1) + torch.nn.functional.interpolate(p2, size=f1.shape[-2:], mode="nearest")
        return torch.nn.functional.interpolate(self.smooth(p1), size=(22, 33), mode="nearest")


def cbs(c1, c2, k=1, s=1):
    """YOLOv5's Conv: convolution, BatchNorm, SiLU."""
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(c1, c2, k, s, k // 2, bias=False), nn.BatchNorm2d(c2), nn.SiLU())


class C3(torch.nn.Module):
    """YOLOv5's CSP bottleneck: two 1x1 branches, one through bottlenecks, joined."""
    def __init__(self, c1, c2):
        super().__init__()
        c = c2 // 2
        self.a, self.b, self.out = cbs(c1, c), cbs(c1, c), cbs(2 * c, c2)
        self.m = torch.nn.Sequential(cbs(c, c), cbs(c, c, 3))

    def forward(self, x):
        return self.out(torch.cat([self.m(self.a(x)) + self.a(x), self.b(x)], 1))


class YoloLike(torch.nn.Module):
    """A YOLOv5-style backbone and neck without its box decoding: the Focus
    stem, strided CBS, C3 blocks, SPPF (three chained 5x5 max pools,
    concatenated), nearest upsampling by 2 and concatenation, a 1x1 head."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.focus = cbs(12, 16, 3)
        self.d1, self.c1 = cbs(16, 32, 3, 2), C3(32, 32)
        self.d2, self.c2 = cbs(32, 64, 3, 2), C3(64, 64)
        self.spp_a, self.spp_out, self.pool = cbs(64, 32), cbs(128, 64), nn.MaxPool2d(5, 1, 2)
        self.neck, self.head = C3(96, 32), nn.Conv2d(32, 27, 1)

    def forward(self, x):
        x = self.focus(torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1))
        a = self.c1(self.d1(x))
        s = self.spp_a(self.c2(self.d2(a)))
        p1 = self.pool(s)
        p2 = self.pool(p1)
        b = self.spp_out(torch.cat([s, p1, p2, self.pool(p2)], 1))
        up = torch.nn.functional.interpolate(b, scale_factor=2, mode="nearest")
        return self.head(self.neck(torch.cat([up, a], 1)))


class BiFPNNet(torch.nn.Module):
    """EfficientDet's fast normalised fusion of two levels (learned weights
    through ReLU, divided by their sum plus epsilon: arithmetic on an
    initializer in the export) and of three with softmax fusion, each
    followed by a depthwise-separable convolution with Swish."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.p3 = nn.Conv2d(3, 16, 3, 2, 1)
        self.p4 = nn.Conv2d(16, 16, 3, 2, 1)
        self.p5 = nn.Conv2d(16, 16, 3, 2, 1)
        self.w2 = nn.Parameter(torch.tensor([0.8, 1.3]))
        self.w3 = nn.Parameter(torch.tensor([0.5, -0.4, 1.1]))
        self.dw = nn.Conv2d(16, 16, 3, 1, 1, groups=16)
        self.pw = nn.Conv2d(16, 8, 1)

    def forward(self, x):
        p3 = self.p3(x)
        p4 = self.p4(p3)
        p5 = self.p5(p4)
        w = torch.relu(self.w2)
        w = w / (torch.sum(w, dim=0) + 1e-4)
        up = torch.nn.functional.interpolate
        p4 = w[0] * p4 + w[1] * up(p5, scale_factor=2, mode="nearest")
        s = torch.softmax(self.w3, dim=0)
        p3 = s[0] * p3 + s[1] * up(p4, scale_factor=2, mode="nearest") + s[2] * up(p5, scale_factor=4, mode="nearest")
        h = self.dw(p3)
        return self.pw(h * torch.sigmoid(h))


class PoolFormerNet(torch.nn.Module):
    """A PoolFormer (MetaFormer) block: GroupNorm of one group, the pooling
    token mixer pool(x) - x (a Sub of two activations), residual, an MLP of
    1x1 convolutions with GELU, residual."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Conv2d(3, 16, 3, 2, 1)
        self.n1, self.n2 = nn.GroupNorm(1, 16), nn.GroupNorm(1, 16)
        self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.mlp = nn.Sequential(nn.Conv2d(16, 32, 1), nn.GELU(), nn.Conv2d(32, 16, 1))
        self.head = nn.Conv2d(16, 6, 1)

    def forward(self, x):
        x = self.stem(x)
        y = self.n1(x)
        x = x + (self.pool(y) - y)
        x = x + self.mlp(self.n2(x))
        return self.head(x)


class L2Net(torch.nn.Module):
    """SSD's L2Norm on a VGG-style map (F.normalize over the channels, then
    a learned per-channel scale, 20 at the start as SSD's) feeding a head,
    and a face-recognition-style embedding (global pooling, Linear,
    F.normalize of the vector): two outputs."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.ReLU(), nn.Conv2d(16, 24, 3, 2, 1), nn.ReLU())
        self.scale = nn.Parameter(torch.full((1, 24, 1, 1), 20.0) + torch.rand(1, 24, 1, 1))
        self.head = nn.Conv2d(24, 6, 3, 1, 1)
        self.emb = nn.Linear(24, 10)

    def forward(self, x):
        f = self.body(x)
        h = self.head(self.scale * torch.nn.functional.normalize(f, dim=1))
        e = torch.nn.functional.normalize(self.emb(f.mean((2, 3))), dim=1)
        return h, e


class SKBlock(torch.nn.Module):
    """timm's SelectiveKernel: K grouped convolutions (dilations 1..K),
    stacked, summed, pooled, a reduction and an expansion to K C, a
    softmax across the branches, the branches weighted and summed."""
    def __init__(self, c, k, r):
        super().__init__()
        nn = torch.nn
        self.k = k
        self.paths = nn.ModuleList([nn.Sequential(nn.Conv2d(c, c, 3, 1, 1 + i, 1 + i, groups=4, bias=False),
                                                  nn.BatchNorm2d(c), nn.ReLU()) for i in range(k)])
        self.reduce = nn.Sequential(nn.Conv2d(c, r, 1, bias=False), nn.BatchNorm2d(r), nn.ReLU())
        self.select = nn.Conv2d(r, c * k, 1, bias=False)

    def forward(self, x):
        xs = torch.stack([p(x) for p in self.paths], dim=1)
        b, k, c, h, w = xs.shape
        a = self.select(self.reduce(xs.sum(1).mean((2, 3), keepdim=True)))
        a = torch.softmax(a.view(b, k, c, 1, 1), dim=1)
        return (xs * a).sum(dim=1)


class SplitAttn(torch.nn.Module):
    """timm's ResNeSt SplitAttn: one grouped Conv of radix x channels, the
    radix groups summed, pooled, two grouped 1x1 convolutions, the radix
    softmax (view, transpose, softmax, reshape), the groups weighted and
    summed; radix 1 is a sigmoid gate."""
    def __init__(self, c, radix, card, r):
        super().__init__()
        nn = torch.nn
        self.radix, self.card = radix, card
        self.conv = nn.Conv2d(c, c * radix, 3, 1, 1, groups=card * radix, bias=False)
        self.bn0 = nn.BatchNorm2d(c * radix)
        self.fc1 = nn.Conv2d(c, r, 1, groups=card)
        self.bn1 = nn.BatchNorm2d(r)
        self.fc2 = nn.Conv2d(r, c * radix, 1, groups=card)

    def forward(self, x):
        x = torch.relu(self.bn0(self.conv(x)))
        b, rc, h, w = x.shape
        if self.radix > 1:
            x = x.reshape((b, self.radix, rc // self.radix, h, w))
            gap = x.sum(dim=1)
        else:
            gap = x
        gap = torch.relu(self.bn1(self.fc1(gap.mean((2, 3), keepdim=True))))
        a = self.fc2(gap)
        if self.radix > 1:
            a = torch.softmax(a.view(b, self.card, self.radix, -1).transpose(1, 2), dim=1).reshape(b, -1)
        else:
            a = torch.sigmoid(a)
        a = a.view(b, -1, 1, 1)
        if self.radix > 1:
            return (x * a.reshape((b, self.radix, rc // self.radix, 1, 1))).sum(dim=1)
        return x * a


class SplitNet(torch.nn.Module):
    """SKNet's and ResNeSt's split attention in residual blocks: an SK block
    of 3 branches, ResNeSt blocks of radix 2 and cardinality 4 (on a
    downsampled map), radix 4 and cardinality 1, radix 1 (a sigmoid)."""
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.sk = SKBlock(16, 3, 8)
        self.down = nn.Sequential(nn.Conv2d(16, 32, 3, 2, 1), nn.ReLU())
        self.sa2 = SplitAttn(32, 2, 4, 16)
        self.sa4 = SplitAttn(32, 4, 1, 8)
        self.sa1 = SplitAttn(32, 1, 2, 8)

    def forward(self, x):
        x = self.stem(x)
        x = self.down(x + self.sk(x))
        x = x + self.sa2(x)
        x = x + self.sa4(x)
        return x + self.sa1(x)


RANDOMISED = {"splitnet": (SplitNet, (1, 3, 30, 38)), "l2net": (L2Net, (1, 3, 36, 44)),"poolformer": (PoolFormerNet, (1, 3, 40, 48)),"yololike": (YoloLike, (1, 3, 64, 96)), "bifpn": (BiFPNNet, (1, 3, 64, 80)),"fpnnet": (FPNNet, (1, 3, 51, 77)), "cropnet": (CropNet, (1, 3, 64, 80)),
              "cbam": (CBAMNet, (1, 3, 28, 36)), "tinyunet": (TinyUNet, (1, 3, 40, 56)),
              "tinydet": (TinyDet, (1, 3, 64, 96)), "audio1d": (Audio1d, (1, 1, 1, 4000))}


def main():
    torch.manual_seed(0)
    tmp = tempfile.mkdtemp(prefix="dse-torch-")
    platform(os.path.join(tmp, "p1.json"), 1)
    platform(os.path.join(tmp, "p2.json"), 2)
    names = sys.argv[2:] or ("alexnet", "resnet50", "resnet18", "audio1d", "tinydet", "lraspp",
                             "tinyunet", "stylenet", "espcn", "espcn9", "gnnet", "cbam", "cropnet", "fpnnet", "yololike", "bifpn", "poolformer", "l2net", "splitnet")
    for name in names:
        torch.manual_seed(1234)
        if name == "lraspp":
            seg = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None,
                                                                           weights_backbone=None).eval()

            class Out(torch.nn.Module):  # the "out" entry of the dict it returns
                def __init__(self, m):
                    super().__init__()
                    self.m = m

                def forward(self, x):
                    return self.m(x)["out"]
            model = randomise(Out(seg))
            x = torch.rand(1, 3, 224, 224) * 2 - 1
        elif name == "stylenet":
            model = StyleNet().eval()
            with torch.no_grad():  # affine weights other than 1 and 0
                for mod in model.modules():
                    if isinstance(mod, torch.nn.InstanceNorm2d) and mod.affine:
                        mod.weight.uniform_(0.5, 1.5)
                        mod.bias.uniform_(-0.3, 0.3)
            x = torch.rand(1, 3, 48, 64) * 2 - 1
        elif name == "gnnet":
            model = GNNet().eval()
            with torch.no_grad():  # affine weights other than 1 and 0
                for mod in model.modules():
                    if isinstance(mod, torch.nn.GroupNorm):
                        mod.weight.uniform_(0.5, 1.5)
                        mod.bias.uniform_(-0.3, 0.3)
            x = torch.rand(1, 3, 32, 40) * 2 - 1
        elif name in ("espcn", "espcn9"):  # espcn9: exported at opset 9, PixelShuffle as a
            model = ESPCN().eval()            # 6-D Reshape, Transpose, Reshape (the ONNX zoo's)
            x = torch.rand(1, 3, 24, 32) * 2 - 1
        elif name in RANDOMISED:  # the small networks above: random weights, their input
            cls, shape = RANDOMISED[name]
            model = randomise(cls().eval())
            x = torch.rand(*shape) * 2 - 1
        else:
            model = getattr(torchvision.models, name)(weights=None).eval()
            x = torch.rand(1, 3, 224, 224) * 2 - 1
        with torch.no_grad():
            y = model(x)
            if isinstance(y, tuple):  # dse joins the outputs, flattened, in order
                y = torch.cat([t.flatten() for t in y])
            y = y.numpy().astype(np.float32).ravel()
        onnx = os.path.join(tmp, name + ".onnx")
        torch.onnx.export(model, x, onnx, opset_version=9 if name == "espcn9" else 13,
                          input_names=["data"],
                          output_names=["out"])
        netj = os.path.join(tmp, name + ".json")
        run(DSE, "net", "import", onnx, "-o", netj, "--weights", os.path.join(tmp, name + ".bin"))
        x.numpy().astype(np.float32).tofile(os.path.join(tmp, "in.f32"))
        net = json.loads(run(DSE, "net", "show", netj, "--json"))
        out1 = os.path.join(tmp, name + "-1.f32")
        run(DSE, "mpirun", "-np", "1", DSE, "exec", "--network", netj, "--platform",
            os.path.join(tmp, "p1.json"), "--single", "0", "--input", os.path.join(tmp, "in.f32"),
            "--output", out1)
        compare("%s, 1 rank (%d layers)" % (name, len(net["layers"])), np.fromfile(out1, np.float32), y)
        mp = os.path.join(tmp, name + "-map.json")
        if name in ("resnet18", "audio1d", "tinydet", "lraspp", "tinyunet", "stylenet", "espcn", "espcn9",
                    "gnnet", "cbam", "cropnet", "fpnnet", "yololike", "bifpn", "poolformer", "l2net",
                    "splitnet"):
            for seed in {"resnet18": (1, 2, 3), "audio1d": (2, 5, 6), "tinydet": (1, 2, 3), "lraspp": (1, 2),
                         "tinyunet": (1, 2, 3), "stylenet": (2, 3, 4), "espcn": (1, 6, 10), "espcn9": (1, 6, 10),
                         "gnnet": (1, 2, 3), "cbam": (1, 2, 3), "cropnet": (2, 3, 4), "fpnnet": (1, 3, 4), "yololike": (1, 2, 3), "bifpn": (1, 3, 4), "poolformer": (1, 2, 3), "l2net": (1, 3, 4),
                         "splitnet": (1, 2, 3)}[name]:  # seeds that mix both
                nrows, nchan = mixed_mapping(net, mp, seed)
                if not nrows or not nchan:
                    global failures
                    failures += 1
                    print("FAIL %s seed %d: %d row or column cuts, %d channel cuts: not mixed" % (name, seed, nrows, nchan))
                out2 = os.path.join(tmp, "%s-mixed-%d.f32" % (name, seed))
                run(DSE, "mpirun", "-np", "2", DSE, "exec", "--network", netj, "--platform",
                    os.path.join(tmp, "p2.json"), "--mapping", mp, "--input",
                    os.path.join(tmp, "in.f32"), "--output", out2)
                compare("%s, 2 ranks, mixed cuts (seed %d: %d layers cut by rows or columns, %d by channels)"
                        % (name, seed, nrows, nchan), np.fromfile(out2, np.float32), y)
            continue
        nsplit = hybrid_mapping(net, mp)
        out2 = os.path.join(tmp, name + "-2.f32")
        run(DSE, "mpirun", "-np", "2", DSE, "exec", "--network", netj, "--platform",
            os.path.join(tmp, "p2.json"), "--mapping", mp, "--input", os.path.join(tmp, "in.f32"),
            "--output", out2)
        compare("%s, 2 ranks, hybrid mapping (%d layers split)" % (name, nsplit),
                np.fromfile(out2, np.float32), y)
    subprocess.run(["rm", "-rf", tmp])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
