#!/usr/bin/env bash
# Issue 23's stability benchmark: `iolab recommend --json` twice, as two fresh
# processes, then wall time of each, the fraction of measured cells decided
# (winner or tie) and the fraction whose verdict (same winner, or same tied
# set, or undecided both times) is identical in both runs.
# Usage: bench/recommend_stability.sh [path/to/iolab] [extra recommend options...]
set -euo pipefail
iolab=${1:-build/release/iolab}
shift || true
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
uptime
for i in 1 2; do
  start=$(date +%s.%N)
  "$iolab" recommend --json "$@" > "$out/run$i.json"
  end=$(date +%s.%N)
  echo "run $i: $(echo "$end - $start" | bc) s"
done
python3 - "$out/run1.json" "$out/run2.json" <<'PY'
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:3]]
def key(c): return (c["op"], c["band"], c["flush"], c["column"])
def verdict(c): return (c["verdict"], c["winner"], tuple(sorted(c["tied"])))
cells = [{key(c): c for c in r["cells"] if c.get("measured", True)} for r in runs]
for i, r in enumerate(cells, 1):
    decided = sum(c["verdict"] in ("winner", "tie") for c in r.values())
    print(f"run {i}: {decided} of {len(r)} measured cells decided ({100 * decided / max(1, len(r)):.0f}%)")
common = cells[0].keys() & cells[1].keys()
same = sum(verdict(cells[0][k]) == verdict(cells[1][k]) for k in common)
print(f"same verdict in both runs: {same} of {len(common)} cells ({100 * same / max(1, len(common)):.0f}%)")
for k in sorted(common, key=str):
    a, b = cells[0][k], cells[1][k]
    if verdict(a) != verdict(b):
        print("  differs:", " ".join(x or "-" for x in k), "|", a["summary"], "|", b["summary"])
PY
