// Which kernel names are refused (compiler/common/reserved_names.h): one example per class, each with
// the reason it gives; ordinary layer names accepted; and cmake/spmmc_add_spmm.cmake, which reads
// the same table at configure time, giving the same answer for every name of a large sample.
// tests/codegen/reserved_names_nvcc_test.cpp checks that the names accepted really build.
#include "compiler/common/reserved_names.h"

#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;

TEST_CASE("reserved names: each class is refused, naming the clash", "[names]") {
  const std::map<std::string, std::string> refused = {
      {"_layer", "every name starting with an underscore"},
      {"spmmc_layer", "the names the emitted code defines itself"},
      {"SPMMC_LAYER", "the names the emitted code defines itself"},
      {"spmmc", "derives the name spmmc_kernel for the emitted code, which clashes with the names the emitted code defines"},
      {"tile_3", "the tile functions the emitted code defines"},
      {"layer_info", "the layer_info function of a kernel named 'layer'"},
      {"cudaMalloc", "names starting with 'cu' are its own"},
      {"cuInit", "names starting with 'cu' are its own"},
      {"cublasSgemm", "names starting with 'cu' are its own"},
      {"CUresult", "names starting with 'CU' are its own"},
      {"nvrtcCompileProgram", "names starting with 'nv' are its own"},
      {"NV_IF_TARGET", "names starting with 'NV' are its own"},
      {"layer_t", "the type names POSIX reserves"},
      {"main", "the entry point of every C and C++ program"},
      {"restrict", "a keyword of C or C++"},
      {"threadIdx", "a CUDA built-in variable"},
      {"warpSize", "a CUDA built-in variable"},
      {"atomicAdd", "a CUDA device function"},
      {"rsqrt", "a CUDA math function"},
      {"dim3", "a CUDA type"},
      {"make_float4", "a CUDA vector-type constructor"},
      {"std", "the C++ standard library's namespace"},
      {"printf", "a name the C library declares in <stdio.h>"},
      {"malloc", "a name the C library declares in <stdlib.h>"},
      {"sin", "a function the C library declares in <math.h>"},
      {"fmaf", "a function the C library declares in <math.h>"},
      {"sinf64x", "a function the C library declares in <math.h>"},
      {"INT_MAX", "a name the C library declares in <limits.h>"},
      {"SIGINT", "a name the C library declares in <signal.h>"},
      {"errno", "a name the C library declares in <errno.h>"},
      {"math", "a header of the C library, the compiler or the CUDA toolkit"},
      {"memory", "a header of the C library, the compiler or the CUDA toolkit"},
      {"open", "a function or variable the C library exports"},
      {"mmap", "a function or variable the C library exports"},
      {"pthread_create", "a function or variable the C library exports"},
      {"cabsf", "a function or variable the C library exports"},
  };
  for (const auto& [name, reason] : refused) {
    const auto clash = reserved_name_clash(name);
    INFO(name << ": " << clash.value_or("accepted"));
    REQUIRE(clash);
    CHECK_THAT(*clash, Catch::StartsWith("clashes with ") || Catch::StartsWith("derives the name "));
    CHECK_THAT(*clash, Catch::Contains(reason));
  }
}

TEST_CASE("reserved names: ordinary layer names are accepted", "[names]") {
  // Other spellings of the toolkit's prefixes (Cuda, Nv) are not its own.
  for (const char* name : {"k", "layer", "layer0", "fc1", "fc2_out", "conv2d_3", "Attention", "mlp_up_proj", "encoder_block_11",
                           "rn50_bottleneck", "Layer_T", "info", "kernel", "tile", "tile_a", "Cuda_layer", "Nv_layer",
                           "mathematics", "opener", "printf_layer"}) {
    INFO(name << ": " << reserved_name_clash(name).value_or("accepted"));
    CHECK(!reserved_name_clash(name));
  }
}

TEST_CASE("reserved names: spmmc_add_spmm() at configure time agrees with spmmc compile --name", "[names][cmake]") {
  // Every name of the table with its variants, the examples above, and random identifiers.
  std::set<std::string> names = {"_x", "spmmc_a", "SPMMC_B", "tile_0", "tile_x", "a_info", "cuX", "CUx", "nvX", "NVx",
                                 "x_t", "main", "layer", "fc1", "sinf", "sinl", "sinf32x", "acosf128x", "maxf", "j0l",
                                 "threadIdx", "printf", "open", "math", "Cuda", "a_kernel", "x_info_y", "spmmc", "SPMMC"};
  std::mt19937_64 rng(11);
  for (const std::string& name : test::random_identifiers(300, rng)) names.insert(name);
  for (const char* word : {"printf", "threadIdx", "cospi", "INT_MAX", "features", "xdr_void", "accept"})
    for (const char* suffix : {"", "f", "l", "_kernel", "_info", "2"}) names.insert(std::string(word) + suffix);
  test::TempDir dir;
  std::ostringstream list;
  for (const std::string& name : names) list << name << '\n';
  test::write_file(dir.path / "names.txt", list.str());
  test::write_file(dir.path / "clash.cmake",
                   "cmake_minimum_required(VERSION 3.25)\n"
                   "include(\"" SPMMC_SOURCE_DIR "/cmake/spmmc_add_spmm.cmake\")\n"
                   "file(STRINGS \"" + (dir.path / "names.txt").string() + "\" names)\n"
                   "foreach(name IN LISTS names)\n"
                   "  _spmmc_reserved_name_clash(\"${name}\" clash)\n"
                   "  message(\"${name}=${clash}\")\n"
                   "endforeach()\n");
  const std::string command = std::string("'") + SPMMC_CMAKE + "' -P '" + (dir.path / "clash.cmake").string() + "' 2>'" +
                              (dir.path / "out.txt").string() + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  std::map<std::string, std::string> by_cmake;
  std::istringstream out(test::read_file(dir.path / "out.txt"));
  for (std::string line; std::getline(out, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) by_cmake[line.substr(0, eq)] = line.substr(eq + 1);
  }
  REQUIRE(by_cmake.size() == names.size());
  size_t refused = 0;
  for (const std::string& name : names) {
    const std::string by_cpp = reserved_name_clash(name).value_or("");
    INFO(name);
    CHECK(by_cmake[name] == by_cpp);
    refused += !by_cpp.empty();
  }
  // The sample has both kinds in numbers.
  CHECK(refused > 30);
  CHECK(names.size() - refused > 200);
}

}  // namespace
}  // namespace spmmc
