#!/usr/bin/env python3
# step-context.py -- where a split mapping's compute steps lose time: each
# compute step's measured time (`dse exec --trace`, one rank per device, each
# step's median over --bench 4,20) over its predicted time (`dse eval
# --trace`, the same mapping and coefficients), grouped by
#   * the layer's arithmetic intensity: "compute-bound" when it does at least
#     2 multiply-adds per byte of its input, output and weights (most
#     convolutions), "memory-bound" otherwise (element-wise kinds, depthwise
#     convolutions, pooling and, at batch 1, fully connected layers); and
#   * what the rank did just before it (sends skipped): a compute step, a
#     receive (the step then reads data another core wrote) or a concat.
# Mappings are measured round after round, in turn, so a single-device
# mapping given beside a split one is its control under the same drift.
# A step's predicted time is the model's alone-on-the-core time, which a
# single-device mapping should reproduce (ratios near 1).
#
# usage: step-context.py DSE PLATFORM NETWORK COEFFS ROUNDS MAPPING...
#   BESIDE='CMD' in the environment: run CMD in the background during every
#   measurement (for example `taskset -c 1 bench_kernels forward NET --reps
#   100000`) to see what another process on the other core does.
import json, os, statistics, subprocess, sys, tempfile, collections, signal, shutil

USAGE = 'usage: step-context.py DSE PLATFORM NETWORK COEFFS ROUNDS MAPPING...'
if len(sys.argv) < 7 or not sys.argv[5].isdigit() or int(sys.argv[5]) < 1:
    sys.exit(USAGE)
D, PL, NET, C, ROUNDS = sys.argv[1:6]
maps = sys.argv[6:]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')


def run(cmd, **kw):
    """Run cmd; on failure exit with its stderr (one line naming it)."""
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit(f'step-context.py: {" ".join(cmd[:3])} ... failed ({r.returncode}): '
                 f'{(r.stderr or r.stdout).strip()[-800:]}')
    return r.stdout


def network_layers():
    cmd = [D, 'net', 'show', NET, '--json'] if os.path.exists(NET) else [D, 'zoo', 'show', NET, '--json']
    j = json.loads(run(cmd))
    numel = lambda shape: __import__('math').prod(shape)
    size = {j['input']['name']: numel(j['input']['shape'])}
    out = {}
    for l in j['layers']:
        o = numel(l['shape'])
        size[l['name']] = o
        moved = 4.0 * (o + sum(size.get(i, 0) for i in l['inputs']) + l['params'])
        out[l['name']] = 'compute-bound' if l['macs'] >= 2 * moved else 'memory-bound'
    return out


def ranks():
    p = json.loads(run([D, 'platform', 'show', PL, '--json']))
    return len(p['devices'])


def steps(f):
    t = json.load(open(f))
    ev = [e for e in t['traceEvents'] if e.get('ph') == 'X']
    return sorted(ev, key=lambda e: (e['tid'], e['args']['step'])), t.get('otherData', {})

intensity = network_layers()
NP = str(ranks())
tmpd = tempfile.TemporaryDirectory(prefix='dse-step-context-')
tmp = tmpd.name
MT, PT = os.path.join(tmp, 'measured.json'), os.path.join(tmp, 'predicted.json')
res = collections.defaultdict(lambda: collections.defaultdict(list))  # mapping -> group -> ratios
sums = collections.defaultdict(lambda: collections.defaultdict(list))  # mapping -> op -> (meas, pred)
for r in range(int(ROUNDS)):
    for m in maps:
        run([D, 'eval', '--network', NET, '--platform', PL, '--coeffs', C, '--mapping', m,
             '--trace', PT])
        bg = subprocess.Popen(os.environ['BESIDE'], shell=True, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) \
            if os.environ.get('BESIDE') else None
        try:
            run([D, 'mpirun', '-np', NP, D, 'exec', '--network', NET, '--platform', PL,
                 '--mapping', m, '--bench', '4,20', '--trace', MT], env=env)
        finally:
            if bg:
                os.killpg(bg.pid, signal.SIGKILL)
                bg.wait()
        M, mo = steps(MT)
        PE, po = steps(PT)
        P = {(e['tid'], e['args']['step']): e for e in PE}
        if sorted(P) != sorted((e['tid'], e['args']['step']) for e in M):
            sys.exit(f'{m}: the traces do not name the same steps')
        tot = collections.Counter()
        for i, e in enumerate(M):
            md = e['args'].get('median_us', e['dur'])
            pd = P[(e['tid'], e['args']['step'])]['dur']
            tot[e['cat'] + ' m'] += md
            tot[e['cat'] + ' p'] += pd
            if e['cat'] != 'compute' or pd <= 0:
                continue
            j = i - 1
            while j >= 0 and M[j]['tid'] == e['tid'] and M[j]['cat'] == 'send':
                j -= 1
            prev = M[j]['cat'] if j >= 0 and M[j]['tid'] == e['tid'] else 'first'
            if prev == 'first':
                continue
            res[m][(intensity[e['args']['layer']], prev)].append(md / pd)
        for op in ('compute', 'recv', 'concat'):
            if tot[op + ' p'] > 0:
                sums[m][op].append(tot[op + ' m'] / tot[op + ' p'])
        sums[m]['latency'].append(mo['latency_us'] / po['latency_us'])

def med(v):
    return f'{statistics.median(v):.2f}' if v else '-'

for m in maps:
    print(f'{os.path.basename(m)}: measured / predicted, median over {ROUNDS} rounds: latency '
          f'{med(sums[m]["latency"])}, compute sum {med(sums[m]["compute"])}, receives '
          f'{med(sums[m]["recv"])}, concats {med(sums[m]["concat"])}')
    for k in sorted(res[m]):
        v = res[m][k]
        print(f'  {k[0]:13s} after {k[1]:7s}: median step ratio {statistics.median(v):5.2f} '
              f'({len(v)} steps x rounds)')
tmpd.cleanup()
