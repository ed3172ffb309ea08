#!/usr/bin/env bash
# Profiles ONE spmmc-emitted kernel with Nsight Compute (ncu) and prints a compact table: the warp
# stall breakdown (top reasons as % of stall cycles, "no instruction" included), registers, stack
# frame and spills, local-memory traffic, occupancy, waves per SM, SM / L1 / L2 / DRAM throughput,
# instructions executed and duration. spmmc-gpu-bench launches the kernel (--spmmc-only: checked
# against float64 first, no baselines), so ncu sees only spmmc's kernel.
#
# usage: scripts/profile-kernel.sh KERNEL MATRIX N [options]
#   KERNEL              an emitted NAME.cu (built here as gpu-check builds it, plus -Xptxas -v for
#                       the register / stack / spill report) or a built libNAME.so
#   MATRIX              the weights the kernel was compiled from
#   N                   columns of B and C
#   --name NAME         the entry point (default: NAME from NAME.cu or libNAME.so)
#   --seed S, --values KIND, --dtype T   reader options, as given to spmmc compile
#   --out DIR           raw output (ncu report, raw CSV, details page, logs) and the table
#                       (default $SPMMC_BUILD_DIR/profile/NAME)
#   --kernel-regex RE   kernels ncu profiles (default NAME_kernel; ncu's regex: is a substring match)
#   --launch-skip K     matching launches skipped first (default 1: the correctness run)
#   --launch-count C    launches profiled, one column each (default 1)
#   --with-peers        the harness runs its peers too (cuSPARSE's algorithms, cuBLAS SGEMM; each checked,
#                       then timed once): give --kernel-regex . (or a peer's kernel name), --launch-skip 0
#                       and a --launch-count that covers them; the table names each launch's kernel
#   --sections "S ..."  ncu sections (default: SpeedOfLight LaunchStats Occupancy SchedulerStats
#                       WarpStateStats ComputeWorkloadAnalysis MemoryWorkloadAnalysis
#                       InstructionStats SourceCounters; those this ncu lacks are left out)
#   --clock-control X   ncu --clock-control (default none: the clocks stay as found; base, boost)
#   --arch SM           nvcc -arch for a NAME.cu (default sm_90)
#   --nvcc-flags "..."  extra nvcc flags for a NAME.cu (e.g. -lineinfo for ncu's source page)
#   -h, --help          this text
# Environment: NCU (default ncu on PATH, then /usr/local/cuda/bin/ncu, then the newest
# /opt/nvidia/nsight-compute/*/ncu), NVCC (default nvcc, then /usr/local/cuda/bin/nvcc),
# SPMMC_BUILD_DIR (default build; spmmc-gpu-bench is built there when missing).
# A metric this ncu does not know prints as n/a. Durations are ncu's (replayed, caches flushed,
# serialised): read them beside each other, never beside gpu-check's timings.
# Exit: 0 profiled; 1 ncu or the build failed; 64 usage; 66 a missing input; 69 no GPU or no ncu;
# 73 the --out folder cannot be created.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)

say() { echo "profile-kernel: $*" >&2; }
help_text() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
usage_error() { say "$*"; help_text >&2; exit 64; }

name='' read_flags=() out_dir='' kernel_regex='' launch_skip=1 launch_count=1 clock_control=none arch=sm_90 with_peers=0
nvcc_flags='' sections='SpeedOfLight LaunchStats Occupancy SchedulerStats WarpStateStats ComputeWorkloadAnalysis MemoryWorkloadAnalysis InstructionStats SourceCounters'
positional=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) help_text; exit 0 ;;
    --name) [ $# -ge 2 ] || usage_error "$1 needs a value"; name=$2; shift ;;
    --seed|--values|--dtype) [ $# -ge 2 ] || usage_error "$1 needs a value"; read_flags+=("$1" "$2"); shift ;;
    --out) [ $# -ge 2 ] || usage_error "$1 needs a value"; out_dir=$2; shift ;;
    --kernel-regex) [ $# -ge 2 ] || usage_error "$1 needs a value"; kernel_regex=$2; shift ;;
    --launch-skip) [ $# -ge 2 ] || usage_error "$1 needs a value"; launch_skip=$2; shift ;;
    --launch-count) [ $# -ge 2 ] || usage_error "$1 needs a value"; launch_count=$2; shift ;;
    --sections) [ $# -ge 2 ] || usage_error "$1 needs a value"; sections=$2; shift ;;
    --clock-control) [ $# -ge 2 ] || usage_error "$1 needs a value"; clock_control=$2; shift ;;
    --arch) [ $# -ge 2 ] || usage_error "$1 needs a value"; arch=$2; shift ;;
    --nvcc-flags) [ $# -ge 2 ] || usage_error "$1 needs a value"; nvcc_flags=$2; shift ;;
    --with-peers) with_peers=1 ;;
    -*) usage_error "unknown option '$1'" ;;
    *) positional+=("$1") ;;
  esac
  shift
