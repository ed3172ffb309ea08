#!/usr/bin/env python3
"""Study 6 probe (docs/design/kernel.md, section 3): G A-tiles per thread block.

Rewrites an emitted kernel file in place so that each block of G x T threads runs G consecutive
A-tiles at once, T threads each, on the same B-tile (T = the file's spmmc_threads): warps
[g T/32, (g+1) T/32) run tile blockIdx.x * G + g. The tiles of a block load the same rows of B
where their columns overlap (the row reordering puts rows that share columns in neighbouring
tiles), so the second load of a row can hit L1 instead of L2; the cost is G code streams per SM
instead of one. The tile bodies are untouched, so the result stays bit-identical.

This is a measurement probe for scripts/kernel-study.sh (emit with --prepare-only, rewrite, then
build and time), not what spmmc emits.

usage: scripts/studies/tiles-per-block.py G FILE.cu
"""
import os
import re
import sys


def rewrite(text: str, g: int) -> str:
    def sub(old: str, new: str, count_expected=None) -> None:
        nonlocal text
        found = text.count(old)
        if found == 0 or (count_expected is not None and found != count_expected):
            raise SystemExit(f"tiles-per-block: expected {count_expected or 'some'} of {old!r}, found {found}")
        text = text.replace(old, new)

    sub("__global__ void __launch_bounds__(spmmc_threads, spmmc_min_blocks)",
        f"__global__ void __launch_bounds__(spmmc_threads * {g}, (spmmc_min_blocks + {g - 1}) / {g})")
    sub("const int64_t col = bt * spmmc_n1 + static_cast<int64_t>(threadIdx.x) * spmmc_v;",
        "const int64_t col = bt * spmmc_n1 + static_cast<int64_t>(threadIdx.x % spmmc_threads) * spmmc_v;")
    sub("    switch (blockIdx.x) {", f"    switch (blockIdx.x * {g} + threadIdx.x / spmmc_threads) {{")
    sub("config.gridDim = dim3(spmmc_kernel_tiles[j], grid_y);",
        f"config.gridDim = dim3((spmmc_kernel_tiles[j] + {g - 1}) / {g}, grid_y);", 1)
    sub("config.blockDim = dim3(spmmc_threads);", f"config.blockDim = dim3(spmmc_threads * {g});", 1)
    sub("spmmc_kernels[0], spmmc_threads, 0)", f"spmmc_kernels[0], spmmc_threads * {g}, 0)", 1)
    # grid.y: the blocks along x are the tile groups.
    body = re.search(r"int64_t spmmc_grid_y\(int64_t b_tiles, int sms\) \{.*?\n\}", text, re.S)
    if not body:
        raise SystemExit("tiles-per-block: no spmmc_grid_y")
    grouped = body.group(0).replace("/ spmmc_a_tiles", f"/ ((spmmc_a_tiles + {g - 1}) / {g})")
    if grouped == body.group(0):
        raise SystemExit("tiles-per-block: spmmc_grid_y does not divide by spmmc_a_tiles")
    text = text.replace(body.group(0), grouped)
    return text


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ("2", "4"):
        raise SystemExit(__doc__)
    g, path = int(sys.argv[1]), sys.argv[2]
    with open(path) as f:
        text = f.read()
    if "tiles-per-block probe" in text:
        return  # already rewritten
    text = f"// tiles-per-block probe: G = {g} (scripts/studies/tiles-per-block.py)\n" + rewrite(text, g)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
