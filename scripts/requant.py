#!/usr/bin/env python3
"""Re-encode a GGUF model's weights: dequantize every tensor and write 2-D weights as F16
(norms and 1-D tensors as F32), copying all metadata (tokenizer, chat template) unchanged.

Used to derive the float baseline (F16) of the quantized artifact under test, offline:
    requant.py SRC.gguf DST.gguf
Deterministic: the same input and pins (gguf, numpy) give the same bytes.
"""
import sys

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter
from gguf.quants import dequantize

# general.file_type value for "mostly F16" (llama.cpp's LLAMA_FTYPE_MOSTLY_F16).
FTYPE_MOSTLY_F16 = 1


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


def main(src, dst):
    reader = GGUFReader(src)
    arch = field_value(reader.fields["general.architecture"])[0]
    writer = GGUFWriter(dst, arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        value, vtype, sub = field_value(field)
        if name == "general.file_type":
            value = FTYPE_MOSTLY_F16
        writer.add_key_value(name, value, vtype, sub_type=sub)
    for t in reader.tensors:
        data = dequantize(t.data, t.tensor_type)
        if data.ndim >= 2 and min(data.shape) > 1:
            writer.add_tensor(t.name, np.ascontiguousarray(data.astype(np.float16)),
                              raw_dtype=GGMLQuantizationType.F16)
        else:
            writer.add_tensor(t.name, np.ascontiguousarray(data.astype(np.float32)),
                              raw_dtype=GGMLQuantizationType.F32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: requant.py SRC.gguf DST.gguf")
    main(sys.argv[1], sys.argv[2])
