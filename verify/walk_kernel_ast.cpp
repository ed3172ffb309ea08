#include "verify/walk_kernel_ast.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <iterator>
#include <utility>
#include <vector>

#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/Stmt.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>

#include "codegen/generic_launch.h"
#include "verify/match_expressions.h"
#include "verify/read_launch.h"
#include "verify/read_tile_ptx.h"

namespace spmmc::verify_detail {
namespace {

// Most blocks along x, over all launches, the analysis materialises block by block (CUDA allows
// 2^31 - 1 per launch; the emitted kernels have one block per A-tile in all, far fewer than this
// within the size guard).
constexpr int64_t kMaxBlocks = int64_t{1} << 21;

// The macros of programmatic dependent launch an unrolled kernel's body may hold.
constexpr const char* kLaunchDependents = "SPMMC_LAUNCH_DEPENDENTS";
constexpr const char* kWaitForPrevious = "SPMMC_WAIT_FOR_PREVIOUS_KERNEL";

// The tensor-core family (kernel_tensor_core.cuh): its a_format and its one __global__ function
// besides the generic kernels. Spelled here, not taken from codegen/, which verify checks.
constexpr const char* kVectorBlocksFormat = "vector-blocks-constants";
constexpr const char* kTensorCoreKernel = "spmmc_tc_kernel";
constexpr const char* kStagedTensorCoreKernel = "spmmc_tc_staged_kernel";

// The balanced family (codegen/families/balanced/kernel_balanced.cuh): its a_format and its three
// __global__ functions (V = 4, 2 and 1 columns per lane), the only ones its file has.
constexpr const char* kPiecesFormat = "csr-pieces-constants";
constexpr const char* kBalancedKernels[] = {"spmmc_balanced_v4", "spmmc_balanced_v2", "spmmc_balanced_v1"};
// The small-n path's kernel of two pieces per warp, where its file has one (the same pieces).
constexpr const char* kBalancedPairsKernel = "spmmc_balanced_pairs_v1";
// The family's and the path's kernel for n = 1, a lane per product, where the file has one (the same pieces).
constexpr const char* kBalancedSpmvKernel = "spmmc_balanced_spmv";
// The small-n path's kernel of its second table (spmmc_piece_mid), where its file has one.
constexpr const char* kBalancedMidKernel = "spmmc_balanced_mid_v4";

// The main file's function definitions and file-scope variables; bodies are not walked here.
class TopLevelDecls : public clang::RecursiveASTVisitor<TopLevelDecls> {
 public:
  explicit TopLevelDecls(const clang::SourceManager& sm) : sm_(sm) {}

  bool TraverseStmt(clang::Stmt*) { return true; }
  bool VisitFunctionDecl(clang::FunctionDecl* f) {
    if (f->doesThisDeclarationHaveABody() && sm_.isInMainFile(sm_.getExpansionLoc(f->getLocation()))) functions.push_back(f);
    return true;
  }
  bool VisitVarDecl(clang::VarDecl* v) {
    if (v->isFileVarDecl() && sm_.isInMainFile(sm_.getExpansionLoc(v->getLocation()))) variables.push_back(v);
    return true;
  }

  std::vector<clang::FunctionDecl*> functions;
  std::vector<clang::VarDecl*> variables;

 private:
  const clang::SourceManager& sm_;
};

// Every switch, call and write to a variable inside a function body.
class BodyScan : public clang::RecursiveASTVisitor<BodyScan> {
 public:
  bool VisitSwitchStmt(clang::SwitchStmt* s) {
    switches.push_back(s);
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* c) {
    calls.push_back(c);
    return true;
  }
  bool VisitBinaryOperator(clang::BinaryOperator* b) {
    if (b->isAssignmentOp()) note_write(b->getLHS());
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* u) {
    if (u->isIncrementDecrementOp() || u->getOpcode() == clang::UO_AddrOf) note_write(u->getSubExpr());
    return true;
  }
  bool VisitGCCAsmStmt(clang::GCCAsmStmt* a) {
    asms.push_back(a);
    return true;
  }
  std::vector<clang::SwitchStmt*> switches;
  std::vector<clang::CallExpr*> calls;
  std::vector<clang::GCCAsmStmt*> asms;
  std::set<const clang::VarDecl*> written;  // assigned, incremented or whose address is taken

 private:
  void note_write(const clang::Expr* e) {
    if (const clang::VarDecl* v = as_variable(e)) written.insert(v);
  }
};

bool is_dispatch(const clang::SwitchStmt* s) { return is_builtin_member(s->getCond(), "blockIdx", "x"); }

// The pointee of a parameter's pointer type (null type if not a pointer).
clang::QualType pointee(const clang::ParmVarDecl* p) {
  const clang::PointerType* ptr = p->getType().getCanonicalType()->getAs<clang::PointerType>();
  return ptr ? ptr->getPointeeType() : clang::QualType();
}

// (const T* b, T* c, N) with T the element of `dtype` and N an integer of `bits` bits or more (0:
// any integer).
bool pointer_pair_and_integer(const clang::FunctionDecl& f, unsigned bits, DType dtype, const clang::ASTContext& ctx) {
  if (f.getNumParams() != 3) return false;
  const clang::QualType b = pointee(f.getParamDecl(0)), c = pointee(f.getParamDecl(1));
  const clang::QualType n = f.getParamDecl(2)->getType();
  const DType element = dtype_storage(dtype);  // tf32: float
  return element_dtype(b) == element && b.isConstQualified() && element_dtype(c) == element && !c.isConstQualified() &&
         n->isIntegerType() && (bits == 0 || ctx.getTypeSize(n) == bits);
}

class KernelWalker {
 public:
  KernelWalker(clang::ASTContext& ctx, const Locator& locator, EmittedKernelAnalysis& out)
      : ctx_(ctx), sm_(ctx.getSourceManager()), locator_(locator), out_(out) {}

  void run() {
    TopLevelDecls top(sm_);
    top.TraverseDecl(ctx_.getTranslationUnitDecl());
    read_info(top.variables);
    read_host_bytes(top.variables);
    read_generic_path(top.variables);
    choose_dtype(top.functions);
    read_tensor_core_path(top.variables);
    read_balanced_path(top.variables);
    if (!check_element_types(top.functions)) return;
    if (out_.info.a_format.value && *out_.info.a_format.value == "csr-constants") {
      read_generic_only(top.functions);
      return;
    }
    if (out_.info.a_format.value && *out_.info.a_format.value == kPiecesFormat) {
      read_balanced_only(top.functions);
      return;
    }
    if (out_.info.a_format.value && *out_.info.a_format.value == kVectorBlocksFormat) {
      read_tensor_core_only(top.functions);
      return;
    }
    const std::vector<const clang::FunctionDecl*> kernels = find_kernels(top.functions);
    if (kernels.empty()) return;
    for (const clang::FunctionDecl* kernel : kernels)
      if (!read_kernel(kernel)) return;
    read_uncalled_tiles(top.functions, kernels);
    sort_tiles();
    if (!read_launch(ctx_, locator_, top.functions, top.variables, kernels, out_)) return;
    if (!launch_blocks()) return;
    const KernelLaunch* first = out_.launch.launches.empty() ? nullptr : &out_.launch.launches.front();
    const AnalyzedKernel& shown = out_.kernels[static_cast<size_t>(first && first->kernel >= 0 ? first->kernel : 0)];
    out_.kernel = shown.function;
    out_.kernel_where = shown.where;
    out_.columns = shown.columns;
  }

 private:
  void error(clang::SourceLocation loc, std::string message) { out_.errors.push_back({locator_.at(loc), std::move(message)}); }

  std::string snip(const clang::Stmt* s) const { return snippet(s->getSourceRange(), sm_, ctx_.getLangOpts()); }

  // ---- the element type ----------------------------------------------------------------------

  // B's and C's elements: the info object's dtype when it names one ("float32", "float16",
  // "bfloat16", "tfloat32"), else the element type of the first __global__ function's B
  // (compare_with_weights then reports the info object's dtype).
  void choose_dtype(const std::vector<clang::FunctionDecl*>& functions) {
    const InfoField<std::string>& dtype = out_.info.dtype;
    for (const DType d : {DType::kFp32, DType::kFp16, DType::kBf16, DType::kTf32})
      if (dtype.value && *dtype.value == dtype_info_name(d)) {
        out_.dtype = d;
        out_.dtype_from_info = true;
        dtype_origin_ = fmt::format("the info object says dtype = '{}' (at {})", *dtype.value, dtype.where.str());
        return;
      }
    for (const clang::FunctionDecl* f : functions)
      if (f->hasAttr<clang::CUDAGlobalAttr>() && f->getNumParams() >= 1)
        if (const std::optional<DType> d = element_dtype(pointee(f->getParamDecl(0)))) {
          out_.dtype = *d;
          dtype_origin_ = fmt::format("{}, the first __global__ function, takes {} (the info object names no dtype of the "
                                      "four)",
                                      f->getNameAsString(), dtype_c_type(*d));
          return;
        }
    dtype_origin_ = "B and C are float32 (no dtype in the info object, no element type in the kernels)";
  }

