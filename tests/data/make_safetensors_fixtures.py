#!/usr/bin/env python3
"""Writes the safetensors fixtures of tests/compiler/formats/read_safetensors_test.cpp.

Every file is written by the reference implementation (the `safetensors` Python package, tested
with 0.8.0 and numpy 2.4.6). numpy has no bfloat16, so the BF16 tensor is handed to the same
library as raw bit patterns through safetensors.TensorSpec. Run from anywhere:

    python3 tests/data/make_safetensors_fixtures.py

The expected values are spelled out again in the C++ test; change both together.
"""
import os

import numpy as np
import safetensors
from safetensors.numpy import load_file, save_file

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "safetensors")


def spec(array, dtype_name=None):
    """A TensorSpec for a C-contiguous little-endian numpy array (optionally renamed dtype)."""
    assert array.flags["C_CONTIGUOUS"] and array.dtype.byteorder in "<=|"
    return safetensors.TensorSpec(dtype=dtype_name or array.dtype.name, shape=list(array.shape),
                                  data_ptr=array.ctypes.data, data_len=array.nbytes)


def write_multi():
    """multi.safetensors: one tensor of each float dtype, a 1-D bias, an int tensor, metadata.

    One metadata key only: the library writes metadata in hash-map order, so several keys
    would make the output differ from run to run."""
    arrays = {
        # 5 non-zeros; -0.0 counts as a zero; -0.125 is what --threshold 0.2 prunes.
        "w_f32": np.array([[1.5, 0.0, -2.0, 0.0],
                           [0.0, -0.0, 0.0, 0.0],
                           [0.25, 3.0, 0.0, -0.125]], dtype=np.float32),
        # 65504 is the largest half, 2**-24 the smallest subnormal.
        "w_f16": np.array([[0.5, 0.0, -1.25],
                           [65504.0, 2.0 ** -24, 0.0]], dtype=np.float16),
        "w_f64": np.array([[1e-3, 0.0],
                           [0.0, -123.456]], dtype=np.float64),
        "bias": np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32),
        "idx": np.array([[1, 0], [0, 7]], dtype=np.int32),
    }
    # bfloat16 bit patterns: 1.0, 0, -3.0 / 0.125, 3.140625, -0.0
    bf16_bits = np.array([[0x3F80, 0x0000, 0xC040],
                          [0x3E00, 0x4049, 0x8000]], dtype=np.uint16)
    specs = {name: spec(a) for name, a in arrays.items()}
    specs["w_bf16"] = spec(bf16_bits, "bfloat16")
    path = os.path.join(HERE, "multi.safetensors")
    safetensors.serialize_file(specs, path, metadata={"source": "spmmc test fixture"})
    # Read back through the library: the file must be valid and hold what we meant.
    with safetensors.safe_open(path, framework="numpy") as f:
        assert sorted(f.keys()) == sorted(list(arrays) + ["w_bf16"])
        for name, a in arrays.items():
            assert np.array_equal(f.get_tensor(name), a)
    raw = dict(safetensors.deserialize(open(path, "rb").read()))
    assert raw["w_bf16"]["dtype"] == "BF16" and bytes(raw["w_bf16"]["data"]) == bf16_bits.tobytes()


def write_odd_shapes():
    """odd_shapes.safetensors: tensors that exist but are not usable as a sparse matrix."""
    arrays = {
        "conv": np.arange(1, 9, dtype=np.float32).reshape(2, 2, 2),
        "empty": np.zeros((0, 3), dtype=np.float32),
        "scalar": np.array(2.5, dtype=np.float32),
        "mask": np.array([[1, 0], [0, 1]], dtype=np.uint8),
        "has_nan": np.array([[1.0, np.nan]], dtype=np.float32),
    }
    path = os.path.join(HERE, "odd_shapes.safetensors")
    save_file(arrays, path)
    back = load_file(path)
    for name, a in arrays.items():
        assert np.array_equal(back[name], a, equal_nan=True), name


def main():
    os.makedirs(HERE, exist_ok=True)
    write_multi()
    write_odd_shapes()
    for name in sorted(os.listdir(HERE)):
        size = os.path.getsize(os.path.join(HERE, name))
        assert size < 4096, name
        print(f"{name}: {size} bytes")


if __name__ == "__main__":
    main()
