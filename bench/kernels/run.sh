#!/bin/sh
# run.sh -- the "Kernels" benchmarks of bench/README.md in one go:
#   bench/kernels/run.sh BUILD_DIR [REPS [ROUNDS [GEMM]]]
# 1. conv layers of vgg16 and resnet50 against the single-core SGEMM roof;
# 2. single-thread latency of alexnet, vgg16, resnet50: kern_forward against
#    PyTorch (Debian's python3-torch, /usr/bin/python3), ROUNDS rounds
#    (default 3) of REPS timed runs each, ours and PyTorch alternating per
#    network, so that a drifting machine speed hits both alike; printed:
#    each round's medians and ratio (ours / PyTorch, < 1 = we are faster),
#    then the median of the rounds' ratios.
# GEMM (auto, own or blas; default auto) is bench_kernels' --gemm: the
# convolutions' products by the runtime's choice (its own AVX-512 SGEMM
# where the CPU has AVX-512 and OpenBLAS runs AVX2 kernels, else OpenBLAS),
# by its own product, or by OpenBLAS.
# Both are run in the environment as it is and, when it forces an OpenBLAS
# core through OPENBLAS_CORETYPE, again without it (OpenBLAS's own CPU
# detection); PyTorch gets the same environment each time (it calls the same
# OpenBLAS for its 1x1 convs and Linear layers).
set -e
build=${1:?usage: run.sh BUILD_DIR [REPS [ROUNDS]]}
reps=${2:-10}
rounds=${3:-3}
gemm=${4:-auto}
here=$(dirname "$0")
bench="$build/bench/kernels/bench_kernels"
nets="alexnet vgg16 resnet50"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "env": the environment as it is; "auto": OPENBLAS_CORETYPE removed, so
# OpenBLAS picks its kernels from the CPU (this sandbox exports
# OPENBLAS_CORETYPE=Haswell, which forbids AVX-512 kernels).
cores="env"
[ -n "$OPENBLAS_CORETYPE" ] && cores="env auto"

for core in $cores; do
    if [ "$core" = env ]; then env=""; else env="-u OPENBLAS_CORETYPE"; fi
    echo "=== OpenBLAS core: $core${OPENBLAS_CORETYPE:+ (the environment has OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE)}"
    env $env "$bench" convs vgg16 resnet50 --reps "$reps" --gemm "$gemm"
    : > "$tmp/ratios"
    r=1
    while [ "$r" -le "$rounds" ]; do
        for net in $nets; do
            o=$(env $env "$bench" forward "$net" --reps "$reps" --gemm "$gemm" | grep "^$net forward_ms")
            t=$(env $env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 /usr/bin/python3 \
                "$here/torch_latency.py" --reps "$reps" "$net" | grep "^$net torch_ms")
            echo "$o|$t" | awk -v net="$net" -v r="$r" -F'|' '{
                match($1, /forward_ms=[0-9.]+/); ow = substr($1, RSTART + 11, RLENGTH - 11);
                match($2, /torch_ms=[0-9.]+/); tw = substr($2, RSTART + 9, RLENGTH - 9);
                printf "round %d %-9s ours %8.1f ms  pytorch %8.1f ms  ratio %.3f\n", r, net, ow, tw, ow / tw }' |
                tee -a "$tmp/ratios"
        done
        r=$((r + 1))
    done
    echo "--- median over $rounds rounds of ours/pytorch (OpenBLAS core $core; < 1 = we are faster)"
    for net in $nets; do
        grep " $net " "$tmp/ratios" | awk '{ print $11 " " $5 " " $8 }' | sort -n |
            awk -v net="$net" '{ r[NR] = $1; o[NR] = $2; t[NR] = $3 }
                END { m = int((NR + 1) / 2);
                      printf "%-9s ratio %.2f (rounds: %.2f .. %.2f; that round ours %.1f ms, pytorch %.1f ms)\n",
                             net, r[m], r[1], r[NR], o[m], t[m] }'
    done
done
