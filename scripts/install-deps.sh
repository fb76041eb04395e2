#!/usr/bin/env bash
# Installs the Debian packages iolab needs, only those missing; safe to run again.
# Uses sudo when not root. Usage: scripts/install-deps.sh [build|test|all]
set -euo pipefail
what=${1:-build}

build_pkgs=(build-essential cmake pkg-config liburing-dev libfmt-dev libcli11-dev
  nlohmann-json3-dev libxxhash-dev libtomlplusplus-dev liblmdb-dev libsqlite3-dev libaio-dev
  libopenmpi-dev openmpi-bin)
# fio-examples: the job files the fio job-file tests read (fio itself is only recommended, not installed).
# zsh: the install test checks that the zsh completion parses (zsh -n).
# strace: `iolab trace` records through it; its CLI test traces a small shell command.
test_pkgs=(libgtest-dev libgmock-dev libbenchmark-dev chromium clang libclang-rt-14-dev fio-examples zsh strace)

pkgs=("${build_pkgs[@]}")
[ "$what" = build ] || pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The report's chart bundles come from npm. Some machines carry a nodejs
# that ships npm itself (and conflicts with Debian's npm package).
command -v npm >/dev/null || missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
