#!/usr/bin/env bash
# Fixture and test: installs the spmmc build BUILD_DIR into PREFIX (a fresh folder) and checks the
# install tree: the executable, the models, the CMake package; that the installed spmmc reads the
# installed target descriptions, also after the tree is moved elsewhere.
# usage: install.sh BUILD_DIR PREFIX
set -euo pipefail
build=$1 prefix=$2
fail() { echo "install test: FAIL: $*" >&2; exit 1; }

rm -rf "$prefix" "$prefix.moved"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(cd "$prefix" && find lib* -maxdepth 3 -path "*/cmake/spmmc" -type d 2>/dev/null | head -n1)
[ -n "$libdir" ] || fail "no lib*/cmake/spmmc under $prefix"
for f in bin/spmmc share/spmmc/models/targets/h100.json "$libdir/spmmcConfig.cmake" "$libdir/spmmcConfigVersion.cmake" \
         "$libdir/spmmcTargets.cmake" "$libdir/spmmc_add_spmm.cmake" "$libdir/reserved_names.inc"; do
  [ -e "$prefix/$f" ] || fail "$prefix/$f was not installed"
done
grep -q 'spmmc::spmmc' "$prefix/$libdir/spmmcTargets.cmake" || fail "spmmcTargets.cmake does not define spmmc::spmmc"

# The installed spmmc must read the installed models, not the source tree's: its depfile says
# which target description it loaded.
check_models() {  # check_models PREFIX
  local p=$1 work=$1/../install-check
  rm -rf "$work"; mkdir -p "$work"
  "$p/bin/spmmc" gen uniform --rows 8 --cols 8 --sparsity 0.5 --quiet -o "$work/w.mtx"
  "$p/bin/spmmc" compile "$work/w.mtx" --n 32 --name w -o "$work" --quiet --depfile "$work/w.d"
  grep -qF "$(cd "$p" && pwd)/share/spmmc/models/targets/h100.json" "$work/w.d" ||
    fail "the spmmc in $p did not read its own models; depfile: $(cat "$work/w.d")"
  rm -rf "$work"
}
check_models "$prefix"
cp -r "$prefix" "$prefix.moved"
check_models "$prefix.moved"
rm -rf "$prefix.moved"
echo "install test: PASS: $prefix holds bin/spmmc, share/spmmc/models and $libdir; models found in place and after a move"
