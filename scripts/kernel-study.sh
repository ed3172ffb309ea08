#!/usr/bin/env bash
# A design study of emitted kernels: for each case (a matrix, n and spmmc compile flags such as
# --tile 32x1024x4), emit the kernel with spmmc, build it with nvcc -O3 and the options spmmc wrote
# beside it (NAME.nvcc-options; in parallel, one core each, nvcc -time and ptxas -v recorded), then check and time it against float64, cuSPARSE,
# Sputnik and SGEMM with spmmc-gpu-bench. Prints a Markdown table: compile time split into cicc
# and ptxas, registers, spills, speed and the ratios to the peers; the study's summary line last.
#
# usage: scripts/kernel-study.sh CASES [--out DIR] [--prepare-only|--build-only] [--runs N] [--jobs J]
#   CASES            a file of lines LABEL|MATRIX|N|SPMMC COMPILE FLAGS[|NVCC FLAGS] ('#' comments);
#                    MATRIX is relative to the repository root (e.g. a copy of ../shared/data in
#                    .gpu-data); NVCC FLAGS are added to that case's nvcc build (e.g. -Xptxas -O1)
#   --out DIR        work folder (default $SPMMC_BUILD_DIR/kernel-study)
#   --prepare-only   emit the kernels (needs build/spmmc), build and run nothing: for a machine
#                    without a GPU whose kernels are then carried to one (emission needs libclang,
#                    which the GPU machine may lack; the emitted .cu does not)
#   --build-only     emit (where missing) and build the kernels, time nothing (no GPU needed;
#                    scripts/sanitize-kernels.sh builds its kernels this way)
#   --runs N         timed runs per kernel (default 30; 10 warm-up runs)
#   --jobs J         parallel nvcc builds (default: the number of cores)
# Environment: SPMMC_BUILD_DIR (default build: spmmc and spmmc-gpu-bench), NVCC, SPMMC_NVCC_TIMEOUT
# (seconds per nvcc build, default 1800), SPMMC_NVCC_FLAGS
# (extra nvcc flags for every build, e.g. "-Xptxas -O1" to study ptxas levels), SPMMC_EMIT_DEADLINE
# (a time in seconds since the epoch: emission, e.g. with --tune proxy, stops there; a case not
# emitted by then is skipped). Each emission's wall time goes to DIR/LABEL/emit.seconds.
# Exit: 0 all ran and were correct; 1 a case failed; 64 usage; 69 no GPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
say() { echo "kernel-study: $*" >&2; }
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }

cases='' out='' prepare_only=0 build_only=0 runs=30 jobs=$(nproc)
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || usage; out=$2; shift ;;
    --prepare-only) prepare_only=1 ;;
    --build-only) build_only=1 ;;
    --runs) [ $# -ge 2 ] || usage; runs=$2; shift ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift ;;
    -h|--help) usage ;;
    -*) say "unknown option '$1'"; usage ;;
    *) [ -z "$cases" ] || usage; cases=$1 ;;
  esac
  shift
done
[ -n "$cases" ] && [ -f "$cases" ] || { say "no CASES file"; usage; }
build=${SPMMC_BUILD_DIR:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
spmmc=$build/spmmc bench=$build/spmmc-gpu-bench
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
work=${out:-$build/kernel-study}
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)

