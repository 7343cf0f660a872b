#!/bin/sh
# boards.sh -- scripts/emulate-boards and the runtime across emulated boards.
# A 3-board platform (CPU shares 1.0/0.4/0.4, links 200/200/50 Mbit/s) is
# brought up; the test checks what exists (namespaces with their addresses
# and host names, tbf both ways at the configured rates, CFS quotas), that a
# transfer across the bridge is no faster than the shaped rate and a busy
# loop on a board gets no more than its share (upper bounds: load only makes
# them slower, so they cannot fail from a busy machine, but fail when the
# shaping or the quota is missing), runs a campaign's hybrid mappings across
# the boards with `dse mpirun ... dse exec` and compares their output with a
# single-device run on this machine, then `down` must leave nothing, also
# after an interrupted `up`.
# usage: boards.sh DSE_BIN SOURCE_DIR
set -eu
DSE=$1
SRC=$2
EMU=$SRC/scripts/emulate-boards
PY=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

skip() {
    if [ "${CI:-}" = true ]; then
        echo "FAIL: $* (CI machines allow network namespaces: a skip is a failure there)" >&2
        exit 1
    fi
    echo "SKIP: $*"
    exit 77
}
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
command -v ip >/dev/null && command -v tc >/dev/null || skip "needs ip and tc (iproute2)"
[ -w /sys/fs/cgroup/cpu/cpu.cfs_period_us ] || skip "no writable cgroup-v1 cpu controller"
probe=dse-probe-$$
ip netns add "$probe" 2>/dev/null || skip "cannot create a network namespace here"
ip netns del "$probe"

