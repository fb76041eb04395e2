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

iolab_ops() {  # bs -> median ops/s from iolab's JSON
  "$build/iolab" run --method pread --op read --pattern seq --bs "$1" --size 1g --cache warm --buffer aligned \
    --reps 5 --dir "$work" --out "$work/r.json" >/dev/null
  python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["results"][0]["ops_per_s"]["median"]))' "$work/r.json"
}
bare_ops() { "$build/bench/bare_loop" "$file" "$1" 5 | sed -n 's/^median: \([0-9]*\) ops.*/\1/p'; }
fio_ops() {
  fio --name=warm4k --filename="$file" --ioengine=psync --bs=4k --rw=read --size=1g --invalidate=0 --loops=5 \
    --output-format=json | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))'
}

"$build/bench/clock_cost"
echo "round  bare_4k  iolab_4k  fio_4k  bare_1m  iolab_1m   (ops/s; each a median of 5 passes)"
i=1
while [ "$i" -le "$rounds" ]; do
  # Alternate the order each round so a drift in machine load does not favour one side.
  if [ $((i % 2)) -eq 1 ]; then
    b4=$(bare_ops 4k); i4=$(iolab_ops 4k); f4=$(fio_ops); b1=$(bare_ops 1m); i1=$(iolab_ops 1m)
  else
    i1=$(iolab_ops 1m); b1=$(bare_ops 1m); f4=$(fio_ops); i4=$(iolab_ops 4k); b4=$(bare_ops 4k)
  fi
  echo "$i  $b4  $i4  $f4  $b1  $i1" | tee -a "$work/rounds"
  i=$((i + 1))
done
python3 - "$work/rounds" <<'PY'
import statistics, sys
rows = [list(map(float, l.split()[1:])) for l in open(sys.argv[1])]
med = lambda xs: statistics.median(xs)
col = lambda k: [r[k] for r in rows]
print("medians: bare_4k %.0f  iolab_4k %.0f  fio_4k %.0f  bare_1m %.0f  iolab_1m %.0f" % tuple(med(col(k)) for k in range(5)))
print("iolab/bare 4k: per round %s, median %.2fx (goal >= 0.85)" % ([round(r[1] / r[0], 2) for r in rows], med([r[1] / r[0] for r in rows])))
print("iolab/fio  4k: per round %s, median %.2fx (goal >= 2)" % ([round(r[1] / r[2], 2) for r in rows], med([r[1] / r[2] for r in rows])))
print("iolab/bare 1m: per round %s, median %.2fx (goal >= 0.95)" % ([round(r[4] / r[3], 2) for r in rows], med([r[4] / r[3] for r in rows])))
PY
