#include "verify/analyze_emitted_kernel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <unordered_map>
#include <utility>

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/Stmt.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/FileManager.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Lex/Lexer.h>
#include <clang/Tooling/Tooling.h>
#include <fmt/format.h>
#include <llvm/ADT/APFloat.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/VirtualFileSystem.h>

#include "compiler/diagnostics.h"
#include "verify/embedded_prelude.h"

namespace spmmc {
namespace {

using Clock = std::chrono::steady_clock;

// Where the prelude lives in the in-memory file system; nothing on disk has this path.
constexpr const char* kPreludeDir = "/spmmc-verify/include";
// A CUDA installation that does not exist: the driver then looks for no CUDA headers, libdevice
// or version (the toolkit beside may be newer than the Clang).
constexpr const char* kNoCudaPath = "/spmmc-verify/no-cuda";
// Largest grid the analysis materialises block by block (CUDA allows 2^31 - 1 along x; an
// emitted kernel has one block per A-tile, far fewer than this within the size guard).
constexpr int64_t kMaxBlocks = int64_t{1} << 21;
constexpr size_t kMaxSnippet = 60;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Converts Clang source locations to CodeLocation: physical line and column (not #line), the
// main file under the name the caller used.
class Locator {
 public:
  Locator(const clang::SourceManager& sm, std::string display) : sm_(sm), display_(std::move(display)) {}

  CodeLocation at(clang::SourceLocation loc) const {
    CodeLocation out;
    out.file = display_;
    if (loc.isInvalid()) return out;
    loc = sm_.getExpansionLoc(loc);
    const clang::FileID id = sm_.getFileID(loc);
    if (id != sm_.getMainFileID()) {
      const llvm::StringRef name = sm_.getFilename(loc);
      if (!name.empty()) out.file = name.str();
    }
    bool invalid = false;
    const unsigned line = sm_.getSpellingLineNumber(loc, &invalid);
    if (invalid) return out;
    out.line = line;
    out.column = sm_.getSpellingColumnNumber(loc, &invalid);
    if (invalid) out.column = 0;
    return out;
  }

 private:
  const clang::SourceManager& sm_;
  std::string display_;
};

// Collects Clang's errors (warnings are off: -w) as CodeDiagnostics.
class ErrorCollector : public clang::DiagnosticConsumer {
 public:
  ErrorCollector(std::vector<CodeDiagnostic>& out, std::string display) : out_(out), display_(std::move(display)) {}

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Error) return;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    CodeDiagnostic d;
    d.message = text.str().str();
    if (info.hasSourceManager()) {
      d.where = Locator(info.getSourceManager(), display_).at(info.getLocation());
    } else {
      d.where.file = display_;
    }
    // A truncated file ends several scopes at one place: one message for each is enough.
    if (!out_.empty() && out_.back().message == d.message && out_.back().where.str() == d.where.str()) return;
    out_.push_back(std::move(d));
  }

 private:
  std::vector<CodeDiagnostic>& out_;
  std::string display_;
};

// The real file system, the prelude in memory, and a stand-in for NAME.h: a header the main
// file includes from its own folder that does not exist there (a vendored .cu without its .h)
// is answered with the prelude's spmmc_kernel_info definition, and noted.
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
        "#include <spmmc_kernel_info.h>\n",
        llvm::sys::path::filename(path).str());
    memory_->addFile(path, 0, llvm::MemoryBuffer::getMemBufferCopy(text, path));
    substituted_.push_back(path);
  }

  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory_;
  std::string main_dir_;
  std::vector<std::string>& substituted_;
};

// ---- the tile functions -------------------------------------------------------------------

// The symbolic value of a float register of a tile function.
struct Value {
  enum class Kind { kUnset, kColumn, kSum };
  Kind kind = Kind::kUnset;
  int32_t load = -1;  // kColumn: the load it came from
  int32_t sum = -1;   // kSum: the last product of the chain; -1 is the empty sum, 0.0f
};

