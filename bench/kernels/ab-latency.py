#!/usr/bin/python3
# ab-latency.py BEFORE AFTER NETS ROUNDS -- two dse builds side by side:
# each network (zoo name or network file) on one device of local-2, warm
# (`dse exec --single 0 --bench 4,20`), the builds alternating within each
# round so that the machine's drifting speed hits both alike; prints every
# round's medians and the median over rounds of after/before.
#   bench/kernels/ab-latency.py /tmp/dse-before build/dse vgg16,resnet50,/tmp/on/autoenc.json 3
# BEFORE and AFTER may name a platform file to use instead of local-2
# (BUILD@PLATFORM): one build on two platforms that differ in their
# "kernels" section compares two algorithm rules.
#   bench/kernels/ab-latency.py build/dse@/tmp/nolimit.json build/dse vgg16 5
import json, os, statistics, subprocess, sys

A, B, nets, rounds = sys.argv[1], sys.argv[2], sys.argv[3].split(','), int(sys.argv[4])
A, PA = (A.split('@', 1) + ['local-2'])[:2]
B, PB = (B.split('@', 1) + ['local-2'])[:2]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
res = {}
for r in range(rounds):
    for n in nets:
        for tag, D, P in (('before', A, PA), ('after', B, PB)):
            p = subprocess.run([D, 'mpirun', '-np', '2', D, 'exec', '--network', n, '--platform',
                                P, '--single', '0', '--bench', '4,20', '--json'],
                               capture_output=True, text=True, env=env)
            if p.returncode:
                sys.exit("%s on %s: %s" % (D, n, p.stderr.strip()))
            res.setdefault((n, tag), []).append(json.loads(p.stdout)['latency_ms']['median'])
for n in nets:
    b, a = res[(n, 'before')], res[(n, 'after')]
    print("%-16s before %s  after %s  median ratio %.3f" % (
        os.path.basename(n)[:16], ",".join("%.2f" % x for x in b), ",".join("%.2f" % x for x in a),
        statistics.median([y / x for x, y in zip(b, a)])))
