#!/bin/sh
# space_cli.sh DSE -- `dse space`: genome lengths and search-space sizes of
# thesis 4.2 (AlexNet, 5 devices: naive 56 genes = 5^56, hybrid p = 5 is
# 9^25, FC-only naive 36 genes), and exit code 2 on bad usage.
dse=$1
fail=0
check() { # description, expected substring, command...
    what=$1 want=$2
    shift 2
    out=$("$@" 2>&1)
    case $out in
    *"$want"*) ;;
    *) echo "FAIL: $what: expected \"$want\" in:"; echo "$out"; fail=1 ;;
    esac
}
code() { # description, expected exit code, command...
    what=$1 want=$2
    shift 2
    "$@" >/dev/null 2>/tmp/space_cli.$$
    rc=$?
    if [ "$rc" != "$want" ]; then
        echo "FAIL: $what: exit $rc, expected $want"; cat /tmp/space_cli.$$; fail=1
    elif [ "$want" = 2 ] && [ "$(wc -l </tmp/space_cli.$$)" != 1 ]; then
        echo "FAIL: $what: expected one line on stderr"; cat /tmp/space_cli.$$; fail=1
    fi
    rm -f /tmp/space_cli.$$
}
A="--network alexnet-bvlc --devices 5"
check "naive length" "genome length 56" $dse space $A --chromosome naive
check "naive space" "10^39.142 (5^56)" $dse space $A --chromosome naive
check "hybrid p=5" "genome length 25" $dse space $A --chromosome hybrid --splits 5
check "hybrid p=5 space" "10^23.856 (9^25)" $dse space $A --chromosome hybrid --splits 5
check "fc-only naive" "genome length 36" $dse space $A --chromosome naive --split-kinds fc
check "vertical" "(25^5)" $dse space $A --chromosome vertical
check "json length" '"length":	25' $dse space $A --chromosome hybrid --splits 5 --json
check "json log10" '"log10_space":	23.856' $dse space $A --chromosome hybrid --splits 5 --json
check "hybrid default p=2" "(9^10)" $dse space $A --chromosome hybrid
# spatial: hybrid's 10 split-point genes 0..8, then 8 cut genes (5 conv + 3 fc)
check "spatial bands" "8 cut genes 0..1 (channels,bands)" $dse space $A --chromosome spatial
check "spatial bands space" "(9^10 x 2^8)" $dse space $A --chromosome spatial
check "spatial all" "(9^10 x 3^8)" $dse space $A --chromosome spatial --cuts channels,rows,columns
check "spatial rows" "cut genes 0..1 (channels,rows)" $dse space $A --chromosome spatial --cuts channels,rows
# A network file instead of a zoo name: 5 layers, 2 splittable (conv, fc).
net=/tmp/space_cli_net.$$.json
cat >$net <<'JSON'
{ "format": "dse-network", "version": 1, "name": "five",
  "input": { "name": "data", "shape": [3, 8, 8] },
  "layers": [
    { "name": "conv", "kind": "Conv", "inputs": ["data"], "out_channels": 8, "kernel": 3, "pads": 1 },
    { "name": "relu", "kind": "ReLU", "inputs": ["conv"] },
    { "name": "gap", "kind": "GlobalAveragePool", "inputs": ["relu"] },
    { "name": "fc", "kind": "FC", "inputs": ["gap"], "out_features": 10 },
    { "name": "prob", "kind": "Softmax", "inputs": ["fc"] } ] }
JSON
F="--network $net --devices 3"
check "file naive" "genome length 9, genes 0..2" $dse space $F --chromosome naive       # 2*3 + 5 - 2
check "file hybrid" "10^2.863 (3^6)" $dse space $F --chromosome hybrid --splits 2     # 6 log10 3
check "file vertical" "10^2.334 (6^3)" $dse space $F --chromosome vertical          # 3 log10 6
check "file fc only" "genome length 7" $dse space $F --chromosome naive --split-kinds fc
rm -f $net
code "missing file" 2 $dse space --network /nonexistent/net.json --devices 3 --chromosome naive
code "ok" 0 $dse space $A --chromosome hybrid --splits 1
code "splits 0" 2 $dse space $A --chromosome hybrid --splits 0
code "splits > devices" 2 $dse space $A --chromosome hybrid --splits 6
code "unknown chromosome" 2 $dse space $A --chromosome advanced
code "cuts on hybrid" 2 $dse space $A --chromosome hybrid --cuts channels,rows
code "unknown cuts" 2 $dse space $A --chromosome spatial --cuts sideways
code "bad split kinds" 2 $dse space $A --chromosome naive --split-kinds relu
code "unknown network" 2 $dse space --network no-such-net --devices 5 --chromosome naive
code "no devices" 2 $dse space --network alexnet-bvlc --chromosome naive
code "zero devices" 2 $dse space --network alexnet-bvlc --devices 0 --chromosome naive
code "unknown option" 2 $dse space $A --chromosome naive --bogus 3
code "help" 0 $dse space --help
[ $fail = 0 ] && echo "space_cli: all checks passed"
exit $fail