// Products form persistent chains (each FMA appends one node), so that copying a register is O(1).
struct ProductNode {
  int32_t previous;
  AnalyzedProduct product;
};

struct Load {
  int64_t column;
  bool used = false;
};

const clang::Expr* strip(const clang::Expr* e) { return e ? e->IgnoreParenImpCasts() : nullptr; }

bool is_float(clang::QualType type) { return type.getCanonicalType()->isSpecificBuiltinType(clang::BuiltinType::Float); }

const clang::ParmVarDecl* as_param(const clang::Expr* e) {
  const auto* ref = llvm::dyn_cast_or_null<clang::DeclRefExpr>(strip(e));
  return ref ? llvm::dyn_cast<clang::ParmVarDecl>(ref->getDecl()) : nullptr;
}

std::string callee_name(const clang::CallExpr* call) {
  const clang::FunctionDecl* f = call->getDirectCallee();
  return f && f->getDeclName().isIdentifier() ? f->getName().str() : std::string();
}

// Evaluates the straight-line body of one tile function symbolically.
class TileInterpreter {
 public:
  TileInterpreter(clang::ASTContext& ctx, const Locator& locator, const clang::FunctionDecl& fn, AnalyzedTile& tile,
                  std::vector<CodeDiagnostic>& errors)
      : ctx_(ctx), locator_(locator), fn_(fn), tile_(tile), errors_(errors) {}

  void run() {
    tile_.function = fn_.getNameAsString();
    tile_.where = locator_.at(fn_.getLocation());
    if (fn_.getNumParams() != 3) {
      fail(fn_.getLocation(), "expected the parameters (const float* b, float* c, int64_t n)");
      return;
    }
    b_ = fn_.getParamDecl(0);
    c_ = fn_.getParamDecl(1);
    n_ = fn_.getParamDecl(2);
    const auto pointee = [](const clang::ParmVarDecl* p) {
      const clang::PointerType* ptr = p->getType().getCanonicalType()->getAs<clang::PointerType>();
      return ptr ? ptr->getPointeeType() : clang::QualType();
    };
    if (pointee(b_).isNull() || !is_float(pointee(b_)) || pointee(c_).isNull() || !is_float(pointee(c_)) ||
        pointee(c_).isConstQualified() || !n_->getType()->isIntegerType()) {
      fail(fn_.getLocation(), "expected the parameters (const float* b, float* c, int64_t n)");
      return;
    }
    const auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(fn_.getBody());
    if (!body) {
      fail(fn_.getLocation(), "has no body");
      return;
    }
    execute(body);
    if (failed_) return;
    for (const Load& load : loads_)
      if (!load.used) ++tile_.dead_loads;
    for (const auto& [decl, value] : registers_) {
      if (value.kind != Value::Kind::kSum || value.sum < 0 || stored_.count(value.sum)) continue;
      UnstoredSum u;
      u.variable = llvm::cast<clang::NamedDecl>(decl)->getNameAsString();
      u.where = locator_.at(decl->getLocation());
      u.products = products_of(value.sum);
      tile_.unstored.push_back(std::move(u));
    }
    std::sort(tile_.unstored.begin(), tile_.unstored.end(), [](const UnstoredSum& a, const UnstoredSum& b) {
      return std::make_pair(a.where.line, a.where.column) < std::make_pair(b.where.line, b.where.column);
    });
  }

  bool failed() const { return failed_; }

 private:
  void fail(clang::SourceLocation loc, const std::string& what) {
    errors_.push_back({locator_.at(loc), fmt::format("{} in {}", what, fn_.getNameAsString())});
    failed_ = true;
  }

  std::string snippet(clang::SourceRange range) const {
    const llvm::StringRef text = clang::Lexer::getSourceText(clang::CharSourceRange::getTokenRange(range),
                                                             ctx_.getSourceManager(), ctx_.getLangOpts());
    std::string out;
    for (char ch : text) {
      if (ch == '\n' || ch == '\t') ch = ' ';
      if (ch == ' ' && !out.empty() && out.back() == ' ') continue;
      out += ch;
    }
    if (out.size() > kMaxSnippet) out = out.substr(0, kMaxSnippet) + "...";
    return out;
  }

