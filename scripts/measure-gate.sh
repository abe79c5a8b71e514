#!/usr/bin/env bash
# Measures the embedded default's quality gate for real: the Q4_1 artifact against its F16 float
# baseline, each on its own llama-server (CPU), over examples/llama-cpu/eval.txt, with
# `sloscope gate`; writes DIR/gate.json (the quality-gate record with its evidence), replacing
# the asserted one scripts/make-lineage.sh wrote. DIR must hold deployment.json and baseline.json.
# Note: the demo's F16 is the Q4_1 artifact dequantised (scripts/requant.py), so the two share
# their weights and differ only in the kernels' arithmetic: a check of the method, not evidence
# about a quantization.
# Usage: scripts/measure-gate.sh SLOSCOPE_BIN DIR      Exit: sloscope gate's (0 accept, 1 reject …)
set -euo pipefail
bin=${1:?usage: measure-gate.sh SLOSCOPE_BIN DIR}
dir=${2:?usage: measure-gate.sh SLOSCOPE_BIN DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
: "${LLAMA_SERVER:?run scripts/setup-llama.sh first}" "${SLOSCOPE_Q4_GGUF:?}" "${SLOSCOPE_F16_GGUF:?}" "${SLOSCOPE_PY:?}"
port() { "$SLOSCOPE_PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
serve() { # model port
  "$LLAMA_SERVER" -m "$1" -c 2048 -t 1 --host 127.0.0.1 --port "$2" --no-webui >/dev/null 2>&1 &
  pids+=($!)
}
wait_up() {
  for _ in $(seq 1 240); do
    if "$SLOSCOPE_PY" -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:$1/health', timeout=1).status == 200 else 1)" 2>/dev/null; then return 0; fi
    sleep 0.5
  done
  echo "measure-gate: llama-server on port $1 did not become healthy" >&2; return 1
}
qp=$(port); fp=$(port)
serve "$SLOSCOPE_Q4_GGUF" "$qp"; serve "$SLOSCOPE_F16_GGUF" "$fp"
wait_up "$qp"; wait_up "$fp"
set +e
"$bin" gate --quantized "http://127.0.0.1:$qp" --float "http://127.0.0.1:$fp" \
  --eval "$root/examples/llama-cpu/eval.txt" --deployment "$dir/deployment.json" \
  --baseline "$dir/baseline.json" --out "$dir/gate.json"
rc=$?
set -e
exit "$rc"
