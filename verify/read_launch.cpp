#include "verify/read_launch.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <clang/AST/Attr.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/Stmt.h>
#include <fmt/format.h>

#include "verify/match_expressions.h"

namespace spmmc::verify_detail {
namespace {

constexpr const char* kLaunchCall = "cudaLaunchKernelExC";
constexpr const char* kExpectedLoop = "expected for (int j = 0; j < spmmc_kernel_count; ++j)";
// Most kernels a launch loop may launch (the emitter's are far fewer: one per group of tiles).
constexpr int64_t kMaxLaunches = int64_t{1} << 20;

// An assignment, built in (`a = b`) or a class's operator= (`config.gridDim = dim3(...)`).
struct Assignment {
  const clang::Expr* lhs;
  const clang::Expr* rhs;
};

// Calls, for loops, assignments and variables written inside a statement.
class LaunchScan : public clang::RecursiveASTVisitor<LaunchScan> {
 public:
  bool VisitCallExpr(clang::CallExpr* c) {
    calls.push_back(c);
    if (const auto* op = llvm::dyn_cast<clang::CXXOperatorCallExpr>(c);
        op && op->getOperator() == clang::OO_Equal && op->getNumArgs() == 2)
      note_assignment(op->getArg(0), op->getArg(1));
    return true;
  }
  bool VisitForStmt(clang::ForStmt* f) {
    loops.push_back(f);
    return true;
  }
  bool VisitBinaryOperator(clang::BinaryOperator* b) {
    if (b->isAssignmentOp()) note_assignment(b->getLHS(), b->getRHS());
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* u) {
    if (u->isIncrementDecrementOp() || u->getOpcode() == clang::UO_AddrOf)
      if (const clang::VarDecl* v = as_variable(u->getSubExpr())) written.insert(v);
    return true;
  }

  std::vector<clang::CallExpr*> calls;
  std::vector<clang::ForStmt*> loops;  // outer before inner
  std::vector<Assignment> assignments;
  std::set<const clang::VarDecl*> written;  // assigned, incremented or whose address is taken

 private:
  void note_assignment(const clang::Expr* lhs, const clang::Expr* rhs) {
    assignments.push_back({lhs, rhs});
    if (const clang::VarDecl* v = as_variable(lhs)) written.insert(v);
  }
};

// True when `s` contains `call`.
bool contains(const clang::Stmt* s, const clang::CallExpr* call) {
  LaunchScan scan;
  scan.TraverseStmt(const_cast<clang::Stmt*>(s));
  return std::find(scan.calls.begin(), scan.calls.end(), call) != scan.calls.end();
}

class LaunchReader {
 public:
  LaunchReader(clang::ASTContext& ctx, const Locator& locator, EmittedKernelAnalysis& out)
      : ctx_(ctx), sm_(ctx.getSourceManager()), locator_(locator), out_(out), table_(out.launch) {}

  bool run(const std::vector<clang::FunctionDecl*>& functions, const std::vector<clang::VarDecl*>& variables,
           const std::vector<const clang::FunctionDecl*>& kernels) {
    read_a_tiles(variables);
    const clang::FunctionDecl* entry = nullptr;
    const clang::CallExpr* call = find_call(functions, entry);
    if (!call) return false;
    table_.where = locator_.at(call->getBeginLoc());
    out_.entry_point = entry_point(functions, entry)->getNameAsString();
    const clang::ForStmt* loop = enclosing_loop(*entry, call);
    if (!loop || !read_loop(loop)) return false;
    const clang::VarDecl* config = config_of(call);
    const clang::VarDecl* kernel_table = indexed_table(call->getArg(1));
    if (!config || !kernel_table) {
      error(call->getBeginLoc(), fmt::format("unrecognised launch '{}' (expected {}(&config, spmmc_kernels[{}], args))",
                                             snip(call), kLaunchCall, index_name()));
      return false;
    }
    const clang::VarDecl* tiles_table = nullptr;
    std::optional<int64_t> threads;
    if (!read_config(loop, config, tiles_table, threads)) return false;
    table_.kernels_name = kernel_table->getNameAsString();
    table_.tiles_name = tiles_table->getNameAsString();
    std::vector<const clang::Expr*> pointers, tiles;
    if (!table_elements(kernel_table, pointers) || !table_elements(tiles_table, tiles)) return false;
    for (int64_t j = 0; j < table_.count; ++j) {
      KernelLaunch launch;
      if (!read_pointer(kernel_table, pointers[static_cast<size_t>(j)], kernels, launch) ||
          !read_tiles(tiles_table, tiles[static_cast<size_t>(j)], j, launch))
        return false;
      table_.launches.push_back(std::move(launch));
    }
    for (AnalyzedKernel& kernel : out_.kernels) {
      kernel.columns.threads = *threads;
      kernel.columns.launch_where = table_.where;
    }
    table_.found = true;
    return true;
  }

