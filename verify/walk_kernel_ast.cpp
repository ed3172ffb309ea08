#include "verify/walk_kernel_ast.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/Stmt.h>
#include <fmt/format.h>

#include "verify/match_expressions.h"
#include "verify/read_tile_ptx.h"

namespace spmmc::verify_detail {
namespace {

// Largest grid the analysis materialises block by block (CUDA allows 2^31 - 1 along x; an
// emitted kernel has one block per A-tile, far fewer than this within the size guard).
constexpr int64_t kMaxBlocks = int64_t{1} << 21;

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
  std::vector<clang::SwitchStmt*> switches;
  std::vector<clang::CallExpr*> calls;
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

// (const float* b, float* c, N) with N an integer of `bits` bits or more (0: any integer).
bool pointer_pair_and_integer(const clang::FunctionDecl& f, unsigned bits, const clang::ASTContext& ctx) {
  if (f.getNumParams() != 3) return false;
  const clang::QualType b = pointee(f.getParamDecl(0)), c = pointee(f.getParamDecl(1));
  const clang::QualType n = f.getParamDecl(2)->getType();
  return !b.isNull() && is_float(b) && b.isConstQualified() && !c.isNull() && is_float(c) && !c.isConstQualified() &&
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
    read_generic_path(top.variables);
    const clang::FunctionDecl* kernel = find_kernel(top.functions);
    if (!kernel) return;
    if (!find_launch(top.functions, kernel)) return;
    if (!read_kernel(kernel)) return;
    for (const clang::FunctionDecl* f : top.functions) {
      if (f == kernel || !f->hasAttr<clang::CUDADeviceAttr>() || f->hasAttr<clang::CUDAGlobalAttr>() ||
          tile_index_.count(f) || !pointer_pair_and_integer(*f, 0, ctx_))
        continue;
      out_.notes.push_back(fmt::format("{}: {} is defined but no block calls it", locator_.at(f->getLocation()).str(),
                                       f->getNameAsString()));
      AnalyzedTile tile;
      std::vector<CodeDiagnostic> ignored;
      if (read_tile(*f, tile, ignored)) out_.uncalled_tiles.push_back(std::move(tile));
    }
    std::sort(out_.tiles.begin(), out_.tiles.end(), [](const AnalyzedTile& a, const AnalyzedTile& b) {
      return std::make_pair(a.where.line, a.where.column) < std::make_pair(b.where.line, b.where.column);
    });
    // Re-point the blocks at the sorted tiles.
    std::map<std::string, int32_t> by_name;
    for (size_t i = 0; i < out_.tiles.size(); ++i) by_name[out_.tiles[i].function] = static_cast<int32_t>(i);
    for (AnalyzedBlock& block : out_.blocks)
      for (int32_t& t : block.tiles) t = by_name.at(unsorted_names_[static_cast<size_t>(t)]);
    for (const AnalyzedBlock& block : out_.blocks)
      for (int32_t t : block.tiles) {
        auto& blocks = out_.tiles[static_cast<size_t>(t)].blocks;
        if (blocks.empty() || blocks.back() != block.block) blocks.push_back(block.block);
      }
  }

 private:
  void error(clang::SourceLocation loc, std::string message) { out_.errors.push_back({locator_.at(loc), std::move(message)}); }

  std::string snip(const clang::Stmt* s) const { return snippet(s->getSourceRange(), sm_, ctx_.getLangOpts()); }

  // ---- the kernel and its launch -------------------------------------------------------------

  // The one __global__ function with a switch (blockIdx.x).
  const clang::FunctionDecl* find_kernel(const std::vector<clang::FunctionDecl*>& functions) {
    std::vector<const clang::FunctionDecl*> kernels;
    size_t globals = 0;
    for (const clang::FunctionDecl* f : functions) {
      if (!f->hasAttr<clang::CUDAGlobalAttr>()) continue;
      ++globals;
      BodyScan scan;
      scan.TraverseStmt(f->getBody());
      if (std::any_of(scan.switches.begin(), scan.switches.end(), is_dispatch)) kernels.push_back(f);
    }
    if (kernels.size() != 1) {
      error({}, fmt::format("expected one __global__ function with a switch (blockIdx.x) dispatch, found {} (of {} "
                            "__global__ functions)",
                            kernels.size(), globals));
      return nullptr;
    }
    out_.kernel = kernels[0]->getNameAsString();
    out_.kernel_where = locator_.at(kernels[0]->getLocation());
    return kernels[0];
  }

