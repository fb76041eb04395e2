#!/usr/bin/env bash
# Builds the libFuzzer targets with CMake (-DIOLAB_FUZZ=ON, clang, ASan +
# UBSan) in build/fuzz and runs them, one at a time; a finding stops the
# script with the fuzzer's exit status.
#
#   fuzz/run.sh build            build every target (build/fuzz/<name>_fuzz)
#   fuzz/run.sh run [NAME...]    each for FUZZ_SECONDS (default 10) from its seed corpus (what .ci/run does)
#   fuzz/run.sh long [NAME...]   each for RUNS executions (default 1000000), final stats printed
#
# NAME is a target (job_fuzz) or its corpus name (job); none means all.
# Seed corpora are fuzz/corpus/<name>/ (copied, so the fuzzer's additions
# stay out of the source tree); findings (crash-*, leak-*, timeout-*) land
# in build/fuzz/findings/<target>/, logs in build/fuzz/<target>.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/fuzz
mode=${1:-run}
[ $# -gt 0 ] && shift
all=(journal_fuzz job_fuzz results_fuzz size_fuzz commitlog_fuzz fio_job_fuzz cli_args_fuzz trace_fuzz)
[ $# -gt 0 ] || set -- "${all[@]}"
targets=()
for t in "$@"; do targets+=("${t%_fuzz}_fuzz"); done
declare -A max_len=([journal_fuzz]=4096 [job_fuzz]=2048 [results_fuzz]=4096 [size_fuzz]=64
                    [commitlog_fuzz]=4096 [fio_job_fuzz]=4096 [cli_args_fuzz]=1024
                    [trace_fuzz]=4096)

case $mode in
  build | run | long) ;;
  *) echo "usage: fuzz/run.sh build|run|long [NAME...]" >&2; exit 2 ;;
esac

cxx=$(command -v clang++-14 || command -v clang++ || true)
[ -n "$cxx" ] || { echo "fuzz: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }

# -O1 -g as libFuzzer's documentation builds; no tests, no -Werror (clang's
# warnings are not gcc's, which the main build holds to -Werror).
cmake -S "$root" -B "$out" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DIOLAB_FUZZ=ON -DIOLAB_TESTS=OFF -DIOLAB_WERROR=OFF >/dev/null
cmake --build "$out" -j"$(nproc)" --target "${targets[@]}"
[ "$mode" = build ] && exit 0

for t in "${targets[@]}"; do
  name=${t%_fuzz}
  seeds=("$root"/fuzz/corpus/"$name"/*)
  mkdir -p "$out/corpus/$t" "$out/findings/$t"
  # First each committed seed whole, as one run: fuzzing cuts inputs to
  # -max_len, and some seeds (150,000-deep nesting) matter at their full size.
  echo "== $t: each of its ${#seeds[@]} seeds whole"
  if ! "$out/$t" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$out/findings/$t/" "${seeds[@]}" \
      >"$out/$t.seeds.log" 2>&1; then
    grep -E '==[0-9]+==ERROR|SUMMARY|Running:' "$out/$t.seeds.log" | tail -5
    exit 1
  fi
  cp -n "${seeds[@]}" "$out/corpus/$t/" 2>/dev/null || true
  if [ "$mode" = run ]; then how=(-max_total_time="${FUZZ_SECONDS:-10}"); else how=(-runs="${RUNS:-1000000}"); fi
  echo "== $t: ${how[*]}"
  set +e
  "$out/$t" "${how[@]}" -max_len="${max_len[$t]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/findings/$t/" "$out/corpus/$t" 2>&1 | tee "$out/$t.log" |
    grep -E '^(#[0-9]+ +DONE|Done|stat::|==[0-9]+==ERROR|SUMMARY)|INFO: (Loaded|seed)'
  status=${PIPESTATUS[0]}
  set -e
  [ "$status" -eq 0 ] || { echo "== $t: finding (exit $status), see $out/$t.log and $out/findings/$t/" >&2; exit "$status"; }
done
