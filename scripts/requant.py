#!/usr/bin/env python3
"""Re-encode a GGUF model's weights, offline, copying all metadata (tokenizer, chat template)
unchanged except general.file_type:
    requant.py SRC.gguf DST.gguf [F16|Q8_0|Q4_0]      (default F16)
Every tensor is dequantized first. F16: 2-D weights as F16, norms and 1-D tensors as F32 (the
float baseline of a quantized artifact). Q8_0 / Q4_0: the 2-D block weights quantized to that
type with gguf-py's reference quantizer (round-to-nearest, one scale per 32 weights, as
llama-quantize's without an importance matrix), the token embedding as Q8_0 (as the shipped
artifact keeps it), norms as F32 — the demo's candidate artifacts, quantizations of the F16.
Deterministic: the same input and pins (gguf, numpy) give the same bytes.
"""
import sys

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter
from gguf.quants import dequantize, quantize

# general.file_type values (llama.cpp's LLAMA_FTYPE_MOSTLY_*).
FTYPES = {"F16": 1, "Q4_0": 2, "Q8_0": 7}
# Weights per quantization block of Q8_0 and Q4_0.
BLOCK = 32


def field_value(field):
    vtype = field.types[0]
    if vtype == GGUFValueType.ARRAY:
        sub = field.types[1]
        if sub == GGUFValueType.STRING:
            return [bytes(field.parts[i]).decode("utf-8") for i in field.data], vtype, sub
        return [field.parts[i].tolist()[0] for i in field.data], vtype, sub
    if vtype == GGUFValueType.STRING:
        return bytes(field.parts[field.data[0]]).decode("utf-8"), vtype, None
    return field.parts[field.data[0]].tolist()[0], vtype, None


def encode(name, data, target):
    """(array, raw type) of one tensor in the target encoding."""
    if not (data.ndim >= 2 and min(data.shape) > 1):
        return np.ascontiguousarray(data.astype(np.float32)), GGMLQuantizationType.F32
    if target == "F16" or data.shape[-1] % BLOCK:
        return np.ascontiguousarray(data.astype(np.float16)), GGMLQuantizationType.F16
    qtype = GGMLQuantizationType.Q8_0 if name == "token_embd.weight" else GGMLQuantizationType[target]
    return quantize(np.ascontiguousarray(data.astype(np.float32)), qtype), qtype


def main(src, dst, target):
    reader = GGUFReader(src)
    arch = field_value(reader.fields["general.architecture"])[0]
    writer = GGUFWriter(dst, arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        value, vtype, sub = field_value(field)
        if name == "general.file_type":
            value = FTYPES[target]
        writer.add_key_value(name, value, vtype, sub_type=sub)
    for t in reader.tensors:
        data, raw = encode(t.name, dequantize(t.data, t.tensor_type), target)
        writer.add_tensor(t.name, data, raw_dtype=raw)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] not in FTYPES):
        sys.exit("usage: requant.py SRC.gguf DST.gguf [F16|Q8_0|Q4_0]")
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else "F16")
