#!/usr/bin/env python3
# trace-steps.py -- per-step fidelity (issue 16's goal: median absolute error
# <= 10% for compute steps above 0.5 ms): for each mapping, `dse exec --trace`
# (2 ranks on local-2, --bench 4,20: each step's median over the timed runs)
# against `dse eval --trace` of the same mapping, steps matched by (device,
# step index); prints per mapping and overall figures.
#
# usage: trace-steps.py DSE OUT NETWORK INDEX...
#   OUT: a bench_fidelity output folder (NETWORK-mapping-INDEX.json and
#   local-2-NETWORK.json, as run-fidelity SELF=1 leaves them).
import json, subprocess, sys, os, statistics, tempfile
D = sys.argv[1]; OUT = sys.argv[2]; net = sys.argv[3]; idx = sys.argv[4:]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
def steps(f):
    t = json.load(open(f)); d = {}
    for e in t['traceEvents']:
        if e.get('ph') == 'X':
            a = e['args']; d[(e['tid'], a['step'])] = (e['name'], e['dur'], a.get('median_us'))
    return d, t['otherData']
allerr = []
tmp = tempfile.mkdtemp(prefix='dse-trace-steps-')
MT, PT = os.path.join(tmp, 'measured.json'), os.path.join(tmp, 'predicted.json')
for i in idx:
    m = f'{OUT}/{net}-mapping-{i}.json'; C = f'{OUT}/local-2-{net}.json'
    subprocess.run([D, 'mpirun', '-np', '2', D, 'exec', '--network', net, '--platform', 'local-2',
                    '--mapping', m, '--bench', '4,20', '--trace', MT], env=env,
                   capture_output=True, check=True)
    subprocess.run([D, 'eval', '--network', net, '--platform', 'local-2', '--coeffs', C, '--mapping', m,
                    '--trace', PT], capture_output=True, check=True)
    M, mo = steps(MT); P, po = steps(PT)
    if sorted(M) != sorted(P):
        sys.exit(f'{net} mapping {i}: the traces do not name the same steps')
    errs = []
    for k, (name, pd, _) in P.items():
        if pd > 500 and not name.startswith(('send', 'recv', 'concat')):
            md = M[k][2] if M[k][2] is not None else M[k][1]
            errs.append(abs(pd - md) / md)
    allerr += errs
    print(f'{net} mapping {i}: {len(P)} steps; {len(errs)} compute steps > 0.5 ms, median |error| '
          f'{100*statistics.median(errs):.1f}%, worst {100*max(errs):.1f}%; latency predicted '
          f'{po["latency_us"]/1e3:.2f} ms, measured {mo["latency_us"]/1e3:.2f} ms')
print(f'{net}: {len(allerr)} compute steps > 0.5 ms over {len(idx)} mappings: median |error| '
      f'{100*statistics.median(allerr):.1f}%, 90th percentile {100*sorted(allerr)[int(0.9*len(allerr))]:.1f}%')
__import__('shutil').rmtree(tmp)
