#!/usr/bin/env bash
# Issue 28: why the emitted balanced kernel ran slower than the study's kernel of the same design
# (docs/design/balanced.md). Times both on the matrices of scripts/studies/graph-gap.cases at n = 128
# (the study's kernels with scripts/studies/csr-variants.sh --study graph_spmm, the emitted files with
# scripts/kernel-study.sh), then profiles one launch of each with Nsight Compute. Needs a GPU, nvcc,
# ncu and spmmc with spmmc-gpu-bench in SPMMC_BUILD_DIR; writes under OUT (default /tmp/out).
# usage: scripts/studies/balanced-gap.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
build=${SPMMC_BUILD_DIR:-build}
scripts/studies/gen-rmat.sh
scripts/studies/csr-variants.sh scripts/studies/graph-gap-study.cases --study graph_spmm --runs 30 >"$OUT/study.md" 2>&1
scripts/kernel-study.sh scripts/studies/graph-gap.cases --out .gpu-gap --runs 30 --jobs 8 >"$OUT/files.md" 2>"$OUT/files.log"
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum
for m in cs4 pubmed; do
  matrix=../shared/data/graphs/$m.mtx
  ncu --kernel-name-base demangled -k 'regex:block_pieces<4, 16>' --launch-count 2 --metrics "$metrics" --csv \
    "$build/microbench/graph_spmm" "$matrix" 128 --runs 2 >"$OUT/ncu-study-$m.csv" 2>"$OUT/ncu-study-$m.log"
  ncu -k 'regex:spmmc_balanced' --launch-count 2 --metrics "$metrics" --csv \
    "$build/spmmc-gpu-bench" --matrix "$matrix" --n 128 --kernel ".gpu-gap/graph_${m}_n128_balanced/libgraph_${m}_n128_balanced.so" \
    --name "graph_${m}_n128_balanced" --runs 2 --warmup 1 --spmmc-only >"$OUT/ncu-file-$m.csv" 2>"$OUT/ncu-file-$m.log"
done
grep -h "block 16 warps, pieces of 64\|cusparse\|CSR_ALG\|DEFAULT\|^## " "$OUT/study.md" | head -40
tail -n 6 "$OUT/files.md"
for f in "$OUT"/ncu-*.csv; do echo "== $f"; grep -v '^==' "$f" | python3 -c '
import csv,sys
rows=list(csv.reader(sys.stdin))
if not rows: sys.exit()
h=rows[0]; i=h.index("Metric Name"); v=h.index("Metric Value")
for r in rows[1:]:
  if len(r)>v: print(r[i], r[v])' | sort -u | head -30; done
