#!/bin/sh
# bench/compare-builds.sh OLD_BUILD NEW_BUILD [ROUNDS] -- the engine, campaign
# evaluation and kernel figures of two builds (say, before and after a
# restructuring), measured side by side in alternating rounds: old, new,
# old, new, ... (the cores' speed drifts; compare within a round).  Each
# benchmark prints its own figures (thread CPU time where it can, so other
# load on the machine inflates them less); read each pair within a round.
set -eu
OLD=$1
NEW=$2
ROUNDS=${3:-3}
run() { # build label
    echo "--- $2: bench_engine (ZDT1 100x250, DTLZ2 1000x100, sort 20000)"
    "$1/bench/engine/bench_engine" 2>&1 | grep -E "zdt1|dtlz2|sort" | head -6
    echo "--- $2: bench_campaign_eval (1 s per case)"
    "$1/bench/campaign/bench_campaign_eval" 1 alexnet-bvlc resnet50 densenet121 2>&1 | tail -7
    echo "--- $2: bench_kernels forward alexnet resnet50 (1 thread, CPU time)"
    "$1/bench/kernels/bench_kernels" forward alexnet resnet50 --reps 5 2>&1 | grep -iE "forward|alexnet|resnet" | head -4
}
r=1
while [ "$r" -le "$ROUNDS" ]; do
    echo "=== round $r"
    run "$OLD" old
    run "$NEW" new
    r=$((r + 1))
done
