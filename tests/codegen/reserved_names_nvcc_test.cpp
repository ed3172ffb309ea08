// Every kernel name spmmc accepts builds (issue 11, defect 3): a random sample of 1,000 names
// that `spmmc compile --name` accepts (is_c_identifier, then reserved_name_clash of
// compiler/common/reserved_names.h), half of them identifiers the CUDA toolkit's and the C library's
// headers use (the names most likely to clash; harvested from the emitted code as nvcc
// preprocesses it), the rest random identifiers, each emitted for a tiny layer and
//  * compiled by nvcc -arch=sm_90 with every warning an error, the headers' folder given with -I
//    as spmmc_add_spmm() does (so NAME.h must not hide a system header);
//  * its header included from C;
//  * linked, all of them, into one program whose main calls every NAME and NAME_info.
// To stay affordable on two cores the kernels are compiled 250 to a translation unit: the emitted
// code's own names (spmmc_*, tile_<digits>: rule 2 of reserved_names.h keeps them from every NAME)
// get a suffix per kernel so that kernels can share a unit; NAME, NAME_info and NAME_kernel stay
// as emitted, at the scopes they were emitted at. The seed is fixed: the sample is the same on
// every run.
#include <algorithm>
#include <random>
#include <set>
#include <utility>

#include "codegen/emit_unrolled_kernel.h"
#include "compiler/common/reserved_names.h"
#include "tests/codegen/emitted_kernel_util.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::Job;
using test::quote;
using test::run_parallel;

