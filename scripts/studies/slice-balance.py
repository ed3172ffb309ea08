#!/usr/bin/env python3
"""What B's slice in shared memory costs in barriers and saves in L2 reads (issue 27), and its limit, on the CPU.

For each layer, the schedule of tools/microbench/slice_spmm.cu: blocks of R consecutive rows; the union of a
block's columns staged KC of B's rows at a time (a chunk: all warps wait at a barrier after each); the block's
rows dealt to its 8 warps longest first, in a snake. Per (R, KC):
  balance   the chunks' products over 8 x their busiest warp's, summed over blocks and chunks: the share of
            the warps' time spent on products rather than waiting at the chunk's barrier
  chunks    chunks per block (barriers per block)
  per row   products per row and chunk (a run of a row's products between two barriers)
  staged    staged rows of B per product (the L2 reads of B against the warp per row's one row a product)
and at n columns (--n, default 512) the predicted limit of the second form (slice+A) with V = 1 and 4
columns a lane, µs: the larger of its shared-memory time (per product and block of 32V columns one broadcast
load of the product and one load of B's V floats, 1, 2 or 4 wavefronts of 128 bytes; plus the staged rows'
writes; one wavefront a clock an SM) and its L2 time (the staged rows' bytes at the rate cp.async fetched
them in the project's study 4 (f): 8.3 bytes a clock an SM at V = 1, 12.1 at V = 4); beside the warp per
row's L2 time (every product's 32V floats at 30 bytes a clock an SM, study 4 (b')). The H100's 132 SMs at
1980 MHz (docs/benchmarks.md, study 4). No launch floor, no latency: a lower bound, not a prediction of time.

usage: scripts/studies/slice-balance.py [--n N] LAYER.smtx...   (spmmc's .smtx: the DLMC layers)
Prints one Markdown row per layer and shape. Pure Python: the eight layers of slice.cases take a second.
"""
import bisect
import sys

from matrix_rows import read_smtx

WARPS = 8
SHAPES = ((16, 128), (16, 256), (32, 128), (64, 128))  # (R, KC)
SMS, CLOCK_GHZ = 132, 1.98
SMEM_WAVEFRONTS_PER_CLOCK = 1.0  # 128-byte wavefronts an SM (study 4 (d): 123 bytes a clock)
CP_ASYNC_BYTES_PER_CLOCK = {1: 8.3, 4: 12.1}  # L2 -> shared, fetched, an SM (study 4 (f))
L2_BYTES_PER_CLOCK = 30.0  # L2 -> registers an SM (study 4 (b'))


def us(clocks_per_sm):
    return clocks_per_sm / SMS / (CLOCK_GHZ * 1e3)


def limits(products, staged_rows, n, v):
    """The second form's shared-memory and L2 limits and the warp per row's L2 limit at n, V (µs)."""
    column_blocks = -(-n // (32 * v))
    wavefronts = products * column_blocks * (1 + v) + staged_rows * column_blocks * v
    smem = us(wavefronts / SMEM_WAVEFRONTS_PER_CLOCK)
    l2 = us(staged_rows * column_blocks * 128 * v / CP_ASYNC_BYTES_PER_CLOCK[v])
    warp_row = us(products * n * 4 / L2_BYTES_PER_CLOCK)
    return smem, l2, warp_row


def warps_of(rows, cols):
    """The block's rows dealt to warps longest first, in a snake (slot_row in slice_spmm.cu)."""
    order = sorted(rows, key=lambda r: (-len(cols[r]), r))
    warps = [[] for _ in range(WARPS)]
    for q, r in enumerate(order):
        j, w = divmod(q, WARPS)
        warps[WARPS - 1 - w if j % 2 else w].append(r)
    return warps


def measure(k, cols, R, KC):
    """Barrier balance, chunks a block, products a row and chunk, and the staged rows of B in all (R, KC)."""
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
    blocks = -(-len(cols) // R)
    return busy / max(waited, 1), chunks / blocks, busy / max(runs, 1), staged


def main(args):
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 64
    n = 512
    if args[0] == "--n":
        if len(args) < 3 or not args[1].isdigit() or int(args[1]) < 1:
            print("slice-balance: --n takes a positive number of columns, then the layers", file=sys.stderr)
            return 64
        n, args = int(args[1]), args[2:]
    print(f"n = {n}; limits in µs: slice+A's shared memory / L2 at V = 1 and at V = 4, the warp per row's L2\n")
    print("| layer | rows × columns | products | R | KC | balance | chunks | per row | staged | V = 1 | V = 4 | warp per row |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for path in args:
        try:
            k, cols = read_smtx(path)
        except (OSError, ValueError, IndexError) as e:
            print(f"slice-balance: {path}: cannot read it ({e})", file=sys.stderr)
            return 66
        name = "/".join(path.rsplit("/", 2)[-2:])
        products = sum(map(len, cols))
        for R, KC in SHAPES:
            balance, chunks, per_row, staged_rows = measure(k, cols, R, KC)
            smem1, l2_1, _ = limits(products, staged_rows, n, 1)
            smem4, l2_4, warp_row = limits(products, staged_rows, n, 4)
            print(f"| {name} | {len(cols)} × {k} | {products} | {R} | {KC} | {balance:.2f} | {chunks:.1f} | "
                  f"{per_row:.1f} | {staged_rows / max(products, 1):.2f} | {smem1:.1f} / {l2_1:.1f} | {smem4:.1f} / {l2_4:.1f} | {warp_row:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
