#!/bin/sh
# iolab's engine against bare loops (bench/bare_loops.cpp, no iolab code), per
# CPU second and per wall second, in one interleaved session: the numbers
# behind docs/performance.md ("The engine against bare loops").
#
#   bench/engine_vs_bare.sh BUILD_DIR [SCRATCH_PARENT] [ROUNDS]
#
# Cases: mmap + memcpy at 1 KiB and 4 KiB and pread at 4 KiB and 1 MiB over a
# warm 1 GiB file; stdio fwrite of 128 B into a 4 KiB buffer (64 MiB per
# pass). iolab runs its default `iolab run` (min-time 0.1 s, latency pass),
# so the figure compared is the one a user gets. The order alternates each
# round, so a drift in the machine's load favours neither side.
set -eu
build=${1:?usage: engine_vs_bare.sh BUILD_DIR [SCRATCH_PARENT] [ROUNDS]}
parent=${2:-${TMPDIR:-/tmp}}
rounds=${3:-3}
work=$(mktemp -d "$parent/iolab-engine-bare-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
file="$work/f1g"

# iolab: ops per wall second and per CPU second of its record (median repetition).
iolab_ops() {  # method op bs size [extra...]
  m=$1 op=$2 bs=$3 size=$4
  shift 4
  "$build/iolab" run --method "$m" --op "$op" --bs "$bs" --size "$size" --cache warm --reps 5 \
    --dir "$work" --out "$work/r.json" "$@" >/dev/null
  python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))["results"][0]
assert not r["skipped"], r["skipped"]
cpu=r["cpu"]["user_s"]+r["cpu"]["sys_s"]
print(round(r["ops_per_s"]["median"]), round(r["ops"]/cpu) if cpu > 0 else 0)' "$work/r.json"
  rm -f "$work"/r.json "$work"/r.csv "$work"/r.html
}
bare_ops() {  # mode args...
  "$build/bench/bare_loops" "$@" | sed -n 's/^median: \([0-9]*\) ops\/s, [0-9.]* GiB\/s, \([0-9]*\) ops per CPU.*/\1 \2/p'
}

cases="mmap1k mmap4k pread4k pread1m fwrite128"
# Each read runs on a file of its own, made the same way on both sides:
# written in 1 MiB writes, flushed, evicted, read once. Reading one file
# again and again would not do: how fast a warm file reads depends on the
# page-cache pages it got (4 KiB preads of 1 GiB here: 0.86-1.17 M/s from
# file to file, steady for each), so each side must draw from the same
# spread, and every round draws again. (bare_loops creates FILE when it
# does not exist and removes it at the end.)
one() {  # case side
  case "$1:$2" in
    mmap1k:bare) bare_ops mmap "$file" 1k 5 ;;
    mmap1k:iolab) iolab_ops mmap read 1k 1g ;;
    mmap4k:bare) bare_ops mmap "$file" 4k 5 ;;
    mmap4k:iolab) iolab_ops mmap read 4k 1g ;;
    pread4k:bare) bare_ops pread "$file" 4k 5 ;;
    pread4k:iolab) iolab_ops pread read 4k 1g --buffer aligned ;;
    pread1m:bare) bare_ops pread "$file" 1m 5 ;;
    pread1m:iolab) iolab_ops pread read 1m 1g --buffer aligned ;;
    fwrite128:bare) bare_ops fwrite "$work" 64m 128 5 ;;
    fwrite128:iolab) iolab_ops stdio write 128 64m ;;
  esac
}

i=1
: >"$work/rounds"
while [ "$i" -le "$rounds" ]; do
  for c in $cases; do
    if [ $((i % 2)) -eq 1 ]; then b=$(one "$c" bare); l=$(one "$c" iolab); else l=$(one "$c" iolab); b=$(one "$c" bare); fi
    echo "$i $c $b $l" | tee -a "$work/rounds"
  done
  i=$((i + 1))
done
python3 - "$work/rounds" <<'PY'
import statistics, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r, case, bw, bc, iw, ic = line.split()
    rows[case].append((float(bw), float(bc), float(iw), float(ic)))
print("%-10s %14s %14s %8s   %14s %14s %8s" % ("case", "bare ops/CPUs", "iolab ops/CPUs", "ratio", "bare ops/s", "iolab ops/s", "ratio"))
for case, v in rows.items():
    cpu = [i / b for b, _, i, _ in [(x[1], 0, x[3], 0) for x in v]]
    wall = [x[2] / x[0] for x in v]
    med = statistics.median
    print("%-10s %14.0f %14.0f %7.3fx   %14.0f %14.0f %7.3fx   rounds cpu %s" % (
        case, med([x[1] for x in v]), med([x[3] for x in v]), med(cpu), med([x[0] for x in v]), med([x[2] for x in v]),
        med(wall), [round(c, 3) for c in cpu]))
PY
