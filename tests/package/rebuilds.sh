#!/usr/bin/env bash
# Checks when spmmc_add_spmm regenerates a kernel, building tests/package/rebuild against the
# installed package (a private copy, since spmmc itself is touched): after a change of the
# weights, of the arguments (TILE), of spmmc, of the target description and of the ranker model
# spmmc read (both known to the build only through the depfile); and never without one.
# usage: rebuilds.sh PREFIX SOURCE_DIR WORK_DIR NVCC GENERATOR
set -euo pipefail
installed=$1 source=$2 work=$3 nvcc=$4 generator=$5
fail() { echo "rebuild test: FAIL: $*" >&2; exit 1; }

rm -rf "$work"; mkdir -p "$work"
cp -r "$installed" "$work/prefix"
prefix=$work/prefix spmmc=$work/prefix/bin/spmmc
"$spmmc" gen uniform --rows 8 --cols 16 --sparsity 0.7 --seed 1 --quiet -o "$work/w.mtx"
cp "$prefix/share/spmmc/models/targets/h100.json" "$work/target.json"
configure() {
  cmake -S "$source/tests/package/rebuild" -B "$work/build" -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CUDA_COMPILER="$nvcc" -DWEIGHTS="$work/w.mtx" -DTARGET_JSON="$work/target.json" "$@" \
    >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure failed"; }
}
# expect_build RUNS|SKIPS WHY: builds, and checks whether spmmc compile ran.
expect_build() {
  local out
  out=$(cmake --build "$work/build" 2>&1) || { echo "$out"; fail "build failed ($2)"; }
  if grep -q 'spmmc compile' <<<"$out"; then ran=RUNS; else ran=SKIPS; fi
  [ "$ran" = "$1" ] || { echo "$out"; fail "spmmc compile $ran after $2, expected it to be $1"; }
  echo "rebuild test: ok: spmmc compile $1 after $2"
}
json() { grep -o "\"$1\": *[^,]*" "$work/build/spmmc_kernels/layer.json" | head -n1; }

configure
expect_build RUNS "the first configure"
expect_build SKIPS "no change"
sha1=$(json weights_sha256)
"$spmmc" gen uniform --rows 8 --cols 16 --sparsity 0.7 --seed 2 --quiet -o "$work/w.mtx"
expect_build RUNS "new weights"
[ "$(json weights_sha256)" != "$sha1" ] || fail "layer.json still has the old weights hash"
configure -DTILE=8x64
expect_build RUNS "TILE 8x64"
[[ $(json m1) =~ 8$ ]] || fail "layer.json has $(json m1) after TILE 8x64"
expect_build SKIPS "no change"
touch "$spmmc"
expect_build RUNS "a new spmmc"
sed -i 's/"description": *"/&edited: /' "$work/target.json"
grep -q 'edited:' "$work/target.json" || fail "could not edit $work/target.json"
expect_build RUNS "an edit of the target description (depfile)"
expect_build SKIPS "no change"
# TUNE model: the installed H100 ranker (the target description is named h100) decides: its first
# tile, or (this 8 x 16 layer lies outside its training domain) the heuristic's pick kept by it.
# Without the model the report would say "no ranker model for the target".
configure -DTILE= -DTUNE=model
expect_build RUNS "TUNE model"
grep -Eq "the ranker's first|kept by --tune model" "$work/build/spmmc_kernels/layer.json" ||
  fail "layer.json: the installed ranker did not decide under TUNE model"
expect_build SKIPS "no change"
touch "$prefix/share/spmmc/models/h100.ranker.json"
expect_build RUNS "a new ranker model (depfile)"
expect_build SKIPS "no change"
echo "rebuild test: PASS"
