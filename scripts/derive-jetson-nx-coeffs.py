#!/usr/bin/env python3
"""derive-jetson-nx-coeffs.py -- derive examples/coeffs/jetson-nx-thesis.json
from the thesis' Table 2 (seed 003, single-device CPU runs on a Jetson
Xavier NX) plus stated assumptions; docs/cost-model.md explains the model.

usage: scripts/derive-jetson-nx-coeffs.py DSE_BINARY [OUT.json]

The per-network quantities the derivation needs (MACs per coefficient
class, layer count, weight bytes per kind, peak live activations) are read
through the model itself: the model is linear in each coefficient, so
`dse eval --single` with probe coefficient files (one class at 1 second per
unit, the others at ~0) returns exactly the sums the C code uses.  Nothing
about layers is re-derived here.

Unknowns solved from the three Table 2 rows (3 equations, 3 unknowns each:
an exact solution, zero degrees of freedom, so no fit quality exists; the
values are "derived", not validated):
  time:   s_win, s_conv (seconds per MAC of the ConvWinograd and Conv
          classes), o (per-step overhead), with FC and elementwise layers
          memory-bound at an assumed bandwidth
  memory: coefficients of Conv and FC weight bytes, bias; the other bytes
          (activations, communication buffers, other weights) at an
          assumed 0.5 (fp16 storage)
  energy: busy power per network = measured energy / measured latency
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile

# ---- measured: thesis Table 2, CPU execution (6 cores), un-partitioned ----
TABLE2 = {  # zoo name: (latency ms, peak memory MB, energy J)
    "alexnet-bvlc": (28.3, 152.746, 0.352),
    "vgg16": (122.46, 446.852, 1.959),
    "densenet121": (138.68, 95.969, 1.026),
}
PLATFORM = "jetson-nx-8-cpu"
DEVICE = "nx0-cpu"
FREQ_HZ, CORES = 1.4e9, 6  # the preset's CPU: Carmel, 6 cores at 1.4 GHz (15 W mode)

# ---- assumptions ----
BW = 10e9          # sustained CPU memory bandwidth, bytes/s (LPDDR4x peak 51.2 GB/s)
FC_BYTES = 2.0     # bytes streamed per FC MAC: fp16 weights (ncnn fp16 storage on ARMv8.2)
EW_BYTES = 4.0     # bytes per elementwise op: one fp16 read and one fp16 write
OTHER_MEM = 0.5    # memory coefficient of activations and buffers: fp16 storage

CLASSES = ["Conv", "ConvWinograd", "FC", "ReLU", "LRN", "MaxPool", "AveragePool",
           "GlobalAveragePool", "BatchNorm", "Add", "Concat", "Flatten", "Dropout", "Softmax"]
KINDS = [c for c in CLASSES if c != "ConvWinograd"]
ELEMENTWISE = [c for c in CLASSES if c not in ("Conv", "ConvWinograd", "FC")]
BIG = 1e30         # per_cycle making a class cost ~0 s in probes
UNIT = 1.0 / (FREQ_HZ * CORES)  # per_cycle making one unit of work cost 1 s


def val(v, source, note=None):
    d = {"value": v, "source": source}
    if note:
        d["note"] = note
    return d


def probe_file(path, rates, overhead_us=0.0, mem_coef=0.0, mem_weights=None):
    cpu = {
        "overhead_us": val(overhead_us, "assumption"),
        "memory": {"coefficient": val(mem_coef, "assumption"), "bias_mb": val(0.0, "assumption"),
                   "weights": {k: val(v, "assumption") for k, v in (mem_weights or {}).items()}},
        "kinds": {c: {"per_cycle": val(rates.get(c, BIG), "assumption")} for c in CLASSES},
    }
    doc = {"format": "dse-coefficients", "version": 1, "platforms": [PLATFORM],
           "board": "probe", "date": "-", "networks": list(TABLE2),
           "devices": {"cpu": cpu}}
    with open(path, "w") as f:
        json.dump(doc, f)


def evaluate(dse, network, coeffs):
    out = subprocess.run([dse, "eval", "--network", network, "--platform", PLATFORM,
                          "--single", DEVICE, "--coeffs", coeffs, "--json"],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    return r["latency_ms"] / 1e3, r["memory_mb"], r["energy_j"]


def solve(a, b):
    """Gaussian elimination with partial pivoting (n is 3)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    dse = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.join(root, "examples/coeffs/jetson-nx-thesis.json")
    stats = {}
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "probe.json")
        for net in TABLE2:
            s = {}
            for name, classes in (("win", ["ConvWinograd"]), ("conv", ["Conv"]), ("fc", ["FC"]),
                                  ("ew", ELEMENTWISE)):
                probe_file(p, {c: UNIT for c in classes})
                s[name] = evaluate(dse, net, p)[0]       # units of work
            probe_file(p, {}, overhead_us=1e6)
            s["steps"] = evaluate(dse, net, p)[0]        # compute steps
            probe_file(p, {}, mem_weights={"Conv": 1.0})
            s["wconv"] = evaluate(dse, net, p)[1]        # MB of Conv weights
            probe_file(p, {}, mem_weights={"FC": 1.0})
            s["wfc"] = evaluate(dse, net, p)[1]          # MB of FC weights
            probe_file(p, {}, mem_coef=1.0, mem_weights={"Conv": 0.0, "FC": 0.0})
            s["other"] = evaluate(dse, net, p)[1]        # MB of everything else
            stats[net] = s
    nets = list(TABLE2)
    s_fc, s_ew = FC_BYTES / BW, EW_BYTES / BW
    a = [[stats[k]["win"], stats[k]["conv"], round(stats[k]["steps"])] for k in nets]
    b = [TABLE2[k][0] / 1e3 - stats[k]["fc"] * s_fc - stats[k]["ew"] * s_ew for k in nets]
    s_win, s_conv, ovh = solve(a, b)
    a = [[stats[k]["wconv"], stats[k]["wfc"], 1.0] for k in nets]
    b = [TABLE2[k][1] - OTHER_MEM * stats[k]["other"] for k in nets]
    m_conv, m_fc, bias = solve(a, b)
    if min(s_win, s_conv, ovh, m_conv, m_fc, bias) <= 0:
        sys.exit("derivation gave a non-positive value: revise the assumptions")
    rate = FREQ_HZ * CORES

    for k in nets:
        s = stats[k]
        print(f"{k}: ConvWinograd {s['win']:.6g} MACs, Conv {s['conv']:.6g} MACs, FC {s['fc']:.6g} "
              f"MACs, elementwise {s['ew']:.6g} ops, {round(s['steps'])} steps; weights Conv "
              f"{s['wconv']:.4f} MB, FC {s['wfc']:.4f} MB; other (peak activations + other weights) "
              f"{s['other']:.4f} MB")
    derived_t = "derived: exact solution of the three Table 2 latencies (AlexNet, VGG-16, DenseNet-121) with FC and elementwise layers at their assumed memory-bound rates"
    derived_m = "derived: exact solution of the three Table 2 peak memories with activations, buffers and other weights at the assumed 0.5"
    tab = {"alexnet-bvlc": "AlexNet", "vgg16": "VGG-16", "densenet121": "DenseNet-121"}
    cpu = {
        "overhead_us": val(ovh * 1e6, "derived", derived_t + "; absorbs per-layer costs MACs do not explain (DenseNet's many small layers)"),
        "send_overhead_us": val(10.0, "assumption", "MPI_Isend issue cost"),
        "copy_bandwidth_mbs": val(BW / 2 / 1e6, "assumption", "memcpy reads and writes: half the assumed 10 GB/s sustained bandwidth"),
        "memory": {
            "coefficient": val(OTHER_MEM, "assumption", "activations and buffers stored as fp16 (ncnn fp16 storage on ARMv8.2)"),
            "bias_mb": val(bias, "derived", derived_m + "; libraries and runtime"),
            "weights": {
                "Conv": val(m_conv, "derived", derived_m + "; fp16 weights transformed for Winograd (64/9 x 0.5 = 3.6 for 3x3 kernels) and packed for im2col"),
                "FC": val(m_fc, "derived", derived_m + "; 0.5 = fp16 storage of float32 weights"),
            },
        },
        "kinds": {},
        "layers": {},
    }
    cpu["kinds"]["Conv"] = {"per_cycle": val(1 / (s_conv * rate), "derived", derived_t + " (im2col/sgemm convolutions)")}
    cpu["kinds"]["ConvWinograd"] = {"per_cycle": val(1 / (s_win * rate), "derived", derived_t + " (3x3 stride-1 convolutions, Winograd: counted MACs exceed the multiplications done)")}
    cpu["kinds"]["FC"] = {"per_cycle": val(1 / (s_fc * rate), "assumption", f"memory-bound: {FC_BYTES:g} bytes per MAC (fp16 weights) at {BW / 1e9:g} GB/s")}
    for c in ELEMENTWISE:
        cpu["kinds"][c] = {"per_cycle": val(1 / (s_ew * rate), "assumption", f"memory-bound: {EW_BYTES:g} bytes per op (fp16 in and out) at {BW / 1e9:g} GB/s")}
    for k in nets:
        t, _, e = TABLE2[k]
        cpu["layers"][k + "/*"] = {"busy_w": val(e / (t / 1e3), "derived", f"Table 2 {tab[k]}: {e} J / {t} ms; one average power per network (a per-kind split fitted to the three rows gave negative or sub-idle powers)")}

    # GPU: public specs of the Xavier NX's Volta GPU and assumptions only.
    gpu_rate = 384 * 1.1e9
    gbw = 25e9
    gpu = {
        "overhead_us": val(50.0, "assumption", "kernel dispatch and synchronisation per layer"),
        "send_overhead_us": val(20.0, "assumption", "staging a tensor for MPI"),
        "copy_bandwidth_mbs": val(gbw / 2 / 1e6, "assumption", "device copy: half of an assumed 25 GB/s sustained GPU bandwidth"),
        "memory": {
            "coefficient": val(0.5, "assumption", "fp16 storage"),
            "bias_mb": val(250.0, "assumption", "GPU context and runtime libraries"),
        },
        "kinds": {
            "Conv": {"per_cycle": val(0.5, "assumption", "Volta, 384 CUDA cores at 1.1 GHz: 2 fp16 MACs per core per cycle peak (1.69 TFLOPS FP16); 25% sustained")},
            "FC": {"per_cycle": val(gbw / 2 / gpu_rate, "assumption", "memory-bound: fp16 weights at an assumed 25 GB/s (about half of LPDDR4x's 51.2 GB/s)")},
        },
    }
    for c in ELEMENTWISE:
        gpu["kinds"][c] = {"per_cycle": val(gbw / 4 / gpu_rate, "assumption", "memory-bound: 4 bytes per op at an assumed 25 GB/s")}

    doc = {
        "format": "dse-coefficients",
        "version": 2,
        "platforms": ["jetson-nx-8-cpu", "jetson-nx-8-cpugpu"],
        "board": "NVIDIA Jetson Xavier NX (6-core Carmel CPU at 1.4 GHz, 384-core Volta GPU at 1.1 GHz, 8 GB LPDDR4x)",
        "date": datetime.date.today().isoformat(),
        "networks": nets,
        "description": "Derived by scripts/derive-jetson-nx-coeffs.py from thesis seed 003 Table 2 (single-device CPU runs: AlexNet 28.3 ms / 152.746 MB / 0.352 J, VGG-16 122.46 ms / 446.852 MB / 1.959 J, DenseNet-121 138.68 ms / 95.969 MB / 1.026 J) and the assumptions named in each note; GPU figures are public specs and assumptions only (no GPU measurement exists). Powers not given here come from the platform file. Not a calibration: run dse calibrate on real boards.",
        "arch": "aarch64",  # the thesis measured on the boards' Carmel CPUs
        "devices": {"cpu": cpu, "gpu": gpu},
    }
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, out)
    print(f"wrote {out}")
    print(f"  cpu: ConvWinograd {1 / (s_win * rate):.4g}, Conv {1 / (s_conv * rate):.4g}, FC "
          f"{1 / (s_fc * rate):.4g}, elementwise {1 / (s_ew * rate):.4g} per cycle per core; "
          f"overhead {ovh * 1e6:.4g} us; memory weights Conv {m_conv:.4g}, FC {m_fc:.4g}, bias {bias:.4g} MB")
    print(f"{'network':14} {'lat ms':>9} {'Table 2':>9} {'mem MB':>9} {'Table 2':>9} {'E J':>8} {'Table 2':>8}")
    for k in nets:
        lat, mem, e = evaluate(dse, k, out)
        print(f"{k:14} {lat * 1e3:9.3f} {TABLE2[k][0]:9.3f} {mem:9.3f} {TABLE2[k][1]:9.3f} "
              f"{e:8.4f} {TABLE2[k][2]:8.4f}")


if __name__ == "__main__":
    main()
