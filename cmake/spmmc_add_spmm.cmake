# spmmc_add_spmm(): compile fixed sparse weights into a CUDA kernel at build time and add the
# kernel to a target (the pattern of protobuf_generate and Halide's add_halide_library).
#
#   spmmc_add_spmm(<target>
#                  WEIGHTS <file>          sparse weights in any format spmmc reads (relative: to the
#                                          current source folder); may be the output of a custom command
#                  NAME <name>             the C name of the kernel: <name>() and <name>_info()
#                  N <n>                   columns of B and C the tile is chosen for (any n works at run time);
#                                          N1,N2,... or LO:HI: tuned for the largest, the others place the
#                                          generic path's threshold (spmmc compile --n)
#                  [ARCH <sm>]             e.g. 90 or sm_90: plan for that architecture (--arch sm_90);
#                                          default: spmmc's default target (h100, sm_90)
#                  [TILE <M1>x<N1>[x<V>]]  force the tile, e.g. 32x128 or 16x512x2 (--tile)
#                  [TUNE auto|none|model|rank|proxy|exhaustive]  how spmmc chooses the tile; default
#                                          auto: rank where the building machine has a GPU of the
#                                          target's architecture, none (the heuristic) elsewhere
#                                          and with TILE.
#                                          model: the target's ranker (no GPU, reproducible; the
#                                          heuristic where there is none; --model in OPTIONS names
#                                          another); none: a heuristic (reproducible, no GPU); rank,
#                                          proxy and exhaustive time kernels on the building GPU
#                  [DTYPE fp32|fp16|bf16|tf32]  B's and C's elements (--dtype; default fp32): fp16 and bf16
#                                          take __half / __nv_bfloat16 pointers, A rounded to them,
#                                          products summed in float32; tf32 takes float pointers,
#                                          rounds A to tf32 and multiplies on the TF32 tensor cores
#                                          (B rounded too) or float32's CUDA-core kernels (B as
#                                          given), whichever is faster (sm_80 and later)
#                                          (docs/design/precision.md)
#                  [OUTPUT_DIR <dir>]      where <name>.cu/.h/.json go; default ${CMAKE_CURRENT_BINARY_DIR}/spmmc_kernels
#                  [OPTIONS <arg>...])     further `spmmc compile` options, passed as they are
#
# Runs `spmmc compile <weights> --n <n> --name <name> -o <dir> --reproducible --quiet --depfile
# <dir>/<name>.d [--tile] [--tune] [--arch] [--dtype] <options>`, adds <name>.cu and <name>.h to the
# target's sources (<name>.cu built by nvcc with the options in <name>.nvcc-options, through
# --options-file) and <dir> to its include directories. The kernel is regenerated when the
# weights, spmmc itself, the arguments of this call, or anything else spmmc read (the target
# description, through the depfile) change. Wrong arguments stop the configure step with a
# message naming the argument; so does a NAME the emitted code cannot own (a keyword, a name of the
# CUDA toolkit or the C library, main, spmmc_*, *_info, *_t: compiler/common/reserved_names.h says which,
# reserved_names.inc lists them). Reference: docs/user-guide.md.
#
# The spmmc that runs is the target spmmc::spmmc: the imported one of find_package(spmmc), or the
# one built in the same tree after add_subdirectory(spmmc).
include_guard(GLOBAL)

# Functions use the policies in force where they are defined. CMP0116: CMake rewrites the depfile
# for Ninja, whose paths must match its own spelling of the outputs.
if(POLICY CMP0116)
  cmake_policy(SET CMP0116 NEW)
endif()

