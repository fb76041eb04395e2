#!/usr/bin/env bash
# Times `iolab report` on synthetic results files of N records (issue 29 item 8).
# Each file duplicates the records of a real tiny run, the experiment name varied
# per copy (so families, notes and the decision table all grow with N), and
# prints wall time and max RSS from /usr/bin/time -v.
#   bench/report_scale.sh BUILD_DIR N...            e.g. build/release 5000 20000 100000
#   PER_SECOND=1000000 bench/report_scale.sh BUILD_DIR 1   one record with a 1 M-entry series
set -euo pipefail
build=${1:?usage: report_scale.sh BUILD_DIR N...}; shift
iolab="$build/iolab"
work=$(mktemp -d "${TMPDIR:-/tmp}/iolab-report-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$iolab" run --method pread,syscall,mmap --op read,write --size 64k --bs 4k,16k --reps 2 --warmup 0 \
  --min-time 0 --no-latency --out "$work/seed.json" >/dev/null
for n in "$@"; do
  python3 - "$work/seed.json" "$work/r$n.json" "$n" "${PER_SECOND:-0}" <<'PY'
import copy, json, sys
seed, out, n, per_second = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
d = json.load(open(seed))
base = [r for r in d["results"] if not r.get("skipped")]
recs = []
for i in range(n):
    r = copy.deepcopy(base[i % len(base)])
    r["experiment"] = "%s-%d" % (r["experiment"], i // len(base))
    if per_second:
        r.setdefault("extra", {})["per_second"] = [
            {"t": t, "messages": 1000 + t % 97, "mib": 1.0, "p99_ns": 50000 + t % 13} for t in range(per_second)]
    recs.append(r)
d["results"] = recs
json.dump(d, open(out, "w"))
PY
  /usr/bin/time -v "$iolab" report "$work/r$n.json" -o "$work/r$n.html" >/dev/null 2>"$work/time$n"
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time$n")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time$n")
  user=$(sed -n 's/.*User time (seconds): //p' "$work/time$n")
  sys=$(sed -n 's/.*System time (seconds): //p' "$work/time$n")
  # On a shared machine the CPU time is the figure to compare; wall time grows with the load.
  echo "records $n: wall $wall, CPU ${user} s user + ${sys} s sys, max RSS $((rss / 1024)) MiB," \
       "page $(( $(stat -c %s "$work/r$n.html") / 1024 )) KiB, load $(cut -d' ' -f1-3 /proc/loadavg)"
done
