#!/bin/sh
# iolab's own overhead, measured in one interleaved session (docs/performance.md):
# warm sequential pread at 4 KiB and 1 MiB through `iolab run` vs the bare loop,
# and 4 KiB vs fio's psync engine on the same file. fio is only for this
# comparison (apt-get install fio); it is not a dependency of iolab.
#
#   bench/harness_overhead.sh BUILD_DIR [SCRATCH_PARENT] [ROUNDS]
set -eu
build=${1:?usage: harness_overhead.sh BUILD_DIR [SCRATCH_PARENT] [ROUNDS]}
parent=${2:-${TMPDIR:-/tmp}}
rounds=${3:-3}
command -v fio >/dev/null || { echo "harness_overhead: fio is not installed (apt-get install fio)" >&2; exit 2; }
work=$(mktemp -d "$parent/iolab-overhead-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
file="$work/f1g"
# One 1 GiB file for the bare loop and fio (fio lays it out; the bare loop reads it as it is).
fio --name=layout --filename="$file" --size=1g --rw=write --bs=1m --ioengine=psync --end_fsync=1 >/dev/null

# Each prints two figures: ops per wall second and ops per CPU second (user +
# system of the measuring process). The machine is shared: other work steals
# wall time but not CPU time, so the CPU figure is the steadier comparison.
iolab_ops() {  # bs -> median ops/s and ops per CPU second, from iolab's JSON
  "$build/iolab" run --method pread --op read --pattern seq --bs "$1" --size 1g --cache warm --buffer aligned \
    --reps 5 --dir "$work" --out "$work/r.json" >/dev/null
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(round(r["ops_per_s"]["median"]), round(r["ops"]/(r["cpu"]["user_s"]+r["cpu"]["sys_s"])))' "$work/r.json"
}
bare_ops() { "$build/bench/bare_loops" pread "$file" "$1" 5 | sed -n 's/^median: \([0-9]*\) ops\/s, [0-9.]* GiB\/s, \([0-9]*\) ops per CPU.*/\1 \2/p'; }
fio_ops() {  # [extra fio options]; --invalidate=0 keeps the file warm (fio's default drops its cache first)
  fio --name=warm4k --filename="$file" --ioengine=psync --bs=4k --rw=read --size=1g --loops=5 "$@" \
    --output-format=json |
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; cpu=(j["usr_cpu"]+j["sys_cpu"])/100*j["job_runtime"]/1000; print(round(j["read"]["iops"]), round(j["read"]["total_ios"]/cpu))'
}

"$build/bench/clock_cost"
echo "round: ops/s and ops per CPU second for bare_4k, iolab_4k, fio_4k (warm), bare_1m, iolab_1m, fio_4k (fio's default invalidate=1)"
i=1
while [ "$i" -le "$rounds" ]; do
  # Alternate the order each round so a drift in machine load does not favour one side.
  if [ $((i % 2)) -eq 1 ]; then
    b4=$(bare_ops 4k); i4=$(iolab_ops 4k); f4=$(fio_ops --invalidate=0); b1=$(bare_ops 1m); i1=$(iolab_ops 1m)
    fd=$(fio_ops)
  else
    fd=$(fio_ops)
    i1=$(iolab_ops 1m); b1=$(bare_ops 1m); f4=$(fio_ops --invalidate=0); i4=$(iolab_ops 4k); b4=$(bare_ops 4k)
  fi
  echo "$i  $b4  $i4  $f4  $b1  $i1  $fd" | tee -a "$work/rounds"
  i=$((i + 1))
done
python3 - "$work/rounds" <<'PY'
import statistics, sys
rows = [list(map(float, l.split()[1:])) for l in open(sys.argv[1])]
names = ["bare_4k", "iolab_4k", "fio_4k", "bare_1m", "iolab_1m", "fio_4k_default"]
med = statistics.median
for kind, off in (("ops per wall second", 0), ("ops per CPU second", 1)):
    col = lambda k: [r[2 * k + off] for r in rows]
    print("%s, medians: %s" % (kind, "  ".join("%s %.0f" % (n, med(col(k))) for k, n in enumerate(names))))
    for label, a, b, goal in (("iolab/bare 4k", 1, 0, 0.85), ("iolab/fio  4k", 1, 2, 2.0),
                              ("iolab/fio  4k (fio default)", 1, 5, 2.0), ("iolab/bare 1m", 4, 3, 0.95)):
        ratios = [x / y for x, y in zip(col(a), col(b))]
        print("  %s: per round %s, median %.2fx (goal >= %.2f)" % (label, [round(x, 2) for x in ratios], med(ratios), goal))
PY
