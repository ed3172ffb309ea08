#!/usr/bin/env python3
"""Writes the small .npy and .npz fixtures of the spmmc reader tests.

Run from anywhere: python3 tests/data/make_npy_npz_fixtures.py
Made with numpy 2.4.6 and scipy 1.17.1. The outputs are committed; the build and the tests
never need Python. The tests hard-code the expected matrices below (kept tiny on purpose).
"""
import io
import os
import zipfile

import numpy as np
import scipy
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
NPY = os.path.join(HERE, "npy")
NPZ = os.path.join(HERE, "npz")

# The reference matrix (values exact in float16): 3x4, row 1 empty.
DENSE = np.array([[1.0, 0.0, -2.5, 0.0],
                  [0.0, 0.0, 0.0, 0.0],
                  [0.5, 3.0, 0.0, -1.0]])


def save_npy(name, array, version=None):
    path = os.path.join(NPY, name)
    with open(path, "wb") as f:
        np.lib.format.write_array(f, array, version=version)


def make_npy():
    os.makedirs(NPY, exist_ok=True)
    save_npy("f2_c.npy", DENSE.astype("<f2"))
    save_npy("f4_c.npy", DENSE.astype("<f4"))
    save_npy("f8_c.npy", DENSE.astype("<f8"))
    save_npy("f4_fortran.npy", np.asfortranarray(DENSE.astype("<f4")))
    save_npy("f4_big_endian.npy", DENSE.astype(">f4"))
    save_npy("f8_big_endian_fortran.npy", np.asfortranarray(DENSE.astype(">f8")))
    save_npy("f4_v2.npy", DENSE.astype("<f4"), version=(2, 0))
    save_npy("f4_v3.npy", DENSE.astype("<f4"), version=(3, 0))
    # Must-fail inputs made by numpy itself.
    save_npy("i4.npy", DENSE.astype("<i4"))
    save_npy("c8.npy", DENSE.astype("<c8"))
    save_npy("b1.npy", DENSE != 0)
    save_npy("rank1.npy", np.arange(1, 6, dtype="<f4"))
    save_npy("rank3.npy", np.ones((2, 2, 2), dtype="<f4"))
    save_npy("structured.npy", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
    save_npy("zero_rows.npy", np.zeros((0, 4), dtype="<f4"))


def save_sparse(name, matrix, compressed):
    sp.save_npz(os.path.join(NPZ, name), matrix, compressed=compressed)


def make_npz():
    os.makedirs(NPZ, exist_ok=True)
    dense = DENSE.astype(np.float32)
    # csr/csc/coo x compressed/uncompressed x matrix/array.
    for fmt in ("csr", "csc", "coo"):
        for compressed in (False, True):
            tag = "compressed" if compressed else "stored"
            save_sparse(f"{fmt}_matrix_{tag}.npz", sp.coo_matrix(dense).asformat(fmt), compressed)
            save_sparse(f"{fmt}_array_{tag}.npz", sp.coo_array(dense).asformat(fmt), compressed)
    # Non-canonical csr: unsorted columns, a duplicate (row 0, col 2:
    # -2 + -0.5 = -2.5) and an explicit zero at (2, 2). Loads as DENSE.
    data = np.array([-2.0, 1.0, -0.5, 3.0, 0.0, 0.5, -1.0], dtype=np.float64)
    indices = np.array([2, 0, 2, 1, 2, 0, 3], dtype=np.int64)
    indptr = np.array([0, 3, 3, 7], dtype=np.int64)
    save_sparse("csr_noncanonical.npz", sp.csr_matrix((data, indices, indptr), shape=(3, 4)), False)
    # Unsorted coo with an explicit zero at (1, 1) and a duplicate (0, 2): -2.5 + 0.25 = -2.25.
    row = np.array([2, 0, 2, 0, 1, 2], dtype=np.int32)
    col = np.array([3, 2, 0, 0, 1, 1], dtype=np.int32)
    val = np.array([-1.0, -2.5, 0.5, 1.0, 0.0, 3.0], dtype=np.float32)
    save_sparse("coo_duplicates.npz", sp.coo_matrix((np.append(val, 0.25), (np.append(row, 0), np.append(col, 2))),
                                                    shape=(3, 4)), True)
    # Other value dtypes.
    # scipy.sparse refuses float16, but a hand-made archive of the same layout may hold it.
    m = sp.csr_matrix(dense)
    np.savez_compressed(os.path.join(NPZ, "csr_f16.npz"), indices=m.indices, indptr=m.indptr, format=b"csr",
                        shape=m.shape, data=m.data.astype(np.float16))
    np.savez(os.path.join(NPZ, "csr_int64_indices.npz"), indices=m.indices.astype(np.int64),
             indptr=m.indptr.astype(np.int64), format=b"csr", shape=m.shape, data=m.data)
    save_sparse("csr_int8_data.npz", sp.csr_matrix((DENSE * 2).astype(np.int8)), False)
    save_sparse("csr_int64_data.npz", sp.csr_matrix((DENSE * 2).astype(np.int64)), True)
    save_sparse("csr_bool.npz", sp.csr_matrix(DENSE != 0), False)
    save_sparse("csr_empty.npz", sp.csr_matrix((5, 7), dtype=np.float32), False)
    # 2-D coo written with the N-D 'coords' layout (np.savez, as save_npz does for N-D coo).
    c = sp.coo_array(dense)
    np.savez(os.path.join(NPZ, "coo_coords.npz"), coords=np.stack(c.coords), format=b"coo", shape=c.shape,
             data=c.data, _is_array=True)
    # Older files stored 'format' as a str array ('<U3').
    m = sp.csr_matrix(dense)
    np.savez(os.path.join(NPZ, "csr_format_str.npz"), indices=m.indices, indptr=m.indptr, format="csr",
             shape=m.shape, data=m.data)
    # Must-fail inputs made by scipy/numpy.
    save_sparse("bsr.npz", sp.bsr_matrix(dense), False)
    save_sparse("dia.npz", sp.dia_matrix(dense), False)
    save_sparse("complex.npz", sp.csr_matrix(dense.astype(np.complex64)), False)
    np.savez(os.path.join(NPZ, "dense_only.npz"), weights=dense)


if __name__ == "__main__":
    assert np.__version__ == "2.4.6" and scipy.__version__ == "1.17.1", (np.__version__, scipy.__version__)
    make_npy()
    make_npz()
    for folder in (NPY, NPZ):
        for name in sorted(os.listdir(folder)):
            size = os.path.getsize(os.path.join(folder, name))
            print(f"{os.path.relpath(os.path.join(folder, name), HERE)}: {size} bytes")
