#!/bin/sh
# dse exec --bench 4,20 of the same mappings with main's runtime (s26: packs every sub-box) and s27's (in place), alternating, 5 rounds
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for r in 1 2 3 4 5; do
 for m in "/tmp/oz/efficientnet_b0.json /tmp/oz/fid/efficientnet_b0-mapping-2.json" "/tmp/oz/efficientnet_b0.json /tmp/oz/fid/efficientnet_b0-mapping-14.json" "/tmp/oz/regnet_x_400mf.json /tmp/oz/fid/regnet_x_400mf-mapping-2.json" "mobilenetv2 /tmp/oz/ab-s26-mobilenetv2/mobilenetv2-mapping-2.json"; do
  set -- $m
  for b in s26 s27; do
   B=/work/wt/$b/build/dse
   l=$($B mpirun -np 2 $B exec --network $1 --platform local-2 --mapping $2 --bench 4,20 --json 2>/dev/null | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print('%.3f' % d['latency_ms']['median'])")
   echo "$r $b $(basename $1 .json) $(basename $2 .json) $l"
  done
 done
done
