#!/usr/bin/env python3
# cross-coeffs.py -- two calibrations judged on the same measurements: for
# each network, every mapping of the given run-fidelity output folders
# (SELF=1: NETWORK-mapping-I.json, NETWORK.csv with the measured latency,
# local-2-NETWORK.json the run's coefficients) is predicted with each
# folder's coefficients (`dse eval`), and each set of predictions is
# scored against the same measured latencies: MAPE, Spearman, share within
# +-10%.  Used to compare two builds' calibrations (bench/README.md).
#
# usage: cross-coeffs.py DSE LABEL=OUT... [--nets N1,N2,...]  (or --nets=N1,N2)
import csv, json, os, statistics, subprocess, sys

def spearman(a, b):
    def ranks(x):
        o = sorted(range(len(x)), key=lambda i: x[i]); r = [0.0] * len(x); i = 0
        while i < len(o):
            j = i
            while j + 1 < len(o) and x[o[j + 1]] == x[o[i]]: j += 1
            for k in range(i, j + 1): r[o[k]] = (i + j) / 2
            i = j + 1
        return r
    ra, rb = ranks(a), ranks(b); ma, mb = statistics.mean(ra), statistics.mean(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return num / den if den else float('nan')

D = sys.argv[1]
nets = "alexnet-bvlc resnet50 densenet121 mobilenetv2".split()
runs, args = [], sys.argv[2:]
while args:
    a = args.pop(0)
    if a == '--nets' and args:
        nets = args.pop(0).split(',')
    elif a.startswith('--nets='):
        nets = a.split('=', 1)[1].split(',')
    elif '=' in a and not a.startswith('--'):
        runs.append(a.split('=', 1))
    else:
        sys.exit(f'cross-coeffs.py: what is {a!r}? usage: cross-coeffs.py DSE LABEL=OUT... [--nets N1,N2]')
print('| network | mappings (measured) | ' + ' | '.join(f'{l}: MAPE / Spearman / within 10%' for l, _ in runs) + ' |')
print('|---|---|' + '---|' * len(runs))
for net in nets:
    meas, maps = [], []
    for _, out in runs:
        for row in csv.DictReader(open(f'{out}/{net}.csv')):
            maps.append(f"{out}/{net}-mapping-{row['index']}.json"); meas.append(float(row['meas_latency_ms']))
    cells = []
    for label, out in runs:
        pred = []
        for m in maps:
            r = subprocess.run([D, 'eval', '--network', net, '--platform', 'local-2', '--coeffs',
                                f'{out}/local-2-{net}.json', '--mapping', m, '--json'],
                               capture_output=True, text=True, check=True)
            pred.append(json.loads(r.stdout)['latency_ms'])
        err = [p / y - 1 for p, y in zip(pred, meas)]
        cells.append(f'{100 * statistics.mean(abs(e) for e in err):.1f}% / {spearman(pred, meas):.3f} / '
                     f'{sum(abs(e) <= 0.1 for e in err)}/{len(err)}')
    print(f'| {net} | {len(meas)} | ' + ' | '.join(cells) + ' |')
