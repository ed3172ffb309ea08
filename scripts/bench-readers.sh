#!/usr/bin/env bash
# Reader speed and memory: loads every matrix under the shared data folder and a generated
# 10-million-non-zero .mtx with `spmmc inspect --json`, and prints Markdown tables of load time
# (as spmmc measures it: open to validated CSR) and peak RSS (GNU time) against the CSR size.
#
# usage: scripts/bench-readers.sh [SHARED_DATA_DIR] [SCRATCH_DIR]
# Needs a built ./build/spmmc and GNU time (/usr/bin/time, Debian package "time").
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-../shared/data}
scratch=${2:-$(mktemp -d)}
mkdir -p "$scratch"
spmmc=./build/spmmc
[ -x "$spmmc" ] || { echo "bench-readers: build spmmc first (scripts/build.sh)" >&2; exit 1; }

# measure FILE: prints "load_s peak_mib csr_mib nnz" for one inspect run.
measure() {
  local json="$scratch/inspect.json" tm="$scratch/time.txt"
  /usr/bin/time -f "%M" -o "$tm" "$spmmc" inspect "$1" --json >"$json"
  python3 - "$json" "$tm" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
peak_kib = int(open(sys.argv[2]).read().split()[-1])
csr_bytes = 4 * (j["rows"] + 1 + 2 * j["nnz"])
print(f'{j["load_seconds"]:.4f} {peak_kib / 1024:.1f} {csr_bytes / 2**20:.1f} {j["nnz"]}')
PY
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%Y-%m-%d)"
echo
if [ -f "$data/MANIFEST.md" ]; then
  echo "| group | files | nnz range | slowest load (s) | median load (s) | slowest file |"
  echo "|---|---|---|---|---|---|"
  for group in dlmc graphs weights; do
    results="$scratch/$group.txt"
    : >"$results"
    while IFS= read -r f; do
      echo "$(measure "$f") $f" >>"$results"
    done < <(find "$data/$group" -type f \( -name '*.smtx' -o -name '*.mtx' -o -name '*.npy' -o -name '*.npz' -o -name '*.safetensors' \) | sort)
    python3 - "$results" "$group" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
loads = [float(r[0]) for r in rows]
nnz = [int(r[3]) for r in rows]
worst = max(rows, key=lambda r: float(r[0]))
print(f"| {sys.argv[2]} | {len(rows)} | {min(nnz)}–{max(nnz)} | {max(loads):.4f} | {statistics.median(loads):.4f} | {worst[4].split('/')[-1]} |")
PY
  done
else
  echo "(shared data folder $data absent: skipped)"
fi

echo
big="$scratch/uniform-10M.mtx"
"$spmmc" gen uniform --rows 1000000 --cols 100000 --sparsity 0.9999 --seed 1 -o "$big" --quiet
read -r load peak csr nnz < <(measure "$big")
echo "| generated file | size (MiB) | nnz | load (s) | peak RSS (MiB) | CSR (MiB) | peak / CSR |"
echo "|---|---|---|---|---|---|---|"
python3 -c "import os,sys; print(f'| uniform 1M x 100k, sparsity 0.9999 | {os.path.getsize(sys.argv[1])/2**20:.0f} | {sys.argv[2]} | {float(sys.argv[3]):.2f} | {float(sys.argv[4]):.0f} | {float(sys.argv[5]):.0f} | {float(sys.argv[4])/float(sys.argv[5]):.2f} |')" "$big" "$nnz" "$load" "$peak" "$csr"
rm -f "$big"
