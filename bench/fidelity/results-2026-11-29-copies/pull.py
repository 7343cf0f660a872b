import json, sys, statistics
def load(f):
    t=json.load(open(f)); ev=[e for e in t['traceEvents'] if e.get('ph')=='X']
    return ev
for f in sys.argv[1:]:
    ev=load(f)
    send={e['args']['msg']:e for e in ev if e['args']['op']=='send'}
    pulls=[]; tot=0; waits=0
    for e in ev:
        a=e['args']
        if a['op']!='recv': continue
        s=send[a['msg']]
        start=max(e['ts'], s['ts']+s['dur'])
        pull=e['ts']+e['dur']-start
        pulls.append((pull, a['bytes'], a['layer'][-40:], e['tid']))
        tot+=pull; waits+=max(0, s['ts']+s['dur']-e['ts'])
    pulls.sort(reverse=True)
    print(f, "recvs %d, sum of pulls %.0f us, sum of waits for the send %.0f us"%(len(pulls), tot, waits))
    small=[p[0] for p in pulls if p[1]<=65536]; big=[(p[0],p[1]) for p in pulls if p[1]>65536]
    print("  small (<=64KB) n %d median pull %.1f us; big n %d median pull %.1f us, median rate %.1f GB/s"%(len(small), statistics.median(small) if small else 0, len(big), statistics.median([b[0] for b in big]) if big else 0, statistics.median([b[1]/b[0]/1e3 for b in big]) if big else 0))
    for p in pulls[:8]: print("   %.1f us %d bytes %s dev %d"%p)
