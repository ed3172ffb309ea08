// Kernels emitted by `spmmc compile` build with nvcc without a single warning (nvcc -c also runs
// ptxas over the tiles' inline PTX: a statement it rejects fails here), for 1, 2 and 4 columns
// per thread, and two layers emitted into one folder link into one program (everything but the
// C ABI has internal linkage) and compute both their products when run together through the CPU
// emulation.
#include <utility>

#include <nlohmann/json.hpp>

#include "compiler/formats/read_matrix.h"
#include "tests/codegen/emitted_kernel_util.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::Job;
using test::quote;
using test::run_parallel;
using test::run_spmmc;

// nvcc, or an empty string (with a WARN) when CMake found none.
std::string nvcc_or_skip() {
  const std::string nvcc = SPMMC_NVCC;
  if (nvcc.empty() || !fs::exists(nvcc)) {
    WARN("skipped: nvcc not found (CUDAToolkit_NVCC_EXECUTABLE='" << nvcc << "')");
    return {};
  }
  return nvcc;
}

// nvcc -arch=sm_90 -c with every warning of nvcc and of the host compiler an error.
std::string nvcc_compile_command(const std::string& nvcc, const fs::path& cu, const fs::path& object) {
  return quote(nvcc) + " -arch=sm_90 -std=c++17 -c -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror -I " +
         quote(cu.parent_path().string()) + " " + quote(cu.string()) + " -o " + quote(object.string());
}

