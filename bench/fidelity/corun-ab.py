#!/usr/bin/env python3
# corun-ab.py -- what a calibration's corun factors (docs/cost-model.md,
# "Devices that share a board's memory") do to the predictions of real
# mappings: each mapping predicted with the coefficients as they are and
# with their corun factors removed, beside its latency measured by `dse
# exec --bench 4,20`, round after round, each round starting with the
# single-device mapping of device 0 (the reference: its measured /
# predicted ratio is the machine's drift from the calibration, and each
# mapping's latency relative to the reference's is what the drift leaves
# intact).  Prints per mapping the median over the rounds, then the mean
# absolute errors of both predictions, absolute and relative.
#
# usage: corun-ab.py DSE PLATFORM NETWORK COEFFS ROUNDS MAPPING...
import json, os, statistics, subprocess, sys, tempfile

USAGE = 'usage: corun-ab.py DSE PLATFORM NETWORK COEFFS ROUNDS MAPPING...'
if len(sys.argv) < 7 or not sys.argv[5].isdigit() or int(sys.argv[5]) < 1:
    sys.exit(USAGE)
D, PL, NET, C, ROUNDS = sys.argv[1:6]
maps = sys.argv[6:]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode:
        sys.exit(f'corun-ab.py: {" ".join(cmd[:3])} ... failed ({r.returncode}): '
                 f'{(r.stderr or r.stdout).strip()[-800:]}')
    return r.stdout


tmpd = tempfile.TemporaryDirectory(prefix='dse-corun-ab-')
c = json.load(open(C))
n = 0
for kind in c.get('devices', {}).values():
    for entry in kind.get('layers', {}).values():
        n += entry.pop('corun', None) is not None
if not n:
    sys.exit(f'{C}: no corun factor to compare')
C0 = os.path.join(tmpd.name, 'no-corun.json')
json.dump(c, open(C0, 'w'))
NP = str(len(json.loads(run([D, 'platform', 'show', PL, '--json']))['devices']))


def predict(coeffs, m):
    a = [D, 'eval', '--network', NET, '--platform', PL, '--coeffs', coeffs, '--json']
    a += ['--single', '0'] if m is None else ['--mapping', m]
    return json.loads(run(a))['latency_ms']


def measure(m):
    a = [D, 'mpirun', '-np', NP, D, 'exec', '--network', NET, '--platform', PL, '--bench', '4,20',
         '--json']
    a += ['--single', '0'] if m is None else ['--mapping', m]
    return json.loads(run(a))['latency_ms']['median']


ref_p, ref_p0 = predict(C, None), predict(C0, None)
pred = {m: (predict(C, m), predict(C0, m)) for m in maps}
meas = {m: [] for m in maps}
rel = {m: [] for m in maps}
refs = []
for r in range(int(ROUNDS)):
    ref = measure(None)
    refs.append(ref)
    for m in maps:
        x = measure(m)
        meas[m].append(x)
        rel[m].append(x / ref)
print(f'{NET} on {PL}, {n} corun factors in {C}; reference (all on device 0): predicted '
      f'{ref_p:.2f} ms ({ref_p0:.2f} without), measured {statistics.median(refs):.2f} ms (median of '
      f'{ROUNDS})')
print(f'{"mapping":32s} {"measured":>9s} {"with":>8s} {"without":>8s} | {"rel meas":>8s} '
      f'{"with":>7s} {"without":>7s}')
ea, e0, ra, r0 = [], [], [], []
for m in maps:
    x, q = statistics.median(meas[m]), statistics.median(rel[m])
    pc, p0 = pred[m]
    ea.append(abs(pc - x) / x), e0.append(abs(p0 - x) / x)
    ra.append(abs(pc / ref_p - q) / q), r0.append(abs(p0 / ref_p0 - q) / q)
    print(f'{os.path.basename(os.path.dirname(m)) or m:32.32s} {x:9.2f} {pc:8.2f} {p0:8.2f} | '
          f'{q:8.3f} {pc / ref_p:7.3f} {p0 / ref_p0:7.3f}')
print(f'mean absolute error: latency with corun {100 * statistics.mean(ea):.1f}%, without '
      f'{100 * statistics.mean(e0):.1f}%; relative to the reference with {100 * statistics.mean(ra):.1f}%, '
      f'without {100 * statistics.mean(r0):.1f}%')