T=$(mktemp -d /tmp/dse-boards.XXXXXX)
PLAT=$T/emu-test.json
# One emulated cluster at a time on this machine (other suites run too).
exec 9>/run/dse-emu-test.lock
flock -w 900 9 || fail "another boards test held /run/dse-emu-test.lock for 15 minutes"
cleanup() { "$EMU" down "$PLAT" >/dev/null 2>&1 || true; rm -rf "$T"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

cat > "$PLAT" <<'JSON'
{ "format": "dse-platform", "version": 1, "name": "dse-test-boards",
  "devices": [
    { "name": "b0-cpu", "board": "b0", "kind": "cpu", "freq_mhz": 2000, "cores": 1, "memory_mb": 2048, "idle_w": 2, "busy_w": 6 },
    { "name": "b1-cpu", "board": "b1", "kind": "cpu", "freq_mhz": 800, "cores": 1, "memory_mb": 2048, "idle_w": 2, "busy_w": 6 },
    { "name": "b2-cpu", "board": "b2", "kind": "cpu", "freq_mhz": 800, "cores": 1, "memory_mb": 2048, "idle_w": 2, "busy_w": 6 } ],
  "links": { "network": { "latency_us": 100, "bandwidth_mbs": 25 },
             "pairs": [ { "a": "b0-cpu", "b": "b2-cpu", "latency_us": 100, "bandwidth_mbs": 6.25 },
                        { "a": "b1-cpu", "b": "b2-cpu", "latency_us": 100, "bandwidth_mbs": 6.25 } ] },
  "emulate": { "subnet": "10.199.250.0/24", "period_us": 2000,
               "boards": { "b0": { "cpu": 1.0, "link_mbit": 200 }, "b1": { "cpu": 0.4, "link_mbit": 200 },
                           "b2": { "cpu": 0.4, "link_mbit": 50 } } } }
JSON

# ---- bad input: one line, exit 2, nothing made ----
sed 's/"cpu": 1.0/"cpu": 60/' "$PLAT" > "$T/over.json"
rc=0; "$EMU" up "$T/over.json" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q "add up to" "$T/err" || fail "CPU shares over the cores: exit $rc, $(cat "$T/err")"
if [ "$(nproc)" -eq 2 ]; then # shares that add up to 2 but do not pack onto 2 CPUs
    sed 's/"cpu": 1.0/"cpu": 0.7/; s/"b1": { "cpu": 0.4/"b1": { "cpu": 0.7/; s/"b2": { "cpu": 0.4/"b2": { "cpu": 0.6/' \
        "$PLAT" > "$T/nopack.json"
    rc=0; "$EMU" up "$T/nopack.json" 2>"$T/err" || rc=$?
    [ $rc -eq 2 ] && grep -q "do not pack" "$T/err" && ! ip link show dse$(printf %s dse-test-boards | md5sum | cut -c1-4) >/dev/null 2>&1 ||
        fail "shares that do not pack: exit $rc, $(cat "$T/err")"
fi
sed 's/"period_us": 2000,/"period_us": 2000, "cpu_limit": "fast",/' "$PLAT" > "$T/limit.json"
rc=0; "$EMU" up "$T/limit.json" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q "cpu_limit" "$T/err" || fail "an unknown cpu_limit: exit $rc, $(cat "$T/err")"
rc=0; "$EMU" up "$SRC/examples/platforms/local-2.json" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q "no \"emulate\" section" "$T/err" || fail "no emulate section: exit $rc"

# ---- an interrupted up leaves nothing after down ----
"$EMU" up "$PLAT" >/dev/null 2>&1 &
pid=$!
sleep 0.3
kill -KILL $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
"$EMU" down "$PLAT" >/dev/null || fail "down after an interrupted up failed"
rc=0; "$EMU" status "$PLAT" >/dev/null || rc=$?
[ $rc -eq 3 ] || fail "down after an interrupted up left: $("$EMU" status "$PLAT")"

# ---- up, twice ----
"$EMU" up "$PLAT" >/dev/null || fail "up failed"
"$EMU" up "$PLAT" >/dev/null || fail "a second up failed"
STATE=/run/dse-emu/dse-test-boards
AGENT=$STATE/agent
id=$(printf %s dse-test-boards | md5sum | cut -c1-4)
[ "$(ip netns list | grep -c "^dse-$id-")" -eq 3 ] || fail "expected 3 namespaces: $(ip netns list)"
k=0
for b in b0 b1 b2; do
    ns=dse-$id-$b
    ip -n "$ns" -4 -br addr | grep -q "10.199.250.$((11 + k))/24" || fail "$b has no address .$((11 + k))"
    [ "$("$AGENT" "$b" hostname)" = "$b" ] || fail "the agent does not give $b its host name"
    k=$((k + 1))
done
ip -br addr show "dse$id" | grep -q "10.199.250.1/24" || fail "the bridge has no address"
# tbf both ways at the configured rate (tc prints 200Mbit / 50Mbit).
for pair in "0 b0 200Mbit" "1 b1 200Mbit" "2 b2 50Mbit"; do
    set -- $pair
    tc qdisc show dev "d${id}h$1" | grep -q "tbf .* rate $3" || fail "board $2: no tbf at $3 toward it"
    ip netns exec "dse-$id-$2" tc qdisc show dev "d${id}b$1" | grep -q "tbf .* rate $3" ||
        fail "board $2: no tbf at $3 from it"
done
# CFS quotas: share x period, short periods (0.4 of 2000 us is under the
# kernel's smallest quota: 2500 us); b0, a whole CPU of its own, has none.
for pair in "b0 -1 2000" "b1 1000 2500" "b2 1000 2500"; do
    set -- $pair
    cg=/sys/fs/cgroup/cpu/dse-$id/$1
    [ "$(cat $cg/cpu.cfs_quota_us)" = "$2" ] && [ "$(cat $cg/cpu.cfs_period_us)" = "$3" ] ||
        fail "board $1: quota $(cat $cg/cpu.cfs_quota_us) period $(cat $cg/cpu.cfs_period_us), want $2/$3"
done
# CPUs: shares packed first-fit by decreasing share, at most 1.0 a CPU:
# b0 (1.0) alone on the first allowed CPU, b1 and b2 (0.4 each) on the second.
cpu0=$($PY -c 'import os; print(sorted(os.sched_getaffinity(0))[0])')
cpu1=$($PY -c 'import os; print(sorted(os.sched_getaffinity(0))[1])')
for pair in "b0 $cpu0" "b1 $cpu1" "b2 $cpu1"; do
    set -- $pair
    got=$("$AGENT" "$1" "grep Cpus_allowed_list /proc/self/status" | awk '{ print $2 }')
    [ "$got" = "$2" ] || fail "board $1: runs on CPUs $got, want $2"
done

# ---- shaping: 8 MB from b0 to b2 (50 Mbit/s) takes at least ~1.2 s ----
"$AGENT" b2 "$PY -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"10.199.250.13\", 5019)); s.listen(1); c, _ = s.accept(); n = 0
while True:
    d = c.recv(1 << 16)
    if not d: break
    n += len(d)
c.sendall(str(n).encode()); c.close()
'" &
srv=$!
sleep 1
rate=$("$AGENT" b0 "$PY -c '
import socket, time
for i in range(50):
    try:
        s = socket.create_connection((\"10.199.250.13\", 5019)); break
    except OSError: time.sleep(0.1)
buf = bytes(1 << 20); t = time.monotonic()
for i in range(8): s.sendall(buf)
s.shutdown(socket.SHUT_WR); n = int(s.recv(64)); dt = time.monotonic() - t
assert n == 8 << 20, n
print(\"%.2f\" % (n * 8 / dt / 1e6))
'") || fail "no transfer from b0 to b2"
wait $srv || true
echo "transfer b0 -> b2: $rate Mbit/s of payload (link shaped to 50 Mbit/s)"
# Payload cannot beat the wire rate (plus the 3 KiB bucket over 8 MiB).
awk -v r="$rate" 'BEGIN { exit !(r > 0 && r <= 50 * 1.05) }' ||
    fail "b0 -> b2 carried $rate Mbit/s, more than the 50 Mbit/s shaped link allows"

# A short message is held to the wire too (the bucket holds 0.25 ms, at
# least 3,028 bytes): 64 KiB at 50 Mbit/s need >= 10 ms even when the
# bucket is full (a 64 KiB bucket let them through in well under 1 ms).
"$AGENT" b2 "$PY -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"10.199.250.13\", 5020)); s.listen(1); c, _ = s.accept(); n = 0
while n < 65536:
    d = c.recv(65536 - n)
    if not d: break
    n += len(d)
c.sendall(b\"k\"); c.close()
'" &
srv=$!
sleep 1
ms=$("$AGENT" b0 "$PY -c '
import socket, time
for i in range(50):
    try:
        s = socket.create_connection((\"10.199.250.13\", 5020)); break
    except OSError: time.sleep(0.1)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
time.sleep(0.2)
t = time.monotonic(); s.sendall(bytes(65536)); assert s.recv(1) == b\"k\"
print(\"%.2f\" % ((time.monotonic() - t) * 1e3))
'") || fail "no short message from b0 to b2"
wait $srv || true
echo "64 KiB from b0 to b2 with a full bucket: $ms ms (>= 10 ms on a 50 Mbit/s wire)"
awk -v t="$ms" 'BEGIN { exit !(t >= (65536 - 3028) * 8 / 50e6 * 1e3 * 0.999) }' ||
    fail "64 KiB went from b0 to b2 in $ms ms, faster than a 50 Mbit/s wire allows"

# ---- quota: a busy loop on b1 (0.4 CPU) gets at most its share ----
share=$("$AGENT" b1 "$PY -c '
import time
w, c = time.monotonic(), time.process_time()
while time.monotonic() - w < 1.0: pass
print(\"%.3f\" % ((time.process_time() - c) / (time.monotonic() - w)))
'")
thr=$(awk '/nr_throttled/ { print $2 }' /sys/fs/cgroup/cpu/dse-$id/b1/cpu.stat)
echo "busy loop on b1: $share CPU (quota 0.4), throttled $thr times"
awk -v s="$share" 'BEGIN { exit !(s > 0 && s <= 0.4 * 1.15) }' ||
    fail "a busy loop on b1 got $share CPU, more than its 0.4 share"

# ---- the runtime across the boards: hybrid mappings of a campaign ----
cd "$T"
NET=mobilenetv2
# Calibration across the boards (--quick).  What load cannot break: a
# fitted link is no faster than its wire (b0-b2 is shaped to 50 Mbit/s =
# 6.25 MB/s, b0-b1 to 200 Mbit/s = 25 MB/s; a relative fit over every
# ping-pong size once made them 40-80x faster), and no faster than 1/4 of
# it either (the shaper and the fit agree on the order of magnitude).
"$DSE" calibrate --platform "$PLAT" --network $NET --quick -o "$T/coeffs.json" --db "$T/cal.db" \
    > "$T/cal.txt" 2>&1 || fail "dse calibrate across the boards: $(tail -3 "$T/cal.txt")"
$PY - "$T/coeffs.json" <<'PYEOF' || fail "calibrated links: $(grep '^link' "$T/cal.txt")"
import json, sys
c = json.load(open(sys.argv[1]))["links"]
net = c["network"]["bandwidth_mbs"]["value"]
pair = [p for p in c.get("pairs", []) if {p["a"], p["b"]} == {"b0-cpu", "b2-cpu"}]
assert pair, "no b0-b2 pair coefficients"
b2 = pair[0]["bandwidth_mbs"]["value"]
print("calibrated links: b0-b1 %.2f MB/s (wire 25), b0-b2 %.2f MB/s (wire 6.25)" % (net, b2))
assert 25 / 4 <= net <= 25 * 1.05, net
assert 6.25 / 4 <= b2 <= 6.25 * 1.05, b2
PYEOF
"$DSE" run --network $NET --platform "$PLAT" --coeffs "$T/coeffs.json" --chromosome hybrid --pop 8 \
    --gens 2 --seed 5 --db "$T/c.db" --quiet > "$T/run.txt" || fail "dse run on the emulated platform failed"
"$DSE" mpirun -np 2 "$DSE" exec --network $NET --platform local-2 --single 0 --seed 7 \
    --bench 0,1 --output "$T/ref.f32" > /dev/null || fail "the single-device reference run failed"
npts=$("$DSE" front --campaign 1 --db "$T/c.db" --csv | tail -n +2 | wc -l)
ran=0
i=0
while [ $i -lt "$npts" ] && [ $ran -lt 2 ]; do
    "$DSE" export --campaign 1 --db "$T/c.db" --point $i -o "$T/p$i" > /dev/null || fail "export $i"
    used=$($PY -c '
import json, sys
m = json.load(open(sys.argv[1]))["layers"]
devs = set()
for v in m.values():
    devs.update([v] if isinstance(v, str) else [s[0] for s in v])
split = sum(1 for v in m.values() if not isinstance(v, str) and len(v) > 1)
print(len(devs), split)' "$T/p$i/dse-mapping.json")
    set -- $used
    i=$((i + 1))
    [ "$1" -ge 2 ] || continue
    "$DSE" mpirun -np 3 "$DSE" exec --network $NET --platform "$PLAT" --mapping "$T/p$((i - 1))/dse-mapping.json" \
        --seed 7 --bench 0,1 --json --output "$T/out.f32" > "$T/rec.json" 2> "$T/err" ||
        fail "front point $((i - 1)) across the boards: $(cat "$T/err")"
    "$DSE" eval --network $NET --platform "$PLAT" --mapping "$T/p$((i - 1))/dse-mapping.json" \
        --json > "$T/eval.json" 2>/dev/null || fail "dse eval of front point $((i - 1))"
    # The check's verdict is its exit status (a heredoc cannot be followed
    # by "|| fail" on the next line: that line would be read as Python).
    rc=0
    $PY - "$T/ref.f32" "$T/out.f32" "$T/rec.json" "$T/eval.json" <<'PYEOF' || rc=$?
import json, sys, numpy as np
ref, out = np.fromfile(sys.argv[1], np.float32), np.fromfile(sys.argv[2], np.float32)
assert ref.size > 0 and ref.size == out.size, (ref.size, out.size)
scale = float(np.abs(ref).max())
bad = int((np.abs(out - ref) > 1e-4 * np.abs(ref) + 1e-5 * scale).sum())
assert bad == 0, f"{bad} of {ref.size} outputs differ"
r = json.load(open(sys.argv[3]))
sent = sum(d["bytes_sent"] for d in r["devices"])
recv = sum(d["bytes_recv"] for d in r["devices"])
assert sent == recv and sent > 0, (sent, recv)
# Payload per device as the runtime counts it equals the model's Plan.
e = json.load(open(sys.argv[4]))
for dm, dp in zip(r["devices"], e["devices"]):
    assert dm["name"] == dp["name"], (dm["name"], dp["name"])
    assert (dm["bytes_sent"], dm["bytes_recv"]) == (dp["bytes_sent"], dp["bytes_recv"]), \
        (dm["name"], dm["bytes_sent"], dm["bytes_recv"], dp["bytes_sent"], dp["bytes_recv"])
PYEOF
    [ $rc -eq 0 ] || fail "front point $((i - 1)): output or bytes differ"
    echo "front point $((i - 1)): $1 boards, $2 split layers, output equals the single-device run, bytes per device equal the plan's"
    ran=$((ran + 1))
done
[ $ran -ge 1 ] || fail "no front point of the campaign used two boards"

# dse validate across the boards: 3 points, every one ok, stored with the
# steps of its Plan on every device.
"$DSE" validate --campaign 1 --db "$T/c.db" --top 3 --rounds 1 --bench 1,3 > "$T/val.txt" 2>&1 ||
    fail "dse validate across the boards: $(tail -5 "$T/val.txt")"
$PY - "$T/c.db" <<'PYEOF' || fail "dse validate's rows"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT id, point, status FROM validations WHERE campaign = 1 AND device IS NULL").fetchall()
assert len(rows) == 3 and all(r[2] == "ok" for r in rows), rows
for vid, point, _ in rows:
    n = db.execute("SELECT count(*), count(DISTINCT device) FROM validation_steps WHERE validation = ?", (vid,)).fetchone()
    assert n[0] > 0, (point, n)
print("dse validate: 3 points ok across the boards, their steps stored")
PYEOF

# ---- faults on a wire: a link cut, a board's rank killed, mid-run ----
# dse validate runs a point for long (1,000 inferences) with an 8 s
# deadline; b2's link goes down 6 s in: the ranks' deadlines name what
# each waited for and validate names b2, stores the point as failed and
# ends (ranks' deadline + the launcher's 30 s margin; bounded here by 150 s).
# --no-reference: the fault must land in the point's run, not in the
# single-device reference that would otherwise run first.
nsb2=dse-$id-b2
if2=$(ip netns exec $nsb2 ip -o link | awk -F': ' '$2 ~ /^d/ { sub(/@.*/, "", $2); print $2 }')
[ -n "$if2" ] || fail "no link inside $nsb2"
(sleep 6; ip netns exec $nsb2 ip link set dev "$if2" down) &
cutter=$!
t0=$(date +%s)
rc=0
timeout 150 "$DSE" validate --campaign 1 --db "$T/c.db" --top 1 --rounds 1 --bench 0,1000 --timeout 8 --no-reference \
    > "$T/cut.out" 2> "$T/cut.err" || rc=$?
wait $cutter || true
ip netns exec $nsb2 ip link set dev "$if2" up
dt=$(( $(date +%s) - t0 ))
echo "link of b2 cut: dse validate exit $rc after $dt s: $(grep -o 'failed: .*' "$T/cut.out" | head -1)"
[ $rc -eq 1 ] && grep -q "failed: timed out: .*rank 2 (device b2-cpu on board b2)" "$T/cut.out" ||
    fail "a cut link: exit $rc, $(cat "$T/cut.out" "$T/cut.err" | tail -3)"
# A board's rank killed: named at once as dead.
(sleep 6; for p in $(cat /sys/fs/cgroup/cpu/dse-$id/b2/cgroup.procs); do
    [ "$(cat /proc/$p/comm 2>/dev/null)" = dse ] && kill -9 "$p"; done) &
killer=$!
rc=0
timeout 150 "$DSE" validate --campaign 1 --db "$T/c.db" --top 1 --rounds 1 --bench 0,1000 --timeout 30 --no-reference \
    > "$T/kill.out" 2> "$T/kill.err" || rc=$?
wait $killer || true
echo "rank on b2 killed: dse validate exit $rc: $(grep -o 'failed: .*' "$T/kill.out" | head -1)"
[ $rc -eq 1 ] && grep -q "failed: a rank died: rank 2 (device b2-cpu on board b2)" "$T/kill.out" ||
    fail "a killed board: exit $rc, $(cat "$T/kill.out" "$T/kill.err" | tail -3)"
# Both failures are stored as such.
nf=$($PY -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM validations WHERE device IS NULL AND status LIKE \"failed%\"").fetchone()[0])' "$T/c.db")
[ "$nf" -ge 2 ] || fail "the failed points were not stored as failed ($nf rows)"

# ---- down leaves nothing ----
"$EMU" down "$PLAT" >/dev/null || fail "down failed"
rc=0; "$EMU" status "$PLAT" > "$T/left" || rc=$?
[ $rc -eq 3 ] || fail "down left: $(cat "$T/left")"
[ -z "$(ip -o link | grep "d${id}")" ] && [ ! -d /sys/fs/cgroup/cpu/dse-$id ] &&
    [ -z "$(ip netns list | grep "dse-$id")" ] || fail "down left links, namespaces or cgroups"
# A launch on a platform that is down fails with one line naming it.
rc=0
"$DSE" mpirun -np 3 "$DSE" exec --network $NET --platform "$PLAT" --single 0 2> "$T/err" >/dev/null || rc=$?
[ $rc -eq 2 ] && grep -q "not up" "$T/err" || fail "exec on a platform that is down: exit $rc, $(cat "$T/err")"

# ---- a paced platform (emulate.cpu_limit "pace"): no quota, CPU weights
# by share; a paced board runs a network and its output is checked (the
# pace itself: tests/exec/test_pace.c) ----
sed 's/"period_us": 2000,/"period_us": 2000, "cpu_limit": "pace",/' "$PLAT" > "$T/pace.json"
"$EMU" up "$T/pace.json" >/dev/null || fail "up of a paced platform failed"
for pair in "b0 1024" "b1 410" "b2 410"; do
    set -- $pair
    cg=/sys/fs/cgroup/cpu/dse-$id/$1
    [ "$(cat $cg/cpu.cfs_quota_us)" = -1 ] && [ "$(cat $cg/cpu.shares)" = "$2" ] ||
        fail "paced board $1: quota $(cat $cg/cpu.cfs_quota_us) weight $(cat $cg/cpu.shares), want -1/$2"
done
"$DSE" mpirun -np 3 "$DSE" exec --network $NET --platform "$T/pace.json" --single 1 --bench 1,2 \
    > "$T/pace.out" 2>&1 || fail "dse exec on a paced board: $(tail -3 "$T/pace.out")"
"$EMU" down "$T/pace.json" >/dev/null || fail "down of the paced platform failed"
[ -z "$(ip -o link | grep "d${id}")" ] && [ ! -d /sys/fs/cgroup/cpu/dse-$id ] ||
    fail "down of the paced platform left links or cgroups"
echo "ok: emulated boards up, shaped, quota'd or paced, used by the runtime, and down"
