#!/usr/bin/python3
"""split-bias.py RUN... -- per network of a run-fidelity output folder, the mean
relative error of the predicted latency ratio (to the single-device run
beside it) over the naive and hybrid mappings, and over the vertical ones."""
import csv, sys, statistics
for run in sys.argv[1:]:
    out=[]
    for net in ("resnestish","skish","resnet50","alexnet-bvlc"):
        try: rows=list(csv.DictReader(open("%s/%s.csv"%(run,net))))
        except FileNotFoundError: continue
        sp=[float(r["pred_ratio"])/float(r["meas_ratio"])-1 for r in rows if ("naive" in r["source"] or "hybrid" in r["source"]) and float(r["meas_ratio"])>0]
        ot=[float(r["pred_ratio"])/float(r["meas_ratio"])-1 for r in rows if not ("naive" in r["source"] or "hybrid" in r["source"]) and "single" not in r["source"]]
        out.append("%s split %+.1f%% (n %d) vertical %+.1f%%"%(net, 100*statistics.mean(sp), len(sp), 100*statistics.mean(ot) if ot else 0))
    print(run, "; ".join(out))
