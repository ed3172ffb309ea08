# Must-fail tests of spmmc_add_spmm(): each case configures a tiny project (no languages, so it
# takes a fraction of a second) whose call is wrong in one way, and checks that the configure step
# fails with the message naming the argument.
#
#   cmake -DSPMMC_CMAKE_DIR=<spmmc>/cmake -DWORK_DIR=<scratch folder> -DCUDA_COMPILER=<nvcc>
#         -P add_spmm_errors.cmake
cmake_minimum_required(VERSION 3.25)
foreach(var SPMMC_CMAKE_DIR WORK_DIR CUDA_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "add_spmm_errors.cmake: pass -D${var}=...")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")

set(failures 0)
set(count 0)
# expect_error(NAME <case> CALL <spmmc_add_spmm arguments> REGEX <regex> [PRELUDE <cmake code>])
# By default the project has spmmc::spmmc (imported), an executable target `app`, an interface
# library `iface`, and CUDA disabled: every case that gets past the argument checks fails at the
# CUDA check, the last one.
function(expect_error)
  cmake_parse_arguments(PARSE_ARGV 0 c "" "NAME;CALL;REGEX;PRELUDE" "")
  set(dir "${WORK_DIR}/${c_NAME}")
  if(NOT DEFINED c_PRELUDE)
    set(c_PRELUDE "add_executable(spmmc::spmmc IMPORTED)")
  endif()
  file(WRITE "${dir}/CMakeLists.txt" "cmake_minimum_required(VERSION 3.25)
project(add_spmm_error_case LANGUAGES NONE)
include(\"${SPMMC_CMAKE_DIR}/spmmc_add_spmm.cmake\")
${c_PRELUDE}
add_executable(app app.cu)
add_library(iface INTERFACE)
spmmc_add_spmm(${c_CALL})
")
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${dir}" -B "${dir}/build"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  # CMake wraps long messages: compare with the line breaks and indentation taken out.
  string(REGEX REPLACE "\n *" " " err_flat "${err}")
  math(EXPR n "${count} + 1")
  set(count ${n} PARENT_SCOPE)
  if(rc EQUAL 0)
    message(SEND_ERROR "FAIL ${c_NAME}: configure succeeded; expected an error matching '${c_REGEX}'")
  elseif(NOT err_flat MATCHES "${c_REGEX}")
    message(SEND_ERROR "FAIL ${c_NAME}: expected an error matching '${c_REGEX}', got:\n${err}")
  else()
    message(STATUS "ok   ${c_NAME}")
    return()
  endif()
  math(EXPR f "${failures} + 1")
  set(failures ${f} PARENT_SCOPE)
endfunction()

set(ok_args "WEIGHTS w.mtx NAME layer0 N 64")
expect_error(NAME missing-weights CALL "app NAME layer0 N 64" REGEX "spmmc_add_spmm\\(app\\): WEIGHTS <file> is required")
expect_error(NAME missing-name CALL "app WEIGHTS w.mtx N 64" REGEX "spmmc_add_spmm\\(app\\): NAME <name> is required")
expect_error(NAME missing-n CALL "app WEIGHTS w.mtx NAME layer0" REGEX "spmmc_add_spmm\\(app\\): N <n> is required")
expect_error(NAME missing-target CALL "${ok_args}" REGEX "the first argument must be the target, not the keyword WEIGHTS")
expect_error(NAME empty-value CALL "app ${ok_args} TILE" REGEX "spmmc_add_spmm\\(app\\): TILE is given without a value")
expect_error(NAME unknown-keyword CALL "app ${ok_args} THREADS 4" REGEX "unknown argument\\(s\\) 'THREADS;4'")
expect_error(NAME n-zero CALL "app WEIGHTS w.mtx NAME layer0 N 0" REGEX "N '0' is not a positive integer")
expect_error(NAME n-negative CALL "app WEIGHTS w.mtx NAME layer0 N -64" REGEX "N '-64' is not a positive integer")
expect_error(NAME n-not-a-number CALL "app WEIGHTS w.mtx NAME layer0 N 64k" REGEX "N '64k' is not a positive integer")
expect_error(NAME n-range-open CALL "app WEIGHTS w.mtx NAME layer0 N 64:" REGEX "N '64:' is not a positive integer, a list N1,N2,... or a range LO:HI")
expect_error(NAME n-list-empty-item CALL "app WEIGHTS w.mtx NAME layer0 N 1,,64" REGEX "N '1,,64' is not a positive integer, a list")
expect_error(NAME name-not-identifier CALL "app WEIGHTS w.mtx NAME 0layer N 64" REGEX "NAME '0layer' is not a C identifier")
expect_error(NAME name-with-dash CALL "app WEIGHTS w.mtx NAME fc-1 N 64" REGEX "NAME 'fc-1' is not a C identifier")
# Names the emitted code cannot own: the same rules and messages as spmmc compile --name
# (compiler/common/reserved_names.h; tests/compiler/common/reserved_names_test.cpp compares the two at large).
expect_error(NAME name-reserved CALL "app WEIGHTS w.mtx NAME layer_info N 64"
             REGEX "NAME 'layer_info' clashes with the layer_info function of a kernel named 'layer'")
expect_error(NAME name-builtin CALL "app WEIGHTS w.mtx NAME threadIdx N 64" REGEX "NAME 'threadIdx' clashes with a CUDA built-in variable")
expect_error(NAME name-libc CALL "app WEIGHTS w.mtx NAME printf N 64" REGEX "NAME 'printf' clashes with a name the C library declares in <stdio.h>")
expect_error(NAME name-libc-export CALL "app WEIGHTS w.mtx NAME open N 64" REGEX "NAME 'open' clashes with a function or variable the C library exports")
expect_error(NAME name-toolkit CALL "app WEIGHTS w.mtx NAME cudaMalloc N 64" REGEX "NAME 'cudaMalloc' clashes with the CUDA toolkit's names: names starting with 'cu' are its own")
expect_error(NAME name-main CALL "app WEIGHTS w.mtx NAME main N 64" REGEX "NAME 'main' clashes with the entry point of every C and C\\+\\+ program")
expect_error(NAME name-header CALL "app WEIGHTS w.mtx NAME math N 64" REGEX "NAME 'math' clashes with a header of the C library")
expect_error(NAME name-own CALL "app WEIGHTS w.mtx NAME spmmc N 64" REGEX "NAME 'spmmc' derives the name spmmc_kernel for the emitted code")
expect_error(NAME tile-not-mxn CALL "app ${ok_args} TILE 32" REGEX "TILE '32' is not M1xN1")
expect_error(NAME tile-zero CALL "app ${ok_args} TILE 0x128" REGEX "TILE '0x128' is not M1xN1")
expect_error(NAME tile-bad-v CALL "app ${ok_args} TILE 16x512x3" REGEX "TILE '16x512x3' is not M1xN1 or M1xN1xV")
expect_error(NAME tune-unknown CALL "app ${ok_args} TUNE fastest" REGEX "TUNE 'fastest' is not one of auto, none, model, rank, proxy, exhaustive")
expect_error(NAME tile-and-tune CALL "app ${ok_args} TILE 32x128 TUNE proxy" REGEX "TILE fixes the tile. it cannot be combined with TUNE proxy")
expect_error(NAME arch-bad CALL "app ${ok_args} ARCH hopper" REGEX "ARCH 'hopper' is not an architecture")
expect_error(NAME dtype-unknown CALL "app ${ok_args} DTYPE fp8" REGEX "DTYPE 'fp8' is not one of fp32, fp16, bf16, tf32")
expect_error(NAME options-dtype CALL "app ${ok_args} OPTIONS --dtype fp16" REGEX "OPTIONS must not contain --dtype")
expect_error(NAME options-duplicate CALL "app ${ok_args} OPTIONS --reorder none --n 128" REGEX "OPTIONS must not contain --n: spmmc_add_spmm sets it")
expect_error(NAME options-output CALL "app ${ok_args} OPTIONS -o elsewhere" REGEX "OPTIONS must not contain -o")
expect_error(NAME no-such-target CALL "mlp ${ok_args}" REGEX "spmmc_add_spmm\\(mlp\\): there is no target 'mlp'")
expect_error(NAME interface-target CALL "iface ${ok_args}" REGEX "'iface' is an alias, imported, interface or custom target")
expect_error(NAME no-spmmc CALL "app ${ok_args}" PRELUDE "# no spmmc::spmmc" REGEX "there is no target spmmc::spmmc; call find_package\\(spmmc\\)")
# The only case that needs CUDA enabled (the first call must succeed): a few seconds.
expect_error(NAME duplicate-name CALL "app ${ok_args}" PRELUDE "add_executable(spmmc::spmmc IMPORTED)
set(CMAKE_CUDA_COMPILER \"${CUDA_COMPILER}\")
set(CMAKE_CUDA_ARCHITECTURES 90)
enable_language(CUDA)
add_executable(other other.cu)
spmmc_add_spmm(other ${ok_args})" REGEX "layer0.cu is already generated by another spmmc_add_spmm call")
# Every argument right: the last check, the CUDA language, is what stops it.
expect_error(NAME no-cuda CALL "app ${ok_args} ARCH 90 TILE 32x128 TUNE none DTYPE fp16 OPTIONS --reorder none"
             REGEX "the CUDA language is not enabled, so the generated layer0.cu cannot be compiled")
# DTYPE tf32 is a valid DTYPE: it too passes every check up to the CUDA language.
expect_error(NAME dtype-tf32 CALL "app ${ok_args} ARCH 90 DTYPE tf32"
             REGEX "the CUDA language is not enabled, so the generated layer0.cu cannot be compiled")

if(failures GREATER 0)
  message(FATAL_ERROR "spmmc_add_spmm must-fail cases: ${failures} of ${count} failed")
endif()
message(STATUS "spmmc_add_spmm must-fail cases: ${count} passed, 0 failed")