  // Every __global__ function and every function with C linkage (the entry point) takes B and C as
  // pointers to the file's element type: a pointer parameter to float, __half or __nv_bfloat16 of
  // another type is an error at the parameter (the tile functions are checked when read). False
  // after any.
  bool check_element_types(const std::vector<clang::FunctionDecl*>& functions) {
    bool ok = true;
    for (const clang::FunctionDecl* f : functions) {
      if (!f->hasAttr<clang::CUDAGlobalAttr>() && !f->isExternC()) continue;
      for (const clang::ParmVarDecl* p : f->parameters())
        if (!element_type_matches(*f, *p, out_.errors)) {
          ok = false;
          break;
        }
    }
    return ok;
  }

  // False, with an error at `p`, when `p` points to the element of a dtype other than the file's.
  bool element_type_matches(const clang::FunctionDecl& f, const clang::ParmVarDecl& p,
                            std::vector<CodeDiagnostic>& errors) const {
    const std::optional<DType> d = element_dtype(pointee(&p));
    if (!d || *d == dtype_storage(out_.dtype)) return true;
    errors.push_back({locator_.at(p.getLocation()),
                      fmt::format("the parameter {} of {} points to {} ({}) elements, but {}: B's and C's elements are "
                                  "{} ({})",
                                  p.getName().empty() ? std::string("(unnamed)") : p.getNameAsString(), f.getNameAsString(),
                                  dtype_c_type(*d), dtype_info_name(*d), dtype_origin_, dtype_c_type(out_.dtype),
                                  dtype_info_name(dtype_storage(out_.dtype)))});
    return false;
  }

  // ---- the kernels, their launches, their blocks ---------------------------------------------

  // Every __global__ function with a switch (blockIdx.x): the unrolled kernels, in order of
  // definition (the generic kernel has no such switch).
  std::vector<const clang::FunctionDecl*> find_kernels(const std::vector<clang::FunctionDecl*>& functions) {
    std::vector<const clang::FunctionDecl*> kernels;
    size_t globals = 0;
    for (const clang::FunctionDecl* f : functions) {
      if (!f->hasAttr<clang::CUDAGlobalAttr>()) continue;
      ++globals;
      BodyScan scan;
      scan.TraverseStmt(f->getBody());
      if (std::any_of(scan.switches.begin(), scan.switches.end(), is_dispatch)) kernels.push_back(f);
    }
    if (kernels.empty())
      error({}, fmt::format("expected __global__ functions with a switch (blockIdx.x) dispatch (the unrolled kernels), "
                            "found none (of {} __global__ functions)",
                            globals));
    return kernels;
  }

  // Whether the file defines the __global__ function `name`.
  static bool has_kernel(const std::vector<clang::FunctionDecl*>& functions, const char* name) {
    return std::any_of(functions.begin(), functions.end(), [&](const clang::FunctionDecl* f) {
      return f->hasAttr<clang::CUDAGlobalAttr>() && f->getNameAsString() == name;
    });
  }

  // The __global__ functions of a family's file (a_format `format`): exactly `kernels`, one each; any
  // other would run unchecked. Errors name the family ("the generic family") and its kernels.
  template <class Kernels>  // an array or vector of names
  void expect_only_kernels(const std::vector<clang::FunctionDecl*>& functions, const char* format, const char* family,
                           const Kernels& kernels, const char* kernels_name) {
    std::map<std::string, int> expected;
    for (const char* symbol : kernels) expected[symbol] = 0;
    for (const clang::FunctionDecl* f : functions) {
      if (!f->hasAttr<clang::CUDAGlobalAttr>()) continue;
      const auto found = expected.find(f->getNameAsString());
      if (found != expected.end()) ++found->second;
      else
        error(f->getLocation(), fmt::format("the info object says a_format = '{}' ({}), but the file has the __global__ "
                                            "function {} besides {}",
                                            format, family, f->getNameAsString(), kernels_name));
    }
    for (const auto& [name, count] : expected)
      if (count != 1)
        error({}, fmt::format("the info object says a_format = '{}' ({}), but the file has {} __global__ {} (expected one)",
                              format, family, count, name));
  }

  // A file of the generic family (a_format "csr-constants"): its __global__ functions are the
  // generic kernels (four columns per thread, one with three batches, the split one, the warp per row with four
  // adjacent or four strided columns a lane and, where A is long along K, their wide blocks), which read the
  // arrays read_generic_path took; unrolled code would run unchecked, so any other __global__ function is an error.
  // With the balanced small-n path (a table spmmc_piece, docs/design/small-n.md), the balanced kernels
  // too, whose pieces compare_with_weights checks.
  void read_generic_only(const std::vector<clang::FunctionDecl*>& functions) {
    out_.generic_only = true;
    std::vector<const char*> kernels(std::begin(kGenericKernels), std::end(kGenericKernels));
    for (const char* optional : {kGenericKernelWarpWide, kGenericKernelWarpStrided, kGenericKernelWarpWideStrided})
      if (has_kernel(functions, optional)) kernels.push_back(optional);
    if (!out_.balanced_path.pieces.found) {
      expect_only_kernels(functions, "csr-constants", "the generic family", kernels, "the generic kernels");
      return;
    }
    kernels.insert(kernels.end(), std::begin(kBalancedKernels), std::end(kBalancedKernels));
    for (const char* optional : {kBalancedPairsKernel, kBalancedSpmvKernel})
      if (has_kernel(functions, optional)) kernels.push_back(optional);
    if (out_.balanced_mid.pieces.found) kernels.push_back(kBalancedMidKernel);  // the second table's
    expect_only_kernels(functions, "csr-constants", "the generic family with the balanced small-n path", kernels,
                        "the generic and balanced kernels");
  }

  // A file of the balanced family (a_format "csr-pieces-constants"): float32 (or tf32, its weights
  // rounded); its __global__ functions are its three kernels (and its n = 1 kernel where it has one),
  // one each, which read the CSR arrays and the pieces read_generic_path and read_balanced_path took;
  // any other would run unchecked.
  void read_balanced_only(const std::vector<clang::FunctionDecl*>& functions) {
    out_.balanced = true;
    if (dtype_is_half(out_.dtype)) {
      const CodeLocation& at = out_.info.a_format.where;
      out_.errors.push_back({at.file.empty() ? out_.info.where : at,
                             fmt::format("the info object says a_format = '{}' (the balanced family), but {}: its "
                                         "kernels take float elements, not {}",
                                         kPiecesFormat, dtype_origin_, dtype_info_name(out_.dtype))});
      return;
    }
    std::vector<const char*> kernels(std::begin(kBalancedKernels), std::end(kBalancedKernels));
    if (has_kernel(functions, kBalancedSpmvKernel)) kernels.push_back(kBalancedSpmvKernel);
    expect_only_kernels(functions, kPiecesFormat, "the balanced family", kernels, "the balanced kernels");
  }

