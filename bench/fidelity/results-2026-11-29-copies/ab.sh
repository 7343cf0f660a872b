#!/bin/sh
# before (s26 = main) and after (s27), alternating per network
cd "$(dirname "$0")/../../.."
for n in /tmp/oz/efficientnet_b0.json /tmp/oz/regnet_x_400mf.json mobilenetv2; do
  for b in $ORDER; do
    t=$(basename $n .json)
    echo "=== $b $t $(date +%H:%M:%S)"
    SELF=1 QUICK=1 PAIR=1 ROUNDS=1 PER_FRONT=4 NRANDOM=4 HANDOFF=3 NETS="$n" OUT=/tmp/oz/ab$R-$b-$t BUILD=/work/wt/$b/build PNG=/tmp/oz/ab-$b-$t.png bench/fidelity/run-fidelity > /tmp/oz/ab$R-$b-$t.log 2>&1
    grep -E "^\| $t|handoff probe|relative to" /tmp/oz/ab$R-$b-$t.log
  done
done
echo "=== done $(date +%H:%M:%S)"
