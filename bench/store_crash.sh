#!/usr/bin/env bash
# The record store's crash test, longer than the one in the test suite: a
# child process puts and removes with sync-every-put and reports each
# acknowledged operation through a pipe; the parent SIGKILLs it at a random
# moment, reopens the journal and checks that it holds exactly the state
# after the acknowledged operations (or one more), every record CRC-checked.
# Backends rotate per trial; odd trials start from a journal with holes.
#
# Usage: bench/store_crash.sh [TRIALS] [DIR]
#   TRIALS  number of kills (default 500)
#   DIR     parent of the scratch directory (default /dev/shm; give a
#           directory on disk, e.g. /var/tmp, to pay real fdatasync costs)
# Exit status 0 when every trial held.
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-500}
dir=${2:-/dev/shm}
build=build/store-crash
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target iolab_store_tests -j"$(nproc)" >/dev/null
echo "store crash test: $trials trials under $dir"
IOLAB_STORE_CRASH_TRIALS=$trials IOLAB_STORE_CRASH_DIR=$dir \
  "$build/tests/iolab_store_tests" --gtest_filter='StoreCrash.*' --gtest_brief=1
