#!/usr/bin/env bash
# The budget microbenchmarks (tools/microbench/README.md): builds the standalone CUDA benchmarks
# with nvcc (one generated source: straight-line FFMA code), runs them on the GPU and prints one
# Markdown table per study, then a "budget" section derived from the measured numbers (the
# per-SM budget any kernel design must fit: instruction footprint, B bytes per FMA from each memory
# level, loads in flight, registers) and a summary line LAST.
#   1  instruction-cache knee: FFMA/clk/SM of looped straight-line code from 4 KiB to 1 MiB
#   2  instruction fetch: 1/4/8/32 warps per SM on the same code vs each on its own code
#   3  FFMA issue rate, immediate vs register weight
#   4  bandwidth of B's access pattern from L1, L2, HBM, shared memory, staged (ld/st, cp.async)
#   5  load latency: shared, L1, L2, HBM (pointer chase)
#   -  tensor-core MMA peak (issue 26): mma.sync m16n8k8 f16/bf16, m16n8k4 tf32, m16n8k16 f16
#      (mma_peak.cu; printed before the budget, which does not use it)
#
# usage: scripts/budget-microbench.sh [options]
#   --out DIR        work folder: generated sources, binaries, logs, results (default
#                    $SPMMC_BUILD_DIR/microbench, i.e. build/microbench)
#   --runs N         timed runs per measurement, the median is reported (default 21, at least 20
#                    recommended)
#   --warmup N       untimed runs before them (default 3)
#   --jobs N         parallel nvcc compiles (default: the number of cores)
#   --arch SM        nvcc -arch (default sm_90; the studies assume an H100-like SM)
#   --build-only     build everything, run nothing (no GPU needed)
#   -h, --help       this text
# Environment: NVCC (default nvcc on PATH, then /usr/local/cuda/bin/nvcc), SPMMC_BUILD_DIR.
# Expected to take 1-2 minutes on an H100, builds included (estimated, not yet timed there); each
# benchmark is stopped after 200 s.
# Exit: 0 measured (or built, with --build-only); 1 a build or a benchmark failed; 64 usage;
# 69 no GPU (nothing was measured); 73 the --out folder cannot be created.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
src=$root/tools/microbench

say() { echo "budget-microbench: $*" >&2; }
help_text() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
usage_error() { say "$*"; help_text >&2; exit 64; }

out_dir='' runs=21 warmup=3 jobs='' arch=sm_90 build_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || usage_error "--out needs a folder"; out_dir=$2; shift ;;
    --runs) [ $# -ge 2 ] || usage_error "--runs needs a number"; runs=$2; shift ;;
    --warmup) [ $# -ge 2 ] || usage_error "--warmup needs a number"; warmup=$2; shift ;;
    --jobs) [ $# -ge 2 ] || usage_error "--jobs needs a number"; jobs=$2; shift ;;
    --arch) [ $# -ge 2 ] || usage_error "--arch needs an SM"; arch=$2; shift ;;
    --build-only) build_only=1 ;;
    -h|--help) help_text; exit 0 ;;
    *) usage_error "unknown option '$1'" ;;
  esac
  shift
