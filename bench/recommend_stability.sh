#!/usr/bin/env bash
# Issue 23's stability benchmark: `iolab recommend --json` twice, as two fresh
# processes, then wall time of each, the fraction of measured cells decided
# (winner or tie) and the fraction whose verdict (same winner, or same tied
# set, or undecided both times) is identical in both runs, and what stopped
# the undecided cells. KEEP=DIR keeps both runs' JSON there, and each run's
# measured results (--save) as saved1.json and saved2.json, so that
# `iolab recommend DIR/saved1.json` prints that run's table and seed rules again.
# Usage: bench/recommend_stability.sh [path/to/iolab] [extra recommend options...]
set -euo pipefail
iolab=${1:-build/release/iolab}
shift || true
if [ -n "${KEEP:-}" ]; then
  out=$KEEP
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
uptime
for i in 1 2; do
  start=$(date +%s.%N)
  save=()
  if [ -n "${KEEP:-}" ]; then save=(--save "$out/saved$i.json"); fi
  "$iolab" recommend --json "${save[@]}" "$@" > "$out/run$i.json"
  end=$(date +%s.%N)
  echo "run $i: $(echo "$end - $start" | bc) s"
done
python3 - "$out/run1.json" "$out/run2.json" <<'PY'
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:3]]
def key(c): return (c["op"], c["band"], c["flush"], c["column"])
def verdict(c): return (c["verdict"], c["winner"], tuple(sorted(c["tied"])))
cells = [{key(c): c for c in r["cells"] if c.get("measured", True)} for r in runs]
def stopped(c):
    # What kept an undecided cell from deciding: how it stopped, and the first comparison that failed.
    r = c["reason"]
    if "no trusted figure" in r: why = "a candidate without a trusted figure at one size"
    elif "neither above" in r: why = "a pair neither beaten nor equivalent (an interval across the margin)"
    elif "changes within the band" in r: why = "the answer changes within the band (sizes settled, or bound to settle, differently)"
    else: why = r.split(";")[0]
    stops = {"budget": "budget spent", "max_rounds": "most rounds reached", "settled": "every size settled",
             "sizes_differ": "sizes' answers already differ",
             "futile": "stopped: more rounds than it could take would not settle it"}
    return f'{stops.get(c["stop"], c["stop"])}: {why}'
for i, (run, r) in enumerate(zip(runs, cells), 1):
    decided = sum(c["verdict"] in ("winner", "tie") for c in r.values())
    not_run = sum(1 for c in run["cells"] if not c.get("measured", True) and c["reason"].startswith("not run"))
    safe = sum(c["verdict"] == "undecided" and bool(c.get("best_at_every_size")) for c in r.values())
    print(f"run {i}: {decided} of {len(r)} measured cells decided ({100 * decided / max(1, len(r)):.0f}%); "
          f"{not_run} cells not run for the budget; {safe} undecided cells name a safe choice (best or tied at every size)")
    why = {}
    for c in r.values():
        if c["verdict"] == "undecided": why[stopped(c)] = why.get(stopped(c), 0) + 1
    for w, n in sorted(why.items(), key=lambda x: -x[1]): print(f"  undecided, {w}: {n}")
common = cells[0].keys() & cells[1].keys()
same = sum(verdict(cells[0][k]) == verdict(cells[1][k]) for k in common)
print(f"same verdict in both runs: {same} of {len(common)} cells ({100 * same / max(1, len(common)):.0f}%)")
for k in sorted(common, key=str):
    a, b = cells[0][k], cells[1][k]
    if verdict(a) != verdict(b):
        print("  differs:", " ".join(x or "-" for x in k), "|", a["summary"], "|", b["summary"])
PY
