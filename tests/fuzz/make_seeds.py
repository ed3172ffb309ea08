#!/usr/bin/env python3
"""Writes the seed corpora of the binary formats: tests/fuzz/corpus/{npy,npz,safetensors}/.

Tiny matrices (a few cells) in every layout the readers are meant to accept, plus a few
well-formed files that are not a 2-D real matrix (which must be refused cleanly). Output is
deterministic (zip entries get a fixed date), so rerunning it changes nothing in git.

Needs numpy, scipy and safetensors:  python3 tests/fuzz/make_seeds.py [CORPUS_ROOT]
The mtx and smtx seeds are written by hand; this script leaves them alone.
"""
import io
import os
import sys
import zipfile

import numpy as np
import scipy.sparse as sp
from safetensors.numpy import load as st_load
from safetensors.numpy import save as st_save

FIXED_DATE = (1980, 1, 1, 0, 0, 0)

# A 3x4 matrix with zeros, a small value (for the threshold) and mixed signs.
BASE = np.array([[1.5, 0.0, -2.0, 0.0],
                 [0.0, 0.0, 0.0, 0.0],
                 [0.125, 3.0, 0.0, -0.25]])


def npy_bytes(array):
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=False)
    return out.getvalue()


def npz_bytes(arrays, compressed):
    """What np.savez / np.savez_compressed write, with a fixed date in every zip entry."""
    out = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w") as zf:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=FIXED_DATE)
            info.compress_type = method
            zf.writestr(info, npy_bytes(np.asanyarray(array)))
    return out.getvalue()


def scipy_npz_arrays(matrix):
    """The arrays scipy.sparse.save_npz stores for `matrix` (csr, csc or coo)."""
    fmt = matrix.format
    arrays = {}
    if fmt in ("csr", "csc"):
        arrays["indices"] = matrix.indices
        arrays["indptr"] = matrix.indptr
    elif fmt == "coo":
        arrays["row"] = matrix.row
        arrays["col"] = matrix.col
    else:
        raise ValueError(fmt)
    arrays["format"] = np.array(fmt.encode("ascii"))
    arrays["shape"] = np.array(matrix.shape)
    arrays["data"] = matrix.data
    return arrays


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def npy_seeds(root):
    d = os.path.join(root, "npy")
    write(os.path.join(d, "f32_c_order.npy"), npy_bytes(BASE.astype("<f4")))
    write(os.path.join(d, "f64_c_order.npy"), npy_bytes(BASE.astype("<f8")))
    write(os.path.join(d, "f16_c_order.npy"), npy_bytes(BASE.astype("<f2")))
    write(os.path.join(d, "f32_fortran_order.npy"), npy_bytes(np.asfortranarray(BASE.astype("<f4"))))
    write(os.path.join(d, "f32_big_endian.npy"), npy_bytes(BASE.astype(">f4")))
    write(os.path.join(d, "f64_1x1.npy"), npy_bytes(np.array([[7.0]])))
    write(os.path.join(d, "f32_all_zero.npy"), npy_bytes(np.zeros((2, 2), dtype="<f4")))
    # Well-formed .npy files that are not a 2-D float matrix: to be refused.
    write(os.path.join(d, "bad_1d.npy"), npy_bytes(np.arange(4, dtype="<f4")))
    write(os.path.join(d, "bad_3d.npy"), npy_bytes(np.ones((2, 1, 2), dtype="<f4")))
    write(os.path.join(d, "bad_int32.npy"), npy_bytes(BASE.astype("<i4")))
    write(os.path.join(d, "bad_empty_shape.npy"), npy_bytes(np.zeros((0, 3), dtype="<f4")))
    write(os.path.join(d, "bad_nan.npy"), npy_bytes(np.array([[1.0, np.nan]], dtype="<f4")))
    write(os.path.join(d, "bad_truncated.npy"), npy_bytes(BASE.astype("<f4"))[:-3])