# _spmmc_reserved_name_clash(<name> <out>): sets <out> to why <name> cannot name a kernel (the end
# of "NAME '<name>' clashes with ..."), or to "" when it can. The same rules, in the same order,
# as reserved_name_clash() in compiler/common/reserved_names.h (spmmc compile --name), which documents
# them; the lists are read from reserved_names.inc, the file both use.
function(_spmmc_reserved_name_clash name out)
  set(${out} "" PARENT_SCOPE)
  if(name MATCHES "^_")
    set(${out} "clashes with the names C and C++ reserve at file scope (every name starting with an underscore)" PARENT_SCOPE)
    return()
  elseif(name MATCHES "^(spmmc_|SPMMC_)")
    set(${out} "clashes with the names the emitted code defines itself (spmmc_*, SPMMC_*)" PARENT_SCOPE)
    return()
  elseif(name MATCHES "^tile_[0-9]+$")
    set(${out} "clashes with the tile functions the emitted code defines (tile_0, tile_1, ...)" PARENT_SCOPE)
    return()
  elseif(name MATCHES "^(.*)_info$")
    set(${out} "clashes with the ${name} function of a kernel named '${CMAKE_MATCH_1}'" PARENT_SCOPE)
    return()
  elseif(name MATCHES "^(cu|CU|nv|NV)")
    set(${out} "clashes with the CUDA toolkit's names: names starting with '${CMAKE_MATCH_1}' are its own (cudaMalloc, cuInit, cublasCreate, CUresult, nvrtcCompileProgram, nv_bfloat16, NV_IF_TARGET)"
        PARENT_SCOPE)
    return()
  elseif(name MATCHES "_t$")
    set(${out} "clashes with the type names POSIX reserves (every name ending in _t: size_t, int64_t, pthread_t, ...)"
        PARENT_SCOPE)
    return()
  endif()
  # The lists: beside this file once installed, compiler/common/reserved_names.inc in the source tree.
  set(table "")
  foreach(candidate "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/reserved_names.inc"
                    "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../compiler/common/reserved_names.inc")
    if(EXISTS "${candidate}")
      set(table "${candidate}")
      break()
    endif()
  endforeach()
  if(NOT table)
    message(FATAL_ERROR "spmmc_add_spmm: reserved_names.inc, the list of names a kernel cannot take, is missing "
                        "beside ${CMAKE_CURRENT_FUNCTION_LIST_FILE}; reinstall spmmc")
  endif()
  file(STRINGS "${table}" lines)
  # The name itself, then the names the emitted code derives from it.
  foreach(candidate "${name}" "${name}_kernel" "${name}_info")
    if(NOT candidate STREQUAL name AND candidate MATCHES "^(spmmc_|SPMMC_)")
      set(${out} "derives the name ${candidate} for the emitted code, which clashes with the names the emitted code defines itself (spmmc_*, SPMMC_*)"
          PARENT_SCOPE)
      return()
    endif()
    # A math function's variants: acosf, acosl, acosf32, ... are clashes of the base acos.
    set(bases "${candidate}")
    foreach(suffix f l f32 f32x f64 f64x f128 f128x)
      if(candidate MATCHES "^(.+)${suffix}$")
        list(APPEND bases "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    set(kind "")
    set(reason "")
    foreach(line IN LISTS lines)
      if(line MATCHES "^= (exact|math) (.*)$")
        set(kind "${CMAKE_MATCH_1}")
        set(reason "${CMAKE_MATCH_2}")
      elseif(kind STREQUAL "")
        continue()  # the comments and the raw-string opening line
      elseif(line MATCHES "^\\)")
        break()
      else()
        set(words " ${line} ")
        set(found FALSE)
        if(kind STREQUAL "exact")
          string(FIND "${words}" " ${candidate} " at)
          if(NOT at EQUAL -1)
            set(found TRUE)
          endif()
        else()
          foreach(base IN LISTS bases)
            string(FIND "${words}" " ${base} " at)
            if(NOT at EQUAL -1)
              set(found TRUE)
            endif()
          endforeach()
        endif()
        if(found)
          if(candidate STREQUAL name)
            set(${out} "clashes with ${reason}" PARENT_SCOPE)
          else()
            set(${out} "derives the name ${candidate} for the emitted code, which clashes with ${reason}" PARENT_SCOPE)
          endif()
          return()
        endif()
      endif()
    endforeach()
  endforeach()
endfunction()

function(spmmc_add_spmm target)
  set(where "spmmc_add_spmm(${target})")
  set(keywords WEIGHTS NAME N ARCH TILE TUNE DTYPE OUTPUT_DIR OPTIONS)
  if(target IN_LIST keywords)
    message(FATAL_ERROR "spmmc_add_spmm: the first argument must be the target, not the keyword ${target}")
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "WEIGHTS;NAME;N;ARCH;TILE;TUNE;DTYPE;OUTPUT_DIR" "OPTIONS")

  # --- the arguments ------------------------------------------------------------------------
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown argument(s) '${arg_UNPARSED_ARGUMENTS}' "
                        "(expected WEIGHTS, NAME, N, ARCH, TILE, TUNE, DTYPE, OUTPUT_DIR, OPTIONS)")
  endif()
  foreach(keyword IN LISTS arg_KEYWORDS_MISSING_VALUES)
    if(NOT keyword STREQUAL "OPTIONS")  # an empty OPTIONS list is fine
      message(FATAL_ERROR "${where}: ${keyword} is given without a value")
    endif()
  endforeach()
  if(NOT DEFINED arg_WEIGHTS)
    message(FATAL_ERROR "${where}: WEIGHTS <file> is required (the sparse weights to compile)")
  endif()
  if(NOT DEFINED arg_NAME)
    message(FATAL_ERROR "${where}: NAME <name> is required (the C name of the kernel)")
  endif()
  if(NOT DEFINED arg_N)
    message(FATAL_ERROR "${where}: N <n> is required (the number of columns of B and C to tune for)")
  endif()
  if(NOT arg_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${where}: NAME '${arg_NAME}' is not a C identifier (letters, digits and _, "
                        "not starting with a digit)")
  endif()
  _spmmc_reserved_name_clash("${arg_NAME}" clash)
  if(clash)
    message(FATAL_ERROR "${where}: NAME '${arg_NAME}' ${clash}")
  endif()
  if(NOT arg_N MATCHES "^[1-9][0-9]*((,[1-9][0-9]*)*|:[1-9][0-9]*)$")
    message(FATAL_ERROR "${where}: N '${arg_N}' is not a positive integer, a list N1,N2,... or a range LO:HI")
  endif()
  if(DEFINED arg_TILE AND NOT arg_TILE MATCHES "^[1-9][0-9]*x[1-9][0-9]*(x[124])?$")
    message(FATAL_ERROR "${where}: TILE '${arg_TILE}' is not M1xN1 or M1xN1xV (positive integers, V 1, 2 or 4), e.g. 32x128 or 16x512x2")
  endif()
  set(tune auto)
  if(DEFINED arg_TUNE)
    set(tune ${arg_TUNE})
  endif()
  if(NOT tune MATCHES "^(auto|none|model|rank|proxy|exhaustive)$")
    message(FATAL_ERROR "${where}: TUNE '${tune}' is not one of auto, none, model, rank, proxy, exhaustive")
  endif()
  if(DEFINED arg_TILE AND NOT tune MATCHES "^(auto|none)$")
    message(FATAL_ERROR "${where}: TILE fixes the tile; it cannot be combined with TUNE ${tune}")
  endif()
  if(DEFINED arg_DTYPE AND NOT arg_DTYPE MATCHES "^(fp32|fp16|bf16|tf32)$")
    message(FATAL_ERROR "${where}: DTYPE '${arg_DTYPE}' is not one of fp32, fp16, bf16, tf32")
  endif()
  if(DEFINED arg_ARCH AND NOT arg_ARCH MATCHES "^(sm_)?[1-9][0-9]+[a-z]?$")
    message(FATAL_ERROR "${where}: ARCH '${arg_ARCH}' is not an architecture such as 90 or sm_90")
  endif()
  # Options this function sets itself would be given twice.
  foreach(option IN LISTS arg_OPTIONS)
    if(option MATCHES "^(--n|--name|--output|-o|--tile|--tune|--arch|--dtype|--depfile|--quiet|--reproducible)(=.*)?$")
      message(FATAL_ERROR "${where}: OPTIONS must not contain ${CMAKE_MATCH_1}: spmmc_add_spmm sets it "
                          "(use the N, NAME, OUTPUT_DIR, TILE, TUNE, DTYPE or ARCH arguments)")
    endif()
  endforeach()

  # --- the target and the tool --------------------------------------------------------------
  if(NOT TARGET ${target})
    message(FATAL_ERROR "${where}: there is no target '${target}'; create it with add_executable() or "
                        "add_library() before calling spmmc_add_spmm")
  endif()
  get_target_property(aliased ${target} ALIASED_TARGET)
  get_target_property(imported ${target} IMPORTED)
  get_target_property(type ${target} TYPE)
  if(aliased OR imported OR type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
    message(FATAL_ERROR "${where}: '${target}' is an alias, imported, interface or custom target; the "
                        "generated sources need a target that compiles them (an executable or a library)")
  endif()
  if(NOT TARGET spmmc::spmmc)
    message(FATAL_ERROR "${where}: there is no target spmmc::spmmc; call find_package(spmmc) or "
                        "add_subdirectory(<spmmc source>) first")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST languages)
    message(FATAL_ERROR "${where}: the CUDA language is not enabled, so the generated ${arg_NAME}.cu cannot "
                        "be compiled; use project(... LANGUAGES CXX CUDA) or enable_language(CUDA)")
  endif()

  # --- the command --------------------------------------------------------------------------
  get_filename_component(weights "${arg_WEIGHTS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/spmmc_kernels")
  if(DEFINED arg_OUTPUT_DIR)
    get_filename_component(out_dir "${arg_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  set(base "${out_dir}/${arg_NAME}")
  get_property(taken GLOBAL PROPERTY SPMMC_ADD_SPMM_OUTPUTS)
  if("${base}.cu" IN_LIST taken)
    message(FATAL_ERROR "${where}: ${base}.cu is already generated by another spmmc_add_spmm call; "
                        "give each kernel its own NAME (or OUTPUT_DIR)")
  endif()
  set_property(GLOBAL APPEND PROPERTY SPMMC_ADD_SPMM_OUTPUTS "${base}.cu")

  set(args compile "${weights}" --n ${arg_N} --name ${arg_NAME} -o "${out_dir}" --reproducible --quiet
           --depfile "${base}.d" --tune ${tune})
  if(DEFINED arg_TILE)
    list(APPEND args --tile ${arg_TILE})
  endif()
  if(DEFINED arg_ARCH)
    string(REGEX REPLACE "^sm_" "" arch "${arg_ARCH}")
    list(APPEND args --arch sm_${arch})
  endif()
  if(DEFINED arg_DTYPE)
    list(APPEND args --dtype ${arg_DTYPE})
  endif()
  list(APPEND args ${arg_OPTIONS})

  # The arguments, one a line, rewritten only when they change: the command depends on this file,
  # so changing any argument regenerates the kernel (Ninja would notice by itself, Make would not).
  set(options_file "${base}.options")
  list(JOIN args "\n" options_text)
  set(old_text "")
  if(EXISTS "${options_file}")
    file(READ "${options_file}" old_text)
  endif()
  if(NOT old_text STREQUAL "${options_text}\n")
    file(WRITE "${options_file}" "${options_text}\n")
  endif()

  get_filename_component(weights_name "${weights}" NAME)
  add_custom_command(
    OUTPUT "${base}.cu" "${base}.h" "${base}.json" "${base}.nvcc-options"
    COMMAND spmmc::spmmc ${args}
    DEPENDS "${weights}" "${options_file}" spmmc::spmmc "$<TARGET_FILE:spmmc::spmmc>"
    DEPFILE "${base}.d"
    COMMENT "spmmc compile ${weights_name} -> ${arg_NAME}.cu (n=${arg_N}, tune ${tune})"
    VERBATIM)
  target_sources(${target} PRIVATE "${base}.cu" "${base}.h")
  # NAME.cu is built with the options spmmc wrote beside it (-Xptxas -O1 for the unrolled family,
  # none for the generic one: docs/emitted-code.md), read by nvcc from NAME.nvcc-options.
  set_source_files_properties("${base}.cu" TARGET_DIRECTORY ${target} PROPERTIES
    COMPILE_OPTIONS "$<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:--options-file=${base}.nvcc-options>"
    OBJECT_DEPENDS "${base}.nvcc-options")
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
endfunction()
