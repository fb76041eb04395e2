#!/usr/bin/env bash
# Checks an installed iolab without touching the machine's /usr:
#   scripts/check-install.sh tree BUILD_DIR   cmake --install BUILD_DIR into a temporary prefix
#   scripts/check-install.sh deb FILE.deb [--no-run]
#                                             unpack the package (dpkg -x) into a temporary root;
#                                             also runs `iolab run --quick` from it (not with --no-run,
#                                             as the test Install.DebUnpacksAndAnswers does)
# Then: the programs, man pages, completions and docs are where docs/install.md
# says, and the installed iolab answers --version and methods. Exit 0 when all hold.
set -euo pipefail
mode=${1:?tree BUILD_DIR or deb FILE.deb}
what=${2:?tree BUILD_DIR or deb FILE.deb}
run_quick=1
[ "${3:-}" = --no-run ] && run_quick=0
root=$(mktemp -d "${TMPDIR:-/tmp}/iolab-install-XXXXXX")
trap 'rm -rf "$root"' EXIT
case $mode in
  tree) cmake --install "$what" --prefix "$root/usr" >/dev/null ;;
  deb) dpkg-deb -x "$what" "$root"
       dpkg-deb -f "$what" Package Version Architecture Depends ;;
  *) echo "check-install: unknown mode '$mode' (tree or deb)" >&2; exit 2 ;;
esac
p=$root/usr
fail=0
need() { [ -e "$p/$1" ] || { echo "check-install: missing $1" >&2; fail=1; }; }
need bin/iolab
need share/man/man1/iolab.1
need share/man/man1/iolab-run.1
need share/bash-completion/completions/iolab
need share/zsh/vendor-completions/_iolab
need share/doc/iolab/README.md
need share/doc/iolab/docs/results-format.md
need share/doc/iolab/docs/install.md
[ "$fail" = 0 ] || exit 1
# Every command has its page.
for cmd in $("$p/bin/iolab" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'); do
  need "share/man/man1/iolab-$cmd.1"
done
[ "$fail" = 0 ] || exit 1
# The pages are well-formed roff (warnings are errors).
if command -v groff >/dev/null; then
  for page in "$p"/share/man/man1/*.1; do
    out=$(groff -man -ww -z "$page" 2>&1) || true
    [ -z "$out" ] || { echo "check-install: $page: $out" >&2; exit 1; }
  done
fi
bash -n "$p/share/bash-completion/completions/iolab"
if command -v zsh >/dev/null; then zsh -n "$p/share/zsh/vendor-completions/_iolab"; fi
"$p/bin/iolab" --version
"$p/bin/iolab" methods >/dev/null
if [ "$mode" = deb ] && [ "$run_quick" = 1 ]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/iolab-quick-XXXXXX")
  trap 'rm -rf "$root" "$dir"' EXIT
  (cd "$dir" && "$p/bin/iolab" run --quick --dir "$dir" >/dev/null)
  echo "check-install: iolab run --quick from the package: ok"
fi
echo "check-install: $mode $what: ok"