void compile_kernel(const fs::path& matrix, const std::string& name, const fs::path& dir, std::vector<std::string> extra) {
  std::vector<std::string> args = {"compile", matrix.string(), "--n", "64", "--name", name, "-o", dir.string(), "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_spmmc(args);
  INFO(name << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  // The independent oracle (spmmc verify, from the Clang AST) agrees with the emitter.
  const auto v = run_spmmc({"verify", (dir / (name + ".cu")).string(), "--against", matrix.string()});
  INFO("spmmc verify: " << v.err);
  CHECK(v.exit_code == 0);
}

fs::path gen(const fs::path& dir, const std::string& file, std::vector<std::string> args) {
  const fs::path path = dir / file;
  args.insert(args.begin(), "gen");
  args.insert(args.end(), {"-q", "-o", path.string()});
  const auto r = run_spmmc(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return path;
}

TEST_CASE("emitted kernels compile with nvcc without warnings", "[codegen][nvcc]") {
  const std::string nvcc = nvcc_or_skip();
  if (nvcc.empty()) return;
  test::TempDir dir;
  // One non-zero (one column, V = 1), empty rows and columns (zero tiles, V = 4), a real layer
  // (V = 2), the split along K and the generic family.
  const fs::path one = dir.path / "one.mtx";
  test::write_file(one, "%%MatrixMarket matrix coordinate real general\n5 7 1\n4 5 -1.25\n");
  const fs::path holes = gen(dir.path, "holes.mtx", {"uniform", "--rows", "40", "--cols", "64", "--sparsity", "0.97", "--seed", "3"});
  fs::path layer = test::shared_data_dir() / "dlmc" / "rn50" / "magnitude_pruning" / "0.98" / "bottleneck_1_block_group1_1_1.smtx";
  if (test::shared_data_dir().empty() || !fs::exists(layer))
    layer = gen(dir.path, "layer.mtx", {"magnitude", "--rows", "64", "--cols", "256", "--sparsity", "0.98", "--seed", "1"});
  compile_kernel(one, "single_nonzero", dir.path, {"--tile", "2x32"});
  compile_kernel(holes, "sparse_holes", dir.path, {"--tile", "4x128x4"});
  compile_kernel(layer, "rn50_layer", dir.path, {"--tile", "16x128x2"});
  // The split along K: tiles that wait (griddepcontrol.wait in the PTX) and add to C.
  compile_kernel(holes, "k_ranges", dir.path, {"--tile", "4x64x2", "--k-parts", "3"});
  // The generic family: the unrolled path compiled out (SPMMC_GENERIC_ONLY), nothing unused left.
  compile_kernel(holes, "generic_family", dir.path, {"--family", "generic"});
  // The tensor-core family in fp16 and bf16: the MMAs' inline PTX goes through ptxas.
  compile_kernel(layer, "tc_fp16", dir.path, {"--family", "tensor-core", "--dtype", "fp16"});
  compile_kernel(holes, "tc_bf16", dir.path, {"--family", "tensor-core", "--dtype", "bf16"});
  // And in tf32 (m16n8k4, cvt.rna.tf32.f32 of B), and tf32 on CUDA cores (float32's code).
  compile_kernel(layer, "tc_tf32", dir.path, {"--dtype", "tf32", "--family", "tensor-core"});
  compile_kernel(layer, "cc_tf32", dir.path, {"--dtype", "tf32", "--tile", "16x128x2"});
  // A's arrays on the host (the copy's runtime and driver entry points, in CUDA's real headers).
  compile_kernel(holes, "host_arrays", dir.path, {"--family", "balanced", "--arrays", "host"});
  std::vector<Job> jobs;
  for (const char* name : {"single_nonzero", "sparse_holes", "rn50_layer", "k_ranges", "generic_family", "tc_fp16", "tc_bf16",
                           "tc_tf32", "cc_tf32", "host_arrays"})
    jobs.emplace_back(nvcc_compile_command(nvcc, dir.path / (std::string(name) + ".cu"), dir.path / (std::string(name) + ".o")));
  run_parallel(jobs);
  for (const Job& job : jobs) {
    INFO(job.command << "\n" << job.log);
    CHECK(job.exit_code == 0);
    CHECK(job.log.find("warning") == std::string::npos);
  }
}

// The PTX nvcc makes of the tf32 tensor-core kernel: the TF32 MMA, B rounded by cvt.rna.tf32.f32 (one
// per element of B a lane loads: 8 per block of 4 MMAs), B loaded and C stored 16 bytes at a time.
TEST_CASE("the tf32 tensor-core kernel's PTX: m16n8k4 TF32 MMAs, cvt.rna.tf32.f32, 16-byte loads and stores",
          "[codegen][nvcc][dtype]") {
  const std::string nvcc = nvcc_or_skip();
  if (nvcc.empty()) return;
  test::TempDir dir;
  const fs::path holes = gen(dir.path, "holes.mtx", {"uniform", "--rows", "40", "--cols", "64", "--sparsity", "0.9", "--seed", "3"});
  compile_kernel(holes, "tc_tf32", dir.path, {"--dtype", "tf32", "--family", "tensor-core"});
  const fs::path cu = dir.path / "tc_tf32.cu", ptx = dir.path / "tc_tf32.ptx";
  std::string log;
  const int status = test::run_command(quote(nvcc) + " -arch=sm_90 -std=c++17 -O3 -ptx -I " + quote(dir.path.string()) + " " +
                                           quote(cu.string()) + " -o " + quote(ptx.string()),
                                       log);
  INFO(log);
  REQUIRE(status == 0);
  const std::string text = test::read_file(ptx);
  // The tensor-core kernel's body: from its .entry to the next one.
  const size_t entry = text.find("spmmc_tc_kernel");
  REQUIRE(entry != std::string::npos);
  const size_t end = text.find(".entry", entry);
  const std::string kernel = text.substr(entry, end == std::string::npos ? std::string::npos : end - entry);
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = kernel.find(what); at != std::string::npos; at = kernel.find(what, at + 1)) ++n;
    return n;
  };
  const size_t mmas = count("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32");
  CHECK(mmas >= 4);
  CHECK(mmas % 4 == 0);  // four per block, however nvcc unrolls the loop
  CHECK(count("mma.sync") == mmas);
  CHECK(count("cvt.rna.tf32.f32") == 2 * mmas);  // a0 and a1 of every MMA, each rounded once
  CHECK(count("ld.global.nc.v4.f32") == mmas / 2);  // two 16-byte loads of B per block of four MMAs
  CHECK(count("st.global.wb.v4.f32") == 4);         // two rows of 8 floats per lane
  CHECK(count("st.global.f32") == 0);               // no 4-byte stores of C
  CHECK(count("st.global.v4.f32") == 0);
}

TEST_CASE("two emitted layers link into one program and both compute", "[codegen][nvcc][emulation]") {
  test::TempDir dir;
  const fs::path a_matrix = gen(dir.path, "a.mtx", {"uniform", "--rows", "48", "--cols", "40", "--sparsity", "0.8", "--seed", "21"});
  const fs::path b_matrix = gen(dir.path, "b.mtx", {"patterns", "--rows", "30", "--cols", "50", "--patterns", "3", "--sparsity", "0.7", "--seed", "22"});
  const fs::path out = dir.path / "layers";
  compile_kernel(a_matrix, "layer_a", out, {"--tile", "8x64x2"});
  compile_kernel(b_matrix, "layer_b", out, {"--tile", "4x256x4", "--reorder", "none"});
  test::write_file(out / "main.cu",
                   "// Both layers in one program: both headers, both entry points, both info functions.\n"
                   "#include <stdio.h>\n"
                   "#include \"layer_a.h\"\n"
                   "#include \"layer_b.h\"\n"
                   "int main(int argc, char** argv) {\n"
                   "  (void)argv;\n"
                   "  if (argc > 1000) {  // never run: the machine may have no GPU\n"
                   "    if (layer_a(nullptr, nullptr, 1, 0) != cudaSuccess) return 1;\n"
                   "    if (layer_b(nullptr, nullptr, 1, 0) != cudaSuccess) return 1;\n"
                   "  }\n"
                   "  const spmmc_kernel_info* a = layer_a_info();\n"
                   "  const spmmc_kernel_info* b = layer_b_info();\n"
                   "  printf(\"%s %lld %lld %s %lld %lld\\n\", a->name, (long long)a->m, (long long)a->nnz, b->name,\n"
                   "         (long long)b->m, (long long)b->nnz);\n"
                   "  return 0;\n"
                   "}\n");
  const Csr a = read_matrix_file(a_matrix.string(), ReadOptions{}).csr;
  const Csr b = read_matrix_file(b_matrix.string(), ReadOptions{}).csr;

  SECTION("CPU emulation: one shared object holding both layers") {
    std::string log;
    const int built = test::build_emulated({out / "layer_a.cu", out / "layer_b.cu"}, out / "liblayers.so", log);
    INFO(log);
    REQUIRE(built == 0);
    std::string error;
    const auto ka = test::EmulatedKernel::load(out / "liblayers.so", "layer_a", error);
    const auto kb = test::EmulatedKernel::load(out / "liblayers.so", "layer_b", error);
    INFO(error);
    REQUIRE(ka);
    REQUIRE(kb);
    test::check_kernel_info(*ka->info(), "layer_a", a, 8, 64, 2, "overlap");
    test::check_kernel_info(*kb->info(), "layer_b", b, 4, 256, 4, "none");
    test::PathCounts paths = test::check_emulated_kernel(*ka, a, {1, 32, 70, 130}, "layer_a");
    paths += test::check_emulated_kernel(*kb, b, {1, 64, 70, 260}, "layer_b");
    CHECK(paths.unrolled > 0);
    CHECK(paths.generic > 0);
    CHECK(paths.looped > 0);
  }

  SECTION("nvcc: compile both, link with a main, run the info functions") {
    const std::string nvcc = nvcc_or_skip();
    if (nvcc.empty()) return;
    std::vector<Job> jobs = {Job(nvcc_compile_command(nvcc, out / "layer_a.cu", out / "layer_a.o")),
                             Job(nvcc_compile_command(nvcc, out / "layer_b.cu", out / "layer_b.o")),
                             Job(nvcc_compile_command(nvcc, out / "main.cu", out / "main.o"))};
    run_parallel(jobs);
    for (const Job& job : jobs) {
      INFO(job.command << "\n" << job.log);
      REQUIRE(job.exit_code == 0);
      CHECK(job.log.find("warning") == std::string::npos);
    }
    std::string log;
    const std::string link = quote(nvcc) + " -arch=sm_90 " + quote((out / "main.o").string()) + " " +
                             quote((out / "layer_a.o").string()) + " " + quote((out / "layer_b.o").string()) + " -o " +
                             quote((out / "two_layers").string());
    INFO(link);
    {
      const int linked = test::run_command(link, log);
      INFO(log);
      REQUIRE(linked == 0);
    }
    // Runs without a GPU: only the info functions are called.
    const int ran = test::run_command(quote((out / "two_layers").string()), log);
    INFO(log);
    CHECK(ran == 0);
    CHECK(log == fmt::format("layer_a 48 {} layer_b 30 {}\n", a.nnz(), b.nnz()));
  }
}

}  // namespace
}  // namespace spmmc
