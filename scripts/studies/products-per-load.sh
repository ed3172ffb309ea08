#!/usr/bin/env bash
# What `spmmc compile --tune none` (the heuristic, no GPU needed) chooses for every case of the given
# kernel-study case files, with the chosen tile's products per row of B its unrolled code loads (the
# family rule's measure of reuse: compiler/planning/choose_tile.h, kGenericBelowProductsPerLoad).
# Cases with their own flags are skipped (the defaults are what the rule is about).
#
# usage: scripts/studies/products-per-load.sh CASES... [--jobs J]
# Prints one line per case (label, non-zeros, family, tile, products per load, family_why), then
# per class (dnn: every case whose label does not start with graph_ or rmat; graphs: the rest) the
# least products per load among cases of at least 32768 non-zeros that the rule left unrolled.
# Environment: SPMMC_BUILD_DIR (default build), where spmmc is. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }
jobs=$(nproc) files=()
while [ $# -gt 0 ]; do
  case $1 in
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift ;;
    -h|--help|-*) usage ;;
    *) files+=("$1") ;;
  esac
  shift
done
[ ${#files[@]} -gt 0 ] || usage
spmmc=${SPMMC_BUILD_DIR:-build}/spmmc
[ -x "$spmmc" ] || { echo "products-per-load: no $spmmc (build spmmc or set SPMMC_BUILD_DIR)" >&2; exit 66; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
one() {  # one LABEL MATRIX N
  local label=$1 matrix=$2 n=$3 dir="$work/$1"
  mkdir -p "$dir"
  if [ ! -f "$matrix" ]; then echo "$label|missing|$matrix" >"$dir/line"; return 0; fi
  if ! "$spmmc" compile "$matrix" --n "$n" --name k -o "$dir" --tune none --quiet --reproducible >"$dir/log" 2>&1; then
    echo "$label|failed|$(tail -n1 "$dir/log")" >"$dir/line"; return 0
  fi
  python3 - "$label" "$dir/k.json" >"$dir/line" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))
c = r["choice"]
print("|".join([sys.argv[1], str(r["input"]["nnz"]), c["family"], f'{c["m1"]}x{c["n1"]}', f'{c["products_per_b_load"]:.2f}', c["family_why"]]))
PY
  rm -f "$dir"/k.cu
}
export -f one
export spmmc work
cat "${files[@]}" | grep -v '^\s*\(#\|$\)' | awk -F'|' '$4 == "" && !seen[$1]++ {print $1; print $2; print $3}' |
  xargs -d '\n' -n 3 -P "$jobs" bash -c 'one "$0" "$1" "$2"'
cat "$work"/*/line | sort | tee "$work/all" | awk -F'|' '{printf "%-72s %8s %-9s %-9s %6s  %s\n", $1, $2, $3, $4, $5, $6}'
awk -F'|' '$3 == "unrolled" && $2 >= 32768 {
  cls = ($1 ~ /^(graph_|rmat)/) ? "graphs" : "dnn"
  if (!(cls in least) || $5 < least[cls]) { least[cls] = $5; who[cls] = $1 }
} END { for (c in least) printf "%s: least products per load, unrolled, >= 32768 non-zeros: %s (%s)\n", c, least[c], who[c] }' "$work/all"
