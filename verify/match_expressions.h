// Expression matching for `spmmc verify` (internal to verify/): what the AST walk asks of a C++
// expression of the emitted code. Constants are evaluated by Clang (integer and float constant
// expressions, exactly); integer index arithmetic is read as a linear form over named symbols
// (the kernel's parameters, its loop variable, threadIdx.x, blockIdx.y, gridDim.y), const locals
// being replaced by their initialisers, so that `col = bt * spmmc_n1 + threadIdx.x * spmmc_v`
// reads as {bt: 64, threadIdx.x: 2} whatever the spelling.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>

#include "compiler/common/dtype.h"

namespace spmmc::verify_detail {

// Parentheses and implicit casts removed.
const clang::Expr* strip(const clang::Expr* e);
bool is_float(clang::QualType type);
// The dtype whose element `type` is (cv-qualifiers aside): float (fp32), __half (fp16) or
// __nv_bfloat16 (bf16), the types of cuda_fp16.h and cuda_bf16.h; nullopt for any other.
std::optional<DType> element_dtype(clang::QualType type);
// The parameter `e` names (through parentheses and implicit casts), or null.
const clang::ParmVarDecl* as_param(const clang::Expr* e);
// The local or parameter `e` names, or null.
const clang::VarDecl* as_variable(const clang::Expr* e);
// The name of the function a call calls directly ("" if none).
std::string callee_name(const clang::CallExpr* call);
// `object.field` of a CUDA built-in (blockIdx.x, gridDim.y, ...).
bool is_builtin_member(const clang::Expr* e, const char* object, const char* field);
// An integer constant expression's value.
std::optional<int64_t> integer_constant(const clang::Expr* e, const clang::ASTContext& ctx);
// The function `&f`, `f`, or a cast of either names (the first argument of cudaLaunchKernel).
const clang::FunctionDecl* function_named(const clang::Expr* e);
// The x extent of a dim3 argument: dim3(X, ...), a dim3 variable initialised so, or an integer.
std::optional<int64_t> dim3_x(const clang::Expr* e, const clang::ASTContext& ctx);
// The expression X of such a dim3 argument (null for dim3(), whose x is 1).
const clang::Expr* dim3_x_expression(const clang::Expr* e);

// sum(terms[s] * s) + constant over symbols s: "n", "bt", "threadIdx.x", ... (see symbol_of).
struct LinearForm {
  std::map<std::string, int64_t> terms;  // no zero coefficients
  int64_t constant = 0;

  bool operator==(const LinearForm& other) const { return terms == other.terms && constant == other.constant; }
  bool operator!=(const LinearForm& other) const { return !(*this == other); }
  int64_t coefficient(const std::string& symbol) const;
  std::string str() const;  // "64*bt + 2*threadIdx.x"
};

// The symbol of a variable in linear forms (its name; a parameter and a local of one function
// never share one).
std::string symbol_of(const clang::ValueDecl* d);

// `e` as a linear form: integer constants; + - and * by a constant; casts between integer types
// (values are assumed to fit, as the entry point's checks of n guarantee); parameters and
// non-const variables as symbols; const locals replaced by their initialisers; blockIdx.x etc.
// as the symbol "blockIdx.x". Anything else: nullopt.
std::optional<LinearForm> linear_form(const clang::Expr* e, const clang::ASTContext& ctx);

// d when `e` is (x + (d - 1)) / d for the linear form x = `numerator` (in any spelling of the
// addition, e.g. (n + spmmc_n1 - 1) / spmmc_n1), through const locals; else nullopt.
std::optional<int64_t> ceil_division(const clang::Expr* e, const LinearForm& numerator, const clang::ASTContext& ctx);

// The expression a const local stands for (itself otherwise), through implicit casts.
const clang::Expr* through_const_locals(const clang::Expr* e);

// True when `e` might write memory or a variable (an assignment, ++/--, a call, ...).
bool has_side_effects(const clang::Expr* e, const clang::ASTContext& ctx);

}  // namespace spmmc::verify_detail