  void unrecognised(const clang::Stmt* s, const char* what) {
    fail(s->getBeginLoc(), fmt::format("unrecognised {} '{}'", what, snippet(s->getSourceRange())));
  }

  void execute(const clang::Stmt* s) {
    if (failed_) return;
    if (const auto* block = llvm::dyn_cast<clang::CompoundStmt>(s)) {
      for (const clang::Stmt* child : block->body()) execute(child);
      return;
    }
    if (llvm::isa<clang::NullStmt>(s)) return;
    ++tile_.statements;
    statement_ = s->getBeginLoc();
    if (const auto* decls = llvm::dyn_cast<clang::DeclStmt>(s)) {
      for (const clang::Decl* d : decls->decls()) {
        const auto* v = llvm::dyn_cast<clang::VarDecl>(d);
        if (!v || !v->isLocalVarDecl() || v->isStaticLocal() || !is_float(v->getType()) ||
            v->getType().isVolatileQualified()) {
          unrecognised(s, "declaration (only float registers are expected)");
          return;
        }
        Value value;
        if (v->hasInit()) value = evaluate(v->getInit());
        if (failed_) return;
        registers_[v] = value;
      }
      return;
    }
    const auto* e = llvm::dyn_cast<clang::Expr>(s);
    if (!e) {
      unrecognised(s, "statement");
      return;
    }
    if (const auto* cleanups = llvm::dyn_cast<clang::ExprWithCleanups>(e)) e = cleanups->getSubExpr();
    e = e->IgnoreParens();
    if (const auto* cast = llvm::dyn_cast<clang::ExplicitCastExpr>(e)) {
      // (void)b: silences an unused parameter.
      if (cast->getType()->isVoidType() && as_param(cast->getSubExpr())) return;
      unrecognised(s, "statement");
      return;
    }
    const auto* assign = llvm::dyn_cast<clang::BinaryOperator>(e);
    if (!assign || assign->getOpcode() != clang::BO_Assign) {
      unrecognised(s, "statement");
      return;
    }
    const clang::Expr* lhs = assign->getLHS()->IgnoreParens();
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(lhs)) {
      const auto it = registers_.find(ref->getDecl());
      if (it == registers_.end()) {
        unrecognised(s, "assignment (not to a float register of the function)");
        return;
      }
      const Value value = evaluate(assign->getRHS());
      if (!failed_) it->second = value;
      return;
    }
    const std::optional<int64_t> row = offset_from(c_, lhs, /*through_subscript=*/true);
    if (!row) {
      unrecognised(s, "assignment (neither to a register nor to c[ROW * n])");
      return;
    }
    const Value value = evaluate(assign->getRHS());
    if (failed_) return;
    if (value.kind != Value::Kind::kSum) {
      fail(assign->getRHS()->getBeginLoc(),
           fmt::format("the value stored to row {} of C is not a sum of products ('{}')", *row,
                       snippet(assign->getRHS()->getSourceRange())));
      return;
    }
    AnalyzedStore store;
    store.row = *row;
    store.where = locator_.at(assign->getBeginLoc());
    store.products = products_of(value.sum);
    if (value.sum >= 0) stored_.insert(value.sum);
    tile_.stores.push_back(std::move(store));
  }

  std::vector<AnalyzedProduct> products_of(int32_t sum) const {
    std::vector<AnalyzedProduct> out;
    for (int32_t p = sum; p >= 0; p = nodes_[static_cast<size_t>(p)].previous)
      out.push_back(nodes_[static_cast<size_t>(p)].product);
    std::reverse(out.begin(), out.end());
    return out;
  }

  // `K * n` (or `n * K`, or a constant 0) with K an integer constant: K.
  std::optional<int64_t> multiple_of_n(const clang::Expr* e) const {
    e = strip(e);
    if (const auto* mul = llvm::dyn_cast<clang::BinaryOperator>(e); mul && mul->getOpcode() == clang::BO_Mul) {
      const clang::Expr* factor = nullptr;
      if (as_param(mul->getRHS()) == n_) factor = mul->getLHS();
      else if (as_param(mul->getLHS()) == n_) factor = mul->getRHS();
      if (!factor) return std::nullopt;
      clang::Expr::EvalResult k;
      if (!factor->EvaluateAsInt(k, ctx_)) return std::nullopt;
      return k.Val.getInt().getExtValue();
    }
    clang::Expr::EvalResult zero;
    if (e->getType()->isIntegerType() && e->EvaluateAsInt(zero, ctx_) && zero.Val.getInt() == 0) return 0;
    return std::nullopt;
  }

  // The row index K of an address `p + K * n` (or `p`, or `&p[K * n]`) or, through_subscript,
  // of an element `p[K * n]` or `*(p + K * n)`.
  std::optional<int64_t> offset_from(const clang::ParmVarDecl* p, const clang::Expr* e, bool through_subscript) const {
    e = e->IgnoreParens();
    if (through_subscript) {
      if (const auto* sub = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
        if (as_param(sub->getBase()) != p) return std::nullopt;
        return multiple_of_n(sub->getIdx());
      }
      if (const auto* deref = llvm::dyn_cast<clang::UnaryOperator>(e); deref && deref->getOpcode() == clang::UO_Deref)
        return offset_from(p, deref->getSubExpr(), false);
      return std::nullopt;
    }
    e = strip(e);
    if (as_param(e) == p) return 0;
    if (const auto* add = llvm::dyn_cast<clang::BinaryOperator>(e); add && add->getOpcode() == clang::BO_Add) {
      if (as_param(add->getLHS()) == p) return multiple_of_n(add->getRHS());
      if (as_param(add->getRHS()) == p) return multiple_of_n(add->getLHS());
      return std::nullopt;
    }
    if (const auto* address = llvm::dyn_cast<clang::UnaryOperator>(e); address && address->getOpcode() == clang::UO_AddrOf)
      return offset_from(p, address->getSubExpr(), true);
    return std::nullopt;
  }

  Value load(int64_t column) {
    ++tile_.loads;
    loads_.push_back({column});
    Value v;
    v.kind = Value::Kind::kColumn;
    v.load = static_cast<int32_t>(loads_.size() - 1);
    return v;
  }

  // A float constant (any constant expression of type float, e.g. -0x1.8p-3f), exactly.
  std::optional<float> constant(const clang::Expr* e) const {
    if (!is_float(e->getType()) || e->HasSideEffects(ctx_)) return std::nullopt;
    llvm::APFloat value(0.0f);
    if (!e->EvaluateAsFloat(value, ctx_)) return std::nullopt;
    if (&value.getSemantics() != &llvm::APFloat::IEEEsingle()) return std::nullopt;
    return value.convertToFloat();
  }

  Value evaluate(const clang::Expr* e) {
    Value unset;
    if (failed_) return unset;
    if (const auto* cleanups = llvm::dyn_cast<clang::ExprWithCleanups>(e)) e = cleanups->getSubExpr();
    if (const std::optional<float> c = constant(e)) {
      // Only +0.0f starts a sum: any other constant would be added to every product.
      if (std::signbit(*c) || *c != 0.0f) {
        fail(e->getBeginLoc(), fmt::format("unrecognised constant '{}' (only 0.0f starts a sum)", snippet(e->getSourceRange())));
        return unset;
      }
      Value zero;
      zero.kind = Value::Kind::kSum;
      return zero;
    }
    const clang::Expr* bare = e->IgnoreParens();
    while (const auto* cast = llvm::dyn_cast<clang::ImplicitCastExpr>(bare)) {
      if (cast->getCastKind() != clang::CK_LValueToRValue && cast->getCastKind() != clang::CK_NoOp) break;
      bare = cast->getSubExpr()->IgnoreParens();
    }
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(bare)) {
      const auto it = registers_.find(ref->getDecl());
      if (it == registers_.end()) {
        unrecognised(e, "expression (not a float register of the function)");
        return unset;
      }
      if (it->second.kind == Value::Kind::kUnset) {
        fail(e->getBeginLoc(), fmt::format("'{}' is read before it is assigned", ref->getDecl()->getNameAsString()));
        return unset;
      }
      return it->second;
    }
    if (const auto* call = llvm::dyn_cast<clang::CallExpr>(bare)) {
      const std::string name = callee_name(call);
      if (name == "__ldg" && call->getNumArgs() == 1) {
        const std::optional<int64_t> column = offset_from(b_, call->getArg(0), false);
        if (!column) {
          unrecognised(e, "load (expected __ldg(b + COL * n))");
          return unset;
        }
        return load(*column);
      }
      if ((name == "fmaf" || name == "__fmaf_rn") && call->getNumArgs() == 3) return fma(call);
      unrecognised(e, "call");
      return unset;
    }
    if (const std::optional<int64_t> column = offset_from(b_, bare, true)) return load(*column);
    unrecognised(e, "expression");
    return unset;
  }

  // fmaf(VALUE, x, acc) or fmaf(x, VALUE, acc): appends A(., column of x) = VALUE to acc's sum.
  Value fma(const clang::CallExpr* call) {
    Value unset;
    std::optional<float> weight = constant(call->getArg(0));
    const clang::Expr* operand = call->getArg(1);
    if (!weight) {
      weight = constant(call->getArg(1));
      operand = call->getArg(0);
    }
    if (!weight) {
      fail(call->getBeginLoc(), fmt::format("neither factor of '{}' is a constant", snippet(call->getSourceRange())));
      return unset;
    }
    const Value x = evaluate(operand);
    if (failed_) return unset;
    if (x.kind != Value::Kind::kColumn) {
      fail(operand->getBeginLoc(), fmt::format("the factor '{}' does not hold a loaded element of B",
                                               snippet(operand->getSourceRange())));
      return unset;
    }
    const Value acc = evaluate(call->getArg(2));
    if (failed_) return unset;
    if (acc.kind != Value::Kind::kSum) {
      fail(call->getArg(2)->getBeginLoc(), fmt::format("the addend '{}' is not a sum of products",
                                                       snippet(call->getArg(2)->getSourceRange())));
      return unset;
    }
    Load& l = loads_[static_cast<size_t>(x.load)];
    l.used = true;
    ++tile_.fmas;
    ProductNode node{acc.sum, {l.column, *weight, locator_.at(statement_)}};
    nodes_.push_back(std::move(node));
    Value sum;
    sum.kind = Value::Kind::kSum;
    sum.sum = static_cast<int32_t>(nodes_.size() - 1);
    return sum;
  }

  clang::ASTContext& ctx_;
  const Locator& locator_;
  const clang::FunctionDecl& fn_;
  AnalyzedTile& tile_;
  std::vector<CodeDiagnostic>& errors_;
  const clang::ParmVarDecl* b_ = nullptr;
  const clang::ParmVarDecl* c_ = nullptr;
  const clang::ParmVarDecl* n_ = nullptr;
  std::unordered_map<const clang::Decl*, Value> registers_;
  std::vector<Load> loads_;
  std::vector<ProductNode> nodes_;
  std::set<int32_t> stored_;         // sums some store wrote
  clang::SourceLocation statement_;  // the statement being executed
  bool failed_ = false;
};