constexpr size_t kSample = 1000;
constexpr size_t kFromHeaders = 500;
constexpr size_t kPerUnit = 250;
constexpr uint64_t kSeed = 20261122;

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Every identifier-like word of `text`, not counting those glued to a number (0x1f, 2u).
std::set<std::string> words_of(const std::string& text) {
  std::set<std::string> words;
  for (size_t i = 0; i < text.size();) {
    if (!is_identifier_char(text[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && is_identifier_char(text[end])) ++end;
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) words.insert(text.substr(i, end - i));
    i = end;
  }
  return words;
}

bool accepted(const std::string& name) { return is_c_identifier(name) && !reserved_name_clash(name); }

// The emitted code's own names: spmmc_* (but the shared types spmmc_kernel_info and
// spmmc_kernel_variant) and tile_<digits>.
bool is_own_name(const std::string& word) {
  if (word.rfind("spmmc_", 0) == 0) return word != "spmmc_kernel_info" && word != "spmmc_kernel_variant";
  if (word.rfind("tile_", 0) != 0 || word.size() == 5) return false;
  return std::all_of(word.begin() + 5, word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// `cu` with `suffix` appended to each of the emitted code's own names.
std::string with_own_names_suffixed(const std::string& cu, const std::string& suffix) {
  std::string out;
  out.reserve(cu.size() + 4096);
  for (size_t i = 0; i < cu.size();) {
    if (!is_identifier_char(cu[i]) || (i > 0 && is_identifier_char(cu[i - 1]))) {
      out += cu[i++];
      continue;
    }
    size_t end = i;
    while (end < cu.size() && is_identifier_char(cu[end])) ++end;
    const std::string word = cu.substr(i, end - i);
    out += word;
    if (is_own_name(word)) out += suffix;
    i = end;
  }
  return out;
}

// The first lines of a compiler's log: enough to name the kernels that failed.
std::string head(const std::string& log) { return log.size() > 6000 ? log.substr(0, 6000) + "\n..." : log; }

TEST_CASE("every accepted kernel name in a random sample of 1000 builds with nvcc", "[codegen][nvcc][names]") {
  const std::string nvcc = SPMMC_NVCC;
  if (nvcc.empty() || !fs::exists(nvcc)) {
    WARN("skipped: nvcc not found (CUDAToolkit_NVCC_EXECUTABLE='" << nvcc << "')");
    return;
  }
  test::TempDir dir;
  // A 3 x 4 layer with three non-zeros: two tiles, an empty row.
  const Csr a = test::csr_from_dense(3, 4, {1.5f, 0, 0, -2, 0, 0, 0, 0, 0.25f, 0, 3, 0});
  const RowTiling tiling = tile_rows(a, 2, ReorderMethod::kNone);
  TileCandidate tile;
  tile.m1 = 2;
  tile.n1 = 32;
  const auto emit = [&](const std::string& name) {
    EmitOptions options;
    options.name = name;
    options.provenance = "tests/codegen/reserved_names_nvcc_test.cpp";
    options.weights_sha256 = std::string(64, '0');
    return emit_unrolled_kernel(a, tiling, tile, options);
  };

  // The identifiers an emitted kernel sees: its own text as nvcc preprocesses it, and the macros.
  const EmittedKernel probe = emit("probe");
  test::write_file(dir.path / "probe.cu", probe.cu);
  test::write_file(dir.path / "probe.h", probe.h);
  std::vector<Job> harvest = {
      Job(quote(nvcc) + " -arch=sm_90 -std=c++17 -E " + quote((dir.path / "probe.cu").string()) + " -o " +
          quote((dir.path / "probe.ii").string())),
      Job(quote(nvcc) + " -arch=sm_90 -std=c++17 -E -Xcompiler -dM " + quote((dir.path / "probe.cu").string()) + " -o " +
          quote((dir.path / "probe.macros").string()))};
  run_parallel(harvest);
  for (const Job& job : harvest) {
    INFO(job.command << "\n" << job.log);
    REQUIRE(job.exit_code == 0);
  }
  std::set<std::string> seen = words_of(test::read_file(dir.path / "probe.ii"));
  for (const std::string& word : words_of(test::read_file(dir.path / "probe.macros"))) seen.insert(word);
  std::vector<std::string> from_headers;
  for (const std::string& word : seen)
    if (accepted(word) && word.find("probe") == std::string::npos) from_headers.push_back(word);
  INFO(seen.size() << " identifiers in the preprocessed kernel, " << from_headers.size() << " of them accepted");
  REQUIRE(from_headers.size() >= 300);  // a toolkit without headers would make this test hollow

  // The sample: half from the headers, the rest random; no name is another's NAME_kernel (two
  // kernels of one program never share a unit, the kernels of this test do).
  std::mt19937_64 rng(kSeed);
  std::shuffle(from_headers.begin(), from_headers.end(), rng);
  std::vector<std::string> sample;
  std::set<std::string> taken;
  const auto take = [&](const std::string& name) {
    if (sample.size() >= kSample || !accepted(name) || taken.count(name) || taken.count(name + "_kernel")) return;
    if (name.size() > 7 && name.compare(name.size() - 7, 7, "_kernel") == 0 && taken.count(name.substr(0, name.size() - 7))) return;
    sample.push_back(name);
    taken.insert(name);
  };
  for (size_t i = 0; i < from_headers.size() && sample.size() < kFromHeaders; ++i) take(from_headers[i]);
  while (sample.size() < kSample)
    for (const std::string& name : test::random_identifiers(kSample, rng)) take(name);
  REQUIRE(sample.size() == kSample);

  // The kernels, kPerUnit to a translation unit; every header beside them.
  std::vector<Job> jobs;
  std::vector<fs::path> objects;
  std::string includes, entries, c_uses;
  for (size_t first = 0; first < sample.size(); first += kPerUnit) {
    std::string unit;
    for (size_t i = first; i < std::min(sample.size(), first + kPerUnit); ++i) {
      const std::string& name = sample[i];
      const EmittedKernel kernel = emit(name);
      test::write_file(dir.path / (name + ".h"), kernel.h);
      unit += "#line 1 \"" + name + ".cu\"\n" + with_own_names_suffixed(kernel.cu, "_k" + std::to_string(i));
      includes += "#include \"" + name + ".h\"\n";
      entries += "    {\"" + name + "\", " + name + "_info, " + name + "},\n";
      c_uses += " + (" + name + "_info() != 0)";
    }
    const fs::path cu = dir.path / ("unit" + std::to_string(first / kPerUnit) + ".cu");
    test::write_file(cu, unit);
    objects.push_back(fs::path(cu).replace_extension(".o"));
    jobs.emplace_back(quote(nvcc) + " -arch=sm_90 -std=c++17 -c -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror -I " +
                      quote(dir.path.string()) + " " + quote(cu.string()) + " -o " + quote(objects.back().string()));
  }
  // A program using them all: NAME(null, null, 1, 0) is refused by the kernel itself, without a
  // GPU; a NAME bound to anything else would not say cudaErrorInvalidValue.
  test::write_file(dir.path / "main.cu", "#include <stdio.h>\n#include <string.h>\n" + includes +
                                             "struct Entry {\n"
                                             "  const char* name;\n"
                                             "  const spmmc_kernel_info* (*info)(void);\n"
                                             "  cudaError_t (*run)(const float*, float*, int64_t, cudaStream_t);\n"
                                             "};\n"
                                             "static const Entry entries[] = {\n" + entries + "};\n"
                                             "int main() {\n"
                                             "  int good = 0, all = 0;\n"
                                             "  for (const Entry& e : entries) {\n"
                                             "    ++all;\n"
                                             "    if (strcmp(e.info()->name, e.name) == 0 && e.run(nullptr, nullptr, 1, 0) == cudaErrorInvalidValue) ++good;\n"
                                             "    else printf(\"%s does not answer as itself\\n\", e.name);\n"
                                             "  }\n"
                                             "  printf(\"%d of %d\\n\", good, all);\n"
                                             "  return good == all ? 0 : 1;\n"
                                             "}\n");
  jobs.emplace_back(quote(nvcc) + " -arch=sm_90 -std=c++17 -c -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror -I " +
                    quote(dir.path.string()) + " " + quote((dir.path / "main.cu").string()) + " -o " +
                    quote((dir.path / "main.o").string()));
  // The headers from C, with the toolkit's headers beside nvcc.
  const fs::path cuda_include = fs::path(nvcc).parent_path().parent_path() / "include";
  const bool c_check = fs::exists(cuda_include / "cuda_runtime.h");
  if (c_check) {
    test::write_file(dir.path / "headers.c", includes + "int spmmc_names_from_c(void) { return 0" + c_uses + "; }\n");
    jobs.emplace_back(quote(SPMMC_CXX) + " -x c -std=c11 -fsyntax-only -Wall -Wextra -Werror -I " + quote(cuda_include.string()) +
                      " -I " + quote(dir.path.string()) + " " + quote((dir.path / "headers.c").string()));
  } else {
    WARN("the headers are not compiled as C: no " << (cuda_include / "cuda_runtime.h") << " beside nvcc");
  }
  run_parallel(jobs);
  for (const Job& job : jobs) {
    INFO(job.command << "\n" << head(job.log));
    CHECK(job.exit_code == 0);
  }
  for (const Job& job : jobs)
    if (job.exit_code != 0) return;

  std::string link = quote(nvcc) + " -arch=sm_90 " + quote((dir.path / "main.o").string());
  for (const fs::path& object : objects) link += " " + quote(object.string());
  link += " -o " + quote((dir.path / "names").string());
  std::string log;
  const int linked = test::run_command(link, log);
  INFO(link << "\n" << head(log));
  REQUIRE(linked == 0);
  // Runs without a GPU: no call reaches the device.
  const int ran = test::run_command(quote((dir.path / "names").string()), log);
  INFO(head(log));
  CHECK(ran == 0);
  CHECK(log == "1000 of 1000\n");
}

}  // namespace
}  // namespace spmmc