  // A file of the tensor-core family (a_format "vector-blocks-constants"): half precision or tf32;
  // its __global__ functions are the tensor-core kernel and the generic kernels, one each, and the
  // staged tensor-core kernel where the file has its chunk table (any other would run unchecked); every inline-PTX mma of the file (SPMMC_TC_MMA or
  // SPMMC_MMA_M16N8K4_TF32 as expanded) is the MMA of the file's dtype with float32 accumulators
  // (m16n8k8 for fp16 and bf16, m16n8k4 for tf32), since that dtype is how compare_with_weights
  // decodes the bits of spmmc_tc_a and how the kernel's MMA reads them. In tf32 B's elements are
  // rounded by the kernel: the file has cvt.rna.tf32.f32 and no other conversion to tf32 (the
  // .tf32 operand of another rounding, or a float's bits unconverted, would not be the reference's).
  void read_tensor_core_only(const std::vector<clang::FunctionDecl*>& functions) {
    out_.tensor_core = true;
    const bool tf32 = out_.dtype == DType::kTf32;
    if (!tf32 && !dtype_is_half(out_.dtype)) {
      const CodeLocation& at = out_.info.a_format.where;
      out_.errors.push_back({at.file.empty() ? out_.info.where : at,
                             fmt::format("the info object says a_format = '{}' (the tensor-core family), but {}: its MMAs "
                                         "take float16, bfloat16 or tfloat32 elements, not {}",
                                         kVectorBlocksFormat, dtype_origin_, dtype_info_name(out_.dtype))});
      return;
    }
    std::map<std::string, int> expected = {{kTensorCoreKernel, 0}};
    for (const char* symbol : kGenericKernels) expected[symbol] = 0;
    for (const char* optional : {kGenericKernelWarpWide, kGenericKernelWarpStrided, kGenericKernelWarpWideStrided})
      if (has_kernel(functions, optional)) expected[optional] = 0;
    // The staged kernel: one where the file has spmmc_tc_chunk_block, none otherwise.
    int staged = 0;
    for (const clang::FunctionDecl* f : functions) {
      if (f->hasAttr<clang::CUDAGlobalAttr>()) {
        const auto found = expected.find(f->getNameAsString());
        if (found != expected.end()) ++found->second;
        else if (f->getNameAsString() == kStagedTensorCoreKernel && out_.tc.chunk_block.found) ++staged;
        else
          error(f->getLocation(), fmt::format("the info object says a_format = '{}' (the tensor-core family), but the file "
                                              "has the __global__ function {} besides the tensor-core and generic kernels",
                                              kVectorBlocksFormat, f->getNameAsString()));
      }
      BodyScan scan;
      scan.TraverseStmt(f->getBody());
      for (const clang::GCCAsmStmt* a : scan.asms) {
        const std::string text = a->getAsmString()->getString().str();
        const size_t first = text.find_first_not_of(" \t\n");
        const std::string opcode =
            first == std::string::npos ? std::string() : text.substr(first, text.find_first_of(" \t\n{", first) - first);
        if (opcode.rfind("mma", 0) == 0)
          out_.tc.mmas.push_back({opcode, f->getNameAsString(), locator_.at(a->getBeginLoc())});
        if (opcode.rfind("cvt", 0) == 0 && opcode.find(".tf32") != std::string::npos)
          out_.tc.tf32_conversions.push_back({opcode, f->getNameAsString(), locator_.at(a->getBeginLoc())});
      }
    }
    for (const auto& [name, count] : expected)
      if (count != 1)
        error({}, fmt::format("the info object says a_format = '{}' (the tensor-core family), but the file has {} "
                              "__global__ {} (expected one)",
                              kVectorBlocksFormat, count, name));
    if (out_.tc.chunk_block.found && staged != 1)
      error({}, fmt::format("the file has spmmc_tc_chunk_block (the staged tensor-core kernel's table) and {} __global__ {} "
                            "(expected one)",
                            staged, kStagedTensorCoreKernel));
    const char* type = out_.dtype == DType::kFp16 ? "f16" : out_.dtype == DType::kBf16 ? "bf16" : "tf32";
    const std::string want = fmt::format("mma.sync.aligned.{}.row.col.f32.{}.{}.f32", tf32 ? "m16n8k4" : "m16n8k8", type, type);
    if (out_.tc.mmas.empty())
      error({}, fmt::format("the info object says a_format = '{}' (the tensor-core family), but no asm statement of the "
                            "file is an mma (expected {})",
                            kVectorBlocksFormat, want));
    for (const MmaStatement& m : out_.tc.mmas)
      if (m.opcode != want)
        out_.errors.push_back(
            {m.where, fmt::format("the MMA in {} is '{}', but {}: expected '{}' (spmmc_tc_a holds A's values as {} bits, "
                                  "vectors {} to a block (the {} shape), summed in float32)",
                                  m.function, m.opcode, dtype_origin_, want, dtype_info_name(out_.dtype), tf32 ? 4 : 8,
                                  tf32 ? "m16n8k4" : "m16n8k8")});
    constexpr const char* kRoundToTf32 = "cvt.rna.tf32.f32";
    if (tf32 && out_.tc.tf32_conversions.empty())
      error({}, fmt::format("{}, but no asm statement of the file is {}: the tensor-core kernel would hand B's floats to "
                            "the MMA unrounded (its tf32 operand drops their low bits rather than rounding them)",
                            dtype_origin_, kRoundToTf32));
    for (const MmaStatement& c : out_.tc.tf32_conversions)
      if (c.opcode != kRoundToTf32)
        out_.errors.push_back({c.where, fmt::format("the conversion in {} is '{}', but B's elements are rounded to tf32 "
                                                    "to nearest, ties away from zero, as A's were: expected '{}'",
                                                    c.function, c.opcode, kRoundToTf32)});
  }

  // Device functions that read as tile functions but that no case calls: kept to explain rows
  // never written (compare_with_weights reports them as never dispatched).
  void read_uncalled_tiles(const std::vector<clang::FunctionDecl*>& functions,
                           const std::vector<const clang::FunctionDecl*>& kernels) {
    for (const clang::FunctionDecl* f : functions) {
      if (std::find(kernels.begin(), kernels.end(), f) != kernels.end() || !f->hasAttr<clang::CUDADeviceAttr>() ||
          f->hasAttr<clang::CUDAGlobalAttr>() || tile_index_.count(f) || !pointer_pair_and_integer(*f, 0, out_.dtype, ctx_))
        continue;
      AnalyzedTile tile;
      std::vector<CodeDiagnostic> ignored;
      if (read_tile(*f, tile, ignored)) out_.uncalled_tiles.push_back(std::move(tile));
    }
  }

  // Orders the tiles by definition and re-points the cases at them.
  void sort_tiles() {
    std::sort(out_.tiles.begin(), out_.tiles.end(), [](const AnalyzedTile& a, const AnalyzedTile& b) {
      return std::make_pair(a.where.line, a.where.column) < std::make_pair(b.where.line, b.where.column);
    });
    std::map<std::string, int32_t> by_name;
    for (size_t i = 0; i < out_.tiles.size(); ++i) by_name[out_.tiles[i].function] = static_cast<int32_t>(i);
    for (AnalyzedKernel& kernel : out_.kernels)
      for (AnalyzedCase& c : kernel.cases)
        for (int32_t& t : c.tiles) t = by_name.at(unsorted_names_[static_cast<size_t>(t)]);
  }

  // The blocks along x of every launch of an unrolled kernel, in launch order: block x of a
  // launch runs the case x of its kernel (nothing without one); the tiles learn their blocks.
  bool launch_blocks() {
    int64_t global = 0;
    for (size_t j = 0; j < out_.launch.launches.size(); ++j) {
      const KernelLaunch& launch = out_.launch.launches[j];
      if (launch.grid_x < 0 || global + launch.grid_x > kMaxBlocks) {
        out_.errors.push_back({launch.tiles_where, fmt::format("{}[{}] launches {} blocks along x ({} before it)",
                                                               out_.launch.tiles_name, j, launch.grid_x, global)});
        return false;
      }
      if (launch.kernel >= 0) {
        const AnalyzedKernel& kernel = out_.kernels[static_cast<size_t>(launch.kernel)];
        std::map<int64_t, const AnalyzedCase*> by_label;
        for (const AnalyzedCase& c : kernel.cases) {
          by_label.emplace(c.label, &c);
          if (c.label < 0 || c.label >= launch.grid_x)
            out_.notes.push_back(fmt::format("{}: case {} of {} is never taken: {}[{}] launches it with {} block{} along x",
                                             c.where.str(), c.label, kernel.function, out_.launch.kernels_name, j,
                                             launch.grid_x, launch.grid_x == 1 ? "" : "s"));
        }
        for (int64_t x = 0; x < launch.grid_x; ++x) {
          AnalyzedBlock block;
          block.launch = static_cast<int32_t>(j);
          block.block = x;
          block.global = global + x;
          if (const auto it = by_label.find(x); it != by_label.end()) {
            block.tiles = it->second->tiles;
            block.where = it->second->where;
          }
          out_.blocks.push_back(std::move(block));
        }
      }
      global += launch.grid_x;
    }
    out_.grid_x = global;
    for (const AnalyzedBlock& block : out_.blocks)
      for (int32_t t : block.tiles) {
        auto& blocks = out_.tiles[static_cast<size_t>(t)].blocks;
        if (blocks.empty() || blocks.back() != block.global) blocks.push_back(block.global);
      }
    return true;
  }

  // Declarations of const locals initialised without side effects.
  bool const_locals(const clang::DeclStmt* decls) {
    for (const clang::Decl* d : decls->decls()) {
      const auto* v = llvm::dyn_cast<clang::VarDecl>(d);
      if (!v || !v->isLocalVarDecl() || v->isStaticLocal() || !v->hasInit() || !v->getType().isConstQualified() ||
          has_side_effects(v->getInit(), ctx_)) {
        error(decls->getBeginLoc(), fmt::format("unrecognised declaration '{}' in {} (only const locals are expected)",
                                                snip(decls), current().function));
        return false;
      }
    }
    return true;
  }

