#!/usr/bin/env bash
# The decision's stability benchmark (issue 39): `iolab recommend --json`
# twice, as two fresh processes, then per run its wall time and how its
# measured conditions ended (by the rule, with a set within the zone, or by
# the budget), and across the two runs per condition measured in both:
#   (a) decided by the rule in both runs;
#   (b) consistent: each run's pick is inside the other run's within-zone set.
# A condition that ended by the budget in either run is not counted as
# agreeing in (a); (b) compares picks whatever ended them, and says how many
# of its agreements rest on a budget end. KEEP=DIR keeps both runs' JSON
# there, and each run's measured records (--save) as saved1.json and
# saved2.json, so `iolab recommend DIR/saved1.json` prints that run again.
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
  "$iolab" recommend --json "${save[@]}" "$@" > "$out/run$i.json" 2> "$out/run$i.err"
  end=$(date +%s.%N)
  echo "run $i: $(echo "$end - $start" | bc) s; $(grep -m1 '\] plan:' "$out/run$i.err" || true)"
done
python3 - "$out/run1.json" "$out/run2.json" <<'PY'
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:3]]
def key(c): return (c["op"], c["size"], c["flush"], c["column"])
measured = [{key(c): c for c in r["conditions"] if c["stop"] in ("selected", "budget")} for r in runs]
for i, (run, m) in enumerate(zip(runs, measured), 1):
    rule = sum(c["stop"] == "selected" for c in m.values())
    within = sum(c["stop"] == "selected" and len(c["within"]) > 1 for c in m.values())
    wider = sum(c["indifference"] > 1.05 + 1e-9 for c in m.values())
    not_run = sum(c["stop"] == "not run" for c in run["conditions"])
    print(f"run {i}: {len(m)} measured conditions, {rule} ended by the rule ({100 * rule / max(1, len(m)):.1f}%; "
          f"{within} with a set within the zone), {len(m) - rule} by the budget; {wider} at a widened indifference; "
          f"{not_run} not run for the budget")
    for c in m.values():
        if c["stop"] == "budget":
            print(f"  budget: {c['op']} {c['size']} {c['flush']} {c['column']}: {c['why']}; left {', '.join(c['within'])}")
common = sorted(measured[0].keys() & measured[1].keys(), key=str)
both_rule = sum(measured[0][k]["stop"] == "selected" and measured[1][k]["stop"] == "selected" for k in common)
def consistent(a, b): return a["pick"] in b["within"] and b["pick"] in a["within"]
agree = [k for k in common if consistent(measured[0][k], measured[1][k])]
on_budget = sum(measured[0][k]["stop"] == "budget" or measured[1][k]["stop"] == "budget" for k in agree)
n = max(1, len(common))
print(f"conditions measured in both runs: {len(common)}")
print(f"(a) decided by the rule in both runs: {both_rule} ({100 * both_rule / n:.1f}%)")
print(f"(b) consistent (each pick inside the other run's within set): {len(agree)} ({100 * len(agree) / n:.1f}%), "
      f"{on_budget} of them with a budget end in a run")
for k in common:
    a, b = measured[0][k], measured[1][k]
    if not consistent(a, b):
        ratio = next((x.get("pick_over_it", {}).get("estimate") for x in a["candidates"] if x["method"] == b["pick"]), None)
        print(f"  differs: {' '.join(map(str, k))}: run 1 {a['pick']} (within: {', '.join(a['within'])}; {a['stop']}), "
              f"run 2 {b['pick']} (within: {', '.join(b['within'])}; {b['stop']})"
              + (f"; run 1 put its pick {ratio:.3f}x over run 2's" if ratio else ""))
PY
