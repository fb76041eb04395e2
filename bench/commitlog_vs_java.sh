#!/usr/bin/env bash
# Issue 45's side-by-side: iolab's commit-log designs and record store against
# the Java 17 reference (bench/java/, bench/java_reference.sh) on this
# machine, interleaved: every round runs the Java side and the iolab side,
# in alternating order (drift within the hour is larger than most of the
# differences). Same scale on both sides: 262,144 messages of 1 KiB (256 MiB
# of bodies), 1 GiB segments, one producer, no consumer, page cache only, a
# 16 MiB transient ring, timed from the first append to the last
# acknowledgement with no clock read per message (commitlog_bench
# --throughput); the store: 100,000 employees, insert then random gets, one
# commit per phase in Java, iolab's quick store table (a commit every 1,000
# operations, page cache only; no flush on either side).
#
# Rows, per mechanism: the Java reference; the iolab design without its
# indexes (--bare: the bare mechanism); the full design; the plain C loop of
# the mechanism (commitlog_bench --floors). activemq on both sides is
# KahaDB's: messages queued, a writer thread writing up to 4 MiB per call.
#
# Prints every run's figure into DIR (KEEP=DIR keeps it; default a temporary
# directory) and a table of medians with [min-max] over all runs, the ratios,
# and issue 45's bars: the bare row >= 1.2x the Java median, or >= 0.9x the
# C loop where that is lower; the full design >= 0.8x its bare row.
#
# Usage: bench/commitlog_vs_java.sh [ROUNDS (default 3)] [path/to/build (default build/release)]
set -euo pipefail
rounds=${1:-3}
build=${2:-build/release}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$build/bench/commitlog_bench
iolab=$build/iolab
for f in "$bench" "$iolab"; do
  [ -x "$f" ] || { echo "commitlog_vs_java.sh: $f not found: build first (make, or cmake --build $build)" >&2; exit 2; }
done
case "$rounds" in ''|*[!0-9]*|0) echo "commitlog_vs_java.sh: ROUNDS '$rounds' must be a whole number >= 1" >&2; exit 2 ;; esac
if [ -n "${KEEP:-}" ]; then
  out=$KEEP
  mkdir -p "$out"
else
  out=$(mktemp -d "${TMPDIR:-/tmp}/iolab-vs-java.XXXXXX")
  trap 'rm -rf "$out"' EXIT
fi

scale=(--messages 262144 --segment 1g)
java_side() {
  "$here/java_reference.sh" commitlog --mechanism all --runs 3 --ring 16m "${scale[@]}" >> "$out/java.txt"
  "$here/java_reference.sh" store --records 100000 --runs 3 >> "$out/java_store.txt"
}
iolab_side() {
  "$bench" --design kafka,rocketmq,rocketmq-transient,qmq,activemq --bare --floors all --throughput \
    --transient-buffer 16m --no-consumer --reps 3 "${scale[@]}" >> "$out/iolab.txt"
  "$iolab" run store --scale quick --records 100000 --no-latency --out "$out/store-$1.json" > /dev/null
}

echo "commitlog_vs_java: $rounds rounds, $(date -u +%FT%TZ), commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
uptime
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then java_side; iolab_side "$r"; else iolab_side "$r"; java_side; fi
  echo "round $r done $(date -u +%T); $(uptime | sed 's/.*load/load/')"
done

python3 - "$out" <<'PY'
import glob, json, re, statistics as st, sys
out = sys.argv[1]
rates = {}
def add(row, v): rates.setdefault(row, []).append(v)
for line in open(f"{out}/java.txt"):
    m = re.match(r"java mechanism=(\S+) run=\d+ .*?msg_per_s=([\d.]+)", line)
    if m: add("java " + m.group(1), float(m.group(2)))
unit = {"k": 1e3, "M": 1e6, "G": 1e9}
for line in open(f"{out}/iolab.txt"):
    m = re.match(r"^(\S+)( bare)?\s+([\d.]+) ([kMG]) msg/s", line)
    if m: add(m.group(1) + (" bare" if m.group(2) else ""), float(m.group(3)) * unit[m.group(4)])
def med(row): return st.median(rates[row]) if row in rates else float("nan")
def show(row):
    v = rates.get(row)
    return f"{st.median(v)/1e6:.2f} M [{min(v)/1e6:.2f}-{max(v)/1e6:.2f}] n={len(v)}" if v else "not run"
print("\nmessages/s, median [min-max] over every run (n runs)")
rows = [("kafka", "java kafka", "floor-pwrite"), ("rocketmq", "java mapped", "floor-mmap"),
        ("qmq", "java mapped", "floor-mmap"), ("rocketmq-transient", "java transient", "floor-ring"),
        ("activemq", "java activemq", None)]
print(f"{'design':20s} {'Java':30s} {'iolab bare':30s} {'iolab full':30s} {'C loop':30s} bare/Java  bar        full/bare")
for design, java, floor in rows:
    j, b, f = med(java), med(design + " bare"), med(design)
    c = med(floor) if floor else float("nan")
    bar = min(1.2 * j, 0.9 * c) if floor else 1.2 * j
    ok = "met" if b >= bar else "NOT met"
    okf = "met" if f >= 0.8 * b else "NOT met"
    print(f"{design:20s} {show(java):30s} {show(design + ' bare'):30s} {show(design):30s} {show(floor) if floor else '-':30s} "
          f"{b/j:5.2f}x   {ok:8s} {f/b:5.2f}x {okf}")
print("\nrecord store, 100,000 employees, ms per pass (median [min-max]; Java: every run, iolab: each round's mean pass)")
java = {"insert": [], "get": []}
for line in open(f"{out}/java_store.txt"):
    m = re.match(r"java store phase=(\w+) records=\d+ run=\d+ ms=([\d.]+)", line)
    if m: java[m.group(1)].append(float(m.group(2)))
ours = {}
for path in sorted(glob.glob(f"{out}/store-*.json")):
    for r in json.load(open(path))["results"]:
        if r.get("method") in ("mmap", "buffered") and r.get("op") in ("insert", "get"):
            ours.setdefault((r["method"], r["op"]), []).append(r["seconds_per_pass"] * 1e3)  # one per round
def ms(v): return f"{st.median(v):.1f} [{min(v):.1f}-{max(v):.1f}] n={len(v)}" if v else "not run"
for phase in ("insert", "get"):
    print(f"  java {phase:6s} {ms(java[phase])}")
    for method in ("mmap", "buffered"):
        v = ours.get((method, phase), [])
        ratio = st.median(java[phase]) / st.median(v) if v and java[phase] else float("nan")
        print(f"  iolab {method:8s} {phase:6s} {ms(v)}  Java/iolab {ratio:.2f}x" + ("  (bar >= 3x)" if phase == "get" else ""))
PY