done
[[ $runs =~ ^[1-9][0-9]*$ && $warmup =~ ^[0-9]+$ ]] || usage_error "--runs and --warmup take integers"
[ -n "$jobs" ] || jobs=$(nproc 2>/dev/null || echo 4)
[[ $jobs =~ ^[1-9][0-9]*$ ]] || usage_error "--jobs takes a positive integer"
[ -n "$out_dir" ] || out_dir=${SPMMC_BUILD_DIR:-build}/microbench
case $out_dir in /*) ;; *) out_dir=$root/$out_dir ;; esac
mkdir -p "$out_dir/gen" "$out_dir/bin" "$out_dir/logs" || { say "cannot create $out_dir"; exit 73; }

nvcc=${NVCC:-}
if [ -z "$nvcc" ]; then
  if command -v nvcc >/dev/null 2>&1; then nvcc=nvcc; else nvcc=/usr/local/cuda/bin/nvcc; fi
fi
command -v "$nvcc" >/dev/null 2>&1 || { say "nvcc not found (set NVCC)"; exit 1; }

# --- build ------------------------------------------------------------------------------------
# A target is rebuilt when it is missing or older than any of its inputs.
stale() {  # stale TARGET INPUT...
  local target=$1; shift
  [ -e "$target" ] || return 0
  local input
  for input in "$@"; do [ "$input" -nt "$target" ] && return 0; done
  return 1
}

# The generator, then its sources; a generated file is replaced only when its text changed, so
# an unchanged ring keeps its timestamp and the big kernel is not recompiled.
if stale "$out_dir/bin/gen_ffma" "$src/gen_ffma.cpp"; then
  "$nvcc" -O2 -std=c++17 -o "$out_dir/bin/gen_ffma" "$src/gen_ffma.cpp" >"$out_dir/logs/gen_ffma.log" 2>&1 ||
    { say "building gen_ffma failed:"; tail -20 "$out_dir/logs/gen_ffma.log" >&2; exit 1; }
fi
rm -rf "$out_dir/gen.new" && mkdir -p "$out_dir/gen.new" || exit 73
"$out_dir/bin/gen_ffma" "$out_dir/gen.new" || { say "gen_ffma failed"; exit 1; }
for f in "$out_dir"/gen.new/*; do
  cmp -s "$f" "$out_dir/gen/$(basename "$f")" || mv -f "$f" "$out_dir/gen/"
done
rm -rf "$out_dir/gen.new"

# Binaries in the order they run; ffma_icache (64k FFMAs of straight-line code) first, it is the
# slowest to compile.
benches=(ffma_icache ffma_issue b_access latency mma_peak)
inputs_of() {
  case $1 in
    ffma_icache) echo "$src/ffma_icache.cu $src/common.cuh $out_dir/gen/ring_cases.inc $out_dir/gen/ring_config.h" ;;
    ffma_issue) echo "$src/ffma_issue.cu $src/common.cuh $out_dir/gen/issue_imm.inc $out_dir/gen/issue_reg.inc" ;;
    *) echo "$src/$1.cu $src/common.cuh" ;;
  esac
}
compile() {  # compile NAME: nvcc with ptxas' register/spill report in the log; exit status in NAME.rc
  local name=$1 start=$SECONDS
  "$nvcc" -O3 -arch="$arch" -std=c++17 -Xptxas -v -I "$src" -I "$out_dir/gen" -o "$out_dir/bin/$name" \
    "$src/$name.cu" >"$out_dir/logs/$name.nvcc.log" 2>&1
  echo $? >"$out_dir/logs/$name.rc"
  say "compiled $name.cu in $((SECONDS - start)) s"
}
# Binaries of another --arch are rebuilt.
if [ "$(cat "$out_dir/bin/arch" 2>/dev/null)" != "$arch" ]; then
  for name in "${benches[@]}"; do rm -f "$out_dir/bin/$name"; done
  echo "$arch" >"$out_dir/bin/arch"
fi
build_start=$SECONDS
compiled=()
for name in "${benches[@]}"; do
  # shellcheck disable=SC2046
  stale "$out_dir/bin/$name" $(inputs_of "$name") || continue
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  rm -f "$out_dir/logs/$name.rc"
  compile "$name" &
  compiled+=("$name")
done
wait
build_failed=0
for name in "${compiled[@]}"; do
  if [ "$(cat "$out_dir/logs/$name.rc" 2>/dev/null)" != 0 ]; then
    say "nvcc failed for $name.cu ($out_dir/logs/$name.nvcc.log):"
    grep -E "error|warning" "$out_dir/logs/$name.nvcc.log" | head -20 >&2
    rm -f "$out_dir/bin/$name"
    build_failed=1
  elif grep -qE "[1-9][0-9]* bytes spill" "$out_dir/logs/$name.nvcc.log"; then
    say "note: ptxas reports spills in $name.cu (see $out_dir/logs/$name.nvcc.log)"
  fi
done
[ $build_failed -eq 0 ] || exit 1
say "built in $((SECONDS - build_start)) s: ${benches[*]} in $out_dir/bin"
if [ $build_only -eq 1 ]; then
  echo "budget-microbench: built ${#benches[@]} benchmarks in $out_dir/bin (nothing run: --build-only)"
  exit 0
fi

# --- run --------------------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null 2>&1 && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  say "no GPU (nvidia-smi lists none); nothing was measured"
  exit 69
fi
results=$out_dir/results.txt
: >"$results"
run_failed=()
timeout_cmd=()
command -v timeout >/dev/null 2>&1 && timeout_cmd=(timeout 200)
echo "# Budget microbenchmarks"
echo
for name in "${benches[@]}"; do
  start=$SECONDS
  "${timeout_cmd[@]}" "$out_dir/bin/$name" --runs "$runs" --warmup "$warmup" --results "$results" \
    2> >(tee "$out_dir/logs/$name.stderr" >&2) | tee "$out_dir/$name.md"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 69 ]; then
    say "no GPU ($name exited 69); nothing was measured"
    exit 69
  fi
  [ "$rc" -eq 0 ] || { say "$name failed (exit $rc)"; run_failed+=("$name"); }
  say "$name: $((SECONDS - start)) s"
done

# --- budget -----------------------------------------------------------------------------------
# Reads "key value" lines (the last value of a key wins) and prints the derived budget; every
# figure it uses is named in tools/microbench/README.md.
awk -v out_dir="$out_dir" '
function has(k) { return (k in v) }
function get(k) { return (k in v) ? v[k] : 0 }
function best_v(level,    V, b, bv) {  # the best V of a level: sets BEST_BPC, returns V
  BEST_BPC = 0; bv = 0
  for (V = 1; V <= 4; V *= 2) { b = get("bw." level ".v" V ".bpc"); if (b > BEST_BPC) { BEST_BPC = b; bv = V } }
  return bv
}
{ v[$1] = $2 }
END {
  F = get("ffma.imm.best"); if (F <= 0) F = 128
  clock = get("device.clock_mhz"); sms = get("device.sms")
  print "## Budget per SM (derived from the measurements above)"
  print ""
  printf "FFMA peak F = %.1f lane-FMAs/clk/SM with immediate weights (study 3); SM clock %.0f MHz; %d SMs.\n\n", F, clock, sms

  print "### Instruction footprint (studies 1, 2)"
  print ""
  for (w = 64; w >= 4; w /= 16) if (has("icache.w" w ".fit90_kib"))
    printf "- %d warps/SM on the same code: >= 90%% of the best rate up to **%d KiB** of code, >= 50%% up to %d KiB; at 1 MiB %.1f FFMA/clk/SM.\n", w, get("icache.w" w ".fit90_kib"), get("icache.w" w ".fit50_kib"), get("icache.w" w ".kib1024")
  if (has("fetch.kib1024.w32.mode0")) {
    same = get("fetch.kib1024.w32.mode0"); own = get("fetch.kib1024.w32.mode2"); part = get("fetch.kib1024.w32.mode1")
    printf "- 32 warps/SM over 1 MiB of code: same code %.1f, own code per partition %.1f, own code per warp %.1f FFMA/clk/SM", same, part, own
    if (own > 0) printf " (sharing factor %.1fx)", same / own
    printf "; instruction refill from beyond the caches: %.1f B/clk/SM.\n", own / 32 * 16
    printf "- At the FFMA peak an SM consumes %.0f B/clk of FFMA code (F/32 warp-instructions x 16 B): only a cache can feed that, so the code an SM executes at once must fit the footprint above, shared by the warps that run it.\n", F / 32 * 16
  }
  print ""

  print "### B bytes per FMA each level can feed at the FFMA peak (study 4)"
  print ""
  print "| level | best V | B/clk/SM | bytes per FMA at F | FMAs each loaded 4-byte B value must feed |"
  print "|---|---:|---:|---:|---:|"
  n = split("l1:(a) L1,l2:(b) L2 (ld.global.cg),l2ldg:(b'"'"') L2 (__ldg),hbm:(c) HBM,smem:(d) shared memory,stage_ldst:(e) L2 -> shared (ld+st) fetched,stage_ldst_delivered:(e) ... delivered from shared (8 warps per staged value),stage_cpasync:(f) L2 -> shared (cp.async) fetched,stage_cpasync_delivered:(f) ... delivered from shared (8 warps per staged value)", levels, ",")
  for (i = 1; i <= n; i++) {
    split(levels[i], kv, ":"); V = best_v(kv[1])
    if (V == 0) continue
    printf "| %s | %d | %.1f | %.3f | %.1f |\n", kv[2], V, BEST_BPC, BEST_BPC / F, 4 * F / BEST_BPC
  }
  print ""
  print "A B value loaded into a register feeds M1*(1-s) FMAs (../shared/docs/design.md); the last column is the reuse a kernel needs for B traffic from that level not to cap it below the FFMA peak (shared-memory staging divides the L2 fetches by the number of warps reading each staged value)."
  print ""

  print "### Loads in flight per SM to cover the latency at the bandwidth (Little'"'"'s law, studies 4 + 5)"
  print ""
  print "| level | latency cycles | B/clk/SM (best V) | bytes in flight per SM | 512-B warp loads in flight per SM | bytes (registers) per thread at 2048 threads/SM |"
  print "|---|---:|---:|---:|---:|---:|"
  n = split("l1:l1:L1,l2:l2:L2,hbm:hbm:HBM,hbm:hbm_tlb:HBM with TLB misses,smem:smem:shared memory", rows, ",")
  for (i = 1; i <= n; i++) {
    split(rows[i], kv, ":"); V = best_v(kv[1]); lat = get("lat." kv[2] ".cycles")
    if (V == 0 || lat == 0) continue
    inflight = BEST_BPC * lat
    printf "| %s | %.0f | %.1f | %.0f | %.1f | %.1f (%.1f) |\n", kv[3], lat, BEST_BPC, inflight, inflight / 512, inflight / 2048, inflight / 8192
  }
  print ""

  print "### Registers without spills"
  print ""
  regs = get("device.regs_per_sm"); if (regs <= 0) regs = 65536
  printf "%d registers per SM: ", regs
  for (w = 64; w >= 8; w /= 2) { r = regs / (32 * w); if (r > 255) r = 255; printf "%d warps/SM -> %d per thread%s", w, r, (w > 8 ? ", " : ".\n") }
  print "A kernel keeps accumulators (M1*V) plus B values in flight (the table above, divided by the threads) within that, or it spills."
  print ""

  l2 = best_v("l2"); l2b = BEST_BPC; hb = best_v("hbm"); hbb = BEST_BPC; sm = best_v("smem"); smb = BEST_BPC
  printf "budget-microbench: FFMA peak %.1f/clk/SM; code <= %d KiB per SM at 64 warps (%d KiB at 4); B/clk/SM L2 %.1f, HBM %.1f, shared %.1f (bytes/FMA at peak %.3f, %.3f, %.3f); latency L2 %.0f, HBM %.0f cycles; tables in %s\n", F, get("icache.w64.fit90_kib"), get("icache.w4.fit90_kib"), l2b, hbb, smb, l2b / F, hbb / F, smb / F, get("lat.l2.cycles"), get("lat.hbm.cycles"), out_dir
}' "$results" | tee "$out_dir/budget.md"

if [ ${#run_failed[@]} -gt 0 ]; then
  say "failed: ${run_failed[*]}"
  exit 1
fi
exit 0