  // The unrolled kernel being read (the last of out_.kernels).
  AnalyzedKernel& current() { return out_.kernels.back(); }

  // SPMMC_LAUNCH_DEPENDENTS(); or SPMMC_WAIT_FOR_PREVIOUS_KERNEL(); as the macro expands: ((void)0)
  // where the device code predates sm_90 (as parsed here), or asm volatile("griddepcontrol...;")
  // with no operands. The macro's name, or "" when `s` is neither.
  std::string dependent_launch_macro(const clang::Stmt* s) const {
    if (!s->getBeginLoc().isMacroID()) return {};
    const std::string name = clang::Lexer::getImmediateMacroName(s->getBeginLoc(), sm_, ctx_.getLangOpts()).str();
    if (name != kLaunchDependents && name != kWaitForPrevious) return {};
    if (const auto* a = llvm::dyn_cast<clang::GCCAsmStmt>(s)) {
      const std::string want = name == kWaitForPrevious ? "griddepcontrol.wait;" : "griddepcontrol.launch_dependents;";
      const bool plain = a->getNumOutputs() == 0 && a->getNumInputs() == 0 && a->getAsmString()->getString() == want;
      return plain ? name : std::string();
    }
    const auto* e = llvm::dyn_cast<clang::Expr>(s);
    return e && e->getType()->isVoidType() && !has_side_effects(e, ctx_) ? name : std::string();
  }

  // An unrolled kernel: const locals, SPMMC_LAUNCH_DEPENDENTS() and SPMMC_WAIT_FOR_PREVIOUS_KERNEL()
  // (each at most once), and for (bt = blockIdx.y; bt < (n + N1 - 1) / N1; bt += gridDim.y)
  // { const locals; if (col >= n) continue; switch (blockIdx.x) { ... } }. Appended to out_.kernels.
  bool read_kernel(const clang::FunctionDecl* kernel) {
    kernel_ = kernel;
    n_symbol_ = {};
    column_.reset();
    column_where_ = {};
    out_.kernels.emplace_back();
    current().function = kernel->getNameAsString();
    current().where = locator_.at(kernel->getLocation());
    if (!pointer_pair_and_integer(*kernel, 64, out_.dtype, ctx_)) {
      const char* t = dtype_c_type(out_.dtype);
      error(kernel->getLocation(), fmt::format("expected the parameters (const {}* B, {}* C, int64_t n) of {}", t, t,
                                               current().function));
      return false;
    }
    n_symbol_.terms[symbol_of(kernel->getParamDecl(2))] = 1;
    if (!read_launch_bounds(*kernel)) return false;
    const auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(kernel->getBody());
    if (!body) {
      error(kernel->getLocation(), fmt::format("{} has no body", current().function));
      return false;
    }
    const clang::ForStmt* loop = nullptr;
    std::set<std::string> macros;
    for (const clang::Stmt* s : body->body()) {
      if (const auto* decls = llvm::dyn_cast<clang::DeclStmt>(s)) {
        if (!const_locals(decls)) return false;
      } else if (const auto* f = llvm::dyn_cast<clang::ForStmt>(s); f && !loop) {
        loop = f;
      } else if (const std::string macro = dependent_launch_macro(s); !macro.empty() && macros.insert(macro).second) {
        current().waits_for_previous |= macro == kWaitForPrevious;
      } else if (!llvm::isa<clang::NullStmt>(s)) {
        error(s->getBeginLoc(), fmt::format("unrecognised statement '{}' in {} (expected const locals, one loop over "
                                            "the B-tiles, {}() and {}())",
                                            snip(s), current().function, kLaunchDependents, kWaitForPrevious));
        return false;
      }
    }
    if (!loop) {
      error(kernel->getLocation(), fmt::format("no loop over the B-tiles in {}", current().function));
      return false;
    }
    return read_loop(loop);
  }

  bool read_loop(const clang::ForStmt* loop) {
    current().columns.where = locator_.at(loop->getBeginLoc());
    const std::string expected = "expected for (int64_t bt = blockIdx.y; bt < (n + N1 - 1) / N1; bt += gridDim.y)";
    // bt = blockIdx.y
    const auto* init = llvm::dyn_cast_or_null<clang::DeclStmt>(loop->getInit());
    const auto* bt = init && init->isSingleDecl() ? llvm::dyn_cast<clang::VarDecl>(init->getSingleDecl()) : nullptr;
    LinearForm block_y;
    block_y.terms["blockIdx.y"] = 1;
    if (!bt || !bt->hasInit() || !bt->getType()->isIntegerType() || linear_form(bt->getInit(), ctx_) != block_y) {
      error(loop->getBeginLoc(), expected + ": the loop does not start at blockIdx.y");
      return false;
    }
    // bt < (n + N1 - 1) / N1
    const auto* cond = llvm::dyn_cast_or_null<clang::BinaryOperator>(strip(loop->getCond()));
    std::optional<int64_t> per_tile;
    if (cond && cond->getOpcode() == clang::BO_LT && as_variable(cond->getLHS()) == bt)
      per_tile = ceil_division(cond->getRHS(), n_symbol_, ctx_);
    if (!per_tile) {
      error(loop->getCond() ? loop->getCond()->getBeginLoc() : loop->getBeginLoc(),
            expected + ": the loop's bound is not the number of B-tiles");
      return false;
    }
    current().columns.b_tile_columns = *per_tile;
    // bt += gridDim.y
    const auto* inc = llvm::dyn_cast_or_null<clang::CompoundAssignOperator>(loop->getInc());
    LinearForm grid_y;
    grid_y.terms["gridDim.y"] = 1;
    if (!inc || inc->getOpcode() != clang::BO_AddAssign || as_variable(inc->getLHS()) != bt ||
        linear_form(inc->getRHS(), ctx_) != grid_y) {
      error(loop->getInc() ? loop->getInc()->getBeginLoc() : loop->getBeginLoc(),
            expected + ": the loop does not step by gridDim.y");
      return false;
    }
    BodyScan writes;
    writes.TraverseStmt(const_cast<clang::Stmt*>(loop->getBody()));
    if (writes.written.count(bt)) {
      error(loop->getBody()->getBeginLoc(), fmt::format("the loop's body changes {}", bt->getNameAsString()));
      return false;
    }
    // The body: const locals, the guard, the dispatch.
    std::vector<const clang::Stmt*> statements;
    if (const auto* block = llvm::dyn_cast<clang::CompoundStmt>(loop->getBody()))
      statements.assign(block->body_begin(), block->body_end());
    else
      statements.push_back(loop->getBody());
    const clang::SwitchStmt* dispatch = nullptr;
    std::vector<const clang::IfStmt*> guards;
    for (const clang::Stmt* s : statements) {
      if (const auto* decls = llvm::dyn_cast<clang::DeclStmt>(s)) {
        if (!const_locals(decls)) return false;
      } else if (const auto* g = llvm::dyn_cast<clang::IfStmt>(s); g && !dispatch) {
        guards.push_back(g);
      } else if (const auto* sw = llvm::dyn_cast<clang::SwitchStmt>(s); sw && !dispatch && is_dispatch(sw)) {
        dispatch = sw;
      } else if (!llvm::isa<clang::NullStmt>(s)) {
        error(s->getBeginLoc(), fmt::format("unrecognised statement '{}' in the loop of {} (expected const locals, "
                                            "if (col >= n) continue; and the switch (blockIdx.x))",
                                            snip(s), current().function));
        return false;
      }
    }
    if (!dispatch) {
      error(loop->getBeginLoc(), fmt::format("the switch (blockIdx.x) of {} is not directly in its loop over the B-tiles",
                                             current().function));
      return false;
    }
    BodyScan all;
    all.TraverseStmt(const_cast<clang::FunctionDecl*>(kernel_)->getBody());
    size_t dispatches = 0;
    for (const clang::SwitchStmt* s : all.switches) dispatches += is_dispatch(s);
    if (dispatches != 1) {
      error(kernel_->getLocation(), fmt::format("expected one switch (blockIdx.x) in {}, found {}", current().function,
                                                dispatches));
      return false;
    }
    if (!read_dispatch(dispatch)) return false;
    for (const clang::IfStmt* g : guards)
      if (!read_guard(g)) return false;
    if (column_) {
      current().columns.found = true;
      current().columns.cols_per_thread = column_->coefficient("threadIdx.x");
      current().columns.n1 = column_->coefficient(symbol_of(bt));
      LinearForm expected_form;
      if (current().columns.cols_per_thread) expected_form.terms["threadIdx.x"] = current().columns.cols_per_thread;
      if (current().columns.n1) expected_form.terms[symbol_of(bt)] = current().columns.n1;
      if (*column_ != expected_form || current().columns.cols_per_thread < 1 || current().columns.n1 < 1) {
        error(column_where_, fmt::format("the thread's column is {}, not bt * N1 + threadIdx.x * V with N1, V >= 1",
                                         column_->str()));
        return false;
      }
    } else {
      current().columns.found = false;  // no block calls a tile: nothing to map
    }
    return true;
  }

