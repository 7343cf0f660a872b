import json, collections, sys
def load(f):
    t=json.load(open(f)); d={}
    for e in t['traceEvents']:
        if e.get('ph')=='X':
            a=e['args']; d[(e['tid'],a['step'])]=(e['name'], a.get('median_us') if a.get('median_us') is not None else e['dur'], a)
    return d,t['otherData']
M,mo=load(sys.argv[1]); P,po=load(sys.argv[2])
agg=collections.defaultdict(lambda:[0,0,0])
for k,(name,pd,a) in P.items():
    md=M[k][1]
    cat=name.split()[0] if name.split()[0] in ('send','recv','concat') else 'compute'
    g=agg[(k[0],cat)]; g[0]+=pd; g[1]+=md; g[2]+=1
print("latency measured %.2f predicted %.2f ms (%+.1f%%)"%(mo['latency_us']/1e3, po['latency_us']/1e3, 100*(po['latency_us']/mo['latency_us']-1)))
for k in sorted(agg): print("  dev %d %-8s pred %8.0f meas %8.0f us  n %d"%(k[0],k[1],*agg[k]))
