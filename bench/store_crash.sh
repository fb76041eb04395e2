#!/usr/bin/env bash
# The record store's crash tests, longer than the ones in the test suite.
# 1. Process crashes: a child process puts and removes with sync-every-put
#    and reports each acknowledged operation through a pipe; the parent
#    SIGKILLs it after reading a seeded number of acknowledgements, reopens
#    the journal and checks that it holds exactly the state after the
#    acknowledged operations (or one more), every record CRC-checked.
#    Backends rotate per trial; odd trials start from a journal with holes.
# 2. Power losses: bench/crash_states over STATES crash states (a SIGKILL
#    cannot catch a missing fsync; these can).
#
# Usage: bench/store_crash.sh [TRIALS] [DIR] [STATES]
#   TRIALS  number of kills (default 500)
#   DIR     parent of the scratch directory (default /dev/shm; give a
#           directory on disk, e.g. /var/tmp, to pay real fdatasync costs)
#   STATES  power-loss states (default 100000)
# Exit status 0 when every trial and every state held.
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-500}
dir=${2:-/dev/shm}
states=${3:-100000}
build=build/store-crash
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target iolab_store_tests crash_states -j"$(nproc)" >/dev/null
echo "store crash test: $trials trials under $dir"
IOLAB_STORE_CRASH_TRIALS=$trials IOLAB_STORE_CRASH_DIR=$dir \
  "$build/tests/iolab_store_tests" --gtest_filter='StoreCrash.*' --gtest_brief=1
echo "store power-loss states: $states"
"$build/bench/crash_states" --states "$states" --seed 1