  // if (col >= n) continue; (or n <= col, or return): with col the thread's column.
  bool read_guard(const clang::IfStmt* g) {
    const auto* cond = llvm::dyn_cast_or_null<clang::BinaryOperator>(strip(g->getCond()));
    const clang::Stmt* then = g->getThen();
    if (const auto* block = llvm::dyn_cast_or_null<clang::CompoundStmt>(then); block && block->size() == 1)
      then = block->body_front();
    bool ok = !g->getElse() && !g->getInit() && !g->getConditionVariable() && cond && column_ &&
              (llvm::isa<clang::ContinueStmt>(then) || llvm::isa<clang::ReturnStmt>(then));
    if (ok) {
      const clang::Expr* col = cond->getOpcode() == clang::BO_GE ? cond->getLHS()
                               : cond->getOpcode() == clang::BO_LE ? cond->getRHS() : nullptr;
      const clang::Expr* n = col == cond->getLHS() ? cond->getRHS() : cond->getLHS();
      ok = col && linear_form(col, ctx_) == *column_ && linear_form(n, ctx_) == n_symbol_;
    }
    if (!ok) {
      error(g->getBeginLoc(), fmt::format("unrecognised statement '{}' in the loop of {} (expected if (col >= n) continue;)",
                                          snip(g), current().function));
      return false;
    }
    current().columns.guarded = true;
    return true;
  }

  // ---- the dispatch --------------------------------------------------------------------------

  // One step of the switch body, flattened: case labels, calls and breaks in source order.
  struct Step {
    enum class Kind { kCase, kDefault, kCall, kBreak } kind;
    int64_t value = 0;  // kCase: the label; kCall: the tile index
    clang::SourceLocation loc;
  };

  bool flatten(const clang::Stmt* s, std::vector<Step>& steps) {
    if (const auto* c = llvm::dyn_cast<clang::CaseStmt>(s)) {
      const std::optional<int64_t> label = c->getRHS() ? std::nullopt : integer_constant(c->getLHS(), ctx_);
      if (!label) {
        error(c->getBeginLoc(), "unrecognised case label in the dispatch");
        return false;
      }
      steps.push_back({Step::Kind::kCase, *label, c->getBeginLoc()});
      return flatten(c->getSubStmt(), steps);
    }
    if (const auto* d = llvm::dyn_cast<clang::DefaultStmt>(s)) {
      steps.push_back({Step::Kind::kDefault, 0, d->getBeginLoc()});
      return flatten(d->getSubStmt(), steps);
    }
    if (llvm::isa<clang::BreakStmt>(s)) {
      steps.push_back({Step::Kind::kBreak, 0, s->getBeginLoc()});
      return true;
    }
    if (llvm::isa<clang::NullStmt>(s)) return true;
    if (const auto* block = llvm::dyn_cast<clang::CompoundStmt>(s)) {
      for (const clang::Stmt* child : block->body())
        if (!flatten(child, steps)) return false;
      return true;
    }
    const auto* e = llvm::dyn_cast<clang::Expr>(s);
    if (const auto* cleanups = llvm::dyn_cast_or_null<clang::ExprWithCleanups>(e)) e = cleanups->getSubExpr();
    const auto* call = llvm::dyn_cast_or_null<clang::CallExpr>(e ? e->IgnoreParens() : nullptr);
    if (!call) {
      error(s->getBeginLoc(), fmt::format("unrecognised statement '{}' in the dispatch (expected case K: "
                                          "spmmc_tile_K(b, c, ld); break;)", snip(s)));
      return false;
    }
    const std::optional<int32_t> tile = tile_of_call(call);
    if (!tile) return false;
    steps.push_back({Step::Kind::kCall, *tile, call->getBeginLoc()});
    return true;
  }

  // P + X for the kernel's parameter P: the linear form of X.
  std::optional<LinearForm> offset_from(const clang::Expr* e, const clang::ParmVarDecl* p) const {
    const auto* add = llvm::dyn_cast_or_null<clang::BinaryOperator>(through_const_locals(e));
    if (!add || add->getOpcode() != clang::BO_Add) return std::nullopt;
    if (as_param(add->getLHS()) == p) return linear_form(add->getRHS(), ctx_);
    if (as_param(add->getRHS()) == p) return linear_form(add->getLHS(), ctx_);
    return std::nullopt;
  }

  std::optional<int32_t> tile_of_call(const clang::CallExpr* call) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    const clang::FunctionDecl* def = callee ? callee->getDefinition() : nullptr;
    if (!def || !sm_.isInMainFile(sm_.getExpansionLoc(def->getLocation())) || def->hasAttr<clang::CUDAGlobalAttr>()) {
      error(call->getBeginLoc(), "the dispatch calls something other than a tile function of this file");
      return std::nullopt;
    }
    // (B + col, C + col, n * E): the same col in both, the row stride in bytes (E: the element's bytes).
    std::optional<LinearForm> b, c, stride;
    if (call->getNumArgs() == 3) {
      b = offset_from(call->getArg(0), kernel_->getParamDecl(0));
      c = offset_from(call->getArg(1), kernel_->getParamDecl(1));
      stride = linear_form(call->getArg(2), ctx_);
    }
    LinearForm bytes;
    bytes.terms = {{n_symbol_.terms.begin()->first, dtype_bytes(out_.dtype)}};
    if (!b || !c || *b != *c || !stride || *stride != bytes || (column_ && *b != *column_)) {
      const bool only_stride = b && c && *b == *c && (!column_ || *b == *column_) && stride;
      error(call->getBeginLoc(),
            only_stride ? fmt::format("unrecognised arguments of {}: the row stride is {} bytes, but B's and C's rows are "
                                      "n * {} bytes (n {}-byte {} elements)",
                                      def->getNameAsString(), stride->str(), dtype_bytes(out_.dtype),
                                      dtype_bytes(out_.dtype), dtype_info_name(out_.dtype))
                        : fmt::format("unrecognised arguments of {} (expected B + col, C + col and the row stride "
                                      "n * {}, the same col for every tile)",
                                      def->getNameAsString(), dtype_bytes(out_.dtype)));
      return std::nullopt;
    }
    if (!column_) {
      column_ = *b;
      column_where_ = call->getArg(0)->getBeginLoc();
    }
    const auto it = tile_index_.find(def);
    if (it != tile_index_.end()) return it->second;
    const int32_t index = static_cast<int32_t>(out_.tiles.size());
    tile_index_[def] = index;
    out_.tiles.emplace_back();
    unsorted_names_.push_back(def->getNameAsString());
    AnalyzedTile tile;
    read_tile(*def, tile, out_.errors);
    out_.tiles[static_cast<size_t>(index)] = std::move(tile);
    return index;
  }

