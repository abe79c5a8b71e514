#!/usr/bin/env bash
# The README's test command: installs what the checks need, then runs every check the project
# has. .ci/run calls exactly this. Ends with an aggregated "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
# One-off builds: incremental compilation only adds work to a build from scratch (and a change of
# this setting rebuilds everything, so every step below shares it).
export CARGO_INCREMENTAL=0
log=$(mktemp)
trap 'rm -f "$log" "$log.e2e" "$log.page"' EXIT
step() { printf '\n== %s (%s)\n' "$1" "$(date +%H:%M:%S)"; }

step "toolchain"
rustup component add rustfmt clippy >/dev/null 2>&1 || true
rustup target add wasm32-unknown-unknown >/dev/null

step "format"
cargo fmt --all -- --check

step "structure: no import circles between files, the core's stages in order"
python3 scripts/rust_cycles.py .
python3 scripts/structure.py .

step "web tools: chromium, trunk, wasm-bindgen-cli, binaryen, playwright-core (scripts/setup-web.sh)"
eval "$(bash scripts/setup-web.sh)"
cargo fetch --locked

step "real backend: llama-server + SmolLM2 Q4_1/F16 (scripts/setup-llama.sh)"
eval "$(bash scripts/setup-llama.sh)"

# Clippy lints every workspace crate while it is compiled for the tests, as `cargo clippy` would
# (the same driver, the same `-D warnings`, clippy.toml's limits): one compile where a separate
# `cargo clippy` run type-checked everything a second time (about 100 s of 2 cores). Test
# harnesses are compiled unoptimized, the libraries they test as their profile says
# (scripts/lint-compile.sh). Every cargo command below shares these variables, so none rebuilds
# what another built.
CLIPPY_ARGS=$(printf '%s__CLIPPY_HACKERY__' -D warnings)
CLIPPY_DRIVER=$(rustup which clippy-driver)
RUSTC_WORKSPACE_WRAPPER=$PWD/scripts/lint-compile.sh
export CLIPPY_ARGS CLIPPY_DRIVER RUSTC_WORKSPACE_WRAPPER

step "build, linted by clippy with -D warnings (native, every target in one feature set: the tests' binaries, sloscope and xtask for the page's tests)"
cargo build --locked --workspace --exclude sloscope-web --all-targets

# The page's two builds (the browser unit tests' and trunk's release build) run in the
# background while the native tests run, at the idle scheduling class: they take only the
# processor time the tests leave unused (the tests mostly wait on llama-server and scripted
# servers), never any a test asks for. Their output follows the native tests' in the log.
# The browser unit tests build in a target directory of their own: cargo locks target/debug while
# it compiles there (a wasm32 build puts its procedural macros in it), which would hold the
# native tests back until this build ended.
# They are built unoptimized (Cargo.toml's web-test profile; the dev profile optimises every
# dependency for the native timing tests).
web_tests=(env CARGO_TARGET_DIR=target/web-tests cargo test --locked -p sloscope-web --target wasm32-unknown-unknown --profile web-test)
page_build() {
  # A failure here (a lint, say) is reported by the browser-test step below, which compiles again.
  "${web_tests[@]}" --no-run || true
  # The release page is built by rustc alone: clippy's driver turns rustc's MIR optimisations off
  # in what it compiles (LLVM still optimises at the profile's level), which the shipped page
  # must not depend on. The lints ran on this code in the build above.
  # Its two binaries (the page, the reader worker) in one cargo call first: their link-time
  # optimisations, one thread each, then run side by side, where trunk's calls (one binary each)
  # take turns; trunk finds them built (the same flags) and runs wasm-bindgen and wasm-opt.
  local release=(env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS)
  "${release[@]}" cargo build --locked --manifest-path web/Cargo.toml \
    --target wasm32-unknown-unknown --profile wasm-release --bins
  "${release[@]}" trunk build --release
  # The user guide, next to the page (dist/guide/): mdBook is installed here, off the native
  # tests' critical path, and the build itself takes under a second.
  "${release[@]}" bash scripts/build-guide.sh
}
step "page builds started in the background (idle priority): browser unit tests, trunk build --release, the user guide (mdBook)"
idle=(chrt --idle 0)
"${idle[@]}" true 2>/dev/null || idle=(nice -n 19)
("${idle[@]}" bash -c "$(declare -p web_tests; declare -f page_build); set -euo pipefail; page_build") >"$log.page" 2>&1 &
page_pid=$!
trap 'kill "$page_pid" 2>/dev/null || true; rm -f "$log" "$log.e2e" "$log.page"' EXIT

step "tests (native, including the llama-server end-to-end test)"
set +e
# Four test threads: the CLI's tests that start llama-server take two cores between them
# (crates/cli/tests/it/common.rs, `llama_cores`); the other two threads run the tests that
# mostly wait (scripted servers, timeouts, signals) meanwhile.
cargo test --locked --workspace --exclude sloscope-web --no-fail-fast -- --include-ignored --test-threads=4 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

step "page builds (background, since the native tests began): their output"
set +e
wait "$page_pid"
page_status=$?
set -e
cat "$log.page"
if [ "$page_status" -ne 0 ]; then
  echo "the page's release build or the guide's build failed (exit $page_status)" >&2
  exit "$page_status"
fi

step "page: browser unit tests (wasm-bindgen-test in headless Chromium), the core and the page linted by clippy for wasm32 as they compile"
set +e
WASM_BINDGEN_TEST_TIMEOUT=120 WASM_BINDGEN_TEST_DRIVER_TIMEOUT=30 \
  "${web_tests[@]}" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
set -e

step "page: end to end in headless Chromium (playwright-core; xtask generates the large run)"
set +e
# Two test files at a time (node's default here is one per core less one): each drives its own
# Chromium on its own port, and one file's page waits on the other's processor time.
SLOSCOPE_BIN=target/debug/sloscope SLOSCOPE_XTASK=target/debug/xtask node --test --test-concurrency=2 tests/e2e/ 2>&1 | tee "$log.e2e"
e2e=${PIPESTATUS[0]}
set -e
[ "$e2e" -eq 0 ] || status=1

passed=$(grep -Eo '^test result: .* ([0-9]+) passed' "$log" | grep -Eo '[0-9]+ passed' | awk '{s+=$1} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
e2e_pass=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log.e2e" | head -n1)
e2e_fail=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log.e2e" | head -n1)
passed=$((passed + ${e2e_pass:-0}))
failed=$((failed + ${e2e_fail:-0}))
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo
echo "$passed passed, $failed failed"
exit "$status"
