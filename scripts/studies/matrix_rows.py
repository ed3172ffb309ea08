"""A sparse matrix's pattern as rows of sorted column indices, for the CPU studies (block-sharing.py,
slice-balance.py): read_rows(path) -> (columns, rows).

.smtx (spmmc's DLMC format): the header's shape, then row pointers and column indices; a file whose pointers do
not match its indices raises ValueError. Anything else is read as Matrix Market coordinate (general or
symmetric: both triangles then), duplicate entries kept once. I/O and parse errors propagate (OSError,
ValueError, IndexError): the callers name the file and exit 66.
"""


def read_smtx(path):
    with open(path) as f:
        rows, cols = (int(x) for x in f.readline().replace(",", " ").split()[:2])
        ptr = [int(x) for x in f.readline().split()]
        idx = [int(x) for x in f.readline().split()]
    if len(ptr) != rows + 1 or ptr[-1] != len(idx):
        raise ValueError("row pointers do not match the column indices")
    return cols, [sorted(idx[ptr[r]:ptr[r + 1]]) for r in range(rows)]


def read_mtx(path):
    with open(path) as f:
        header = f.readline().lower()
        symmetric = any(s in header for s in ("symmetric", "hermitian", "skew"))
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        rows, cols = (int(x) for x in line.split()[:2])
        pattern = [set() for _ in range(rows)]
        for line in f:
            p = line.split()
            if len(p) < 2:
                continue
            i, j = int(p[0]) - 1, int(p[1]) - 1
            pattern[i].add(j)
            if symmetric and i != j:
                pattern[j].add(i)
    return cols, [sorted(c) for c in pattern]


def read_rows(path):
    return read_smtx(path) if path.endswith(".smtx") else read_mtx(path)