  // The one cudaLaunchKernel(&kernel, grid, block, ...) of the host code: the grid's x extent,
  // the block size, the entry point.
  bool find_launch(const std::vector<clang::FunctionDecl*>& functions, const clang::FunctionDecl* kernel) {
    std::vector<std::pair<const clang::CallExpr*, const clang::FunctionDecl*>> launches;
    for (clang::FunctionDecl* f : functions) {
      if (f->hasAttr<clang::CUDAGlobalAttr>() || f->hasAttr<clang::CUDADeviceAttr>()) continue;
      BodyScan scan;
      scan.TraverseStmt(f->getBody());
      for (const clang::CallExpr* call : scan.calls) {
        if (callee_name(call) != "cudaLaunchKernel" || call->getNumArgs() < 3) continue;
        const clang::FunctionDecl* target = function_named(call->getArg(0));
        if (target && target->getCanonicalDecl() == kernel->getCanonicalDecl()) launches.emplace_back(call, f);
      }
    }
    if (launches.size() != 1) {
      error({}, fmt::format("expected one cudaLaunchKernel of {} in the host code, found {}", out_.kernel, launches.size()));
      return false;
    }
    const clang::CallExpr* launch = launches[0].first;
    out_.entry_point = launches[0].second->getNameAsString();
    out_.columns.launch_where = locator_.at(launch->getBeginLoc());
    const std::optional<int64_t> x = dim3_x(launch->getArg(1), ctx_);
    if (!x) {
      error(launch->getBeginLoc(), "cannot tell the grid's x extent (expected dim3 grid(CONSTANT, ...))");
      return false;
    }
    if (*x < 1 || *x > kMaxBlocks) {
      error(launch->getBeginLoc(), fmt::format("the grid has {} blocks along x", *x));
      return false;
    }
    out_.grid_x = *x;
    const std::optional<int64_t> threads = dim3_x(launch->getArg(2), ctx_);
    if (!threads) {
      error(launch->getArg(2)->getBeginLoc(), "cannot tell the block size (expected dim3(CONSTANT))");
      return false;
    }
    out_.columns.threads = *threads;
    if (const auto* bounds = kernel->getAttr<clang::CUDALaunchBoundsAttr>()) {
      const std::optional<int64_t> max = integer_constant(bounds->getMaxThreads(), ctx_);
      if (!max) {
        error(bounds->getLocation(), "cannot evaluate the kernel's __launch_bounds__");
        return false;
      }
      out_.columns.max_threads = *max;
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
                                                snip(decls), out_.kernel));
        return false;
      }
    }
    return true;
  }

  // The kernel: const locals, then for (bt = blockIdx.y; bt < (n + N1 - 1) / N1; bt += gridDim.y)
  // { const locals; if (col >= n) continue; switch (blockIdx.x) { ... } }.
  bool read_kernel(const clang::FunctionDecl* kernel) {
    kernel_ = kernel;
    if (!pointer_pair_and_integer(*kernel, 64, ctx_)) {
      error(kernel->getLocation(), fmt::format("expected the parameters (const float* B, float* C, int64_t n) of {}", out_.kernel));
      return false;
    }
    n_symbol_.terms[symbol_of(kernel->getParamDecl(2))] = 1;
    const auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(kernel->getBody());
    if (!body) {
      error(kernel->getLocation(), fmt::format("{} has no body", out_.kernel));
      return false;
    }
    const clang::ForStmt* loop = nullptr;
    for (const clang::Stmt* s : body->body()) {
      if (const auto* decls = llvm::dyn_cast<clang::DeclStmt>(s)) {
        if (!const_locals(decls)) return false;
      } else if (const auto* f = llvm::dyn_cast<clang::ForStmt>(s); f && !loop) {
        loop = f;
      } else if (!llvm::isa<clang::NullStmt>(s)) {
        error(s->getBeginLoc(), fmt::format("unrecognised statement '{}' in {} (expected const locals and one loop over "
                                            "the B-tiles)", snip(s), out_.kernel));
        return false;
      }
    }
    if (!loop) {
      error(kernel->getLocation(), fmt::format("no loop over the B-tiles in {}", out_.kernel));
      return false;
    }
    return read_loop(loop);
  }

  bool read_loop(const clang::ForStmt* loop) {
    out_.columns.where = locator_.at(loop->getBeginLoc());
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
    out_.columns.b_tile_columns = *per_tile;
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
                                            snip(s), out_.kernel));
        return false;
      }
    }
    if (!dispatch) {
      error(loop->getBeginLoc(), fmt::format("the switch (blockIdx.x) of {} is not directly in its loop over the B-tiles",
                                             out_.kernel));
      return false;
    }
    BodyScan all;
    all.TraverseStmt(const_cast<clang::FunctionDecl*>(kernel_)->getBody());
    size_t dispatches = 0;
    for (const clang::SwitchStmt* s : all.switches) dispatches += is_dispatch(s);
    if (dispatches != 1) {
      error(kernel_->getLocation(), fmt::format("expected one switch (blockIdx.x) in {}, found {}", out_.kernel, dispatches));
      return false;
    }
    if (!read_dispatch(dispatch)) return false;
    for (const clang::IfStmt* g : guards)
      if (!read_guard(g)) return false;
    if (column_) {
      out_.columns.found = true;
      out_.columns.cols_per_thread = column_->coefficient("threadIdx.x");
      out_.columns.n1 = column_->coefficient(symbol_of(bt));
      LinearForm expected_form;
      if (out_.columns.cols_per_thread) expected_form.terms["threadIdx.x"] = out_.columns.cols_per_thread;
      if (out_.columns.n1) expected_form.terms[symbol_of(bt)] = out_.columns.n1;
      if (*column_ != expected_form || out_.columns.cols_per_thread < 1 || out_.columns.n1 < 1) {
        error(column_where_, fmt::format("the thread's column is {}, not bt * N1 + threadIdx.x * V with N1, V >= 1",
                                         column_->str()));
        return false;
      }
    } else {
      out_.columns.found = false;  // no block calls a tile: nothing to map
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
                                          snip(g), out_.kernel));
      return false;
    }
    out_.columns.guarded = true;
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
    // (B + col, C + col, n * 4): the same col in both, the row stride in bytes.
    std::optional<LinearForm> b, c, stride;
    if (call->getNumArgs() == 3) {
      b = offset_from(call->getArg(0), kernel_->getParamDecl(0));
      c = offset_from(call->getArg(1), kernel_->getParamDecl(1));
      stride = linear_form(call->getArg(2), ctx_);
    }
    LinearForm bytes;
    bytes.terms = {{n_symbol_.terms.begin()->first, 4}};
    if (!b || !c || *b != *c || !stride || *stride != bytes || (column_ && *b != *column_)) {
      error(call->getBeginLoc(), fmt::format("unrecognised arguments of {} (expected B + col, C + col and the row stride "
                                             "n * 4, the same col for every tile)",
                                             def->getNameAsString()));
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

  bool read_dispatch(const clang::SwitchStmt* dispatch) {
    // Calls outside the switch would run in every block.
    BodyScan all, inside;
    all.TraverseStmt(const_cast<clang::FunctionDecl*>(kernel_)->getBody());
    inside.TraverseStmt(const_cast<clang::SwitchStmt*>(dispatch));
    const std::set<const clang::CallExpr*> dispatched(inside.calls.begin(), inside.calls.end());
    for (const clang::CallExpr* call : all.calls)
      if (!dispatched.count(call)) {
        error(call->getBeginLoc(), fmt::format("a call in {} outside its switch (blockIdx.x)", out_.kernel));
        return false;
      }
    std::vector<Step> steps;
    const size_t errors_before = out_.errors.size();
    if (!flatten(dispatch->getBody(), steps)) return false;
    if (out_.errors.size() != errors_before) return false;
    // Where each block starts: its case label, or the default label.
    std::map<int64_t, size_t> label_at;
    std::optional<size_t> default_at;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kind == Step::Kind::kCase) label_at.emplace(steps[i].value, i);
      if (steps[i].kind == Step::Kind::kDefault) default_at = i;
    }
    auto calls_from = [&](size_t start) {
      std::vector<int32_t> tiles;
      for (size_t i = start; i < steps.size() && steps[i].kind != Step::Kind::kBreak; ++i)
        if (steps[i].kind == Step::Kind::kCall) tiles.push_back(static_cast<int32_t>(steps[i].value));
      return tiles;
    };
    if (default_at && !calls_from(*default_at).empty()) {
      error(steps[*default_at].loc, "the default branch of the dispatch calls a tile function");
      return false;
    }
    for (const auto& [label, at] : label_at)
      if (label < 0 || label >= out_.grid_x)
        out_.notes.push_back(fmt::format("{}: case {} is never taken: the grid has {} blocks along x",
                                         locator_.at(steps[at].loc).str(), label, out_.grid_x));
    for (int64_t b = 0; b < out_.grid_x; ++b) {
      AnalyzedBlock block;
      block.block = b;
      const auto it = label_at.find(b);
      if (it != label_at.end()) {
        block.tiles = calls_from(it->second);
        block.where = locator_.at(steps[it->second].loc);
      }
      out_.blocks.push_back(std::move(block));
    }
    return true;
  }

  // ---- a tile function -----------------------------------------------------------------------

  // (const float* b, float* c, unsigned ld) { SPMMC_TILE_ASM("..."); }: the asm statement's
  // operands each one of the parameters ("l" for the pointers, "r" for the stride), memory
  // clobbered; then its PTX.
  bool read_tile(const clang::FunctionDecl& f, AnalyzedTile& tile, std::vector<CodeDiagnostic>& errors) {
    tile.function = f.getNameAsString();
    tile.where = locator_.at(f.getLocation());
    const auto fail = [&](clang::SourceLocation loc, const std::string& what) {
      errors.push_back({locator_.at(loc), fmt::format("{} in {}", what, tile.function)});
      return false;
    };
    if (!pointer_pair_and_integer(f, 32, ctx_))
      return fail(f.getLocation(), "expected the parameters (const float* b, float* c, unsigned ld)");
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

  // spmmc_row_ptr, spmmc_col_idx, spmmc_weight_bits: arrays of integer constants.
  void read_generic_path(const std::vector<clang::VarDecl*>& variables) {
    const std::map<std::string, IntegerArray*> arrays = {{"spmmc_row_ptr", &out_.generic.row_ptr},
                                                         {"spmmc_col_idx", &out_.generic.col_idx},
                                                         {"spmmc_weight_bits", &out_.generic.weight_bits}};
    for (const clang::VarDecl* v : variables) {
      const auto it = arrays.find(v->getNameAsString());
      if (it == arrays.end()) continue;
      IntegerArray& array = *it->second;
      if (array.found) {
        error(v->getLocation(), fmt::format("a second {}", it->first));
        continue;
      }
      array.found = true;
      array.where = locator_.at(v->getLocation());
      const auto* list = v->hasInit() ? llvm::dyn_cast<clang::InitListExpr>(v->getInit()->IgnoreImplicit()) : nullptr;
      const auto* type = ctx_.getAsConstantArrayType(v->getType());
      if (!list || !type || !type->getElementType()->isIntegerType() || !v->getType().isConstQualified()) {
        error(v->getLocation(), fmt::format("{} is not a const array of integer constants", it->first));
        continue;
      }
      const uint64_t size = type->getSize().getZExtValue();
      for (uint64_t i = 0; i < size; ++i) {
        const clang::Expr* init = i < list->getNumInits() ? list->getInit(static_cast<unsigned>(i)) : nullptr;
        const std::optional<int64_t> value = init ? integer_constant(init, ctx_) : std::optional<int64_t>(0);
        if (!value) {
          error(init->getBeginLoc(), fmt::format("cannot evaluate element {} of {}", i, it->first));
          break;
        }
        const CodeLocation at = locator_.at(init ? init->getBeginLoc() : v->getLocation());
        array.values.push_back(*value);
        array.lines.push_back(static_cast<int32_t>(at.line));
        array.columns.push_back(static_cast<int32_t>(at.column));
      }
    }
  }

  clang::ASTContext& ctx_;
  const clang::SourceManager& sm_;
  const Locator& locator_;
  EmittedKernelAnalysis& out_;
  const clang::FunctionDecl* kernel_ = nullptr;
  LinearForm n_symbol_;                     // {n: 1}
  std::optional<LinearForm> column_;        // the thread's column, from the first tile call
  clang::SourceLocation column_where_;
  std::map<const clang::FunctionDecl*, int32_t> tile_index_;
  std::vector<std::string> unsorted_names_;
};

}  // namespace

void walk_kernel_ast(clang::ASTContext& ctx, const Locator& locator, EmittedKernelAnalysis& out) {
  KernelWalker(ctx, locator, out).run();
}

}  // namespace spmmc::verify_detail
