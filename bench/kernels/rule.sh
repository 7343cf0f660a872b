#!/bin/sh
# rule.sh -- does the convolution rule (model/convalgo.c) still pick the
# fastest algorithms on a CPU without AVX-512, as the ARM boards are?
#   bench/kernels/rule.sh BUILD_DIR [ROUNDS [REPS [NETS]]]
# With DSE_AVX512=0 (no AVX-512 product: OpenBLAS's cblas_sgemm only) and
# OpenBLAS held to kernels without AVX-512 (OPENBLAS_CORETYPE Haswell: AVX2,
# 256-bit; Nehalem: SSE, 128-bit like NEON), one thread: the whole-network
# forward pass with the rule (--winograd 1) against no Winograd (0) and
# F(2x2) or F(4x4) forced wherever allowed (2, 4).  The modes alternate
# within each round so that a drifting machine hits all alike; the figure is
# process CPU time (a loaded machine disturbs it far less than wall time),
# median of REPS runs after 2 warm-ups; printed per round, then the median
# over rounds of each mode's time relative to the rule's (> 1: slower than
# the rule).
set -e
build=${1:?usage: rule.sh BUILD_DIR [ROUNDS [REPS [NETS]]]}
rounds=${2:-3}
reps=${3:-5}
nets=${4:-resnet50 vgg16}
bench="$build/bench/kernels/bench_kernels"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for r in $(seq "$rounds"); do
    for core in Haswell Nehalem; do
        for net in $nets; do
            for m in 1 0 2 4; do
                DSE_AVX512=0 OPENBLAS_CORETYPE=$core "$bench" forward "$net" --reps "$reps" \
                    --winograd "$m" --gemm blas | grep "^$net forward_ms" |
                    sed -n "s/.* cpu_ms=\([0-9.]*\).*/$r $core $net $m \1/p" | tee -a "$tmp"
            done
        done
    done
done
echo "--- median over $rounds rounds of time(mode) / time(rule), CPU time, one thread, DSE_AVX512=0"
awk '{ t[$1 " " $2 " " $3 " " $4] = $5; k[$2 " " $3] = 1; R[$1] = 1 }
    END {
        for (c in k) {
            split(c, cn, " ");
            line = sprintf("%-8s %-9s", cn[1], cn[2]);
            for (mi = 0; mi < 3; mi++) {
                m = mi == 0 ? 0 : mi == 1 ? 2 : 4; n = 0;
                for (r in R) v[++n] = t[r " " c " " m] / t[r " " c " 1"];
                for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
                line = line sprintf("  winograd %d: %.3f", m, v[int((n + 1) / 2)]);
            }
            n = 0; for (r in R) w[++n] = t[r " " c " 1"];
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (w[j] < w[i]) { x = w[i]; w[i] = w[j]; w[j] = x }
            print line sprintf("  (rule: %.1f ms)", w[int((n + 1) / 2)]);
        }
    }' "$tmp" | sort