# --- 1. emit (where spmmc runs; a case whose .cu is there with the same command is kept) ------
while IFS='|' read -r label matrix n flags nvcc_flags; do
  case $label in ''|'#'*) continue ;; esac
  dir=$work/$label; mkdir -p "$dir"
  if [ "$(cat "$dir/nvcc.flags" 2>/dev/null)" != "$nvcc_flags" ]; then
    echo "$nvcc_flags" >"$dir/nvcc.flags"; rm -f "$dir"/*.so "$dir/nvcc."[!f]*
  fi
  # shellcheck disable=SC2206  # flags: spmmc options, split into words on purpose
  cmd=(compile "$matrix" --n "$n" --name "$label" -o "$dir" --quiet $flags)
  if [ -f "$dir/$label.cu" ] && [ "$(cat "$dir/emit.cmd" 2>/dev/null)" = "${cmd[*]}" ]; then continue; fi
  if [ ! -x "$spmmc" ]; then say "[$label] no $label.cu and no $spmmc to emit it"; echo "no spmmc" >"$dir/emit.failed"; continue; fi
  rm -f "$dir/emit.failed" "$dir"/*.so "$dir/nvcc."[!f]*
  left=0
  if [ -n "${SPMMC_EMIT_DEADLINE:-}" ]; then
    left=$(( SPMMC_EMIT_DEADLINE - $(date +%s) ))
    if [ $left -le 0 ]; then say "[$label] not emitted: past the emission deadline"; echo "past the emission deadline" >"$dir/emit.failed"; continue; fi
  fi
  t0=$(date +%s.%N)
  if ! timeout -k 5 "$left" "$spmmc" "${cmd[@]}" >"$dir/emit.log" 2>&1; then
    say "[$label] spmmc compile failed: $(tail -n1 "$dir/emit.log")"; tail -n1 "$dir/emit.log" >"$dir/emit.failed"; continue
  fi
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", b - a }' >"$dir/emit.seconds"
  say "[$label] emitted in $(cat "$dir/emit.seconds") s"
  echo "${cmd[*]}" >"$dir/emit.cmd"
done <"$cases"
[ $prepare_only -eq 1 ] && { say "emitted into $work"; exit 0; }

# --- 2. nvcc -O3 --options-file NAME.nvcc-options, J at a time, each on one core ----------------
build_one() {  # build_one DIR LABEL
  local dir=$1 label=$2 t0 t1 case_flags options_file=()
  case_flags=$(cat "$dir/nvcc.flags" 2>/dev/null)
  # The options spmmc wrote for this file (-Xptxas -O1 for the unrolled family); a case's own NVCC
  # FLAGS come after them and win (ptxas warns that it takes the last -O).
  [ -f "$dir/$label.nvcc-options" ] && options_file=(--options-file "$label.nvcc-options")
  [ -f "$dir/lib$label.so" ] && [ -f "$dir/nvcc.time.csv" ] && return 0
  # A build of this very .cu that failed or timed out is not retried (delete nvcc.rc to retry).
  [ -f "$dir/nvcc.rc" ] && [ "$dir/nvcc.rc" -nt "$dir/$label.cu" ] && return 0
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  (cd "$dir" && timeout "${SPMMC_NVCC_TIMEOUT:-1800}" "$NVCC_BIN" -O3 -arch=sm_90 -shared -Xcompiler -fPIC -Xptxas -v -time nvcc.time.csv \
      "${options_file[@]}" ${SPMMC_NVCC_FLAGS:-} $case_flags "$label.cu" -o "lib$label.so") >"$dir/nvcc.log" 2>&1
  echo $? >"$dir/nvcc.rc"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }' >"$dir/nvcc.seconds"
}
export -f build_one
export NVCC_BIN=$nvcc
while IFS='|' read -r label _; do
  case $label in ''|'#'*) continue ;; esac
  [ -f "$work/$label/$label.cu" ] && printf '%s\n%s\n' "$work/$label" "$label"
done <"$cases" | xargs -d '\n' -n 2 -P "$jobs" bash -c 'build_one "$0" "$1"'

[ $build_only -eq 1 ] && { say "built into $work"; exit 0; }
device=$("$bench" --device-info 2>&1); rc=$?
[ $rc -eq 69 ] && { say "no GPU: $device"; exit 69; }
[ $rc -eq 0 ] || { say "spmmc-gpu-bench --device-info failed: $device"; exit 1; }
say "device: $device"

# --- 3. check and time, one at a time ---------------------------------------------------------
results=$work/results.jsonl
: >"$results"
while IFS='|' read -r label matrix n flags _; do
  case $label in ''|'#'*) continue ;; esac
  dir=$work/$label
  [ "$(cat "$dir/nvcc.rc" 2>/dev/null)" = 0 ] || continue
  read_flags=$(grep -oE -- '--(seed|values|threshold|tensor|dtype) [^ ]+' <<<"$flags" | tr '\n' ' ')
  # shellcheck disable=SC2086
  "$bench" --matrix "$matrix" $read_flags --n "$n" --kernel "$dir/lib$label.so" --name "$label" --runs "$runs" \
    --warmup 10 --json "$results" --label "$label" --nvcc-seconds "$(cat "$dir/nvcc.seconds")" >"$dir/bench.log" 2>&1
  echo $? >"$dir/bench.rc"
  say "[$label] $(tail -n1 "$dir/bench.log")"
done <"$cases"

# --- 4. the table -----------------------------------------------------------------------------
python3 - "$cases" "$work" "$device" <<'PY'
import csv, json, math, os, re, sys
cases_path, work, device = sys.argv[1:4]
cases = [l.split("|") for l in open(cases_path).read().splitlines() if l.strip() and not l.startswith("#")]
results = {}
for l in open(os.path.join(work, "results.jsonl")):
    if l.strip():
        r = json.loads(l); results[r["label"]] = r

def read(path, default=None):
    try:
        return open(path).read().strip()
    except OSError:
        return default

def phases(dir_):
    out = {}
    try:
        for row in csv.reader(open(os.path.join(dir_, "nvcc.time.csv"))):
            if len(row) >= 8 and row[1].strip() in ("cicc", "ptxas"):
                out[row[1].strip()] = out.get(row[1].strip(), 0.0) + float(row[6]) / 1000
    except OSError:
        pass
    return out

def resources(dir_):
    # Per __global__ function (ptxas -v: "Compiling entry function 'NAME'" then its figures): the
    # largest over the unrolled kernels, or over the generic kernels in a generic-family file.
    log = read(os.path.join(dir_, "nvcc.log"), "")
    entries = re.split(r"Compiling entry function '", log)[1:]
    unrolled = [e for e in entries if "spmmc_generic_kernel" not in e.split("'", 1)[0]]
    chosen = "".join(unrolled or entries)
    regs = [int(x) for x in re.findall(r"Used (\d+) registers", chosen)]
    spill = [int(x) for x in re.findall(r"(\d+) bytes spill stores", chosen)]
    return (max(regs) if regs else None, max(spill) if spill else None)

def f(x, spec):
    return "-" if x is None else format(x, spec)

print(f"### kernel study ({device})\n")
# × dense GEMM: SGEMM for float32 cases, HGEMM, BF16 GEMM or TF32 GEMM for --dtype fp16/bf16/tf32 ones
# (whose error column is the largest error over its bound, docs/design/precision.md, not the relative
# error).
print("| case | nnz | n | tile | nvcc s | cicc s | ptxas s | regs | spill B | spmmc TFLOP/s | × best peer | × dense GEMM | error | result |")
print("|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
speedups, worst = [], None
for label, matrix, n, flags in [(c + ["", "", "", ""])[:4] for c in cases]:
    d = os.path.join(work, label)
    r = results.get(label, {})
    ph = phases(d); regs, spill = resources(d)
    if os.path.exists(os.path.join(d, "emit.failed")):
        result = "emit failed: " + read(os.path.join(d, "emit.failed"), "")
    elif read(os.path.join(d, "nvcc.rc")) != "0":
        result = "nvcc timed out" if read(os.path.join(d, "nvcc.rc")) == "124" else "nvcc failed"
    else:
        result = {"0": "PASS", "1": "WRONG"}.get(read(os.path.join(d, "bench.rc")), "bench failed")
    s = r.get("speedup_vs_best_peer")
    if s:
        speedups.append(s)
    print(f"| {label} | {r.get('nnz', '-')} | {n} | {r.get('tile', flags.strip())} | {f(float(read(os.path.join(d, 'nvcc.seconds'), 'nan')), '.1f')} "
          f"| {f(ph.get('cicc'), '.1f')} | {f(ph.get('ptxas'), '.1f')} | {f(regs, 'd')} | {f(spill, 'd')} "
          f"| {f(r.get('spmmc_tflops'), '.2f')} | {f(s, '.2f')} | {f(r.get('speedup_vs_sgemm'), '.2f')} "
          f"| {f(r.get('spmmc_error'), '.1e') if r.get('dtype', 'fp32') == 'fp32' else f(r.get('spmmc_bound_ratio'), '.2f') + ' of bound'} | {result} |")
gm = math.exp(sum(map(math.log, speedups)) / len(speedups)) if speedups else float("nan")
print(f"\nkernel-study: {len(speedups)} of {len(cases)} cases timed; geomean × best peer {gm:.2f}")
PY
