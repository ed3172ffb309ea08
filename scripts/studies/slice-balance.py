#!/usr/bin/env python3
"""What B's slice in shared memory costs in barriers and saves in L2 reads (issue 27), on the CPU.

For each layer, the schedule of tools/microbench/slice_spmm.cu: blocks of R consecutive rows; the union of a
block's columns staged KC of B's rows at a time (a chunk: all warps wait at a barrier after each); the block's
rows dealt to its 8 warps longest first, in a snake. Per (R, KC):
  balance   the chunks' products over 8 x their busiest warp's, summed over blocks and chunks: the share of
            the warps' time spent on products rather than waiting at the chunk's barrier
  chunks    chunks per block (barriers per block)
  per row   products per row and chunk (a run of a row's products between two barriers)
  staged    staged rows of B per product (the L2 reads of B against the warp per row's one row a product)

usage: scripts/studies/slice-balance.py LAYER.smtx...   (spmmc's .smtx: the DLMC layers)
Prints one Markdown row per layer and shape. Pure Python: the eight layers of slice.cases take under a second.
"""
import bisect
import sys

WARPS = 8
SHAPES = ((16, 128), (16, 256), (32, 128), (64, 128))  # (R, KC)


def read_smtx(path):
    with open(path) as f:
        rows, cols = (int(x) for x in f.readline().replace(",", " ").split()[:2])
        ptr = [int(x) for x in f.readline().split()]
        idx = [int(x) for x in f.readline().split()]
    if len(ptr) != rows + 1 or ptr[-1] != len(idx):
        raise ValueError("row pointers do not match the column indices")
    return cols, [sorted(idx[ptr[r]:ptr[r + 1]]) for r in range(rows)]


def warps_of(rows, cols):
    """The block's rows dealt to warps longest first, in a snake (slot_row in slice_spmm.cu)."""
    order = sorted(rows, key=lambda r: (-len(cols[r]), r))
    warps = [[] for _ in range(WARPS)]
    for q, r in enumerate(order):
        j, w = divmod(q, WARPS)
        warps[WARPS - 1 - w if j % 2 else w].append(r)
    return warps


def measure(k, cols, R, KC):
    busy = waited = chunks = runs = staged = 0
    for r0 in range(0, len(cols), R):
        rows = range(r0, min(len(cols), r0 + R))
        union = sorted({c for r in rows for c in cols[r]})
        staged += len(union)
        bounds = union[::KC] + [k]  # chunk c stages the union's columns in [bounds[c], bounds[c + 1])
        warps = warps_of(rows, cols)
        for c in range(len(bounds) - 1):
            work = [sum(bisect.bisect_left(cols[r], bounds[c + 1]) - bisect.bisect_left(cols[r], bounds[c]) for r in w)
                    for w in warps]
            busy += sum(work)
            waited += WARPS * max(work)
            runs += sum(1 for r in rows if cols[r])
        chunks += len(bounds) - 1
    products = sum(map(len, cols))
    blocks = -(-len(cols) // R)
    return busy / max(waited, 1), chunks / blocks, busy / max(runs, 1), staged / max(products, 1)


def main(paths):
    if not paths or paths[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 64
    print("| layer | rows × columns | products | R | KC | balance | chunks | per row | staged |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|")
    for path in paths:
        try:
            k, cols = read_smtx(path)
        except (OSError, ValueError, IndexError) as e:
            print(f"slice-balance: {path}: cannot read it ({e})", file=sys.stderr)
            return 66
        name = "/".join(path.rsplit("/", 2)[-2:])
        for R, KC in SHAPES:
            balance, chunks, per_row, staged = measure(k, cols, R, KC)
            print(f"| {name} | {len(cols)} × {k} | {sum(map(len, cols))} | {R} | {KC} | {balance:.2f} | {chunks:.1f} | "
                  f"{per_row:.1f} | {staged:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
