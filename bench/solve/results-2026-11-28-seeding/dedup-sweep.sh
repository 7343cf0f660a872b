#!/bin/sh
cd "$(dirname "$0")/../../.."
J=examples/coeffs/jetson-nx-thesis.json
L=bench/fidelity/results/local-2.json
G=${GOOGLENET:-bench-solve-out/googlenet.json}
mkdir -p ${OUT:-/tmp/seed-dedup}
for pc in jetson-nx-8-cpu:$J jetson-nx-8-cpugpu:$J local-2:$L; do
  p=${pc%%:*}; c=${pc#*:}
  for n in alexnet-bvlc vgg16 resnet50 densenet121 $G mobilenetv2; do
    b=$(basename $n .json)
    echo "## $b $p"
    POPS=100 SEEDS=1,2,3,4,5,6,7,8 LONG=1 EXHAUST_MAX=1 build/bench/solve/bench_seeding $n $p $c ${OUT:-/tmp/seed-dedup}/$b-$p $b 2>&1
  done
done
