#!/bin/sh
# iolab's queued methods against fio on the same file, interleaved (issue 11):
# 4 KiB random O_DIRECT reads at QD 1 and QD 32 and 1 MiB sequential O_DIRECT
# reads at QD 32, for io_uring and libaio, each run by bench/queue_depth
# (iolab's io layer, no engine) and by fio's engine of the same name, one
# after the other, the order alternating every round. The device is a shared
# virtio disk whose throughput swings: every round is printed, then per case
# the ratios iolab/fio per round and their median, and at QD 1 iolab's p99
# latency against fio's clat p99 (and fio's total-latency p99, the closer
# match: iolab times from submission to reaping). fio is only for this
# comparison (apt-get install fio); it is not a dependency of iolab.
#
#   bench/fio_queue_compare.sh BUILD_DIR [SCRATCH_PARENT] [ROUNDS] [SECONDS]
set -eu
build=${1:?usage: fio_queue_compare.sh BUILD_DIR [SCRATCH_PARENT] [ROUNDS] [SECONDS]}
parent=${2:-${TMPDIR:-/tmp}}
rounds=${3:-3}
seconds=${4:-5}
command -v fio >/dev/null || { echo "fio_queue_compare: fio is not installed (apt-get install fio)" >&2; exit 2; }
tool="$build/bench/queue_depth"
[ -x "$tool" ] || { echo "fio_queue_compare: $tool is missing (cmake --build $build --target queue_depth)" >&2; exit 2; }
work=$(mktemp -d "$parent/iolab-qd-XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
file="$work/f1g"
fio --name=layout --filename="$file" --size=1g --rw=write --bs=1m --direct=1 --ioengine=psync --end_fsync=1 >/dev/null
echo "$(fio --version), $(uname -r), file $file (1 GiB), $seconds s per run, $rounds rounds"

# Each prints: iops mib_s p50_us p99_us total_lat_p99_us ios_per_cpu_s in_flight (iolab's p99
# is from submission to reaping, so it repeats it as its total). The disk's speed swings from run
# to run; reads per CPU second (user + system of the measuring process) are the steadier
# comparison, and the mean number in flight (Little's law: IOPS x mean latency) shows whether
# the queue was kept full.
iolab_run() {  # engine rw bs qd [io_uring options]
  pattern=rand; [ "$2" = read ] && pattern=seq
  "$tool" "$file" --method "$1" --pattern "$pattern" --bs "$3" --qd "$4" --seconds "$seconds" ${5:+--options "$5"} --json |
    python3 -c 'import json,sys; j=json.load(sys.stdin); l=j["lat_us"]
print("%.0f %.1f %.1f %.1f %.1f %.0f %.1f" % (j["iops"], j["mib_s"], l["p50"], l["p99"], l["p99"], j["ios"] / j["cpu_s"], j["in_flight"]))'
}
fio_run() {  # engine rw bs qd (fio 3.33's io_uring engine always sets COOP_TASKRUN, SINGLE_ISSUER, DEFER_TASKRUN)
  fio --name=qd --filename="$file" --size=1g --direct=1 --ioengine="$1" --rw="$2" --bs="$3" --iodepth="$4" \
    --runtime="$seconds" --time_based --lat_percentiles=1 --output-format=json |
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; r=j["read"]; c=r["clat_ns"]["percentile"]; t=r["lat_ns"]["percentile"]
cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] / 1000
print("%.0f %.1f %.1f %.1f %.1f %.0f %.1f" % (r["iops"], r["bw_bytes"]/2**20, c["50.000000"]/1e3, c["99.000000"]/1e3, t["99.000000"]/1e3,
                                             r["total_ios"] / cpu, r["iops"] * r["lat_ns"]["mean"] / 1e9))'
}

# engine:rw:bs:qd[:iolab's io_uring options]; the last case gives iolab the ring flags fio sets by default.
cases="io_uring:randread:4k:1 io_uring:randread:4k:32 io_uring:read:1m:32 libaio:randread:4k:1 libaio:randread:4k:32
  libaio:read:1m:32 io_uring:randread:4k:32:single_issuer,coop_taskrun"
echo "round case tool: IOPS MiB/s p50_us p99_us(fio: clat) total_lat_p99_us reads_per_cpu_s in_flight"
i=1
while [ "$i" -le "$rounds" ]; do
  for c in $cases; do
    set -- $(echo "$c" | tr : ' ')
    # Alternate who goes first each round so a drift in the disk's speed favours neither.
    if [ $((i % 2)) -eq 1 ]; then order="iolab fio"; else order="fio iolab"; fi
    for who in $order; do
      line=$("${who}_run" "$1" "$2" "$3" "$4" "${5:-}")
      echo "$i $c $who $line" | tee -a "$work/rounds"
    done
  done
  i=$((i + 1))
done
python3 - "$work/rounds" <<'PY'
import statistics, sys
runs = {}
for l in open(sys.argv[1]):
    rnd, case, who, *v = l.split()
    runs.setdefault(case, {}).setdefault(who, {})[int(rnd)] = list(map(float, v))
for title, col in (("IOPS", 0), ("reads per CPU second", 5)):
    print("\ncase: iolab/fio %s per round, median%s" % (title, " (goal >= 1.00)" if col == 0 else ""))
    for case, by in runs.items():
        r = [by["iolab"][k][col] / by["fio"][k][col] for k in sorted(by["iolab"])]
        print("  %-24s %s  median %.2fx" % (case, [round(x, 2) for x in r], statistics.median(r)))
print("\ncase: mean requests in flight, iolab and fio, median of the rounds")
for case, by in runs.items():
    print("  %-24s iolab %.1f  fio %.1f" % (case, statistics.median(v[6] for v in by["iolab"].values()),
                                          statistics.median(v[6] for v in by["fio"].values())))
print("\nQD 1 p99 latency: iolab / fio clat p99, iolab / fio total-latency p99, per round, median (goal <= 1.10)")
for case, by in runs.items():
    if case.split(":")[3] != "1":
        continue
    ks = sorted(by["iolab"])
    clat = [by["iolab"][k][3] / by["fio"][k][3] for k in ks]
    tot = [by["iolab"][k][3] / by["fio"][k][4] for k in ks]
    print("  %-24s clat %s median %.2fx; total %s median %.2fx" % (case, [round(x, 2) for x in clat], statistics.median(clat),
                                                               [round(x, 2) for x in tot], statistics.median(tot)))
PY
