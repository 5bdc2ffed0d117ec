#!/usr/bin/env bash
# Reads a `swift test` log and fails on any skipped test whose reason is not the one skip CI
# allows: the optional shared footage (../shared/recordings) is absent. Every other skip (a tool
# not installed, a case that did not render, a browser that did not start) would let CI pass on
# a machine that cannot run the suite. The test helpers already turn such skips into failures
# when CI=true (Tests/Support/Fixtures.swift, `Skip`); this check also catches a skip written
# without them.
#
#   Tools/check-skips.sh LOG      exit 0 when every skip is allowed, 1 (reasons printed) if not
set -euo pipefail
log=${1:?usage: Tools/check-skips.sh LOG}
[ -f "$log" ] || { echo "check-skips: no log at $log" >&2; exit 2; }
allowed="Test skipped - needs the shared footage:"
skips=$(grep -E ': Test skipped( |$)' "$log" || true)
unexpected=$(printf '%s\n' "$skips" | grep -v -F "$allowed" | grep -v '^$' || true)
count=$(printf '%s\n' "$skips" | grep -c -F "$allowed" || true)
if [ -n "$unexpected" ]; then
  echo "check-skips: tests skipped for a reason other than the absent shared footage:"
  printf '%s\n' "$unexpected" | sed 's/^/  /'
  exit 1
fi
echo "check-skips: no unexpected skip ($count skipped for the absent shared footage)"
