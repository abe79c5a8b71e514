#!/usr/bin/env bash
# The README's test command: installs what the checks need, then runs every check the project
# has. .ci/run calls exactly this. Ends with an aggregated "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
log=$(mktemp)
trap 'rm -f "$log"' EXIT
step() { printf '\n== %s (%s)\n' "$1" "$(date +%H:%M:%S)"; }

step "toolchain"
rustup component add rustfmt clippy >/dev/null 2>&1 || true
rustup target add wasm32-unknown-unknown >/dev/null

step "format"
cargo fmt --all -- --check

step "clippy (native)"
cargo clippy --locked --workspace --all-targets -- -D warnings

step "clippy (core for wasm32)"
cargo clippy --locked -p sloscope-core --target wasm32-unknown-unknown -- -D warnings

step "real backend: llama-server + SmolLM2 Q4_1/F16 (scripts/setup-llama.sh)"
eval "$(bash scripts/setup-llama.sh)"

step "tests (native, including the llama-server end-to-end test)"
set +e
cargo test --locked --workspace --no-fail-fast -- --include-ignored 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

passed=$(grep -Eo '^test result: .* ([0-9]+) passed' "$log" | grep -Eo '[0-9]+ passed' | awk '{s+=$1} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo
echo "$passed passed, $failed failed"
exit "$status"