 private:
  void error(clang::SourceLocation loc, std::string message) { out_.errors.push_back({locator_.at(loc), std::move(message)}); }

  std::string snip(const clang::Stmt* s) const { return snippet(s->getSourceRange(), sm_, ctx_.getLangOpts()); }

  std::string index_name() const { return index_ ? index_->getNameAsString() : "j"; }

  // spmmc_a_tiles, the constant the tables must add up to.
  void read_a_tiles(const std::vector<clang::VarDecl*>& variables) {
    for (const clang::VarDecl* v : variables)
      if (v->getName() == "spmmc_a_tiles" && v->hasInit()) {
        table_.a_tiles.where = locator_.at(v->getInit()->getBeginLoc());
        table_.a_tiles.value = integer_constant(v->getInit(), ctx_);
      }
  }

  // The one cudaLaunchKernelExC of the host code, and the function that makes it (the entry point).
  const clang::CallExpr* find_call(const std::vector<clang::FunctionDecl*>& functions, const clang::FunctionDecl*& entry) {
    std::vector<std::pair<const clang::CallExpr*, const clang::FunctionDecl*>> calls;
    for (const clang::FunctionDecl* f : functions) {
      if (f->hasAttr<clang::CUDAGlobalAttr>() || f->hasAttr<clang::CUDADeviceAttr>()) continue;
      LaunchScan scan;
      scan.TraverseStmt(f->getBody());
      for (const clang::CallExpr* call : scan.calls)
        if (callee_name(call) == kLaunchCall && call->getNumArgs() == 3) calls.emplace_back(call, f);
    }
    if (calls.size() != 1) {
      error({}, fmt::format("expected one {} in the host code (the launch loop of the unrolled kernels), found {}",
                            kLaunchCall, calls.size()));
      return nullptr;
    }
    entry = calls[0].second;
    return calls[0].first;
  }

  // The entry point: `launcher` itself when it has C linkage, otherwise the host function with C
  // linkage that calls it (the template's entry point calls spmmc_launch_chain, whose loop the
  // graph path captures too); `launcher` when there is none.
  static const clang::FunctionDecl* entry_point(const std::vector<clang::FunctionDecl*>& functions,
                                                const clang::FunctionDecl* launcher) {
    if (launcher->isExternC()) return launcher;
    for (const clang::FunctionDecl* f : functions) {
      if (!f->isExternC() || !f->hasBody() || f->hasAttr<clang::CUDAGlobalAttr>() || f->hasAttr<clang::CUDADeviceAttr>())
        continue;
      LaunchScan scan;
      scan.TraverseStmt(f->getBody());
      for (const clang::CallExpr* c : scan.calls)
        if (c->getDirectCallee() != nullptr && c->getDirectCallee()->getCanonicalDecl() == launcher->getCanonicalDecl())
          return f;
    }
    return launcher;
  }

  // The innermost for loop of `f` around `call`.
  const clang::ForStmt* enclosing_loop(const clang::FunctionDecl& f, const clang::CallExpr* call) {
    LaunchScan scan;
    scan.TraverseStmt(f.getBody());
    const clang::ForStmt* loop = nullptr;
    for (const clang::ForStmt* l : scan.loops)
      if (contains(l->getBody(), call)) loop = l;
    if (!loop)
      error(call->getBeginLoc(), fmt::format("{} is not in a loop over the kernels ({})", kLaunchCall, kExpectedLoop));
    return loop;
  }