def npz_seeds(root):
    d = os.path.join(root, "npz")
    csr = sp.csr_matrix(BASE.astype(np.float32))
    write(os.path.join(d, "scipy_csr.npz"), npz_bytes(scipy_npz_arrays(csr), compressed=False))
    write(os.path.join(d, "scipy_csr_compressed.npz"), npz_bytes(scipy_npz_arrays(csr), compressed=True))
    write(os.path.join(d, "scipy_csc_f64.npz"), npz_bytes(scipy_npz_arrays(sp.csc_matrix(BASE)), compressed=False))
    write(os.path.join(d, "scipy_coo.npz"), npz_bytes(scipy_npz_arrays(sp.coo_matrix(BASE)), compressed=False))
    dup = sp.coo_matrix((np.array([1.0, 2.0, -1.0]), (np.array([0, 0, 1]), np.array([1, 1, 0]))), shape=(2, 2))
    write(os.path.join(d, "scipy_coo_duplicates.npz"), npz_bytes(scipy_npz_arrays(dup), compressed=False))
    write(os.path.join(d, "dense_savez.npz"), npz_bytes({"arr_0": BASE.astype("<f4")}, compressed=False))
    write(os.path.join(d, "dense_savez_compressed.npz"), npz_bytes({"weight": BASE}, compressed=True))
    bsr = sp.bsr_matrix(BASE)
    bad = {"indices": bsr.indices, "indptr": bsr.indptr, "format": np.array(b"bsr"),
           "shape": np.array(bsr.shape), "data": bsr.data}
    write(os.path.join(d, "bad_scipy_bsr.npz"), npz_bytes(bad, compressed=False))
    write(os.path.join(d, "bad_not_a_zip.npz"), npy_bytes(BASE.astype("<f4")))


def safetensors_seeds(root):
    d = os.path.join(root, "safetensors")
    write(os.path.join(d, "f32.safetensors"), st_save({"weight": BASE.astype(np.float32)}))
    write(os.path.join(d, "f16.safetensors"), st_save({"weight": BASE.astype(np.float16)}))
    write(os.path.join(d, "f64.safetensors"), st_save({"weight": BASE.astype(np.float64)}))
    # bfloat16 is not a numpy type: write the header by hand (top 16 bits of each float32).
    bits = (BASE.astype(np.float32).view(np.uint32) >> 16).astype("<u2")
    header = b'{"weight":{"dtype":"BF16","shape":[3,4],"data_offsets":[0,%d]}}' % bits.nbytes
    header += b" " * (-len(header) % 8)
    write(os.path.join(d, "bf16.safetensors"), len(header).to_bytes(8, "little") + header + bits.tobytes())
    write(os.path.join(d, "two_tensors_metadata.safetensors"),
          st_save({"a.weight": BASE.astype(np.float32), "b.bias": np.ones((1, 2), dtype=np.float32)},
                  metadata={"format": "pt"}))
    write(os.path.join(d, "bad_1d.safetensors"), st_save({"weight": np.ones(3, dtype=np.float32)}))
    write(os.path.join(d, "bad_int32.safetensors"), st_save({"weight": BASE.astype(np.int32)}))
    write(os.path.join(d, "bad_truncated.safetensors"), st_save({"weight": BASE.astype(np.float32)})[:-5])


def check(root):
    """The valid seeds read back with the reference libraries."""
    for name in os.listdir(os.path.join(root, "npy")):
        if not name.startswith("bad_"):
            assert np.load(os.path.join(root, "npy", name)).shape in ((3, 4), (1, 1), (2, 2)), name
    for name in os.listdir(os.path.join(root, "npz")):
        if name.startswith("scipy_"):
            sp.load_npz(os.path.join(root, "npz", name))
        elif name.startswith("dense_"):
            np.load(os.path.join(root, "npz", name))
    for name in os.listdir(os.path.join(root, "safetensors")):
        if not name.startswith("bad_") and not name.startswith("bf16"):
            with open(os.path.join(root, "safetensors", name), "rb") as f:
                st_load(f.read())


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    npy_seeds(root)
    npz_seeds(root)
    safetensors_seeds(root)
    check(root)
    for fmt in ("npy", "npz", "safetensors"):
        print(f"{fmt}: {len(os.listdir(os.path.join(root, fmt)))} seeds in {os.path.join(root, fmt)}")


if __name__ == "__main__":
    main()
