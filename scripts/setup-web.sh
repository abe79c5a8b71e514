#!/usr/bin/env bash
# Installs the page's build and browser-test tools, pinned, from the registries only:
#   Debian: chromium, chromium-driver, poppler-utils (pdftotext: the print test reads the PDF) · crates: trunk 0.21.14 (debug build: 2.5 min instead of 9),
#   wasm-bindgen-cli 0.2.130 (= Cargo.lock; 1.5 min) — both without TLS (no default features: they
#   download nothing here, and ring, rustls and their C code were a third of the compile) ·
#   npm: binaryen 132 (wasm-opt), playwright-core, axe-core (accessibility checks).
# Idempotent; prints `export PATH=…` for node_modules/.bin on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
log() { echo "setup-web: $*" >&2; }
TRUNK=0.21.14
BINDGEN=0.2.130
lock_bindgen=$(grep -A1 '^name = "wasm-bindgen"$' "$root/Cargo.lock" | sed -n 's/^version = "\(.*\)"/\1/p' | head -n1)
if [ -n "$lock_bindgen" ] && [ "$lock_bindgen" != "$BINDGEN" ]; then
  log "Cargo.lock has wasm-bindgen $lock_bindgen but the tools are pinned to $BINDGEN"; exit 1
fi
rustup target add wasm32-unknown-unknown >/dev/null 2>&1
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null || ! command -v pdftotext >/dev/null; then
  log "installing chromium, chromium-driver and poppler-utils (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends chromium chromium-driver poppler-utils >/dev/null
fi
if ! trunk --version 2>/dev/null | grep -q "$TRUNK"; then
  log "cargo install trunk $TRUNK (debug build)"
  CARGO_INCREMENTAL=0 cargo install trunk --version "=$TRUNK" --locked --debug --no-default-features --quiet >&2
fi
if ! wasm-bindgen --version 2>/dev/null | grep -q "$BINDGEN"; then
  log "cargo install wasm-bindgen-cli $BINDGEN"
  CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback cargo install wasm-bindgen-cli --version "=$BINDGEN" --no-default-features --quiet >&2
fi
if [ ! -x "$root/node_modules/.bin/wasm-opt" ] || [ ! -d "$root/node_modules/playwright-core" ] || [ ! -f "$root/node_modules/axe-core/axe.min.js" ]; then
  log "npm ci (binaryen, playwright-core, axe-core)"
  (cd "$root" && npm ci --ignore-scripts --no-audit --no-fund >&2)
fi
echo "export PATH='$root/node_modules/.bin:$HOME/.cargo/bin:$PATH' CHROMEDRIVER=/usr/bin/chromedriver TRUNK_SKIP_VERSION_CHECK=true"