  // for (int j = 0; j < COUNT; ++j) (or j++, j += 1) with COUNT a constant and j unchanged in the body.
  bool read_loop(const clang::ForStmt* loop) {
    const auto* init = llvm::dyn_cast_or_null<clang::DeclStmt>(loop->getInit());
    const auto* j = init && init->isSingleDecl() ? llvm::dyn_cast<clang::VarDecl>(init->getSingleDecl()) : nullptr;
    if (!j || !j->getType()->isIntegerType() || !j->hasInit() || integer_constant(j->getInit(), ctx_) != int64_t{0}) {
      error(loop->getBeginLoc(), fmt::format("{} around {}: the loop does not start at 0", kExpectedLoop, kLaunchCall));
      return false;
    }
    index_ = j;
    const auto* cond = llvm::dyn_cast_or_null<clang::BinaryOperator>(strip(loop->getCond()));
    const std::optional<int64_t> count = cond && cond->getOpcode() == clang::BO_LT && as_variable(cond->getLHS()) == j
                                             ? integer_constant(cond->getRHS(), ctx_)
                                             : std::nullopt;
    if (!count || *count < 1 || *count > kMaxLaunches) {
      error(loop->getCond() ? loop->getCond()->getBeginLoc() : loop->getBeginLoc(),
            fmt::format("{} around {}: the loop's bound is not a constant from 1 to {}", kExpectedLoop, kLaunchCall,
                        kMaxLaunches));
      return false;
    }
    if (!steps_by_one(loop->getInc(), j)) {
      error(loop->getInc() ? loop->getInc()->getBeginLoc() : loop->getBeginLoc(),
            fmt::format("{} around {}: the loop does not step by 1", kExpectedLoop, kLaunchCall));
      return false;
    }
    LaunchScan body;
    body.TraverseStmt(const_cast<clang::Stmt*>(loop->getBody()));
    if (body.written.count(j)) {
      error(loop->getBody()->getBeginLoc(), fmt::format("the launch loop's body changes {}", j->getNameAsString()));
      return false;
    }
    table_.count = *count;
    const clang::Expr* bound = strip(cond->getRHS());
    const clang::VarDecl* named = as_variable(bound);
    table_.count_name = named ? named->getNameAsString() : snip(bound);
    table_.count_where = locator_.at(named && named->hasInit() ? named->getInit()->getBeginLoc() : bound->getBeginLoc());
    return true;
  }

  // ++j, j++ or j += 1.
  bool steps_by_one(const clang::Expr* inc, const clang::VarDecl* j) const {
    if (const auto* u = llvm::dyn_cast_or_null<clang::UnaryOperator>(inc))
      return u->isIncrementOp() && as_variable(u->getSubExpr()) == j;
    const auto* add = llvm::dyn_cast_or_null<clang::CompoundAssignOperator>(inc);
    return add && add->getOpcode() == clang::BO_AddAssign && as_variable(add->getLHS()) == j &&
           integer_constant(add->getRHS(), ctx_) == int64_t{1};
  }

  // The local `config` of &config.
  static const clang::VarDecl* config_of(const clang::CallExpr* call) {
    const auto* address = llvm::dyn_cast<clang::UnaryOperator>(strip(call->getArg(0)));
    if (!address || address->getOpcode() != clang::UO_AddrOf) return nullptr;
    const clang::VarDecl* v = as_variable(address->getSubExpr());
    return v && v->isLocalVarDecl() ? v : nullptr;
  }

  // The file-scope array TABLE of TABLE[j], j the loop's index; null for anything else.
  const clang::VarDecl* indexed_table(const clang::Expr* e) const {
    const auto* subscript = llvm::dyn_cast_or_null<clang::ArraySubscriptExpr>(strip(e));
    if (!subscript || as_variable(subscript->getIdx()) != index_) return nullptr;
    const clang::VarDecl* table = as_variable(subscript->getBase());
    return table && table->isFileVarDecl() ? table : nullptr;
  }

  // In the loop's body, one config.gridDim = dim3(TILES[j], ...) and one config.blockDim =
  // dim3(THREADS): the table of blocks along x, and the block size.
  bool read_config(const clang::ForStmt* loop, const clang::VarDecl* config, const clang::VarDecl*& tiles,
                   std::optional<int64_t>& threads) {
    LaunchScan body;
    body.TraverseStmt(const_cast<clang::Stmt*>(loop->getBody()));
    std::vector<const clang::Expr*> grids, blocks;
    for (const Assignment& a : body.assignments) {
      const auto* member = llvm::dyn_cast<clang::MemberExpr>(strip(a.lhs));
      if (!member || as_variable(member->getBase()) != config || !member->getMemberDecl()->getDeclName().isIdentifier())
        continue;
      if (member->getMemberDecl()->getName() == "gridDim") grids.push_back(a.rhs);
      if (member->getMemberDecl()->getName() == "blockDim") blocks.push_back(a.rhs);
    }
    const std::string name = config->getNameAsString();
    if (grids.size() != 1 || blocks.size() != 1) {
      error(loop->getBeginLoc(), fmt::format("expected one assignment to {0}.gridDim and one to {0}.blockDim in the launch "
                                             "loop, found {1} and {2}",
                                             name, grids.size(), blocks.size()));
      return false;
    }
    const clang::Expr* x = dim3_x_expression(grids[0]);
    tiles = x ? indexed_table(x) : nullptr;
    if (!tiles) {
      error(grids[0]->getBeginLoc(), fmt::format("cannot tell the blocks along x of each launch (expected {}.gridDim = "
                                                 "dim3(spmmc_kernel_tiles[{}], ...))",
                                                 name, index_name()));
      return false;
    }
    threads = dim3_x(blocks[0], ctx_);
    if (!threads) {
      error(blocks[0]->getBeginLoc(), fmt::format("cannot tell the block size (expected {}.blockDim = dim3(CONSTANT))", name));
      return false;
    }
    return true;
  }

