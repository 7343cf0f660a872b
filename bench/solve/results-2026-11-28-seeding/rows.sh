#!/bin/sh
# the 9 rows where seeded final hv was below plain (bench/README, 2026-11-27), 8 seeds each
cd "$(dirname "$0")/../../.."
J=examples/coeffs/jetson-nx-thesis.json
G=${GOOGLENET:-bench-solve-out/googlenet.json}
L=bench/fidelity/results/local-2.json
mkdir -p ${OUT:-/tmp/seed-rows}
run() { POPS=$1 SEEDS=1,2,3,4,5,6,7,8 LONG=1 build/bench/solve/bench_seeding $2 $3 $4 ${OUT:-/tmp/seed-rows}/$(basename $2 .json)-$3-$1 $(basename $2 .json); }
run 1000 resnet50 jetson-nx-8-cpu $J
run 100 densenet121 jetson-nx-8-cpu $J
run 1000 densenet121 jetson-nx-8-cpu $J
run 1000 $G jetson-nx-8-cpu $J
run 1000 mobilenetv2 jetson-nx-8-cpu $J
run 100 alexnet-bvlc jetson-nx-8-cpugpu $J
run 1000 $G jetson-nx-8-cpugpu $J
run 1000 mobilenetv2 jetson-nx-8-cpugpu $J
run 1000 resnet50 local-2 $L