// ---- the translation unit -----------------------------------------------------------------

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

// Every switch and every call inside a function body.
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
  std::vector<clang::SwitchStmt*> switches;
  std::vector<clang::CallExpr*> calls;
};

// blockIdx.x
bool is_block_index_x(const clang::Expr* e) {
  const auto* member = llvm::dyn_cast_or_null<clang::MemberExpr>(strip(e));
  if (!member || member->getMemberDecl()->getName() != "x") return false;
  const auto* base = llvm::dyn_cast<clang::DeclRefExpr>(strip(member->getBase()));
  return base && base->getDecl()->getName() == "blockIdx";
}

class KernelWalker {
 public:
  KernelWalker(clang::ASTContext& ctx, const Locator& locator, EmittedKernelAnalysis& out)
      : ctx_(ctx), sm_(ctx.getSourceManager()), locator_(locator), out_(out) {}

  void run() {
    TopLevelDecls top(sm_);
    top.TraverseDecl(ctx_.getTranslationUnitDecl());
    read_info(top.variables);
    const clang::FunctionDecl* kernel = find_kernel(top.functions);
    if (!kernel) return;
    if (!find_grid(top.functions, kernel)) return;
    if (!read_dispatch(kernel)) return;
    for (const clang::FunctionDecl* f : top.functions) {
      if (f == kernel || !f->hasAttr<clang::CUDADeviceAttr>() || tile_index_.count(f)) continue;
      out_.notes.push_back(fmt::format("{}: {} is defined but no block calls it", locator_.at(f->getLocation()).str(),
                                       f->getNameAsString()));
      AnalyzedTile tile;
      std::vector<CodeDiagnostic> ignored;
      TileInterpreter interpreter(ctx_, locator_, *f, tile, ignored);
      interpreter.run();
      if (!interpreter.failed()) out_.uncalled_tiles.push_back(std::move(tile));
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

  const clang::FunctionDecl* find_kernel(const std::vector<clang::FunctionDecl*>& functions) {
    std::vector<const clang::FunctionDecl*> kernels;
    for (const clang::FunctionDecl* f : functions)
      if (f->hasAttr<clang::CUDAGlobalAttr>()) kernels.push_back(f);
    if (kernels.size() != 1) {
      error({}, fmt::format("expected one __global__ function, found {}", kernels.size()));
      return nullptr;
    }
    out_.kernel = kernels[0]->getNameAsString();
    out_.kernel_where = locator_.at(kernels[0]->getLocation());
    return kernels[0];
  }

  // The x extent of a dim3 argument: dim3(X, ...), a dim3 variable initialised so, or an integer.
  std::optional<int64_t> grid_x_of(const clang::Expr* e) const {
    for (int depth = 0; e && depth < 8; ++depth) {
      e = e->IgnoreImplicit()->IgnoreParens();
      if (const auto* construct = llvm::dyn_cast<clang::CXXConstructExpr>(e)) {
        if (construct->getNumArgs() == 0) return 1;
        if (construct->getConstructor()->isCopyOrMoveConstructor()) {
          e = construct->getArg(0);
          continue;
        }
        e = construct->getArg(0);
        break;
      }
      if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
        const auto* v = llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
        if (!v || !v->hasInit() || !v->getType()->isRecordType()) break;
        e = v->getInit();
        continue;
      }
      if (const auto* cast = llvm::dyn_cast<clang::ExplicitCastExpr>(e); cast && cast->getType()->isRecordType()) {
        e = cast->getSubExpr();
        continue;
      }
      break;
    }
    clang::Expr::EvalResult x;
    if (!e || !e->getType()->isIntegerType() || !e->EvaluateAsInt(x, ctx_)) return std::nullopt;
    return x.Val.getInt().getExtValue();
  }

  // The cudaLaunchKernel(&kernel, grid, ...) call of the host entry point: the grid's x extent.
  bool find_grid(const std::vector<clang::FunctionDecl*>& functions, const clang::FunctionDecl* kernel) {
    std::vector<const clang::CallExpr*> launches;
    for (clang::FunctionDecl* f : functions) {
      if (f == kernel || f->hasAttr<clang::CUDADeviceAttr>()) continue;
      BodyScan scan;
      scan.TraverseStmt(f->getBody());
      for (const clang::CallExpr* call : scan.calls)
        if (callee_name(call) == "cudaLaunchKernel") launches.push_back(call);
    }
    if (launches.size() != 1) {
      error({}, fmt::format("expected one cudaLaunchKernel call in the host code, found {}", launches.size()));
      return false;
    }
    const clang::CallExpr* launch = launches[0];
    const auto* target = llvm::dyn_cast<clang::DeclRefExpr>(launch->getArg(0)->IgnoreParenCasts());
    if (!target) {
      const auto* address = llvm::dyn_cast<clang::UnaryOperator>(launch->getArg(0)->IgnoreParenCasts());
      if (address && address->getOpcode() == clang::UO_AddrOf)
        target = llvm::dyn_cast<clang::DeclRefExpr>(address->getSubExpr()->IgnoreParenCasts());
    }
    if (!target || target->getDecl()->getCanonicalDecl() != kernel->getCanonicalDecl()) {
      error(launch->getBeginLoc(), fmt::format("the launch does not launch {}", out_.kernel));
      return false;
    }
    const std::optional<int64_t> x = launch->getNumArgs() > 1 ? grid_x_of(launch->getArg(1)) : std::nullopt;
    if (!x) {
      error(launch->getBeginLoc(), "cannot tell the grid's x extent (expected dim3 grid(CONSTANT, ...))");
      return false;
    }
    if (*x < 1 || *x > kMaxBlocks) {
      error(launch->getBeginLoc(), fmt::format("the grid has {} blocks along x", *x));
      return false;
    }
    out_.grid_x = *x;
    return true;
  }

  // One step of the switch body, flattened: case labels, calls and breaks in source order.
  struct Step {
    enum class Kind { kCase, kDefault, kCall, kBreak } kind;
    int64_t value = 0;  // kCase: the label; kCall: the tile index
    clang::SourceLocation loc;
  };

  bool flatten(const clang::Stmt* s, std::vector<Step>& steps) {
    if (const auto* c = llvm::dyn_cast<clang::CaseStmt>(s)) {
      clang::Expr::EvalResult label;
      if (c->getRHS() || !c->getLHS()->EvaluateAsInt(label, ctx_)) {
        error(c->getBeginLoc(), "unrecognised case label in the dispatch");
        return false;
      }
      steps.push_back({Step::Kind::kCase, label.Val.getInt().getExtValue(), c->getBeginLoc()});
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
      error(s->getBeginLoc(), "unrecognised statement in the dispatch (expected case K: tile_K(B + col, C + col, n); break;)");
      return false;
    }
    const std::optional<int32_t> tile = tile_of_call(call);
    if (!tile) return false;
    steps.push_back({Step::Kind::kCall, *tile, call->getBeginLoc()});
    return true;
  }

  // P + col for the kernel's parameter P and the same `col` in both pointer arguments.
  bool is_param_plus(const clang::Expr* e, const clang::ParmVarDecl* p, const clang::ValueDecl*& col) const {
    const auto* add = llvm::dyn_cast<clang::BinaryOperator>(strip(e));
    if (!add || add->getOpcode() != clang::BO_Add || as_param(add->getLHS()) != p) return false;
    const auto* offset = llvm::dyn_cast<clang::DeclRefExpr>(strip(add->getRHS()));
    if (!offset || (col && offset->getDecl() != col)) return false;
    col = offset->getDecl();
    return true;
  }

  std::optional<int32_t> tile_of_call(const clang::CallExpr* call) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    const clang::FunctionDecl* def = callee ? callee->getDefinition() : nullptr;
    if (!def || !sm_.isInMainFile(sm_.getExpansionLoc(def->getLocation())) || def->hasAttr<clang::CUDAGlobalAttr>()) {
      error(call->getBeginLoc(), "the dispatch calls something other than a tile function of this file");
      return std::nullopt;
    }
    const clang::ValueDecl* col = nullptr;
    if (call->getNumArgs() != 3 || kernel_->getNumParams() != 3 ||
        !is_param_plus(call->getArg(0), kernel_->getParamDecl(0), col) ||
        !is_param_plus(call->getArg(1), kernel_->getParamDecl(1), col) || as_param(call->getArg(2)) != kernel_->getParamDecl(2)) {
      error(call->getBeginLoc(), fmt::format("unrecognised arguments of {} (expected B + col, C + col, n)", def->getNameAsString()));
      return std::nullopt;
    }
    const auto it = tile_index_.find(def);
    if (it != tile_index_.end()) return it->second;
    const int32_t index = static_cast<int32_t>(out_.tiles.size());
    tile_index_[def] = index;
    out_.tiles.emplace_back();
    unsorted_names_.push_back(def->getNameAsString());
    AnalyzedTile tile;
    TileInterpreter(ctx_, locator_, *def, tile, out_.errors).run();
    out_.tiles[static_cast<size_t>(index)] = std::move(tile);
    return index;
  }

