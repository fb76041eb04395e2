#!/usr/bin/env bash
# The Java 17 reference of issue 45 (bench/java/README.md): compiles one of bench/java's
# programs, with the helpers they share (bench/java/RefSupport.java), with javac into a temporary
# directory, runs it, and removes the directory on exit.
#
#   bench/java_reference.sh commitlog [--mechanism kafka,mapped,transient,activemq|all] [--messages N]
#                                     [--size BYTES] [--segment BYTES] [--runs N] [--dir PATH] ...
#   bench/java_reference.sh store     [--records N] [--runs N] [--step BYTES] [--dir PATH] ...
#
# Arguments after the first pass through (--help lists them). JAVA_OPTS adds JVM options.
set -euo pipefail

usage() {
  echo "usage: bench/java_reference.sh commitlog|store [ARGS...]  (ARGS: --help for each)" >&2
  exit 2
}

[ $# -ge 1 ] || usage
case "$1" in
  commitlog) main=CommitLogReference ;;
  store) main=StoreReference ;;
  -h|--help) echo "usage: bench/java_reference.sh commitlog|store [ARGS...]  (ARGS: --help for each)"; exit 0 ;;
  *) echo "java_reference.sh: unknown reference '$1' (commitlog or store)" >&2; exit 2 ;;
esac
shift

for tool in javac java; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "java_reference.sh: $tool not found: install openjdk-17-jdk-headless" >&2
    exit 127
  fi
done
version=$(javac -version 2>&1 | sed -n 's/^javac \([0-9][0-9]*\).*/\1/p')
if [ -z "$version" ] || [ "$version" -lt 17 ]; then
  echo "java_reference.sh: javac 17 or newer needed (found: $(javac -version 2>&1)): install openjdk-17-jdk-headless" >&2
  exit 127
fi

src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/java
tmp=$(mktemp -d "${TMPDIR:-/tmp}/iolab-java-classes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

javac --release 17 -d "$tmp" "$src/$main.java" "$src/RefSupport.java"
# clk.tck: /proc/self/stat counts user and system time in these ticks
# shellcheck disable=SC2086
java ${JAVA_OPTS:-} -Dclk.tck="$(getconf CLK_TCK)" -cp "$tmp" "$main" "$@"
