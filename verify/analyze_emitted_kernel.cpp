// The driver of the analysis: Clang 14 libTooling on NAME.cu (the prelude in an in-memory file
// system, NAME.h stood in for when missing), then the AST walk (walk_kernel_ast.h) inside the AST
// consumer, which no exception may leave.
#include "verify/analyze_emitted_kernel.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>
#include <utility>

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/FileManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Tooling/Tooling.h>
#include <fmt/format.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/VirtualFileSystem.h>

#include "compiler/common/diagnostics.h"
#include "verify/code_locations.h"
#include "verify/embedded_prelude.h"
#include "verify/walk_kernel_ast.h"

namespace spmmc {
namespace {

using Clock = std::chrono::steady_clock;

// Where the prelude lives in the in-memory file system; nothing on disk has this path.
constexpr const char* kPreludeDir = "/spmmc-verify/include";
// A CUDA installation that does not exist: the driver then looks for no CUDA headers, libdevice
// or version (the toolkit beside may be newer than the Clang).
constexpr const char* kNoCudaPath = "/spmmc-verify/no-cuda";

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// The real file system, the prelude in memory, and a stand-in for NAME.h: a header the main
// file includes from its own folder that does not exist there (a vendored .cu without its .h)
// is answered with the prelude's spmmc_kernel_info definition and both half-precision types
// (the header would have included the one of its dtype), and noted.
class PreludeFileSystem : public llvm::vfs::ProxyFileSystem {
 public:
  PreludeFileSystem(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> overlay,
                    llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory, std::string main_dir,
                    std::vector<std::string>& substituted)
      : ProxyFileSystem(std::move(overlay)), memory_(std::move(memory)), main_dir_(std::move(main_dir)),
        substituted_(substituted) {}

  llvm::ErrorOr<llvm::vfs::Status> status(const llvm::Twine& path) override {
    stand_in_if_missing(path.str());
    return ProxyFileSystem::status(path);
  }
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForRead(const llvm::Twine& path) override {
    stand_in_if_missing(path.str());
    return ProxyFileSystem::openFileForRead(path);
  }

 private:
  void stand_in_if_missing(const std::string& path) {
    if (llvm::sys::path::extension(path) != ".h" || llvm::sys::path::parent_path(path) != main_dir_) return;
    if (getUnderlyingFS().status(path)) return;
    const std::string text = fmt::format(
        "/* {} is not beside the .cu: spmmc verify stands in the prelude's definitions. */\n"
        "#include <spmmc_kernel_info.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n",
        llvm::sys::path::filename(path).str());
    memory_->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
    substituted_.push_back(path);
  }

  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory_;
  std::string main_dir_;
  std::vector<std::string>& substituted_;
};

class AnalysisConsumer : public clang::ASTConsumer {
 public:
  AnalysisConsumer(EmittedKernelAnalysis& out, Clock::time_point start) : out_(out), start_(start) {}

  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    const auto parsed = Clock::now();
    out_.parse_seconds = seconds_between(start_, parsed);
    if (ctx.getDiagnostics().hasErrorOccurred()) return;
    out_.parsed = true;
    // Clang is built without exceptions: none may leave this function.
    try {
      verify_detail::Locator locator(ctx.getSourceManager(), out_.file);
      verify_detail::walk_kernel_ast(ctx, locator, out_);
    } catch (const std::exception& e) {
      out_.errors.push_back({CodeLocation{out_.file, 0, 0}, fmt::format("internal error while analysing: {}", e.what())});
    } catch (...) {
      out_.errors.push_back({CodeLocation{out_.file, 0, 0}, "internal error while analysing"});
    }
    out_.analyzed = out_.errors.empty();
    out_.analyze_seconds = seconds_between(parsed, Clock::now());
  }

 private:
  EmittedKernelAnalysis& out_;
  Clock::time_point start_;
};

class AnalysisAction : public clang::ASTFrontendAction {
 public:
  AnalysisAction(EmittedKernelAnalysis& out, Clock::time_point start) : out_(out), start_(start) {}

 protected:
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<AnalysisConsumer>(out_, start_);
  }

 private:
  EmittedKernelAnalysis& out_;
  Clock::time_point start_;
};

}  // namespace

std::vector<std::string> emitted_kernel_clang_args() {
  return {"-xcuda",
          "--cuda-device-only",
          "-nocudainc",
          "-nocudalib",
          "--no-cuda-version-check",
          std::string("--cuda-path=") + kNoCudaPath,
          "--cuda-gpu-arch=sm_70",
          "-std=c++17",
          "-fsyntax-only",
          "-w",
          "-ferror-limit=20",
          "-fno-color-diagnostics",
          "-fno-caret-diagnostics",  // also keeps CompilerInstance from printing "N errors generated"
          "-nostdinc",
          // The entry point's graph path captures the same launch chain the verifier reads
          // (codegen/templates/kernel.cu) and needs <mutex>, which the prelude does not have.
          "-DSPMMC_NO_GRAPH",
          // A's arrays on the host (codegen/arrays_on_host.h): their bytes and the copy's table are host
          // code, which a device-only parse would not see otherwise.
          "-DSPMMC_VERIFY",
          "-isystem",
          kPreludeDir,
          "-include",
          std::string(kPreludeDir) + "/cuda_runtime.h"};
}

EmittedKernelAnalysis analyze_emitted_kernel(const std::string& cu_path) {
  const auto start = Clock::now();
  EmittedKernelAnalysis out;
  out.file = cu_path;
  {
    std::error_code ec;
    const bool is_dir = std::filesystem::is_directory(cu_path, ec);
    std::ifstream in(cu_path, std::ios::binary);
    if (is_dir || !in)
      throw UserError(ExitCode::kNoInput, SourceLocation::whole(cu_path),
                      is_dir ? "is a folder, not an emitted .cu file" : "cannot open the emitted kernel (missing or unreadable)");
    in.seekg(0, std::ios::end);
    out.source_bytes = static_cast<int64_t>(in.tellg());
  }
  const std::string absolute = std::filesystem::absolute(cu_path).lexically_normal().string();

  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  for (const char* name : {"cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h", "stdint.h", "spmmc_kernel_info.h"}) {
    const std::string path = std::string(kPreludeDir) + "/" + name;
    memory->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(std::string(verify_prelude_file(name)), path));
  }
  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  overlay->pushOverlay(memory);
  std::vector<std::string> stood_in;
  auto files_system = llvm::makeIntrusiveRefCnt<PreludeFileSystem>(
      overlay, memory, llvm::sys::path::parent_path(absolute).str(), stood_in);
  llvm::IntrusiveRefCntPtr<clang::FileManager> files(new clang::FileManager(clang::FileSystemOptions(), files_system));

  std::vector<std::string> command = {"spmmc-verify"};
  for (const std::string& arg : emitted_kernel_clang_args()) command.push_back(arg);
  command.push_back(absolute);
  clang::tooling::ToolInvocation invocation(command, std::make_unique<AnalysisAction>(out, start), files.get());
  verify_detail::ErrorCollector collector(out.errors, cu_path);
  invocation.setDiagnosticConsumer(&collector);
  const bool ran = invocation.run();
  if (!ran && out.errors.empty())
    out.errors.push_back({CodeLocation{cu_path, 0, 0}, "Clang could not run on the file"});
  if (!out.errors.empty()) out.analyzed = false;
  for (const std::string& path : stood_in)
    out.notes.insert(out.notes.begin(),
                     fmt::format("{} is not beside {}: the prelude's spmmc_kernel_info definition stood in for it",
                                 llvm::sys::path::filename(path).str(), cu_path));
  return out;
}

}  // namespace spmmc
