#!/bin/sh
# bench/trace/run.sh -- the overhead of dse exec --trace (issue 16's goal:
# at most 1% of latency).  The same mapping runs with and without --trace in
# alternating rounds (the cores' speed drifts: compare within a round); the
# figure is the median over the rounds of the per-round ratio of warm median
# latencies (--bench 4,20).
#   bench/trace/run.sh [BUILD] [ROUNDS] [NETWORK]   (defaults build 7 alexnet-bvlc)
set -eu
B=${1:-build}
ROUNDS=${2:-7}
NET=${3:-alexnet-bvlc}
DSE=$(cd "$B" && pwd)/dse
T=$(mktemp -d /tmp/dse-bench-trace-XXXXXX)
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$T"
# A hybrid mapping of the network on local-2 from a short campaign (its
# best-latency point: both ranks compute and exchange).
"$DSE" run --network "$NET" --platform local-2 --pop 16 --gens 5 --db b.db --quiet >/dev/null
"$DSE" export --campaign 1 --point best-latency -o m --db b.db >/dev/null
lat() { "$DSE" mpirun -np 2 "$DSE" exec --network "$NET" --platform local-2 --mapping m/dse-mapping.json \
          --bench 4,20 --json "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["latency_ms"]["median"])'; }
echo "round  plain_ms  traced_ms  ratio"
: > ratios
r=1
while [ "$r" -le "$ROUNDS" ]; do
    a=$(lat)
    b=$(lat --trace t.json)
    python3 -c "print('%5d  %8.3f  %9.3f  %.4f' % ($r, $a, $b, $b / $a))"
    python3 -c "print($b / $a)" >> ratios
    r=$((r + 1))
done
python3 - ratios <<'PY'
import statistics, sys
v = [float(x) for x in open(sys.argv[1])]
print("median traced/plain latency over %d rounds: %.4f (overhead %+.2f%%)" % (len(v), statistics.median(v), 100 * (statistics.median(v) - 1)))
PY
