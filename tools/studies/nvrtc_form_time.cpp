// spmmc-nvrtc-form-time: how long NVRTC takes over the NVRTC form of a CSR family's kernel for a matrix,
// the form the tuner compiles to time it (emit_balanced_nvrtc_form, emit_generic_nvrtc_form of
// tuner/time_balanced_kernel.h and tuner/time_generic_kernel.h), which declares A's arrays without
// values (the tuner copies them into the module). No GPU needed. docs/design/tuning.md has its figures,
// before (the arrays as initialised constants: minutes and gigabytes) and after.
//
// usage: spmmc-nvrtc-form-time FILE [balanced|generic]   (default balanced; the generic family's rows
//        in A's order, which does not change the source's size)
// Prints the source's size and the seconds of emission and of NVRTC (sm_90), and the cubin's size;
// run it under /usr/bin/time for the peak memory. Exit 0; 64 usage; 65 a bad matrix; 70 NVRTC failed.
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include "codegen/families/balanced/balanced_schedule.h"
#include "codegen/generic_launch.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/planning/reorder_rows.h"
#include "runtime/nvrtc_compile.h"
#include "tuner/time_balanced_kernel.h"
#include "tuner/time_generic_kernel.h"

int main(int argc, char** argv) {
  using namespace spmmc;
  const std::string family = argc == 3 ? argv[2] : "balanced";
  if (argc < 2 || argc > 3 || (family != "balanced" && family != "generic")) {
    std::fprintf(stderr, "usage: %s FILE [balanced|generic]\n", argv[0]);
    return 64;
  }
  Csr a;
  try {
    a = read_matrix_file(argv[1], ReadOptions{}).csr;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[1], e.what());
    return 65;
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const std::string arch = "sm_90";
  const EmittedKernel k =
      family == "balanced"
          ? emit_balanced_nvrtc_form(a, default_piece_length(a), /*groups=*/1, arch)
          : emit_generic_nvrtc_form(a, tile_rows(a, kGenericRowsPerBlock, ReorderMethod::kNone), arch);
  const double emitted = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%s: %lld non-zeros, the %s family's NVRTC form %.1f MB, emitted in %.1f s\n", argv[1],
              static_cast<long long>(a.nnz()), family.c_str(), static_cast<double>(k.nvrtc_cu.size()) / 1e6, emitted);
  std::fflush(stdout);
  try {
    const Cubin cubin = compile_to_cubin({family + "_family.cu", k.nvrtc_cu}, {arch, k.nvrtc_options});
    std::printf("NVRTC %s: %.1f s, cubin %.1f MB\n", nvrtc_version().c_str(), cubin.seconds,
                static_cast<double>(cubin.image.size()) / 1e6);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "NVRTC failed: %s\n", e.what());
    return 70;
  }
  return 0;
}
