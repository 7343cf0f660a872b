#!/bin/sh
# clones-last vs not, plain and seeded, pop 100 x 100, 8 seeds, every network x platform of issue 20,
# in a tree with clones-tried.patch applied, built in build/.  CLONES_LIST=0 in a tree without the
# patch (CLONES is then ignored) is the sweep of the landed rule, dedup-sweep.log.
cd "$(dirname "$0")/../../.."
J=examples/coeffs/jetson-nx-thesis.json
L=bench/fidelity/results/local-2.json
G=${GOOGLENET:-bench-solve-out/googlenet.json}
mkdir -p ${OUT:-/tmp/seed-sweep}
for pc in jetson-nx-8-cpu:$J jetson-nx-8-cpugpu:$J local-2:$L; do
  p=${pc%%:*}; c=${pc#*:}
  for n in alexnet-bvlc vgg16 resnet50 densenet121 $G mobilenetv2; do
    b=$(basename $n .json)
    for C in ${CLONES_LIST:-0 1}; do
      echo "## $b $p CLONES=$C"
      CLONES=$C POPS=${POPS:-100} SEEDS=1,2,3,4,5,6,7,8 LONG=1 EXHAUST_MAX=1 build/bench/solve/bench_seeding $n $p $c ${OUT:-/tmp/seed-sweep}/$b-$p-$C $b 2>&1
    done
  done
done
