#!/usr/bin/env bash
# Fuzzes one matrix reader with libFuzzer, then merges the inputs that add coverage into its
# seed corpus. See tests/fuzz/README.md.
#
#   scripts/fuzz.sh FORMAT [SECONDS]     FORMAT: mtx, smtx, npy, npz, safetensors; default 300 s
#
# Environment: FUZZ_MAX_LEN (default 4096 for text formats, 16384 for binary ones), FUZZ_ARGS
# (extra libFuzzer flags), FUZZ_NO_MERGE=1 (leave the corpus alone), CXX (default clang++).
# Runs a single fuzzing process (no -jobs/-workers/-fork): the machine is shared.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 FORMAT [SECONDS]" >&2
  exit 64
fi
format=$1
seconds=${2:-300}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
corpus=$root/tests/fuzz/corpus/$format
work=$build/fuzz-work/$format
target=$build/fuzz_$format

if [[ ! -d $corpus ]]; then
  echo "$0: no seed corpus $corpus (formats: $(ls "$root/tests/fuzz/corpus" | tr '\n' ' '))" >&2
  exit 64
fi
case $format in
  mtx|smtx) default_max_len=4096 ;;
  *) default_max_len=16384 ;;
esac
max_len=${FUZZ_MAX_LEN:-$default_max_len}

# Configure once (clang + libFuzzer; no test suite), then build just this target.
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="${CXX:-clang++}" -DSPMMC_BUILD_FUZZERS=ON -DSPMMC_BUILD_TESTS=OFF
fi
if ! cmake --build "$build" --target "fuzz_$format"; then
  echo "$0: cannot build fuzz_$format (is compiler/formats/ missing its reader? see tests/fuzz/fuzz_formats.cmake)" >&2
  exit 1
fi

# Fuzz on a scratch copy: new inputs land in $work/new, crashes in $work/artifacts.
rm -rf "$work/seeds" "$work/new"
mkdir -p "$work/seeds" "$work/new" "$work/artifacts"
cp "$corpus"/* "$work/seeds/"
flags=(-max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048
       -print_final_stats=1 -artifact_prefix="$work/artifacts/")
dict=$root/tests/fuzz/$format.dict
[[ -f $dict ]] && flags+=(-dict="$dict")
log=$work/fuzz.log
echo "fuzzing $format for ${seconds}s: $target ${flags[*]} ${FUZZ_ARGS:-}"
# libFuzzer's status, read before anything resets PIPESTATUS (a trailing "|| true" would, and then
# a finding would pass for a clean run and be merged).
status=0
"$target" "${flags[@]}" -max_total_time="$seconds" ${FUZZ_ARGS:-} "$work/new" "$work/seeds" 2>&1 | tee "$log" \
  | { grep -E '^#[0-9]+[[:space:]]+(INITED|DONE|pulse)|^==[0-9]+==|FINDING|^artifact_prefix|Test unit written|^SUMMARY' || true; } \
  || status=${PIPESTATUS[0]}

echo "--- $format: final libFuzzer stats (full log: $log)"
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^Done [0-9]+ runs|^stat::' "$log" || tail -n 5 "$log"
if [[ $status -ne 0 ]]; then
  echo "$format: FINDING (libFuzzer exit $status). Reproducer(s):"
  ls -1 "$work/artifacts"
  echo "See tests/fuzz/README.md: minimise, add to $corpus as regress-*, fix the reader, add a unit test."
  exit "$status"
fi

# Keep the corpus small. Hand-named files (seeds, regress_*) always stay; the hash-named ones
# libFuzzer wrote are re-chosen each time: from the old ones and the new finds, the fewest that
# add coverage beyond the hand-named files (libFuzzer -merge=1 into a folder of those).
if [[ ${FUZZ_NO_MERGE:-0} != 1 ]]; then
  before=$(ls "$corpus" | wc -l)
  rm -rf "$work/merged" "$work/old"
  mkdir -p "$work/merged" "$work/old"
  for f in "$corpus"/*; do
    if [[ $(basename "$f") =~ ^[0-9a-f]{40}$ ]]; then cp "$f" "$work/old/"; else cp "$f" "$work/merged/"; fi
  done
  "$target" -merge=1 -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    "$work/merged" "$work/old" "$work/new" > "$work/merge.log" 2>&1 || { tail -n 20 "$work/merge.log"; exit 1; }
  find "$corpus" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -delete
  for f in "$work/merged"/*; do
    [[ $(basename "$f") =~ ^[0-9a-f]{40}$ ]] && cp "$f" "$corpus/"
  done
  after=$(ls "$corpus" | wc -l)
  grep -E 'MERGE-OUTER: [0-9]+ new files' "$work/merge.log" || true
  echo "$format: corpus $corpus: $before -> $after files ($(cat "$corpus"/* | wc -c) bytes)"
fi
