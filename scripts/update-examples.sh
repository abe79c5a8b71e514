#!/usr/bin/env bash
# Regenerates static/examples/ (the page's "Load example" set) from a real collection: runs
# scripts/demo.sh into a scratch directory and copies the plan, the lineage records and the run
# files, with this machine's cache path replaced by "$SLOSCOPE_CACHE" so no local path lands in
# the repository.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SLOSCOPE_DEMO_SERVE=0 bash "$root/scripts/demo.sh" "$work/out"
cache=${SLOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sloscope}
dest=$root/static/examples
rm -rf "$dest"
mkdir -p "$dest/lineage/other-gates" "$dest/runs"
copy() { sed -e "s|$cache|\$SLOSCOPE_CACHE|g" -e "s|$HOME|~|g" "$1" > "$2"; }
copy "$work/out/plan.json" "$dest/plan.json"
for f in "$work/out"/lineage/*.json; do copy "$f" "$dest/lineage/$(basename "$f")"; done
for f in "$work/out"/lineage/other-gates/*.json; do copy "$f" "$dest/lineage/other-gates/$(basename "$f")"; done
for f in "$work/out"/runs/*.json; do copy "$f" "$dest/runs/$(basename "$f")"; done
echo "update-examples: wrote $(find "$dest" -name '*.json' | wc -l) files to static/examples/" >&2
# What is drawn and said of the example set is snapshotted: record the new set's charts and
# analysis (review the diff before committing).
cd "$root"
INSTA_UPDATE=always cargo test -q -p sloscope-charts --test svg >&2
INSTA_UPDATE=always cargo test -q -p sloscope-core --test it snapshots >&2
echo "update-examples: chart and analysis snapshots updated; review them with git diff" >&2