  bool read_dispatch(const clang::FunctionDecl* kernel) {
    kernel_ = kernel;
    BodyScan scan;
    scan.TraverseStmt(kernel->getBody());
    std::vector<const clang::SwitchStmt*> dispatch;
    for (const clang::SwitchStmt* s : scan.switches)
      if (is_block_index_x(s->getCond())) dispatch.push_back(s);
    if (dispatch.size() != 1) {
      error(kernel->getLocation(), fmt::format("expected one switch (blockIdx.x) in {}, found {}", out_.kernel, dispatch.size()));
      return false;
    }
    // Calls outside the switch would run in every block.
    BodyScan inside;
    inside.TraverseStmt(const_cast<clang::SwitchStmt*>(dispatch[0]));
    const std::set<const clang::CallExpr*> dispatched(inside.calls.begin(), inside.calls.end());
    for (const clang::CallExpr* call : scan.calls)
      if (!dispatched.count(call)) {
        error(call->getBeginLoc(), fmt::format("a call in {} outside its switch (blockIdx.x)", out_.kernel));
        return false;
      }
    std::vector<Step> steps;
    const size_t errors_before = out_.errors.size();
    if (!flatten(dispatch[0]->getBody(), steps)) return false;
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
        const std::map<std::string, InfoField<std::string>*> strings = {{"name", &info.name},
                                                                        {"weights_sha256", &info.weights_sha256}};
        if (const auto it = integers.find(name); it != integers.end()) {
          it->second->where = locator_.at(init->getBeginLoc());
          clang::Expr::EvalResult value;
          if (init->EvaluateAsInt(value, ctx_)) it->second->value = value.Val.getInt().getExtValue();
        } else if (const auto jt = strings.find(name); jt != strings.end()) {
          jt->second->where = locator_.at(init->getBeginLoc());
          if (const auto* text = llvm::dyn_cast<clang::StringLiteral>(init->IgnoreParenImpCasts()))
            jt->second->value = text->getString().str();
        }
      }
    }
  }

  clang::ASTContext& ctx_;
  const clang::SourceManager& sm_;
  const Locator& locator_;
  EmittedKernelAnalysis& out_;
  const clang::FunctionDecl* kernel_ = nullptr;
  std::map<const clang::FunctionDecl*, int32_t> tile_index_;
  std::vector<std::string> unsorted_names_;
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
      Locator locator(ctx.getSourceManager(), out_.file);
      KernelWalker(ctx, locator, out_).run();
    } catch (const std::exception& e) {
      out_.errors.push_back({CodeLocation{out_.file, 0, 0}, fmt::format("internal error while analysing: {}", e.what())});
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

std::string CodeLocation::str() const {
  if (file.empty()) return {};
  if (line <= 0) return file;
  if (column <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, column);
}

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
  for (const char* name : {"cuda_runtime.h", "stdint.h", "spmmc_kernel_info.h"}) {
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
  ErrorCollector collector(out.errors, cu_path);
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