done
[ ${#positional[@]} -eq 3 ] || usage_error "expected KERNEL MATRIX N, got ${#positional[@]} arguments"
kernel=${positional[0]} matrix=${positional[1]} n=${positional[2]}
[[ $n =~ ^[1-9][0-9]*$ ]] || usage_error "N: '$n' is not a positive integer"
[[ $launch_skip =~ ^[0-9]+$ ]] || usage_error "--launch-skip: '$launch_skip' is not a non-negative integer"
[[ $launch_count =~ ^[1-9][0-9]*$ ]] || usage_error "--launch-count: '$launch_count' is not a positive integer"
[ -n "$sections" ] || usage_error "--sections: empty"
case $kernel in
  *.cu) kind=source; base=$(basename "$kernel" .cu) ;;
  *.so) kind=library; base=$(basename "$kernel" .so); base=${base#lib} ;;
  *) usage_error "KERNEL must be an emitted NAME.cu or a built libNAME.so: '$kernel'" ;;
esac
[ -n "$name" ] || name=$base
[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || usage_error "--name: '$name' is not a C identifier"
[ -n "$kernel_regex" ] || kernel_regex=${name}_kernel
[ -f "$kernel" ] || { say "$kernel: no such file"; exit 66; }
[ -f "$matrix" ] || { say "$matrix: no such file"; exit 66; }
kernel=$(cd "$(dirname "$kernel")" && pwd)/$(basename "$kernel")
matrix=$(cd "$(dirname "$matrix")" && pwd)/$(basename "$matrix")

# --- the harness, the GPU, ncu ------------------------------------------------------------------
build=${SPMMC_BUILD_DIR:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
bench=$build/spmmc-gpu-bench
if [ ! -x "$bench" ]; then
  say "no $bench: building it"
  { [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release; } >&2 &&
    cmake --build "$build" -j "$(nproc)" --target spmmc-gpu-bench >&2 || { say "building spmmc-gpu-bench failed"; exit 1; }
fi
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
device=$("$bench" --device-info 2>&1); rc=$?
if [ $rc -eq 69 ]; then say "skipped: no GPU on this machine ($device)"; exit 69; fi
[ $rc -eq 0 ] || { say "spmmc-gpu-bench --device-info failed (exit $rc): $device"; exit 1; }

ncu=${NCU:-}
if [ -z "$ncu" ]; then
  ncu=$(command -v ncu || true)
  [ -n "$ncu" ] || { [ -x /usr/local/cuda/bin/ncu ] && ncu=/usr/local/cuda/bin/ncu; }
  if [ -z "$ncu" ]; then
    ncu=$(for c in /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/nsight-compute*/ncu; do
            if [ -x "$c" ]; then echo "$c"; fi
          done | sort -V | tail -n1)
  fi
fi
if [ -z "$ncu" ] || [ ! -x "$ncu" ]; then say "skipped: Nsight Compute (ncu) not found (set NCU)"; exit 69; fi
ncu_version=$("$ncu" --version 2>/dev/null | tail -n1)

out=${out_dir:-$build/profile/$name}
mkdir -p "$out" || { say "cannot create $out"; exit 73; }
out=$(cd "$out" && pwd)
say "device: $device"
say "ncu: $ncu ($ncu_version); raw output in $out"

# --- the library: built here from NAME.cu (ptxas -v), or as given -------------------------------
library=$kernel
if [ $kind = source ]; then
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  [ -x "$nvcc" ] || { say "nvcc not found (set NVCC)"; exit 1; }
  library=$out/lib$name.so
  # The options spmmc wrote beside NAME.cu (-Xptxas -O1 for the unrolled family), then the caller's.
  options_file=()
  [ -f "${kernel%.cu}.nvcc-options" ] && options_file=(--options-file "${kernel%.cu}.nvcc-options")
  say "nvcc -O3 -arch=$arch -shared -Xptxas -v ${options_file[*]} $nvcc_flags $(basename "$kernel")"
  # shellcheck disable=SC2086  # nvcc_flags: a list of flags, split on purpose
  "$nvcc" -O3 -arch="$arch" -shared -Xcompiler -fPIC -Xptxas -v "${options_file[@]}" $nvcc_flags "$kernel" -o "$library" \
    >"$out/ptxas.log" 2>&1 || { tail -n 20 "$out/ptxas.log" >&2; say "nvcc failed (log: $out/ptxas.log)"; exit 1; }
fi
cuobjdump=$(command -v cuobjdump || true)
[ -n "$cuobjdump" ] || { [ -x "$(dirname "$ncu")/../bin/cuobjdump" ] && cuobjdump=$(dirname "$ncu")/../bin/cuobjdump; }
[ -n "$cuobjdump" ] || { [ -x /usr/local/cuda/bin/cuobjdump ] && cuobjdump=/usr/local/cuda/bin/cuobjdump; }
: >"$out/resource-usage.txt"
[ -n "$cuobjdump" ] && "$cuobjdump" --dump-resource-usage "$library" >"$out/resource-usage.txt" 2>&1

# --- ncu ------------------------------------------------------------------------------------------
known_sections=$("$ncu" --list-sections 2>/dev/null)
section_args=() left_out=()
for s in $sections; do
  if [ -z "$known_sections" ] || grep -qw -- "$s" <<<"$known_sections"; then section_args+=(--section "$s")
  else left_out+=("$s"); fi
done
[ ${#left_out[@]} -eq 0 ] || say "sections this ncu lacks, left out: ${left_out[*]}"
# Metrics beyond the sections; a first try with them, a second without if this ncu refuses one.
extra_metrics=smsp__inst_executed.sum,sm__inst_executed.avg.per_cycle_active,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum
# Launches of the kernel: 1 correctness run, then --runs; ncu profiles launch_skip+1 .. +count.
runs=$((launch_skip + launch_count))
app=("$bench" --matrix "$matrix" "${read_flags[@]}" --n "$n" --kernel "$library" --name "$name" --spmmc-only
     --warmup 0 --runs "$runs")
# With the peers: every kernel checked, then timed once (ncu serialises and replays each launch anyway).
[ $with_peers -eq 1 ] && app=("$bench" --matrix "$matrix" "${read_flags[@]}" --n "$n" --kernel "$library"
                              --name "$name" --warmup 0 --runs 1)
profile() {  # profile [--metrics LIST]
  rm -f "$out/profile.ncu-rep"
  "$ncu" --kernel-name "regex:$kernel_regex" --launch-skip "$launch_skip" --launch-count "$launch_count" \
    --clock-control "$clock_control" "${section_args[@]}" "$@" -f -o "$out/profile" "${app[@]}" >"$out/ncu.log" 2>&1
}
say "ncu --kernel-name regex:$kernel_regex --launch-skip $launch_skip --launch-count $launch_count ($name, n=$n)"
profile --metrics "$extra_metrics"; ncu_rc=$?
if [ ! -f "$out/profile.ncu-rep" ] && grep -q 'No kernels were profiled' "$out/ncu.log"; then
  tail -n 5 "$out/ncu.log" >&2
  say "no launch of a kernel matching regex:$kernel_regex was profiled (--kernel-regex, --launch-skip?)"; exit 1
fi
if [ ! -f "$out/profile.ncu-rep" ]; then
  say "ncu failed with the extra metrics (exit $ncu_rc): $(grep -m1 -i error "$out/ncu.log"); again without them"
  mv "$out/ncu.log" "$out/ncu-first-try.log"
  profile; ncu_rc=$?
fi
if [ ! -f "$out/profile.ncu-rep" ]; then
  tail -n 20 "$out/ncu.log" >&2
  say "ncu wrote no report (exit $ncu_rc; log: $out/ncu.log)"
  grep -q ERR_NVGPUCTRPERM "$out/ncu.log" && say "the driver refuses access to the performance counters (ERR_NVGPUCTRPERM)"
  exit 1
fi
bench_line=$(grep -E '^(PASS|FAIL) ' "$out/ncu.log" | tail -n1)
"$ncu" --import "$out/profile.ncu-rep" --page raw --csv >"$out/raw.csv" 2>"$out/import.log" ||
  { say "ncu --import --page raw failed (log: $out/import.log)"; exit 1; }
"$ncu" --import "$out/profile.ncu-rep" --page details --print-details all >"$out/details.txt" 2>>"$out/import.log" || true

# --- the table --------------------------------------------------------------------------------------
python3 - "$out/raw.csv" "$out/ptxas.log" "$out/resource-usage.txt" "$name" "$n" "$device" "$ncu_version" \
  "$bench_line" "$launch_skip" "$clock_control" <<'PY' | tee "$out/summary.md"
import csv, io, re, sys
raw_path, ptxas_path, usage_path, name, n, device, ncu_version, bench_line, skip, clock = sys.argv[1:11]
kernel_symbol = name + "_kernel"

# The raw page: a header of metric names, a row of units, then one row per profiled launch (other
# lines, e.g. ==PROF== messages, do not start with a quote).
lines = [l for l in open(raw_path, encoding="utf-8", errors="replace").read().splitlines() if l.startswith('"')]
rows = list(csv.reader(io.StringIO("\n".join(lines))))
if len(rows) < 3:
    print(f"profile-kernel: {raw_path} holds no profiled launch", file=sys.stderr)
    sys.exit(1)
header, units, launches = rows[0], rows[1], rows[2:]
col = {h: i for i, h in enumerate(header)}

def raw(launch, metric):
    i = col.get(metric)
    if i is None or i >= len(launch):
        return None
    return launch[i].strip()

def num(launch, metric):
    v = raw(launch, metric)
    if v is None or v in ("", "n/a", "N/A"):
        return None
    try:
        return float(v.replace(",", ""))
    except ValueError:
        return None

def first(launch, *metrics):
    for m in metrics:
        v = num(launch, m)
        if v is not None:
            return v, m
    return None, None

def unit_of(metric):
    i = col.get(metric)
    return units[i].strip() if i is not None and i < len(units) else ""

def fmt(v, spec=".3g", suffix=""):
    return "n/a" if v is None else format(v, spec) + suffix

def duration_us(launch):
    v, m = first(launch, "gpu__time_duration.sum", "gpu__time_duration.avg")
    if v is None:
        return None
    u = unit_of(m).lower()
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}
    return v * scale.get(u, 1e-3)

# Static facts: ptxas -v (from a NAME.cu) and cuobjdump --dump-resource-usage.
ptxas = {}
try:
    text = open(ptxas_path, errors="replace").read()
except OSError:
    text = ""
spill_store = spill_load = 0
have_ptxas = False
current = None
for line in text.splitlines():
    m = re.search(r"Compiling entry function '([^']+)'", line)
    if m:
        current = m.group(1)
    m = re.search(r"Function properties for (\S+)", line)
    if m:
        current = m.group(1)
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m:
        have_ptxas = True
        spill_store += int(m.group(2)); spill_load += int(m.group(3))
        if current and kernel_symbol in current:
            ptxas["stack"], ptxas["spill_store"], ptxas["spill_load"] = map(int, m.groups())
    m = re.search(r"Used (\d+) registers", line)
    if m and current and kernel_symbol in current:
        ptxas["registers"] = int(m.group(1))
        m2 = re.search(r"(\d+) bytes cumulative stack size", line)
        if m2:
            ptxas["cumulative_stack"] = int(m2.group(1))
usage = {}
try:
    text = open(usage_path, errors="replace").read()
except OSError:
    text = ""
current = None
for line in text.splitlines():
    m = re.match(r"\s*Function (\S+):", line)
    if m:
        current = m.group(1)
        continue
    if current and kernel_symbol in current and "REG:" in line:
        for key, value in re.findall(r"([A-Z]+(?:\[\d+\])?):(\d+)", line):
            usage[key] = int(value)
        current = None

kernel_names = sorted({raw(l, "Kernel Name") or "?" for l in launches})
print(f"### Nsight Compute profile of {kernel_symbol} (n = {n}; ncu: {', '.join(kernel_names)})\n")
print(f"device: {device}; ncu {ncu_version}; clock control {clock}; launch {int(skip) + 1}"
      f"{'..' + str(int(skip) + len(launches)) if len(launches) > 1 else ''} of the kernel; "
      f"harness: {bench_line or 'no result line'}\n")
heads = " | ".join(f"launch {int(skip) + 1 + i}" for i in range(len(launches)))
print(f"| metric | {heads} |")
print("|---|" + "--:|" * len(launches))

def row(label, values):
    print(f"| {label} | " + " | ".join(values) + " |")

def per_launch(label, fn):
    row(label, [fn(l) for l in launches])

def pct(*metrics):
    return lambda l: fmt(first(l, *metrics)[0], ".1f", " %")

def count(*metrics):
    def f(l):
        v = first(l, *metrics)[0]
        return "n/a" if v is None else f"{v:,.0f}"
    return f

per_launch("kernel", lambda l: (raw(l, "Kernel Name") or "?")[:48].replace("|", "/"))
per_launch("duration (ncu, replayed)", lambda l: fmt(duration_us(l), ".2f", " µs"))
per_launch("grid x block", lambda l: f"{raw(l, 'Grid Size') or raw(l, 'launch__grid_size') or 'n/a'} x "
                                     f"{raw(l, 'Block Size') or raw(l, 'launch__block_size') or 'n/a'}")
per_launch("registers per thread", count("launch__registers_per_thread"))
per_launch("stack size (launch__stack_size)", lambda l: fmt(num(l, "launch__stack_size"), ".0f", " B"))
static = lambda v, unit="": "n/a" if v is None else f"{v}{unit}"
row("stack frame (ptxas -v)", [static(ptxas.get("stack"), " B")] * len(launches))
row("spill stores / loads (ptxas -v, kernel)",
    [f"{static(ptxas.get('spill_store'), ' B')} / {static(ptxas.get('spill_load'), ' B')}"] * len(launches))
if have_ptxas:
    row("spill stores / loads (ptxas -v, all functions)", [f"{spill_store} B / {spill_load} B"] * len(launches))
row("REG / STACK / LOCAL (cuobjdump)",
    [f"{static(usage.get('REG'))} / {static(usage.get('STACK'), ' B')} / {static(usage.get('LOCAL'), ' B')}"] * len(launches))
per_launch("local loads / stores executed (warp instr.)",
           lambda l: f"{count('smsp__sass_inst_executed_op_local_ld.sum', 'sass__inst_executed_local_loads')(l)} / "
                     f"{count('smsp__sass_inst_executed_op_local_st.sum', 'sass__inst_executed_local_stores')(l)}")
per_launch("spill requests (derived__local_spilling_requests)",
           count("derived__local_spilling_requests", "sass__inst_executed_register_spilling"))
per_launch("theoretical occupancy", pct("sm__maximum_warps_per_active_cycle_pct"))
per_launch("achieved occupancy", pct("sm__warps_active.avg.pct_of_peak_sustained_active"))
per_launch("waves per SM", lambda l: fmt(num(l, "launch__waves_per_multiprocessor"), ".2f"))
per_launch("SM throughput", pct("sm__throughput.avg.pct_of_peak_sustained_elapsed"))
per_launch("issue slots busy", pct("smsp__issue_active.avg.pct_of_peak_sustained_active"))
per_launch("L1/TEX throughput (active / elapsed)",
           lambda l: f"{fmt(num(l, 'l1tex__throughput.avg.pct_of_peak_sustained_active'), '.1f', ' %')} / "
                     f"{fmt(num(l, 'l1tex__throughput.avg.pct_of_peak_sustained_elapsed'), '.1f', ' %')}")
per_launch("L2 throughput", pct("lts__throughput.avg.pct_of_peak_sustained_elapsed"))
per_launch("DRAM throughput", pct("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                                  "dram__throughput.avg.pct_of_peak_sustained_elapsed"))
per_launch("instructions executed (warp)", count("smsp__inst_executed.sum", "sm__inst_executed.sum",
                                                 "inst_executed"))
per_launch("IPC (executed, per active SM cycle)",
           lambda l: fmt(first(l, "sm__inst_executed.avg.per_cycle_active", "smsp__inst_executed.avg.per_cycle_active")[0], ".2f"))
per_launch("warp cycles per issued instruction",
           lambda l: fmt(first(l, "smsp__average_warp_latency_per_inst_issued.ratio",
                               "smsp__average_warps_active_per_issue_active.ratio")[0], ".1f"))

# Stall reasons: smsp__average_warps_issue_stalled_<r>_per_issue_active.ratio (cycles per issued
# instruction; WarpStateStats); if absent, the older smsp__average_warp_latency_issue_stalled_<r>;
# beside them the PC-sampling counts smsp__pcsamp_warps_issue_stalled_<r> (SourceCounters).
# "selected" is the issuing warp, not a stall, and is left out of the shares.
def reasons(launch, pattern):
    out = {}
    for h, i in col.items():
        m = re.fullmatch(pattern, h)
        if m and i < len(launch):
            v = num(launch, h)
            if v is not None:
                r = m.group(1)
                r = {"no_instructions": "no_instruction"}.get(r, r)
                if r != "selected" and not r.endswith("_not_issued") and r not in out:
                    out[r] = v
    return out

print()
for i, l in enumerate(launches):
    cycles = reasons(l, r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio")
    source = "smsp__average_warps_issue_stalled_*_per_issue_active.ratio"
    if not cycles:
        cycles = reasons(l, r"smsp__average_warp_latency_issue_stalled_(\w+?)(?:\.ratio|\.sum|\.avg|\.pct)?")
        source = "smsp__average_warp_latency_issue_stalled_*"
    samples = reasons(l, r"smsp__pcsamp_warps_issue_stalled_(\w+?)(?:\.sum)?")
    title = f"warp stalls, launch {int(skip) + 1 + i}" if len(launches) > 1 else "warp stalls"
    if not cycles and not samples:
        print(f"{title}: n/a (this ncu reported no stall-reason metric)")
        continue
    total_c = sum(cycles.values()) or None
    total_s = sum(samples.values()) or None
    order = sorted(set(cycles) | set(samples), key=lambda r: -(cycles.get(r, 0.0) if cycles else samples.get(r, 0.0)))
    print(f"{title} ({source}; % of stall cycles, 'selected' excluded; sampled = smsp__pcsamp_warps_issue_stalled_*):\n")
    print("| reason | % of stall cycles | cycles per issued instr. | % of stall samples |")
    print("|---|--:|--:|--:|")
    shown = order[:8]
    for r in shown:
        c, s = cycles.get(r), samples.get(r)
        print(f"| {r.replace('_', ' ')} | {fmt(c / total_c * 100 if c is not None and total_c else None, '.1f')} "
              f"| {fmt(c, '.2f')} | {fmt(s / total_s * 100 if s is not None and total_s else None, '.1f')} |")
    rest = order[8:]
    if rest:
        c = sum(cycles.get(r, 0.0) for r in rest)
        s = sum(samples.get(r, 0.0) for r in rest)
        print(f"| other ({len(rest)}) | {fmt(c / total_c * 100 if total_c else None, '.1f')} | {fmt(c, '.2f')} "
              f"| {fmt(s / total_s * 100 if total_s else None, '.1f')} |")
    print()
if not bench_line.startswith("PASS"):
    print("warning: the harness did not report PASS for this kernel (see ncu.log)")
PY
status=$?
say "table: $out/summary.md; report: $out/profile.ncu-rep (ncu-ui), raw: $out/raw.csv, details: $out/details.txt"
[ $status -eq 0 ] || exit 1
exit 0
