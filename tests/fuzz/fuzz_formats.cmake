# The input formats the fuzz harness covers: the one place that lists them.
#
# Each entry is "<name>:<reader source in compiler/formats/>". <name> is what format_name() and
# parse_format_name() use (compiler/formats/read_matrix.h); it names the target fuzz_<name>, the seed
# folder tests/fuzz/corpus/<name>/, the dictionary tests/fuzz/<name>.dict (optional) and the
# ctest fuzz-corpus-<name>. A format whose reader source does not exist yet is skipped, so the
# list may name readers that are still being written. Adding a format: one line here, plus its
# seed folder.
set(SPMMC_FUZZ_FORMATS
  "mtx:read_matrix_market.cpp"
  "smtx:read_smtx.cpp"
  "npy:read_npy.cpp"
  "npz:read_npz.cpp"
  "safetensors:read_safetensors.cpp")

# The fuzz builds shrink TextScanner's read block (1 MiB in production) so that inputs of a few
# hundred bytes already cross block boundaries, the only way the refill logic gets fuzzed.
set(SPMMC_FUZZ_SCANNER_BLOCK 61)

# Sets <out_var> to the names of the formats whose reader exists in <compiler_dir> (compiler/formats).
function(spmmc_fuzz_available_formats out_var compiler_dir)
  set(available)
  foreach(entry IN LISTS SPMMC_FUZZ_FORMATS)
    string(REPLACE ":" ";" parts "${entry}")
    list(GET parts 0 name)
    list(GET parts 1 reader)
    if(EXISTS "${compiler_dir}/${reader}")
      list(APPEND available "${name}")
    else()
      message(STATUS "spmmc fuzz: skipping format '${name}' (no compiler/formats/${reader} yet)")
    endif()
  endforeach()
  set(${out_var} "${available}" PARENT_SCOPE)
endfunction()

# Adds the static library <target>: the compiler/ sources (SPMMC_COMPILER_SOURCES) built again,
# instrumented with the compile options that follow (e.g. -fsanitize=...), for the fuzz targets
# and the sanitised corpus replay. The executable that links it passes the matching link options.
function(spmmc_add_instrumented_compiler target)
  add_library(${target} STATIC ${SPMMC_COMPILER_SOURCES})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${target}
    # Out-of-range std::vector indexing aborts even where ASan cannot see it (e.g. &v[0] of an
    # empty vector).
    PUBLIC _GLIBCXX_ASSERTIONS
    PRIVATE SPMMC_TEXT_SCANNER_BLOCK=${SPMMC_FUZZ_SCANNER_BLOCK})
  # -O1 -g after the build type's flags: readable reports, quick to build.
  target_compile_options(${target} PRIVATE ${ARGN} -g -O1 -fno-omit-frame-pointer)
  target_link_libraries(${target} PUBLIC fmt::fmt spmmc_compiler_config PRIVATE nlohmann_json::nlohmann_json ZLIB::ZLIB spmmc_warnings)
endfunction()