  // The switch (blockIdx.x) of the current kernel: its cases, with the tiles each runs; no call
  // of the kernel outside it.
  bool read_dispatch(const clang::SwitchStmt* dispatch) {
    // Calls outside the switch would run in every block.
    BodyScan all, inside;
    all.TraverseStmt(const_cast<clang::FunctionDecl*>(kernel_)->getBody());
    inside.TraverseStmt(const_cast<clang::SwitchStmt*>(dispatch));
    const std::set<const clang::CallExpr*> dispatched(inside.calls.begin(), inside.calls.end());
    for (const clang::CallExpr* call : all.calls)
      if (!dispatched.count(call)) {
        error(call->getBeginLoc(), fmt::format("a call in {} outside its switch (blockIdx.x)", current().function));
        return false;
      }
    std::vector<Step> steps;
    const size_t errors_before = out_.errors.size();
    if (!flatten(dispatch->getBody(), steps)) return false;
    if (out_.errors.size() != errors_before) return false;
    // Each case runs the calls from its label to the next break; the default branch none.
    const auto calls_from = [&](size_t start) {
      std::vector<int32_t> tiles;
      for (size_t i = start; i < steps.size() && steps[i].kind != Step::Kind::kBreak; ++i)
        if (steps[i].kind == Step::Kind::kCall) tiles.push_back(static_cast<int32_t>(steps[i].value));
      return tiles;
    };
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kind == Step::Kind::kDefault && !calls_from(i).empty()) {
        error(steps[i].loc, "the default branch of the dispatch calls a tile function");
        return false;
      }
      if (steps[i].kind == Step::Kind::kCase)
        current().cases.push_back({steps[i].value, calls_from(i), locator_.at(steps[i].loc)});
    }
    return true;
  }

  // __launch_bounds__'s first argument, if the kernel has one.
  bool read_launch_bounds(const clang::FunctionDecl& kernel) {
    const auto* bounds = kernel.getAttr<clang::CUDALaunchBoundsAttr>();
    if (!bounds) return true;
    const std::optional<int64_t> max = integer_constant(bounds->getMaxThreads(), ctx_);
    if (!max) {
      error(bounds->getLocation(), fmt::format("cannot evaluate the __launch_bounds__ of {}", current().function));
      return false;
    }
    current().columns.max_threads = *max;
    return true;
  }

  // ---- a tile function -----------------------------------------------------------------------

  // (const T* b, T* c, unsigned ld) { SPMMC_TILE_ASM("..."); } with T the file's element type:
  // the asm statement's operands each one of the parameters ("l" for the pointers, "r" for the
  // stride), memory clobbered; then its PTX.
  bool read_tile(const clang::FunctionDecl& f, AnalyzedTile& tile, std::vector<CodeDiagnostic>& errors) {
    tile.function = f.getNameAsString();
    tile.where = locator_.at(f.getLocation());
    const auto fail = [&](clang::SourceLocation loc, const std::string& what) {
      errors.push_back({locator_.at(loc), fmt::format("{} in {}", what, tile.function)});
      return false;
    };
    if (!pointer_pair_and_integer(f, 32, out_.dtype, ctx_)) {
      for (const clang::ParmVarDecl* p : f.parameters())
        if (!element_type_matches(f, *p, errors)) return false;
      const char* t = dtype_c_type(out_.dtype);
      return fail(f.getLocation(), fmt::format("expected the parameters (const {}* b, {}* c, unsigned ld)", t, t));
    }
    const auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(f.getBody());
    if (!body) return fail(f.getLocation(), "has no body");
    const clang::GCCAsmStmt* asm_stmt = nullptr;
    for (const clang::Stmt* s : body->body()) {
      if (llvm::isa<clang::NullStmt>(s)) continue;
      const auto* a = llvm::dyn_cast<clang::GCCAsmStmt>(s);
      if (!a || asm_stmt) {
        return fail(s->getBeginLoc(), fmt::format("unrecognised statement '{}' (a tile's body is one inline-PTX asm "
                                                  "statement)", snip(s)));
      }
      asm_stmt = a;
    }
    if (!asm_stmt) return fail(f.getLocation(), "has no inline-PTX asm statement");
    if (asm_stmt->getNumOutputs() != 0 || asm_stmt->isAsmGoto())
      return fail(asm_stmt->getBeginLoc(), "the asm statement has outputs or labels (expected inputs b, c, ld only)");
    std::vector<PtxOperandRole> roles;
    for (unsigned i = 0; i < asm_stmt->getNumInputs(); ++i) {
      const clang::ParmVarDecl* p = as_param(asm_stmt->getInputExpr(i));
      const std::string constraint = asm_stmt->getInputConstraint(i).str();
      PtxOperandRole role = PtxOperandRole::kUnknown;
      if (p == f.getParamDecl(0)) role = PtxOperandRole::kB;
      else if (p == f.getParamDecl(1)) role = PtxOperandRole::kC;
      else if (p == f.getParamDecl(2)) role = PtxOperandRole::kRowStride;
      const bool pointer = role == PtxOperandRole::kB || role == PtxOperandRole::kC;
      if (role == PtxOperandRole::kUnknown || constraint != (pointer ? "l" : "r"))
        return fail(asm_stmt->getInputExpr(i)->getBeginLoc(),
                    fmt::format("unrecognised asm operand %{} \"{}\"({}) (expected \"l\"(b), \"l\"(c), \"r\"(ld))", i,
                                constraint, snip(asm_stmt->getInputExpr(i))));
      roles.push_back(role);
    }
    bool memory = false;
    for (unsigned i = 0; i < asm_stmt->getNumClobbers(); ++i) memory |= asm_stmt->getClobber(i) == "memory";
    if (!memory)
      return fail(asm_stmt->getBeginLoc(), "the asm statement does not clobber \"memory\" (it reads B and writes C)");
    const clang::StringLiteral* text = asm_stmt->getAsmString();
    auto bytes = std::make_shared<StringLiteralBytes>(*text, ctx_, locator_);
    TilePtx ptx;
    ptx.text = std::string_view(text->getString().data(), text->getString().size());
    ptx.operands = roles;
    ptx.locate = [bytes](size_t byte) { return bytes->at(byte); };
    ptx.function = tile.function;
    // A tfloat32 file's unrolled tiles are float32's code: B multiplied as given, A's immediates rounded to tf32.
    ptx.dtype = out_.dtype == DType::kTf32 ? DType::kFp32 : out_.dtype;
    return read_tile_ptx(ptx, tile, errors);
  }

  // ---- file-scope data -----------------------------------------------------------------------

  void read_info(const std::vector<clang::VarDecl*>& variables) {
    KernelInfoFields& info = out_.info;
    for (const clang::VarDecl* v : variables) {
      const clang::RecordDecl* record = v->getType().getCanonicalType()->getAsRecordDecl();
      if (!record || record->getName() != "spmmc_kernel_info" || !v->hasInit()) continue;
      if (info.found) {
        error(v->getLocation(), "a second spmmc_kernel_info object");
        return;
      }
      info.found = true;
      info.where = locator_.at(v->getLocation());
      const auto* list = llvm::dyn_cast<clang::InitListExpr>(v->getInit()->IgnoreImplicit());
      if (!list) continue;
      unsigned index = 0;
      for (const clang::FieldDecl* field : record->fields()) {
        if (index >= list->getNumInits()) break;
        const clang::Expr* init = list->getInit(index++);
        const std::string name = field->getName().str();
        const std::map<std::string, InfoField<int64_t>*> integers = {
            {"m", &info.m}, {"k", &info.k}, {"nnz", &info.nnz}, {"m1", &info.m1}, {"n1", &info.n1},
            {"cols_per_thread", &info.cols_per_thread}, {"a_tiles", &info.a_tiles}};
        const std::map<std::string, InfoField<std::string>*> strings = {
            {"name", &info.name},         {"weights_sha256", &info.weights_sha256}, {"a_format", &info.a_format},
            {"b_layout", &info.b_layout}, {"c_layout", &info.c_layout},             {"dtype", &info.dtype}};
        if (const auto it = integers.find(name); it != integers.end()) {
          it->second->where = locator_.at(init->getBeginLoc());
          it->second->value = integer_constant(init, ctx_);
        } else if (const auto jt = strings.find(name); jt != strings.end()) {
          jt->second->where = locator_.at(init->getBeginLoc());
          if (const auto* text = llvm::dyn_cast<clang::StringLiteral>(init->IgnoreParenImpCasts()))
            jt->second->value = text->getString().str();
        }
      }
    }
  }

  // A's arrays on the host (spmmc compile --arrays host, codegen/arrays_on_host.h): each moved array
  // `spmmc_X` is declared without values, its bytes are `spmmc_X_host` (string literals, little-endian),
  // and the copy's table `spmmc_host_arrays` pairs them: {&spmmc_X, spmmc_X_host, sizeof(spmmc_X)}. The
  // bytes go to host_bytes_ for read_integer_array and read_vector_array; the table must pair every
  // array with its own bytes, once. (The copy's code is host code, which this device-side parse does
  // not see: the tests run it in the CPU emulation.)
  void read_host_bytes(const std::vector<clang::VarDecl*>& variables) {
    const clang::VarDecl* table = nullptr;
    for (const clang::VarDecl* v : variables) {
      const std::string name = v->getNameAsString();
      if (name == "spmmc_host_arrays") table = v;
      if (name.size() < 6 || name.compare(name.size() - 5, 5, "_host") != 0 || !v->hasInit()) continue;
      const auto* list = llvm::dyn_cast<clang::InitListExpr>(v->getInit()->IgnoreImplicit());
      if (!list) continue;
      std::string bytes;
      for (const clang::Expr* piece : list->inits()) {
        const auto* text = llvm::dyn_cast<clang::StringLiteral>(piece->IgnoreParenImpCasts());
        if (!text) {
          error(piece->getBeginLoc(), fmt::format("{} holds something other than string literals", name));
          return;
        }
        bytes += text->getBytes().str();
      }
      host_bytes_[name.substr(0, name.size() - 5)] = {v, std::move(bytes)};
    }
    if (host_bytes_.empty()) return;
    const auto* list = table && table->hasInit() ? llvm::dyn_cast<clang::InitListExpr>(table->getInit()->IgnoreImplicit()) : nullptr;
    if (!list) {
      error(host_bytes_.begin()->second.first->getLocation(), "host bytes of A's arrays but no table spmmc_host_arrays that copies them");
      return;
    }
    std::set<std::string> paired;
    for (const clang::Expr* entry : list->inits()) {
      const auto* fields = llvm::dyn_cast<clang::InitListExpr>(entry->IgnoreImplicit());
      const auto* address = fields && fields->getNumInits() == 3 ? llvm::dyn_cast<clang::UnaryOperator>(fields->getInit(0)->IgnoreParenImpCasts()) : nullptr;
      const auto* array = address && address->getOpcode() == clang::UO_AddrOf
                              ? llvm::dyn_cast<clang::DeclRefExpr>(address->getSubExpr()->IgnoreParenImpCasts())
                              : nullptr;
      const auto* bytes = array ? llvm::dyn_cast<clang::DeclRefExpr>(fields->getInit(1)->IgnoreParenImpCasts()) : nullptr;
      const auto* size = bytes ? llvm::dyn_cast<clang::UnaryExprOrTypeTraitExpr>(fields->getInit(2)->IgnoreParenImpCasts()) : nullptr;
      const auto* sized = size && size->getKind() == clang::UETT_SizeOf && !size->isArgumentType()
                              ? llvm::dyn_cast<clang::DeclRefExpr>(size->getArgumentExpr()->IgnoreParens())
                              : nullptr;
      if (!sized) {
        error(entry->getBeginLoc(), "an entry of spmmc_host_arrays that is not {&ARRAY, ARRAY_host, sizeof(ARRAY)}: " + snip(entry));
        continue;
      }
      const std::string name = array->getDecl()->getNameAsString();
      if (bytes->getDecl()->getNameAsString() != name + "_host" || sized->getDecl()->getNameAsString() != name)
        error(entry->getBeginLoc(), fmt::format("spmmc_host_arrays copies {} into {} (sized as {}): each array takes its own bytes",
                                                bytes->getDecl()->getNameAsString(), name, sized->getDecl()->getNameAsString()));
      else if (!host_bytes_.count(name))
        error(entry->getBeginLoc(), fmt::format("spmmc_host_arrays copies {}_host, which holds no string literals", name));
      else if (!paired.insert(name).second)
        error(entry->getBeginLoc(), fmt::format("spmmc_host_arrays copies {} twice", name));
    }
    for (const auto& [name, bytes] : host_bytes_)
      if (!paired.count(name))
        error(bytes.first->getLocation(), fmt::format("{}_host is not in spmmc_host_arrays: {} would keep zeros", name, name));
  }

  // spmmc_row_ptr, spmmc_col_idx, spmmc_weight_bits, spmmc_k_part_begin, spmmc_generic_order,
  // spmmc_generic_span: arrays of integer constants.
  void read_generic_path(const std::vector<clang::VarDecl*>& variables) {
    const std::map<std::string, IntegerArray*> arrays = {{"spmmc_row_ptr", &out_.generic.row_ptr},
                                                         {"spmmc_col_idx", &out_.generic.col_idx},
                                                         {"spmmc_weight_bits", &out_.generic.weight_bits},
                                                         {"spmmc_k_part_begin", &out_.generic.k_part_begin},
                                                         {"spmmc_generic_order", &out_.generic.order},
                                                         {"spmmc_generic_span", &out_.generic.span}};
    for (const clang::VarDecl* v : variables) {
      const auto it = arrays.find(v->getNameAsString());
      if (it != arrays.end()) read_integer_array(*v, it->first, *it->second);
    }
  }

  // The tensor-core family's constants and arrays (whatever the a_format: compare_with_weights
  // reads them only in that family). spmmc_tc_a must hold 32-bit words (two half-precision values
  // each, or one tf32 value) and spmmc_tc_cols int2 pairs (fp16, bf16) or integers (tf32): other
  // element types would change what the kernel reads.
  void read_tensor_core_path(const std::vector<clang::VarDecl*>& variables) {
    TensorCorePath& tc = out_.tc;
    const std::map<std::string, IntegerConstant*> constants = {{"spmmc_tc_windows", &tc.windows},
                                                               {"spmmc_tc_rows", &tc.rows},
                                                               {"spmmc_tc_halves", &tc.halves},
                                                               {"spmmc_tc_warps", &tc.warps},
                                                               {"spmmc_tc_threads", &tc.threads},
                                                               {"spmmc_tc_cols_per_warp", &tc.cols_per_warp},
                                                               {"spmmc_tc_k", &tc.k},
                                                               {"spmmc_tc_chunk_rows", &tc.chunk_rows},
                                                               {"spmmc_tc_chunks", &tc.chunks},
                                                               {"spmmc_tc_chunk_blocks", &tc.chunk_blocks},
                                                               {"spmmc_tc_staged_warps", &tc.staged_warps},
                                                               {"spmmc_tc_staged_threads", &tc.staged_threads},
                                                               {"spmmc_tc_keyed", &tc.keyed}};
    const std::map<std::string, IntegerArray*> arrays = {{"spmmc_tc_window_block", &tc.window_block},
                                                         {"spmmc_tc_window_rows", &tc.window_rows},
                                                         {"spmmc_tc_chunk_block", &tc.chunk_block},
                                                         {"spmmc_tc_offsets", &tc.offsets},
                                                         {"spmmc_tc_keys", &tc.keys},
                                                         {"spmmc_tc_a", &tc.a}};
    for (const clang::VarDecl* v : variables) {
      const std::string name = v->getNameAsString();
      if (const auto c = constants.find(name); c != constants.end()) {
        read_integer_constant(*v, name, *c->second);
      } else if (const auto a = arrays.find(name); a != arrays.end()) {
        if (!read_integer_array(*v, name, *a->second) || name != "spmmc_tc_a") continue;
        const auto* type = ctx_.getAsConstantArrayType(v->getType());
        if (ctx_.getTypeSize(type->getElementType()) != 32)
          error(v->getLocation(), fmt::format("the elements of spmmc_tc_a are {}-bit {}, but each must be one 32-bit word "
                                              "({}: what a lane holds of the MMA's operand)",
                                              ctx_.getTypeSize(type->getElementType()),
                                              type->getElementType().getAsString(),
                                              out_.dtype == DType::kTf32 ? "a float's bits rounded to tf32"
                                                                         : "two 16-bit values"));
      } else if (name == "spmmc_tc_cols") {
        // tf32: one column per vector (lane 4g + t loads vector t); fp16, bf16: int2 pairs (vectors
        // 2t and 2t + 1 of lane 4g + t). compare_with_weights counts the vectors per block by it.
        const auto* type = ctx_.getAsConstantArrayType(v->getType());
        if (out_.dtype != DType::kTf32) {
          tc.cols_are_pairs = true;
          read_vector_array(*v, name, "int2", 2, tc.cols);
        } else if (type && type->getElementType()->isIntegerType()) {
          read_integer_array(*v, name, tc.cols);
        } else {
          tc.cols.found = true;
          tc.cols.where = locator_.at(v->getLocation());
          error(v->getLocation(), fmt::format("spmmc_tc_cols is not a const array of integer constants, but {}: a tf32 "
                                              "block's 4 vectors have one column each",
                                              dtype_origin_));
        }
      }
    }
  }

  // The balanced family's constants and its pieces (whatever the a_format: compare_with_weights reads
  // them only in that family). spmmc_piece must hold int4 {row, begin, end, first + slots x pieces}.
  void read_balanced_path(const std::vector<clang::VarDecl*>& variables) {
    BalancedPath& b = out_.balanced_path;
    const std::map<std::string, IntegerConstant*> constants = {{"spmmc_balanced_warps", &b.warps},
                                                               {"spmmc_balanced_groups", &b.groups},
                                                               {"spmmc_balanced_slots", &b.slots},
                                                               {"spmmc_balanced_blocks", &b.blocks},
                                                               {"spmmc_balanced_mid_blocks", &out_.balanced_mid.blocks}};
    for (const clang::VarDecl* v : variables) {
      const std::string name = v->getNameAsString();
      if (const auto c = constants.find(name); c != constants.end()) read_integer_constant(*v, name, *c->second);
      else if (name == "spmmc_piece") read_vector_array(*v, name, "int4", 4, b.pieces);
      else if (name == "spmmc_piece_mid") read_vector_array(*v, name, "int4", 4, out_.balanced_mid.pieces);
    }
  }

  // `v`, a file-scope integer constant, into `constant` (an error at `v` where it was read before or
  // is not a const integer with an initialiser; its value none where that is not a constant).
  void read_integer_constant(const clang::VarDecl& v, const std::string& name, IntegerConstant& constant) {
    if (constant.found) {
      error(v.getLocation(), fmt::format("a second {}", name));
      return;
    }
    constant.found = true;
    constant.where = locator_.at(v.getLocation());
    constant.field.where = constant.where;
    if (!v.hasInit() || !v.getType().isConstQualified() || !v.getType()->isIntegerType()) {
      error(v.getLocation(), fmt::format("{} is not an integer constant", name));
      return;
    }
    constant.field.where = locator_.at(v.getInit()->getBeginLoc());
    constant.field.value = integer_constant(v.getInit(), ctx_);
  }

  // The start of reading `v` into `array`: false, with an error at `v`, where `array` was read
  // before; else `array` is marked found where `v` is, and `list` is v's initialiser list (nullptr
  // where it has none).
  bool start_array(const clang::VarDecl& v, const std::string& name, IntegerArray& array, const clang::InitListExpr*& list) {
    if (array.found) {
      error(v.getLocation(), fmt::format("a second {}", name));
      return false;
    }
    array.found = true;
    array.where = locator_.at(v.getLocation());
    list = v.hasInit() ? llvm::dyn_cast<clang::InitListExpr>(v.getInit()->IgnoreImplicit()) : nullptr;
    return true;
  }

  // `v`, a const array of integer constants, element by element into `array` (missing trailing
  // elements are 0, as C++ initialises them). False, with an error at `v`, otherwise.
  bool read_integer_array(const clang::VarDecl& v, const std::string& name, IntegerArray& array) {
    const clang::InitListExpr* list = nullptr;
    if (!start_array(v, name, array, list)) return false;
    const auto* type = ctx_.getAsConstantArrayType(v.getType());
    if (!list && type && type->getElementType()->isIntegerType() && host_bytes_.count(name))
      return read_host_array(v, name, *type, 1, array);
    if (!list || !type || !type->getElementType()->isIntegerType() || !v.getType().isConstQualified()) {
      error(v.getLocation(), fmt::format("{} is not a const array of integer constants", name));
      return false;
    }
    const uint64_t size = type->getSize().getZExtValue();
    for (uint64_t i = 0; i < size; ++i) {
      const clang::Expr* init = i < list->getNumInits() ? list->getInit(static_cast<unsigned>(i)) : nullptr;
      const std::optional<int64_t> value = init ? integer_constant(init, ctx_) : std::optional<int64_t>(0);
      if (!value) {
        error(init->getBeginLoc(), fmt::format("cannot evaluate element {} of {}", i, name));
        return false;
      }
      const CodeLocation at = locator_.at(init ? init->getBeginLoc() : v.getLocation());
      array.values.push_back(*value);
      array.lines.push_back(static_cast<int32_t>(at.line));
      array.columns.push_back(static_cast<int32_t>(at.column));
    }
    return true;
  }

  // `v`, a const array of CUDA's `vector` type (int2: {x, y}; int4: {x, y, z, w}; `fields` integer
  // members) flattened into `array`: element i's members at fields x i .. fields x i + fields - 1,
  // each with its own place.
  bool read_vector_array(const clang::VarDecl& v, const std::string& name, const char* vector, unsigned fields,
                         IntegerArray& array) {
    static constexpr const char* kMembers[] = {"x", "y", "z", "w"};
    const clang::InitListExpr* list = nullptr;
    if (!start_array(v, name, array, list)) return false;
    const auto* type = ctx_.getAsConstantArrayType(v.getType());
    const clang::RecordDecl* record = type ? type->getElementType()->getAsRecordDecl() : nullptr;
    std::vector<const clang::FieldDecl*> members;
    if (record)
      for (const clang::FieldDecl* f : record->fields()) members.push_back(f);
    bool shaped = record && record->getName() == vector && members.size() == fields;
    for (unsigned m = 0; shaped && m < fields; ++m)
      shaped = members[m]->getName() == kMembers[m] && members[m]->getType()->isIntegerType();
    // (a record's array without values may carry its implicit construction: no initialiser list)
    if (!list && shaped && host_bytes_.count(name)) return read_host_array(v, name, *type, fields, array);
    if (!list || !shaped || !v.getType().isConstQualified()) {
      error(v.getLocation(), fmt::format("{} is not a const array of {} constants", name, vector));
      return false;
    }
    const uint64_t size = type->getSize().getZExtValue();
    for (uint64_t i = 0; i < size; ++i) {
      const clang::Expr* init = i < list->getNumInits() ? list->getInit(static_cast<unsigned>(i)) : nullptr;
      if (init && llvm::isa<clang::ImplicitValueInitExpr>(init)) init = nullptr;  // zeros, as C++ initialises them
      const auto* values = init ? llvm::dyn_cast<clang::InitListExpr>(init->IgnoreImplicit()) : nullptr;
      if (init && !values) {
        error(init->getBeginLoc(), fmt::format("cannot evaluate element {} of {} (expected {{{}}})", i, name,
                                               fields == 2 ? "x, y" : "x, y, z, w"));
        return false;
      }
      for (unsigned m = 0; m < fields; ++m) {
        const clang::Expr* member = values && m < values->getNumInits() ? values->getInit(m) : nullptr;
        const std::optional<int64_t> value = member ? integer_constant(member, ctx_) : std::optional<int64_t>(0);
        if (!value) {
          error(member->getBeginLoc(), fmt::format("cannot evaluate element {}.{} of {}", i, kMembers[m], name));
          return false;
        }
        const CodeLocation at = locator_.at(member ? member->getBeginLoc() : init ? init->getBeginLoc() : v.getLocation());
        array.values.push_back(*value);
        array.lines.push_back(static_cast<int32_t>(at.line));
        array.columns.push_back(static_cast<int32_t>(at.column));
      }
    }
    return true;
  }

  // `v`, an array declared without values whose bytes are host_bytes_[name] (read_host_bytes): its
  // elements (of `fields` 32-bit integers each) from them, little-endian, each placed at the bytes'
  // definition. False, with an error at `v`, where their size is not the array's.
  bool read_host_array(const clang::VarDecl& v, const std::string& name, const clang::ConstantArrayType& type, unsigned fields,
                       IntegerArray& array) {
    const auto& [bytes_decl, bytes] = host_bytes_.at(name);
    const uint64_t size = type.getSize().getZExtValue();
    const uint64_t element_bytes = static_cast<uint64_t>(ctx_.getTypeSize(type.getElementType()) / 8);
    if (element_bytes != 4 * fields || bytes.size() != size * element_bytes) {
      error(v.getLocation(), fmt::format("{} has {} elements of {} bytes, but {}_host holds {} bytes", name, size, element_bytes,
                                         name, bytes.size()));
      return false;
    }
    const bool is_signed = fields > 1 || type.getElementType()->isSignedIntegerType();
    const CodeLocation at = locator_.at(bytes_decl->getLocation());
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      uint32_t word = 0;
      for (int b = 3; b >= 0; --b) word = word << 8 | static_cast<unsigned char>(bytes[i + static_cast<size_t>(b)]);
      array.values.push_back(is_signed ? static_cast<int64_t>(static_cast<int32_t>(word)) : static_cast<int64_t>(word));
      array.lines.push_back(static_cast<int32_t>(at.line));
      array.columns.push_back(static_cast<int32_t>(at.column));
    }
    return true;
  }

  clang::ASTContext& ctx_;
  const clang::SourceManager& sm_;
  const Locator& locator_;
  EmittedKernelAnalysis& out_;
  // A's arrays on the host: each moved array's bytes and where they are defined (read_host_bytes).
  std::map<std::string, std::pair<const clang::VarDecl*, std::string>> host_bytes_;
  // The kernel being read, and what its first tile call says.
  const clang::FunctionDecl* kernel_ = nullptr;
  LinearForm n_symbol_;                     // {n: 1}
  std::optional<LinearForm> column_;        // the thread's column, from its first tile call
  clang::SourceLocation column_where_;
  std::map<const clang::FunctionDecl*, int32_t> tile_index_;
  std::vector<std::string> unsorted_names_;
  std::string dtype_origin_;  // where out_.dtype comes from, for messages
};

}  // namespace

void walk_kernel_ast(clang::ASTContext& ctx, const Locator& locator, EmittedKernelAnalysis& out) {
  KernelWalker(ctx, locator, out).run();
}

}  // namespace spmmc::verify_detail
