#!/usr/bin/env bash
# The test command's compiler for the workspace's crates (scripts/test.sh sets it as
# RUSTC_WORKSPACE_WRAPPER; Cargo calls it as `lint-compile.sh RUSTC ARGS…`): clippy's driver,
# so every crate is linted as it is compiled, and test harnesses unoptimized.
#
# A test harness (rustc's `--test`: a crate's unit tests, an integration test) is compiled at
# opt-level 0. The code it tests is the library it links, compiled once, at its profile's level
# (Cargo.toml: the collector at 2 for the timing tests, the core at 1 for the adversarial suite);
# only the tests' own code and what it instantiates are not optimized. Cargo sets one level per
# package, the library and its tests alike: the core's and the collector's four harnesses took
# 74 of the native build's 260 s of CPU, 22 at level 0. A later `-C opt-level` overrides an
# earlier one.
set -euo pipefail
driver=${CLIPPY_DRIVER:?set CLIPPY_DRIVER to clippy-driver}
for arg in "$@"; do
  if [ "$arg" = --test ]; then
    exec "$driver" "$@" -C opt-level=0
  fi
done
exec "$driver" "$@"