  // The initialisers of a const array of at least `count` elements, one per element (null where
  // none is given: the element is zero).
  bool table_elements(const clang::VarDecl* table, std::vector<const clang::Expr*>& elements) {
    const auto* type = ctx_.getAsConstantArrayType(table->getType());
    const auto* list = table->hasInit() ? llvm::dyn_cast<clang::InitListExpr>(table->getInit()->IgnoreImplicit()) : nullptr;
    if (!type || !list || !type->getElementType().isConstQualified()) {
      error(table->getLocation(), fmt::format("{} is not a const array with an initialiser", table->getNameAsString()));
      return false;
    }
    const uint64_t size = type->getSize().getZExtValue();
    if (size < static_cast<uint64_t>(table_.count)) {
      error(table->getLocation(), fmt::format("the launch loop reads {}[0 .. {}], but it has {} elements",
                                              table->getNameAsString(), table_.count - 1, size));
      return false;
    }
    for (int64_t j = 0; j < table_.count; ++j)
      elements.push_back(static_cast<unsigned>(j) < list->getNumInits() ? list->getInit(static_cast<unsigned>(j)) : nullptr);
    return true;
  }

  // spmmc_kernels[j]: the function it points at, and which unrolled kernel that is (if any).
  bool read_pointer(const clang::VarDecl* table, const clang::Expr* element,
                    const std::vector<const clang::FunctionDecl*>& kernels, KernelLaunch& launch) {
    launch.where = locator_.at(element ? element->getBeginLoc() : table->getLocation());
    const clang::FunctionDecl* f = element ? function_named(element) : nullptr;
    if (!f) {
      if (element && !element->isNullPointerConstant(ctx_, clang::Expr::NPC_ValueDependentIsNotNull)) {
        error(element->getBeginLoc(), fmt::format("unrecognised element '{}' of {} (expected "
                                                  "reinterpret_cast<const void*>(&KERNEL))",
                                                  snip(element), table->getNameAsString()));
        return false;
      }
      return true;  // null: launches nothing
    }
    launch.function = f->getNameAsString();
    for (size_t k = 0; k < kernels.size(); ++k)
      if (kernels[k]->getCanonicalDecl() == f->getCanonicalDecl()) launch.kernel = static_cast<int32_t>(k);
    return true;
  }

  // spmmc_kernel_tiles[j]: the blocks along x of launch j.
  bool read_tiles(const clang::VarDecl* table, const clang::Expr* element, int64_t j, KernelLaunch& launch) {
    launch.tiles_where = locator_.at(element ? element->getBeginLoc() : table->getLocation());
    const std::optional<int64_t> value = element ? integer_constant(element, ctx_) : std::optional<int64_t>(0);
    if (!value) {
      error(element->getBeginLoc(), fmt::format("cannot evaluate element {} of {}", j, table->getNameAsString()));
      return false;
    }
    launch.grid_x = *value;
    return true;
  }

  clang::ASTContext& ctx_;
  const clang::SourceManager& sm_;
  const Locator& locator_;
  EmittedKernelAnalysis& out_;
  LaunchTable& table_;
  const clang::VarDecl* index_ = nullptr;  // the launch loop's j
};

}  // namespace

bool read_launch(clang::ASTContext& ctx, const Locator& locator, const std::vector<clang::FunctionDecl*>& functions,
                 const std::vector<clang::VarDecl*>& variables, const std::vector<const clang::FunctionDecl*>& kernels,
                 EmittedKernelAnalysis& out) {
  return LaunchReader(ctx, locator, out).run(functions, variables, kernels);
}

}  // namespace spmmc::verify_detail
