#!/bin/sh
# run.sh -- the "Kernels" benchmarks of bench/README.md in one go:
#   bench/kernels/run.sh BUILD_DIR [REPS]
# 1. conv layers of vgg16 and resnet50 against the single-core SGEMM roof;
# 2. single-thread latency of alexnet, vgg16, resnet50: kern_forward against
#    PyTorch (Debian's python3-torch, /usr/bin/python3), run alternately so
#    that a varying machine load hits both alike; ratio = ours / PyTorch on
#    the median wall time and on the median CPU time.
# Both are run in the environment as it is and, when it forces an OpenBLAS
# core through OPENBLAS_CORETYPE, again without it (OpenBLAS's own CPU
# detection); PyTorch gets the same environment each time (it calls the same
# OpenBLAS for its 1x1 convs and Linear layers).
set -e
build=${1:?usage: run.sh BUILD_DIR [REPS]}
reps=${2:-10}
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
    env $env "$bench" convs vgg16 resnet50 --reps "$reps"
    : > "$tmp/ours"; : > "$tmp/torch"
    for net in $nets; do
        env $env "$bench" forward "$net" --reps "$reps" | tee -a "$tmp/ours" | grep -v "^openblas"
        env $env OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 /usr/bin/python3 "$here/torch_latency.py" --reps "$reps" "$net" | tee -a "$tmp/torch"
    done
    echo "--- ratio ours/pytorch (OpenBLAS core $core; < 1 = we are faster)"
    for net in $nets; do
        o=$(grep "^$net forward_ms" "$tmp/ours")
        t=$(grep "^$net torch_ms" "$tmp/torch")
        echo "$o|$t" | awk -v net="$net" -F'|' '{
            match($1, /forward_ms=[0-9.]+/); ow = substr($1, RSTART + 11, RLENGTH - 11);
            match($1, /cpu_ms=[0-9.]+/); oc = substr($1, RSTART + 7, RLENGTH - 7);
            match($2, /torch_ms=[0-9.]+/); tw = substr($2, RSTART + 9, RLENGTH - 9);
            match($2, /cpu_ms=[0-9.]+/); tc = substr($2, RSTART + 7, RLENGTH - 7);
            printf "%-9s wall %8.1f / %8.1f ms = %.2f   cpu %8.1f / %8.1f ms = %.2f\n",
                   net, ow, tw, ow / tw, oc, tc, oc / tc }'
    done
done
