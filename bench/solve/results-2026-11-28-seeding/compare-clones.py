# compare-clones.py SWEEP_LOG -- the table of bench/README.md "Seeding: why seeded runs can end lower": every
# variant's median final hypervolume put on the larger of its two runs' references (ratio x own reference / larger)
import re,sys
rows={}
cur=None
for line in open(sys.argv[1]):
    m=re.match(r'## (\S+) (\S+) CLONES=(\d)',line)
    if m: cur=(m.group(1),m.group(2),int(m.group(3))); rows[cur]={}; continue
    if cur is None: continue
    m=re.match(r'\| \S+ \| \S+ \| (\d+) x \d+ \| ([\d.]+) \| ([\d.]+) \|',line)
    if m: rows[cur]['med']=(float(m.group(2)),float(m.group(3)))
    m=re.search(r'reference hv ([\d.]+)',line)
    if m: rows[cur]['ref']=float(m.group(1))
keys=sorted(set((a,b) for a,b,c in rows), key=lambda k:(k[1],k[0]))
print("| network | platform | plain | plain, clones last | seeded | seeded, clones last |")
print("|---|---|---|---|---|---|")
agg=[0,0,0,0]
for k in keys:
    r0=rows.get(k+(0,)); r1=rows.get(k+(1,))
    if not r0 or not r1 or 'med' not in r0 or 'med' not in r1: continue
    ref=max(r0['ref'],r1['ref'])
    a=[r0['med'][0]*r0['ref']/ref, r1['med'][0]*r1['ref']/ref, r0['med'][1]*r0['ref']/ref, r1['med'][1]*r1['ref']/ref]
    print("| %s | %s | %.4f | %.4f | %.4f | %.4f |"%(k[0],k[1],*a))
    agg[0]+= a[1]>a[0]; agg[1]+= a[3]>a[2]; agg[2]+=a[3]>a[0]; agg[3]+=1
print("clones better: plain %d/%d, seeded %d/%d; seeded+clones better than plain (no clones) %d/%d"%(agg[0],agg[3],agg[1],agg[3],agg[2],agg[3]))
