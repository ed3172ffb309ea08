#include "verify/match_expressions.h"

#include <clang/AST/ExprCXX.h>
#include <fmt/format.h>

namespace spmmc::verify_detail {
namespace {

constexpr int kMaxDepth = 16;

bool checked_add(int64_t a, int64_t b, int64_t& out) { return !__builtin_add_overflow(a, b, &out); }
bool checked_mul(int64_t a, int64_t b, int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

// a + sign * b
std::optional<LinearForm> combine(const LinearForm& a, const LinearForm& b, int64_t sign) {
  LinearForm out = a;
  int64_t scaled = 0;
  if (!checked_mul(b.constant, sign, scaled) || !checked_add(out.constant, scaled, out.constant)) return std::nullopt;
  for (const auto& [symbol, c] : b.terms) {
    int64_t term = 0, sum = 0;
    if (!checked_mul(c, sign, term) || !checked_add(out.terms[symbol], term, sum)) return std::nullopt;
    if (sum == 0) out.terms.erase(symbol);
    else out.terms[symbol] = sum;
  }
  return out;
}

std::optional<LinearForm> scale(const LinearForm& a, int64_t k) {
  LinearForm out;
  if (k == 0) return out;
  if (!checked_mul(a.constant, k, out.constant)) return std::nullopt;
  for (const auto& [symbol, c] : a.terms) {
    int64_t term = 0;
    if (!checked_mul(c, k, term)) return std::nullopt;
    out.terms[symbol] = term;
  }
  return out;
}

// A local variable that cannot change after its initialisation: const, not volatile, initialised.
const clang::VarDecl* const_local(const clang::Expr* e) {
  const clang::VarDecl* v = as_variable(e);
  if (!v || llvm::isa<clang::ParmVarDecl>(v) || !v->isLocalVarDecl() || !v->hasInit()) return nullptr;
  const clang::QualType t = v->getType();
  if (!t.isConstQualified() || t.isVolatileQualified()) return nullptr;
  return v;
}

std::optional<LinearForm> linear(const clang::Expr* e, const clang::ASTContext& ctx, int depth) {
  if (!e || depth > kMaxDepth) return std::nullopt;
  e = e->IgnoreParens();
  if (e->getType()->isIntegralOrEnumerationType() && !e->isValueDependent()) {
    clang::Expr::EvalResult r;
    if (!e->HasSideEffects(ctx) && e->EvaluateAsInt(r, ctx)) {
      LinearForm f;
      if (r.Val.getInt().getMinSignedBits() > 64) return std::nullopt;
      f.constant = r.Val.getInt().getExtValue();
      return f;
    }
  }
  if (const auto* cast = llvm::dyn_cast<clang::CastExpr>(e)) {
    const clang::CastKind k = cast->getCastKind();
    if ((k == clang::CK_LValueToRValue || k == clang::CK_IntegralCast || k == clang::CK_NoOp) &&
        cast->getType()->isIntegralOrEnumerationType())
      return linear(cast->getSubExpr(), ctx, depth + 1);
    return std::nullopt;
  }
  if (const auto* member = llvm::dyn_cast<clang::MemberExpr>(e)) {
    for (const char* object : {"threadIdx", "blockIdx", "gridDim", "blockDim"})
      for (const char* field : {"x", "y", "z"})
        if (is_builtin_member(member, object, field)) {
          LinearForm f;
          f.terms[fmt::format("{}.{}", object, field)] = 1;
          return f;
        }
    return std::nullopt;
  }
  if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
    if (const clang::VarDecl* local = const_local(ref)) return linear(local->getInit(), ctx, depth + 1);
    const auto* v = llvm::dyn_cast<clang::VarDecl>(ref->getDecl());
    if (!v || !v->getType()->isIntegralOrEnumerationType()) return std::nullopt;
    LinearForm f;
    f.terms[symbol_of(v)] = 1;
    return f;
  }
  if (const auto* op = llvm::dyn_cast<clang::BinaryOperator>(e)) {
    const auto lhs = linear(op->getLHS(), ctx, depth + 1);
    const auto rhs = linear(op->getRHS(), ctx, depth + 1);
    if (!lhs || !rhs) return std::nullopt;
    switch (op->getOpcode()) {
      case clang::BO_Add: return combine(*lhs, *rhs, 1);
      case clang::BO_Sub: return combine(*lhs, *rhs, -1);
      case clang::BO_Mul:
        if (lhs->terms.empty()) return scale(*rhs, lhs->constant);
        if (rhs->terms.empty()) return scale(*lhs, rhs->constant);
        return std::nullopt;
      default: return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

const clang::Expr* strip(const clang::Expr* e) { return e ? e->IgnoreParenImpCasts() : nullptr; }

bool is_float(clang::QualType type) { return type.getCanonicalType()->isSpecificBuiltinType(clang::BuiltinType::Float); }

std::optional<DType> element_dtype(clang::QualType type) {
  if (type.isNull()) return std::nullopt;
  const clang::QualType canonical = type.getCanonicalType();
  if (canonical->isSpecificBuiltinType(clang::BuiltinType::Float)) return DType::kFp32;
  const clang::RecordDecl* record = canonical->getAsRecordDecl();
  if (!record || !record->getDeclContext()->isTranslationUnit() || !record->getIdentifier()) return std::nullopt;
  if (record->getName() == "__half") return DType::kFp16;
  if (record->getName() == "__nv_bfloat16") return DType::kBf16;
  return std::nullopt;
}

const clang::ParmVarDecl* as_param(const clang::Expr* e) {
  const auto* ref = llvm::dyn_cast_or_null<clang::DeclRefExpr>(strip(e));
  return ref ? llvm::dyn_cast<clang::ParmVarDecl>(ref->getDecl()) : nullptr;
}

const clang::VarDecl* as_variable(const clang::Expr* e) {
  const auto* ref = llvm::dyn_cast_or_null<clang::DeclRefExpr>(strip(e));
  return ref ? llvm::dyn_cast<clang::VarDecl>(ref->getDecl()) : nullptr;
}

std::string callee_name(const clang::CallExpr* call) {
  const clang::FunctionDecl* f = call->getDirectCallee();
  return f && f->getDeclName().isIdentifier() ? f->getName().str() : std::string();
}

bool is_builtin_member(const clang::Expr* e, const char* object, const char* field) {
  const auto* member = llvm::dyn_cast_or_null<clang::MemberExpr>(strip(e));
  if (!member || !member->getMemberDecl()->getDeclName().isIdentifier() || member->getMemberDecl()->getName() != field)
    return false;
  const auto* base = llvm::dyn_cast<clang::DeclRefExpr>(strip(member->getBase()));
  return base && base->getDecl()->getDeclName().isIdentifier() && base->getDecl()->getName() == object;
}

std::optional<int64_t> integer_constant(const clang::Expr* e, const clang::ASTContext& ctx) {
  clang::Expr::EvalResult r;
  if (!e || !e->getType()->isIntegralOrEnumerationType() || e->isValueDependent() || !e->EvaluateAsInt(r, ctx))
    return std::nullopt;
  if (r.Val.getInt().getMinSignedBits() > 64) return std::nullopt;
  return r.Val.getInt().getExtValue();
}

const clang::FunctionDecl* function_named(const clang::Expr* e) {
  if (!e) return nullptr;
  e = e->IgnoreParenCasts();
  if (const auto* address = llvm::dyn_cast<clang::UnaryOperator>(e); address && address->getOpcode() == clang::UO_AddrOf)
    e = address->getSubExpr()->IgnoreParenCasts();
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(e);
  return ref ? llvm::dyn_cast<clang::FunctionDecl>(ref->getDecl()) : nullptr;
}

const clang::Expr* dim3_x_expression(const clang::Expr* e) {
  for (int depth = 0; e && depth < 8; ++depth) {
    e = e->IgnoreImplicit()->IgnoreParens();
    if (const auto* construct = llvm::dyn_cast<clang::CXXConstructExpr>(e)) {
      if (construct->getNumArgs() == 0) return nullptr;
      e = construct->getArg(0);
      if (!construct->getConstructor()->isCopyOrMoveConstructor()) break;
      continue;
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
  return e;
}

std::optional<int64_t> dim3_x(const clang::Expr* e, const clang::ASTContext& ctx) {
  if (!e) return std::nullopt;
  const clang::Expr* x = dim3_x_expression(e);
  if (!x) return 1;  // dim3()
  if (x->isValueDependent()) return std::nullopt;
  return integer_constant(x, ctx);
}

int64_t LinearForm::coefficient(const std::string& symbol) const {
  const auto it = terms.find(symbol);
  return it == terms.end() ? 0 : it->second;
}

std::string LinearForm::str() const {
  std::string out;
  for (const auto& [symbol, c] : terms) {
    if (!out.empty()) out += c < 0 ? " - " : " + ";
    else if (c < 0) out += "-";
    const int64_t magnitude = c < 0 ? -c : c;
    out += magnitude == 1 ? symbol : fmt::format("{}*{}", magnitude, symbol);
  }
  if (constant != 0 || out.empty()) {
    if (out.empty()) out = std::to_string(constant);
    else out += fmt::format(" {} {}", constant < 0 ? "-" : "+", constant < 0 ? -constant : constant);
  }
  return out;
}

std::string symbol_of(const clang::ValueDecl* d) { return d->getNameAsString(); }

std::optional<LinearForm> linear_form(const clang::Expr* e, const clang::ASTContext& ctx) { return linear(e, ctx, 0); }

const clang::Expr* through_const_locals(const clang::Expr* e) {
  e = strip(e);
  for (int depth = 0; e && depth < kMaxDepth; ++depth) {
    const clang::VarDecl* local = const_local(e);
    if (!local) break;
    e = strip(local->getInit());
  }
  return e;
}

std::optional<int64_t> ceil_division(const clang::Expr* e, const LinearForm& numerator, const clang::ASTContext& ctx) {
  const auto* div = llvm::dyn_cast_or_null<clang::BinaryOperator>(through_const_locals(e));
  if (!div || div->getOpcode() != clang::BO_Div) return std::nullopt;
  const std::optional<int64_t> d = integer_constant(div->getRHS(), ctx);
  const std::optional<LinearForm> top = linear_form(div->getLHS(), ctx);
  if (!d || *d < 1 || !top) return std::nullopt;
  LinearForm want = numerator;
  want.constant += *d - 1;
  if (*top != want) return std::nullopt;
  return d;
}

bool has_side_effects(const clang::Expr* e, const clang::ASTContext& ctx) { return e && e->HasSideEffects(ctx); }

}  // namespace spmmc::verify_detail
