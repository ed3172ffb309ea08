// A host interpreter for the subset of PTX that spmmc's emitters write as inline assembly
// (codegen/print_tile_ptx.h), so that the tests' CUDA emulation (cuda_runtime.h) runs the very
// text that nvcc would hand to ptxas. Header-only; no dependency on cuda_runtime.h (the
// conversions between float and the 16-bit float formats come from half_bits.h, shared with the
// host shims cuda_fp16.h and cuda_bf16.h).
//
// A program is parsed once (parse_ptx): a tokenizer, then one statement at a time through a table
// of opcodes (opcodes() below); registers, labels and the asm operands %0..%N are resolved to
// slots at parse time, so execution (execute) is a loop over pre-decoded instructions.
// run_ptx() caches the parsed program by the address of the asm string (a string literal of the
// emitted code: static storage, one text per address), under a mutex, one cache per translation
// unit (see run_ptx).
//
// What is understood (PTX ISA names; whitespace and // or /* */ comments anywhere):
//   { }                                         scopes of declarations and labels
//   .reg .TYPE name<N>;  .reg .TYPE r, s;       TYPE: pred b16 u16 s16 f16 b32 u32 s32 f32 b64 u64 s64 f64
//   LABEL:  [@[!]p] bra[.uni] LABEL;            a label is visible in its scope and inner ones
//   [@[!]p] on any instruction                  a guard predicate
//   mov.T  add.T  sub.T  mul{.lo|.wide}.T  mad{.lo|.wide}.T    integers wrap; .wide: 32 x 32 -> 64 bits
//   add/sub/mul[.rn].fXX  fma.rn.fXX  mad.rn.fXX                  fXX: f32 or f64
//   setp.CMP.T p, a, b                          CMP: eq ne lt le gt ge (lo ls hi hs for integers)
//   mov.b32 d, {lo, hi};  mov.b32 {lo, hi}, s;  pack: d = lo | hi << 16; unpack; lo, hi: 16-bit registers
//   cvt.f32.f16  cvt.f32.bf16  d, a             exact (half_bits.h)
//   cvt.rn.f16.f32  cvt.rn.bf16.f32  d, a       round to nearest even; a NaN gives the canonical 0x7fff
//   ld[.global][.nc][cache hints][.v2|.v4].T d, [base(+|-)offset]      T of 16 or 32 bits; d: r or {r, ...}
//   st[.global][cache hints][.v2|.v4].T [base(+|-)offset], s           (.shared, .local...: abort)
//   griddepcontrol.wait                         a no-op: the emulation runs kernels in order
// 16-bit types (.b16 .u16 .s16 .f16, and .bf16 as an instruction type: ptxas declares no .bf16
// register) only in mov (an integer immediate for .b16, .u16 and .s16; none for .f16), the pack
// and unpack forms, cvt, and ld and st of .b16, .u16 or .s16 (.f16 and .bf16 are no ld/st types in
// PTX); add, sub, mul, mad, fma and setp of 16-bit types abort. Register types fit instruction
// types by PTX's rule (fits(): a .b16 register fits .f16 and .bf16 operands, an .f16 register .f16
// and .b16 ones but not .bf16; 16 bits never fit a 32-bit operand), as for 32 and 64 bits.
// Operands: registers; %0..%N, the asm's operands (64-bit for "l", 32-bit for "r"; read-only);
// %%name for a literal %name register; immediates: integers (decimal, 0x hex), 0fHHHHHHHH (f32
// bits), 0dHHHHHHHHHHHHHHHH (f64 bits), decimal floats for floating-point types of 32 and 64 bits.
//
// Semantics are exact: fma.rn is std::fmaf / std::fma (one rounding), add/sub/mul.f32 are
// IEEE single operations (the host keeps subnormals, like PTX without .ftz), integers wrap; cvt
// rounds as the GPU does, bit for bit (half_bits.h: subnormals kept, overflow to +-inf, NaN to
// the canonical NaN). Loads and stores are real host memory accesses at the computed byte
// addresses; they must be aligned to their size (E x V bytes for a .vV access of E-byte elements,
// E = 2 or 4), as a GPU faults otherwise. Optional bounds (set_memory_bounds) restrict loads to
// the given read-only and read-write ranges, ld.*.nc to the read-only one, and stores to the
// read-write one.
//
// Anything else aborts the process with a message naming the statement: an unknown opcode,
// modifier or directive (cvt: another rounding, .ftz, .sat, another pair of types); an undeclared
// register, one out of its declared range or of a type that does not fit the instruction; reading
// a register before writing it; a %N outside the operands or written to; a branch to a label not
// in scope; unbalanced braces; a misaligned, null or out-of-bounds access. A test that runs such
// code dies (SIGABRT) instead of passing.
#ifndef SPMMC_TESTS_CUDA_EMULATION_PTX_SUBSET_H
#define SPMMC_TESTS_CUDA_EMULATION_PTX_SUBSET_H

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "half_bits.h"

namespace spmmc_emulation {

// ---------------------------------------------------------------------------------------------
// Types

// kFloat: .f16 (IEEE binary16), .f32, .f64; kBFloat: .bf16 (bfloat16).
enum class Kind : uint8_t { kPred, kBits, kUnsigned, kSigned, kFloat, kBFloat };

struct PtxType {
  Kind kind = Kind::kBits;
  uint8_t bits = 32;  // 1 for .pred
};

inline bool type_from_name(const std::string& name, PtxType& t) {
  static const std::map<std::string, PtxType> kTypes = {
      {"pred", {Kind::kPred, 1}},     {"b16", {Kind::kBits, 16}},   {"u16", {Kind::kUnsigned, 16}},
      {"s16", {Kind::kSigned, 16}},   {"f16", {Kind::kFloat, 16}},  {"bf16", {Kind::kBFloat, 16}},
      {"b32", {Kind::kBits, 32}},     {"u32", {Kind::kUnsigned, 32}}, {"s32", {Kind::kSigned, 32}},
      {"f32", {Kind::kFloat, 32}},    {"b64", {Kind::kBits, 64}},   {"u64", {Kind::kUnsigned, 64}},
      {"s64", {Kind::kSigned, 64}},   {"f64", {Kind::kFloat, 64}}};
  const auto it = kTypes.find(name);
  if (it == kTypes.end()) return false;
  t = it->second;
  return true;
}

inline std::string type_name(PtxType t) {
  if (t.kind == Kind::kPred) return ".pred";
  const char* k = t.kind == Kind::kBits       ? "b"
                  : t.kind == Kind::kUnsigned ? "u"
                  : t.kind == Kind::kSigned   ? "s"
                  : t.kind == Kind::kFloat    ? "f"
                                              : "bf";
  return "." + std::string(k) + std::to_string(t.bits);
}

// The half-precision floating-point types (.f16, .bf16): only moved, loaded, stored and converted.
inline bool is_half_float(PtxType t) { return t.bits == 16 && (t.kind == Kind::kFloat || t.kind == Kind::kBFloat); }

// PTX's operand type rule: same size, and a .bN register fits any instruction type of that size,
// a .bN instruction any register of that size, .u and .s fit each other, .f only .f (of that
// size) and .bf16 only .bf16.
inline bool fits(PtxType instruction, PtxType reg) {
  if (instruction.kind == Kind::kPred || reg.kind == Kind::kPred) return instruction.kind == reg.kind;
  if (instruction.bits != reg.bits) return false;
  if (instruction.kind == Kind::kBits || reg.kind == Kind::kBits || instruction.kind == reg.kind) return true;
  const auto integer = [](Kind k) { return k == Kind::kUnsigned || k == Kind::kSigned; };
  return integer(instruction.kind) && integer(reg.kind);
}

// ---------------------------------------------------------------------------------------------
// The parsed program

enum class Op : uint8_t {
  kMov, kMovPack, kMovUnpack, kAdd, kSub, kMulLo, kMulWide, kMadLo, kMadWide, kFAdd, kFSub, kFMul, kFma, kSetp, kBra,
  kLd, kSt, kCvt, kWait
};
// The conversions of cvt: destination from source.
enum class Cvt : uint8_t { kF32FromF16, kF16FromF32, kF32FromBF16, kBF16FromF32 };
enum class Cmp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };

// A value operand: a register slot, an asm operand %N or an immediate.
struct Src {
  enum What : uint8_t { kNone, kReg, kParam, kImm } what = kNone;
  int32_t index = -1;  // register slot or operand number
  uint64_t imm = 0;    // immediate bits (low `bits` bits)
};

struct Instr {
  Op op = Op::kMov;
  PtxType type;          // the instruction's type (of its sources for setp and .wide)
  int32_t guard = -1;    // predicate slot, -1 if unguarded
  bool guard_negated = false;
  int32_t dst = -1;      // destination register slot (mov, arithmetic, setp)
  Src src[3];            // sources; for ld/st: src[0] is the address base
  int64_t offset = 0;    // address offset in bytes (ld/st)
  int32_t vec = 1;       // V of .vV (ld/st); the number of halves (mov pack/unpack)
  int32_t regs[4] = {-1, -1, -1, -1};  // registers loaded or stored (ld/st); the halves, low first (mov pack/unpack)
  bool non_coherent = false;           // ld .nc
  bool is_signed = false;              // .s32 in mul/mad.wide, and signed comparisons
  Cmp cmp = Cmp::kEq;
  Cvt cvt = Cvt::kF32FromF16;
  int32_t target = -1;   // bra: index of the next instruction to run
  std::string text;      // the statement, for messages
  int32_t line = 0;      // 1-based line of the statement in the asm text
};

struct RegisterInfo {
  std::string name;
  PtxType type;
};

struct Program {
  std::vector<Instr> code;
  std::vector<RegisterInfo> registers;
  std::vector<uint8_t> param_bits;  // sizes of %0..%N
  std::string head;                 // the first characters of the text, for messages
};

// ---------------------------------------------------------------------------------------------
// Failure: a message on stderr, then abort(), as a GPU's fault ends the process.

[[noreturn]] inline void fail(const std::string& message) {
  std::fprintf(stderr, "spmmc_emulation: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

inline std::string one_line(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '\n' || ch == '\t' ? ' ' : ch;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

inline std::string where(const Instr& in, const Program& p) {
  return "`" + in.text + "` (line " + std::to_string(in.line) + " of the PTX starting \"" + p.head + "\")";
}

// ---------------------------------------------------------------------------------------------
// Tokenizer

struct Token {
  enum Type : uint8_t { kWord, kPunct, kEnd } type = kEnd;
  std::string text;
  size_t pos = 0;
};

inline bool word_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '$' || ch == '%' || ch == '.';
}

// Words are runs of [A-Za-z0-9_$%.] (with "::" inside, as in .L1::evict_last, and an exponent's
// sign in a decimal float); every other non-blank character is a punctuation token.
inline std::vector<Token> tokenize(const std::string& text) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < text.size()) {
    const char ch = text[i];
    if (std::isspace(static_cast<unsigned char>(ch))) {
      ++i;
    } else if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      if (i == std::string::npos) i = text.size();
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      if (end == std::string::npos) fail("PTX error: unterminated /* comment in the PTX starting \"" + one_line(text.substr(0, 60)) + "\"");
      i = end + 2;
    } else if (word_char(ch)) {
      const size_t start = i;
      while (i < text.size()) {
        if (word_char(text[i])) {
          ++i;
        } else if (text.compare(i, 2, "::") == 0 && i + 2 < text.size() && word_char(text[i + 2])) {
          i += 2;
        } else if ((text[i] == '+' || text[i] == '-') && i > start && (text[i - 1] == 'e' || text[i - 1] == 'E') &&
                   std::isdigit(static_cast<unsigned char>(text[start])) && text.compare(start, 2, "0x") != 0 &&
                   text.compare(start, 2, "0X") != 0 && text.compare(start, 2, "0f") != 0 && text.compare(start, 2, "0d") != 0) {
          ++i;  // 1.5e-3
        } else {
          break;
        }
      }
      out.push_back({Token::kWord, text.substr(start, i - start), start});
    } else {
      out.push_back({Token::kPunct, std::string(1, ch), i});
      ++i;
    }
  }
  out.push_back({Token::kEnd, "", text.size()});
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parser

// A raw operand: a word, -word, {w, ...} or [w], [w+word], [w-word].
struct RawOperand {
  enum Form : uint8_t { kWord, kVector, kAddress } form = kWord;
  std::vector<std::string> words;  // the word; the vector's elements; the address base
  bool negative = false;           // -word
  std::string offset;              // address offset word
  bool offset_negative = false;
};

class Parser;
using OpcodeParser = void (*)(Parser&, Instr&, std::vector<std::string>& modifiers, std::vector<RawOperand>& operands);

class Parser {
 public:
  Parser(const std::string& text, const std::vector<uint8_t>& param_bits) : text_(text) {
    program_.param_bits = param_bits;
    program_.head = one_line(text.substr(0, 60));
    if (text.size() > 60) program_.head += "...";
  }

  Program parse();

  // Messages name the statement being parsed.
  [[noreturn]] void error(const std::string& message) const {
    fail("PTX error: " + message + " in `" + statement_text_ + "` (line " + std::to_string(statement_line_) +
         " of the PTX starting \"" + program_.head + "\")");
  }

  // A register of `type` (or fitting it) as a destination.
  int32_t dst_register(const RawOperand& o, PtxType type, const char* role);
  // A register, %N or an immediate of `type` as a source.
  Src source(const RawOperand& o, PtxType type, const char* role);
  // A predicate register.
  int32_t predicate(const std::string& name, const char* role);
  // [base], [base+imm], [base-imm] with a 64-bit base.
  void address(const RawOperand& o, Instr& in);
  // {r, ...} of `count` registers (or one register when count is 1) fitting `type`.
  void register_list(const RawOperand& o, PtxType type, int32_t count, Instr& in, bool destination);
  uint64_t immediate(const std::string& word, bool negative, PtxType type, const char* role) const;
  void branch_to(const std::string& label);

 private:
  struct Declared {
    int32_t first = 0;  // slot of name0 (or of name)
    int32_t count = 0;  // 0: a plain register `name`; N: name<N>
    PtxType type;
  };
  struct Scope {
    int32_t parent = -1;
    std::map<std::string, Declared> names;
    std::map<std::string, int32_t> labels;  // label -> instruction index
  };
  struct PendingBranch {
    size_t instr;
    int32_t scope;
    std::string label;
  };

  const Token& peek() const { return tokens_[pos_]; }
  const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool is_punct(const char* p) const { return peek().type == Token::kPunct && peek().text == p; }
  void begin_statement(size_t start_pos);
  void expect_punct(const char* p, const char* what);
  std::string expect_word(const char* what);
  void declaration();
  void instruction();
  RawOperand raw_operand();
  int32_t lookup(const std::string& name, PtxType* type, bool must_exist);

  const std::string& text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  Program program_;
  std::vector<Scope> scopes_;
  int32_t scope_ = -1;
  std::vector<PendingBranch> branches_;
  std::string statement_text_;
  int32_t statement_line_ = 0;
  size_t line_pos_ = 0;  // text_[0, line_pos_) holds line_ - 1 newlines
  int32_t line_ = 1;
};

inline const std::map<std::string, OpcodeParser>& opcodes();

inline void Parser::begin_statement(size_t start_pos) {
  // Statements start at increasing positions: count the newlines since the previous one.
  for (; line_pos_ < start_pos && line_pos_ < text_.size(); ++line_pos_) line_ += text_[line_pos_] == '\n';
  statement_line_ = line_;
  // Until the statement's end is known: the rest of its line.
  const size_t end = text_.find_first_of(";\n", start_pos);
  statement_text_ = one_line(text_.substr(start_pos, end == std::string::npos ? std::string::npos : end - start_pos + 1));
}

inline void Parser::expect_punct(const char* p, const char* what) {
  if (!is_punct(p)) error(std::string("expected '") + p + "' " + what + (peek().type == Token::kEnd ? ", found the end of the text" : ", found '" + peek().text + "'"));
  next();
}

inline std::string Parser::expect_word(const char* what) {
  if (peek().type != Token::kWord) error(std::string("expected ") + what + (peek().type == Token::kEnd ? ", found the end of the text" : ", found '" + peek().text + "'"));
  return next().text;
}

inline Program Parser::parse() {
  tokens_ = tokenize(text_);
  scopes_.push_back({});  // the asm statement's own scope
  scope_ = 0;
  int32_t depth = 0;
  while (peek().type != Token::kEnd) {
    const size_t start = peek().pos;
    begin_statement(start);
    if (is_punct("{")) {
      next();
      Scope s;
      s.parent = scope_;
      scopes_.push_back(s);
      scope_ = static_cast<int32_t>(scopes_.size()) - 1;
      ++depth;
    } else if (is_punct("}")) {
      if (depth == 0) error("'}' closes no '{'");
      next();
      scope_ = scopes_[static_cast<size_t>(scope_)].parent;
      --depth;
    } else if (is_punct(";")) {
      next();  // an empty statement
    } else if (peek().type == Token::kWord && peek().text[0] == '.') {
      declaration();
    } else if (peek().type == Token::kWord && tokens_[pos_ + 1].type == Token::kPunct && tokens_[pos_ + 1].text == ":") {
      const std::string label = next().text;
      next();
      statement_text_ = label + ":";
      if (!(std::isalpha(static_cast<unsigned char>(label[0])) || label[0] == '$' || label[0] == '_'))
        error("'" + label + "' is not a label name");
      auto& labels = scopes_[static_cast<size_t>(scope_)].labels;
      if (labels.count(label)) error("label " + label + " defined twice in one scope");
      labels[label] = static_cast<int32_t>(program_.code.size());
    } else {
      instruction();
    }
  }
  if (depth != 0) {
    statement_text_ = "(end of text)";
    error(std::to_string(depth) + " '{' never closed");
  }
  // Branches: the label in the branch's scope or an enclosing one.
  for (const PendingBranch& b : branches_) {
    Instr& in = program_.code[b.instr];
    for (int32_t s = b.scope; s >= 0 && in.target < 0; s = scopes_[static_cast<size_t>(s)].parent) {
      const auto it = scopes_[static_cast<size_t>(s)].labels.find(b.label);
      if (it != scopes_[static_cast<size_t>(s)].labels.end()) in.target = it->second;
    }
    if (in.target < 0)
      fail("PTX error: branch to " + b.label + ", a label not defined in its scope, in " + where(in, program_));
  }
  return std::move(program_);
}

// .reg .TYPE name<N>, name2, ...;
inline void Parser::declaration() {
  const std::string directive = next().text;
  if (directive != ".reg") error("unsupported directive " + directive);
  const std::string type_word = expect_word("a type after .reg");
  PtxType type;
  if (type_word[0] != '.' || !type_from_name(type_word.substr(1), type)) error("unsupported register type " + type_word);
  // .bf16 is an instruction type only (ptxas of CUDA 13.0: "Parsing error near '.bf16'").
  if (type.kind == Kind::kBFloat) error("register type .bf16 is no PTX: bfloat16 values live in .b16 registers");
  for (;;) {
    std::string name = expect_word("a register name");
    if (name.compare(0, 2, "%%") == 0) name = name.substr(1);
    if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_' || name[0] == '$' ||
          (name[0] == '%' && name.size() > 1 && !std::isdigit(static_cast<unsigned char>(name[1])))) ||
        name.find('.') != std::string::npos)
      error("'" + name + "' is not a register name");
    Declared d;
    d.type = type;
    d.first = static_cast<int32_t>(program_.registers.size());
    if (is_punct("<")) {
      next();
      const std::string count = expect_word("a register count");
      char* end = nullptr;
      errno = 0;
      const unsigned long long n = std::strtoull(count.c_str(), &end, 10);
      if (*end != '\0' || errno != 0 || n == 0 || n > (1u << 20) || !std::isdigit(static_cast<unsigned char>(count[0])))
        error("bad register count <" + count + ">");
      expect_punct(">", "after the register count");
      d.count = static_cast<int32_t>(n);
      for (int32_t i = 0; i < d.count; ++i) program_.registers.push_back({name + std::to_string(i), type});
    } else {
      program_.registers.push_back({name, type});
    }
    auto& names = scopes_[static_cast<size_t>(scope_)].names;
    if (names.count(name)) error("register " + name + " declared twice in one scope");
    names[name] = d;
    if (is_punct(",")) {
      next();
      continue;
    }
    expect_punct(";", "after the declaration");
    return;
  }
}

// The slot of register `name` (innermost scope first; name<N> declares name0..name(N-1)), or -1.
inline int32_t Parser::lookup(const std::string& word, PtxType* type, bool must_exist) {
  std::string name = word;
  if (name.compare(0, 2, "%%") == 0) name = name.substr(1);
  size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
  const std::string prefix = name.substr(0, digits), index = name.substr(digits);
  for (int32_t s = scope_; s >= 0; s = scopes_[static_cast<size_t>(s)].parent) {
    const auto& names = scopes_[static_cast<size_t>(s)].names;
    const auto exact = names.find(name);
    if (exact != names.end() && exact->second.count == 0) {
      if (type) *type = exact->second.type;
      return exact->second.first;
    }
    const auto ranged = names.find(prefix);
    if (!index.empty() && ranged != names.end() && ranged->second.count > 0) {
      if (index.size() > 1 && index[0] == '0') error("register " + word + " is not declared (leading zero)");
      const unsigned long long i = index.size() > 9 ? ~0ull : std::strtoull(index.c_str(), nullptr, 10);
      if (i >= static_cast<unsigned long long>(ranged->second.count))
        error("register " + word + " is out of range: " + prefix + "<" + std::to_string(ranged->second.count) +
              "> declares " + prefix + "0.." + prefix + std::to_string(ranged->second.count - 1));
      if (type) *type = ranged->second.type;
      return ranged->second.first + static_cast<int32_t>(i);
    }
  }
  if (must_exist) error("register " + word + " is not declared");
  return -1;
}

inline int32_t Parser::dst_register(const RawOperand& o, PtxType type, const char* role) {
  if (o.form != RawOperand::kWord || o.negative) error(std::string(role) + " must be a register");
  const std::string& w = o.words[0];
  if (w[0] == '%' && w.size() > 1 && std::isdigit(static_cast<unsigned char>(w[1])))
    error(std::string(role) + " " + w + " is an input operand of the asm statement: it must not be written");
  PtxType t;
  const int32_t slot = lookup(w, &t, true);
  if (!fits(type, t)) error(std::string(role) + " " + w + " is " + type_name(t) + ", which does not fit " + type_name(type));
  return slot;
}

inline int32_t Parser::predicate(const std::string& name, const char* role) {
  PtxType t;
  const int32_t slot = lookup(name, &t, true);
  if (t.kind != Kind::kPred) error(std::string(role) + " " + name + " is " + type_name(t) + ", not .pred");
  return slot;
}

inline uint64_t Parser::immediate(const std::string& w, bool negative, PtxType type, const char* role) const {
  const auto hex_bits = [&](size_t digits) {
    if (w.size() != 2 + digits) error(std::string(role) + " " + w + ": " + w.substr(0, 2) + " needs exactly " + std::to_string(digits) + " hex digits");
    uint64_t bits = 0;
    for (size_t i = 2; i < w.size(); ++i) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(w[i])));
      if (!std::isxdigit(static_cast<unsigned char>(c))) error(std::string(role) + " " + w + " is not a hex literal");
      bits = bits * 16 + static_cast<uint64_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : c - 'a' + 10);
    }
    return bits;
  };
  if (type.kind == Kind::kPred) error(std::string(role) + " " + w + ": no immediate for a .pred operand");
  if (is_half_float(type))
    error(std::string(role) + " " + w + ": no immediate for a " + type_name(type) + " operand is emulated (mov.b16 takes an integer)");
  if (w.size() > 2 && w[0] == '0' && (w[1] == 'f' || w[1] == 'F')) {
    if (type.bits != 32 || !(type.kind == Kind::kFloat || type.kind == Kind::kBits))
      error(std::string(role) + " " + w + ": a 0f literal is for .f32 and .b32 operands, not " + type_name(type));
    return hex_bits(8) ^ (negative ? 0x80000000ull : 0);
  }
  if (w.size() > 2 && w[0] == '0' && (w[1] == 'd' || w[1] == 'D')) {
    if (type.bits != 64 || !(type.kind == Kind::kFloat || type.kind == Kind::kBits))
      error(std::string(role) + " " + w + ": a 0d literal is for .f64 and .b64 operands, not " + type_name(type));
    return hex_bits(16) ^ (negative ? 0x8000000000000000ull : 0);
  }
  const bool hex = w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X');
  const bool decimal_float = !hex && (w.find('.') != std::string::npos || w.find_first_of("eE") != std::string::npos);
  if (decimal_float) {
    if (type.kind != Kind::kFloat) error(std::string(role) + " " + w + ": a floating-point literal for a " + type_name(type) + " operand");
    char* end = nullptr;
    const double v = std::strtod(w.c_str(), &end);
    if (*end != '\0' || !std::isdigit(static_cast<unsigned char>(w[0]))) error(std::string(role) + " " + w + " is not a number");
    const double signed_v = negative ? -v : v;
    if (type.bits == 64) {
      uint64_t bits;
      std::memcpy(&bits, &signed_v, sizeof bits);
      return bits;
    }
    const float f = static_cast<float>(signed_v);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
  }
  if (type.kind == Kind::kFloat)
    error(std::string(role) + " " + w + ": an integer literal for a " + type_name(type) + " operand (write 0f/0d bits)");
  std::string digits = w;
  if (!digits.empty() && (digits.back() == 'U' || digits.back() == 'u')) digits.pop_back();
  if (digits.empty() || !std::isdigit(static_cast<unsigned char>(digits[0]))) error(std::string(role) + " " + w + " is not a register or a number");
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(digits.c_str(), &end, hex ? 16 : 10);
  if (*end != '\0' || errno != 0) error(std::string(role) + " " + w + " is not a number");
  const uint64_t limit = type.bits == 64 ? ~0ull : (1ull << type.bits) - 1;
  if (v > limit && !(negative && v - 1 <= limit)) error(std::string(role) + " " + w + " does not fit " + type_name(type));
  const uint64_t bits = negative ? ~static_cast<uint64_t>(v) + 1 : static_cast<uint64_t>(v);
  return type.bits == 64 ? bits : bits & ((1ull << type.bits) - 1);
}

inline Src Parser::source(const RawOperand& o, PtxType type, const char* role) {
  if (o.form != RawOperand::kWord) error(std::string(role) + " must be a register, an operand %N or an immediate");
  const std::string& w = o.words[0];
  Src s;
  if (w[0] == '%' && w.size() > 1 && std::isdigit(static_cast<unsigned char>(w[1]))) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(w.c_str() + 1, &end, 10);
    if (*end != '\0' || n >= program_.param_bits.size())
      error(std::string(role) + " " + w + ": the asm statement has operands %0..%" + std::to_string(program_.param_bits.size() - 1));
    if (o.negative) error(std::string(role) + " -" + w + ": no negation of an operand");
    PtxType pt{Kind::kBits, program_.param_bits[n]};
    if (!fits(type, pt)) error(std::string(role) + " " + w + " is a " + std::to_string(pt.bits) + "-bit operand, which does not fit " + type_name(type));
    s.what = Src::kParam;
    s.index = static_cast<int32_t>(n);
    return s;
  }
  if (w[0] == '%' && !(w.size() > 1 && w[1] == '%')) error(std::string(role) + " " + w + ": a single % starts an operand number (%%name for a register)");
  if (std::isdigit(static_cast<unsigned char>(w[0]))) {
    s.what = Src::kImm;
    s.imm = immediate(w, o.negative, type, role);
    return s;
  }
  if (o.negative) error(std::string(role) + " -" + w + ": no negation of a register");
  PtxType t;
  s.what = Src::kReg;
  s.index = lookup(w, &t, true);
  if (!fits(type, t)) error(std::string(role) + " " + w + " is " + type_name(t) + ", which does not fit " + type_name(type));
  return s;
}

inline void Parser::address(const RawOperand& o, Instr& in) {
  if (o.form != RawOperand::kAddress) error("the address must be [register] or [register+offset]");
  const PtxType b64{Kind::kBits, 64};
  RawOperand base;
  base.words = o.words;
  in.src[0] = source(base, b64, "the address base");
  if (in.src[0].what == Src::kImm) error("the address base must be a 64-bit register or operand, not an immediate");
  in.offset = 0;
  if (!o.offset.empty()) {
    char* end = nullptr;
    errno = 0;
    const bool hex = o.offset.size() > 2 && o.offset[0] == '0' && (o.offset[1] == 'x' || o.offset[1] == 'X');
    const long long v = std::strtoll(o.offset.c_str(), &end, hex ? 16 : 10);
    if (*end != '\0' || errno != 0 || !std::isdigit(static_cast<unsigned char>(o.offset[0])))
      error("the address offset " + o.offset + " is not an integer");
    in.offset = o.offset_negative ? -v : v;
  }
}

inline void Parser::register_list(const RawOperand& o, PtxType type, int32_t count, Instr& in, bool destination) {
  const char* role = destination ? "the loaded register" : "the stored register";
  if (count == 1) {
    if (o.form != RawOperand::kWord) error(std::string(role) + " must be one register without .v2/.v4");
    if (destination) {
      in.regs[0] = dst_register(o, type, role);
    } else {
      const Src s = source(o, type, role);
      if (s.what != Src::kReg) error(std::string(role) + " must be a register");
      in.regs[0] = s.index;
    }
    return;
  }
  if (o.form != RawOperand::kVector || static_cast<int32_t>(o.words.size()) != count)
    error(std::string(role) + "s must be {" + std::to_string(count) + " registers} for .v" + std::to_string(count));
  for (int32_t i = 0; i < count; ++i) {
    RawOperand one;
    one.words = {o.words[static_cast<size_t>(i)]};
    if (destination) {
      in.regs[i] = dst_register(one, type, role);
    } else {
      const Src s = source(one, type, role);
      if (s.what != Src::kReg) error(std::string(role) + " must be a register");
      in.regs[i] = s.index;
    }
  }
}

inline void Parser::branch_to(const std::string& label) {
  branches_.push_back({program_.code.size(), scope_, label});
}

inline RawOperand Parser::raw_operand() {
  RawOperand o;
  if (is_punct("{")) {
    next();
    o.form = RawOperand::kVector;
    for (;;) {
      o.words.push_back(expect_word("a register in the vector"));
      if (is_punct(",")) {
        next();
        continue;
      }
      expect_punct("}", "closing the vector");
      return o;
    }
  }
  if (is_punct("[")) {
    next();
    o.form = RawOperand::kAddress;
    o.words.push_back(expect_word("an address register"));
    if (is_punct("+") || is_punct("-")) {
      o.offset_negative = next().text == "-";
      if (is_punct("-")) {
        next();
        o.offset_negative = !o.offset_negative;
      }
      o.offset = expect_word("an address offset");
    }
    expect_punct("]", "closing the address");
    return o;
  }
  if (is_punct("-")) {
    next();
    o.negative = true;
  }
  o.words.push_back(expect_word("an operand"));
  return o;
}

inline void Parser::instruction() {
  Instr in;
  in.line = statement_line_;
  const size_t start = peek().pos;
  std::string guard;
  bool negated = false;
  if (is_punct("@")) {
    next();
    if (is_punct("!")) {
      next();
      negated = true;
    }
    guard = expect_word("a predicate after @");
  }
  const std::string opcode = expect_word("an opcode");
  std::vector<RawOperand> operands;
  if (!is_punct(";")) {
    for (;;) {
      operands.push_back(raw_operand());
      if (is_punct(",")) {
        next();
        continue;
      }
      break;
    }
  }
  if (!is_punct(";")) error(peek().type == Token::kEnd ? "the statement has no ';'" : "unexpected '" + peek().text + "'");
  const size_t end = peek().pos;
  next();
  in.text = one_line(text_.substr(start, end - start + 1));
  statement_text_ = in.text;
  if (!guard.empty()) {
    in.guard = predicate(guard, "the guard");
    in.guard_negated = negated;
  }
  std::vector<std::string> modifiers;
  size_t dot = opcode.find('.');
  const std::string base = opcode.substr(0, dot);
  while (dot != std::string::npos) {
    const size_t next_dot = opcode.find('.', dot + 1);
    modifiers.push_back(opcode.substr(dot + 1, next_dot == std::string::npos ? std::string::npos : next_dot - dot - 1));
    dot = next_dot;
  }
  const auto it = opcodes().find(base);
  if (it == opcodes().end()) error("unknown opcode " + opcode);
  it->second(*this, in, modifiers, operands);
  program_.code.push_back(std::move(in));
}

// ---------------------------------------------------------------------------------------------
// The opcode table: each entry checks the modifiers and operands of one opcode and fills Instr.

namespace opcode {

inline PtxType last_type(Parser& p, std::vector<std::string>& mods, const char* op) {
  PtxType t;
  if (mods.empty() || !type_from_name(mods.back(), t) || t.kind == Kind::kPred)
    p.error(std::string(op) + " needs a type (.b16, .u16, .s16, .f16, .bf16, .b32, .u32, .s32, .f32, .b64, .u64, .s64, .f64) as its last modifier");
  mods.pop_back();
  return t;
}

// 16-bit types are only moved, loaded, stored and converted.
inline void no_16_bits(Parser& p, PtxType t, const char* op) {
  if (t.bits == 16) p.error(std::string(op) + type_name(t) + " is not emulated (16-bit types only in mov, ld, st and cvt)");
}

inline void no_more(Parser& p, const std::vector<std::string>& mods, const char* op) {
  if (!mods.empty()) p.error("unsupported modifier ." + mods.front() + " of " + op);
}

inline void arity(Parser& p, const std::vector<RawOperand>& ops, size_t n, const char* op) {
  if (ops.size() != n) p.error(std::string(op) + " takes " + std::to_string(n) + " operands, not " + std::to_string(ops.size()));
}

inline bool take(std::vector<std::string>& mods, const char* m) {
  for (size_t i = 0; i < mods.size(); ++i)
    if (mods[i] == m) {
      mods.erase(mods.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
  return false;
}

// mov.T d, s; and the pack and unpack forms of mov.b32: d = {lo, hi} (d = lo | hi << 16) and
// {lo, hi} = s, where lo and hi are 16-bit registers.
inline void mov(Parser& p, Instr& in, std::vector<std::string>& mods, std::vector<RawOperand>& ops) {
  in.op = Op::kMov;
  in.type = last_type(p, mods, "mov");
  no_more(p, mods, "mov");
  arity(p, ops, 2, "mov");
  const bool unpack = ops[0].form == RawOperand::kVector, pack = ops[1].form == RawOperand::kVector;
  if (!pack && !unpack) {
    in.dst = p.dst_register(ops[0], in.type, "the destination");
    in.src[0] = p.source(ops[1], in.type, "the source");
    return;
  }
  if (pack && unpack) p.error("mov packs {lo, hi} into a register or unpacks a register into {lo, hi}, not both");
  if (in.type.kind != Kind::kBits || in.type.bits != 32)
    p.error("mov" + type_name(in.type) + " with a vector: only mov.b32 packs and unpacks {2 16-bit registers}");
  const RawOperand& halves = pack ? ops[1] : ops[0];
  if (halves.words.size() != 2)
    p.error("mov.b32 packs and unpacks {2 16-bit registers}, not " + std::to_string(halves.words.size()));
  const PtxType b16{Kind::kBits, 16};
  in.vec = 2;
  for (size_t i = 0; i < 2; ++i) {
    RawOperand one;
    one.words = {halves.words[i]};
    if (pack) {
      const Src s = p.source(one, b16, "a packed half");
      if (s.what != Src::kReg) p.error("a packed half must be a register");
      in.regs[i] = s.index;
    } else {
      in.regs[i] = p.dst_register(one, b16, "an unpacked half");
    }
  }
  if (pack) {
    in.op = Op::kMovPack;
    in.dst = p.dst_register(ops[0], in.type, "the destination");
  } else {
    in.op = Op::kMovUnpack;
    in.src[0] = p.source(ops[1], in.type, "the source");
  }
}

// add, sub, mul, mad: integers (.lo / .wide) or floating point (.rn or no rounding modifier).
inline void arithmetic(Parser& p, Instr& in, std::vector<std::string>& mods, std::vector<RawOperand>& ops, const char* op,
                       int sources) {
  const PtxType t = last_type(p, mods, op);
  no_16_bits(p, t, op);
  const bool is_mul = std::strcmp(op, "mul") == 0 || std::strcmp(op, "mad") == 0;
  in.type = t;
  PtxType dst_type = t, last_src_type = t;
  if (t.kind == Kind::kFloat) {
    take(mods, "rn");  // the default rounding of add, sub and mul
    if (std::strcmp(op, "mad") == 0) in.op = Op::kFma;
    else in.op = std::strcmp(op, "add") == 0 ? Op::kFAdd : std::strcmp(op, "sub") == 0 ? Op::kFSub : Op::kFMul;
  } else if (t.kind == Kind::kBits) {
    p.error(std::string(op) + " takes .u or .s types, not " + type_name(t));
  } else if (is_mul) {
    const bool lo = take(mods, "lo"), wide = !lo && take(mods, "wide");
    if (!lo && !wide) p.error(std::string(op) + "." + (t.kind == Kind::kSigned ? "s" : "u") + std::to_string(t.bits) + " needs .lo or .wide");
    if (wide) {
      if (t.bits != 32) p.error(std::string(op) + ".wide takes 32-bit sources");
      dst_type = PtxType{t.kind, 64};
      if (sources == 3) last_src_type = dst_type;
    }
    in.is_signed = t.kind == Kind::kSigned;
    in.op = std::strcmp(op, "mul") == 0 ? (wide ? Op::kMulWide : Op::kMulLo) : (wide ? Op::kMadWide : Op::kMadLo);
  } else {
    in.op = std::strcmp(op, "add") == 0 ? Op::kAdd : Op::kSub;
  }
  no_more(p, mods, op);
  arity(p, ops, static_cast<size_t>(sources) + 1, op);
  in.dst = p.dst_register(ops[0], dst_type, "the destination");
  for (int i = 0; i < sources; ++i)
    in.src[i] = p.source(ops[static_cast<size_t>(i) + 1], i == 2 ? last_src_type : t, "a source");
}

inline void add(Parser& p, Instr& in, std::vector<std::string>& m, std::vector<RawOperand>& o) { arithmetic(p, in, m, o, "add", 2); }
inline void sub(Parser& p, Instr& in, std::vector<std::string>& m, std::vector<RawOperand>& o) { arithmetic(p, in, m, o, "sub", 2); }
inline void mul(Parser& p, Instr& in, std::vector<std::string>& m, std::vector<RawOperand>& o) { arithmetic(p, in, m, o, "mul", 2); }
inline void mad(Parser& p, Instr& in, std::vector<std::string>& m, std::vector<RawOperand>& o) {
  if (!m.empty() && (m.back() == "f32" || m.back() == "f64") && std::find(m.begin(), m.end(), "rn") == m.end())
    p.error("mad." + m.back() + " needs the rounding modifier .rn (the only one emulated)");
  arithmetic(p, in, m, o, "mad", 3);
}

inline void fma(Parser& p, Instr& in, std::vector<std::string>& mods, std::vector<RawOperand>& ops) {
  in.op = Op::kFma;
  in.type = last_type(p, mods, "fma");
  no_16_bits(p, in.type, "fma");
  if (in.type.kind != Kind::kFloat) p.error("fma takes .f32 or .f64");
  if (!take(mods, "rn")) p.error("fma needs the rounding modifier .rn (the only one emulated)");
  no_more(p, mods, "fma");
  arity(p, ops, 4, "fma");
  in.dst = p.dst_register(ops[0], in.type, "the destination");
  for (int i = 0; i < 3; ++i) in.src[i] = p.source(ops[static_cast<size_t>(i) + 1], in.type, "a source");
}

inline void setp(Parser& p, Instr& in, std::vector<std::string>& mods, std::vector<RawOperand>& ops) {
  in.op = Op::kSetp;
  in.type = last_type(p, mods, "setp");
  no_16_bits(p, in.type, "setp");
  if (mods.size() != 1) p.error("setp needs one comparison (.eq, .ne, .lt, .le, .gt, .ge)");
  const std::string c = mods[0];
  const bool integer = in.type.kind != Kind::kFloat;
  if (c == "eq") in.cmp = Cmp::kEq;
  else if (c == "ne") in.cmp = Cmp::kNe;
  else if (c == "lt" || (integer && c == "lo")) in.cmp = Cmp::kLt;
  else if (c == "le" || (integer && c == "ls")) in.cmp = Cmp::kLe;
  else if (c == "gt" || (integer && c == "hi")) in.cmp = Cmp::kGt;
  else if (c == "ge" || (integer && c == "hs")) in.cmp = Cmp::kGe;
  else p.error("unsupported comparison ." + c + " of setp");
  if (in.type.kind == Kind::kBits && in.cmp != Cmp::kEq && in.cmp != Cmp::kNe) p.error("setp.b types compare only with .eq and .ne");
  in.is_signed = in.type.kind == Kind::kSigned && c != "lo" && c != "ls" && c != "hi" && c != "hs";
  arity(p, ops, 3, "setp");
  if (ops[0].form != RawOperand::kWord) p.error("setp's destination must be a predicate");
  in.dst = p.predicate(ops[0].words[0], "setp's destination");
  in.src[0] = p.source(ops[1], in.type, "a source");
  in.src[1] = p.source(ops[2], in.type, "a source");
}

inline void bra(Parser& p, Instr& in, std::vector<std::string>& mods, std::vector<RawOperand>& ops) {
  in.op = Op::kBra;
  take(mods, "uni");
  no_more(p, mods, "bra");
  arity(p, ops, 1, "bra");
  if (ops[0].form != RawOperand::kWord || ops[0].negative) p.error("bra takes a label");
  p.branch_to(ops[0].words[0]);
}

// Modifiers of ld and st that only steer caches: no effect on the values.
inline void cache_hints(std::vector<std::string>& mods) {
  static const char* kHints[] = {"ca", "cg", "cs", "lu", "cv", "wb", "wt", "L1::evict_normal", "L1::evict_unchanged",
                                 "L1::evict_first", "L1::evict_last", "L1::no_allocate", "L2::evict_normal",
                                 "L2::evict_first", "L2::evict_last", "L2::64B", "L2::128B", "L2::256B"};
  for (const char* h : kHints) take(mods, h);
}

inline void memory_access(Parser& p, Instr& in, std::vector<std::string>& mods, std::vector<RawOperand>& ops, bool load) {
  const char* op = load ? "ld" : "st";
  in.op = load ? Op::kLd : Op::kSt;
  in.type = last_type(p, mods, op);
  if (in.type.bits != 16 && in.type.bits != 32) p.error(std::string(op) + " of " + type_name(in.type) + ": only 16- and 32-bit elements are emulated");
  if (is_half_float(in.type)) p.error(std::string(op) + type_name(in.type) + " is no PTX: 16-bit elements are loaded and stored as .b16, .u16 or .s16");
  for (const char* space : {"shared", "local", "const", "param"})
    if (take(mods, space)) p.error(std::string(op) + "." + space + " is not emulated (only .global and generic addresses)");
  take(mods, "global");
  if (load) in.non_coherent = take(mods, "nc");
  in.vec = take(mods, "v4") ? 4 : take(mods, "v2") ? 2 : 1;
  cache_hints(mods);
  no_more(p, mods, op);
  arity(p, ops, 2, op);
  if (load) {
    p.register_list(ops[0], in.type, in.vec, in, true);
    p.address(ops[1], in);
  } else {
    p.address(ops[0], in);
    p.register_list(ops[1], in.type, in.vec, in, false);
  }
}

// griddepcontrol.wait: wait for the kernels this one depends on. The emulation runs the kernels
// of a file one after the other, so they have completed: nothing to do.
inline void griddepcontrol(Parser& p, Instr& in, std::vector<std::string>& mods, std::vector<RawOperand>& ops) {
  in.op = Op::kWait;
  if (!take(mods, "wait")) p.error("only griddepcontrol.wait is emulated");
  no_more(p, mods, "griddepcontrol");
  arity(p, ops, 0, "griddepcontrol.wait");
}

// cvt between .f32 and the half-precision types: cvt.f32.f16 and cvt.f32.bf16 (exact, no
// modifier), cvt.rn.f16.f32 and cvt.rn.bf16.f32 (round to nearest even; see half_bits.h).
inline void cvt(Parser& p, Instr& in, std::vector<std::string>& mods, std::vector<RawOperand>& ops) {
  in.op = Op::kCvt;
  PtxType dst, src;
  if (mods.size() < 2 || !type_from_name(mods[mods.size() - 2], dst) || !type_from_name(mods.back(), src) ||
      dst.kind == Kind::kPred || src.kind == Kind::kPred)
    p.error("cvt needs a destination and a source type as its last two modifiers");
  mods.resize(mods.size() - 2);
  const std::string types = type_name(dst) + type_name(src);
  const auto is = [](PtxType t, Kind kind, int bits) { return t.kind == kind && t.bits == bits; };
  bool narrowing = false;
  if (is(dst, Kind::kFloat, 32) && is(src, Kind::kFloat, 16)) {
    in.cvt = Cvt::kF32FromF16;
  } else if (is(dst, Kind::kFloat, 32) && is(src, Kind::kBFloat, 16)) {
    in.cvt = Cvt::kF32FromBF16;
  } else if (is(dst, Kind::kFloat, 16) && is(src, Kind::kFloat, 32)) {
    in.cvt = Cvt::kF16FromF32, narrowing = true;
  } else if (is(dst, Kind::kBFloat, 16) && is(src, Kind::kFloat, 32)) {
    in.cvt = Cvt::kBF16FromF32, narrowing = true;
  } else {
    p.error("cvt" + types + " is not emulated (only cvt.f32.f16, cvt.f32.bf16, cvt.rn.f16.f32 and cvt.rn.bf16.f32)");
  }
  if (narrowing && !take(mods, "rn")) p.error("cvt" + types + " needs the rounding modifier .rn (the only one emulated)");
  no_more(p, mods, ("cvt" + types).c_str());  // .ftz, .sat, other roundings, .rn of a widening cvt
  arity(p, ops, 2, "cvt");
  in.type = dst;
  in.dst = p.dst_register(ops[0], dst, "the destination");
  in.src[0] = p.source(ops[1], src, "the source");
}

inline void ld(Parser& p, Instr& in, std::vector<std::string>& m, std::vector<RawOperand>& o) { memory_access(p, in, m, o, true); }
inline void st(Parser& p, Instr& in, std::vector<std::string>& m, std::vector<RawOperand>& o) { memory_access(p, in, m, o, false); }

}  // namespace opcode

inline const std::map<std::string, OpcodeParser>& opcodes() {
  static const std::map<std::string, OpcodeParser> kTable = {
      {"mov", opcode::mov}, {"add", opcode::add},   {"sub", opcode::sub}, {"mul", opcode::mul}, {"mad", opcode::mad},
      {"fma", opcode::fma}, {"setp", opcode::setp}, {"bra", opcode::bra}, {"ld", opcode::ld},   {"st", opcode::st},
      {"cvt", opcode::cvt}, {"griddepcontrol", opcode::griddepcontrol}};
  return kTable;
}

// Parses `text`, the asm template of a statement whose operands %0..%N are param_bits.size()
// values of param_bits[i] bits (64 for "l", 32 for "r"). Aborts on anything it does not know.
inline Program parse_ptx(const std::string& text, const std::vector<uint8_t>& param_bits) {
  return Parser(text, param_bits).parse();
}

// ---------------------------------------------------------------------------------------------
// Memory bounds and counters (for the tests that check launches)

struct MemoryBounds {
  uintptr_t read_only_begin = 0, read_only_end = 0;    // B
  uintptr_t read_write_begin = 0, read_write_end = 0;  // C
  bool active = false;
};

inline MemoryBounds& memory_bounds() {
  static MemoryBounds b;
  return b;
}

// Restricts later accesses (see the header comment); set_memory_bounds(nullptr, 0, nullptr, 0)
// lifts the restriction.
inline void set_memory_bounds(const void* read_only, size_t read_only_bytes, void* read_write, size_t read_write_bytes) {
  MemoryBounds& b = memory_bounds();
  b.read_only_begin = reinterpret_cast<uintptr_t>(read_only);
  b.read_only_end = b.read_only_begin + read_only_bytes;
  b.read_write_begin = reinterpret_cast<uintptr_t>(read_write);
  b.read_write_end = b.read_write_begin + read_write_bytes;
  b.active = read_only != nullptr || read_write != nullptr;
}

// Executions of run_ptx since the counter was last reset.
inline std::atomic<unsigned long long>& ptx_runs() {
  static std::atomic<unsigned long long> runs{0};
  return runs;
}

// ---------------------------------------------------------------------------------------------
// Execution

struct Frame {
  std::vector<uint64_t> value;
  std::vector<uint64_t> written;  // == stamp when written during this execution
  uint64_t stamp = 0;
};

inline uint64_t mask(uint64_t v, int bits) { return bits >= 64 ? v : v & ((1ull << bits) - 1); }

inline int64_t sign_extend(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  const uint64_t m = 1ull << (bits - 1);
  return static_cast<int64_t>((mask(v, bits) ^ m) - m);
}

inline float as_f32(uint64_t v) {
  const auto bits = static_cast<uint32_t>(v);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint64_t from_f32(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

inline double as_f64(uint64_t v) {
  double d;
  std::memcpy(&d, &v, sizeof d);
  return d;
}

inline uint64_t from_f64(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

// Runs `p` with operands %i = params[i] (zero-extended to 64 bits).
inline void execute(const Program& p, const uint64_t* params) {
  thread_local Frame f;
  if (f.value.size() < p.registers.size()) {
    f.value.resize(p.registers.size());
    f.written.resize(p.registers.size(), 0);
  }
  const uint64_t stamp = ++f.stamp;
  uint64_t* const value = f.value.data();
  uint64_t* const written = f.written.data();
  const auto read_reg = [&](int32_t slot, const Instr& in) {
    if (written[slot] != stamp)
      fail("PTX error: register " + p.registers[static_cast<size_t>(slot)].name + " is read before it is written in " + where(in, p));
    return value[slot];
  };
  const auto read = [&](const Src& s, const Instr& in) -> uint64_t {
    switch (s.what) {
      case Src::kReg: return read_reg(s.index, in);
      case Src::kParam: return params[s.index];
      case Src::kImm: return s.imm;
      case Src::kNone: break;
    }
    fail("internal error: an empty source in " + where(in, p));
  };
  const auto write = [&](int32_t slot, uint64_t v) {
    value[slot] = mask(v, p.registers[static_cast<size_t>(slot)].type.bits);
    written[slot] = stamp;
  };
  const auto check_access = [&](const Instr& in, uintptr_t addr, size_t bytes) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(addr));
    if (addr < 4096) fail(std::string("PTX error: access to address ") + hex + " (null) in " + where(in, p));
    if (addr % bytes != 0)
      fail(std::string("PTX error: misaligned access: address ") + hex + " is not a multiple of " + std::to_string(bytes) +
           " bytes (a GPU faults) in " + where(in, p));
    const MemoryBounds& b = memory_bounds();
    if (!b.active) return;
    const bool in_read_only = addr >= b.read_only_begin && addr + bytes <= b.read_only_end;
    const bool in_read_write = addr >= b.read_write_begin && addr + bytes <= b.read_write_end;
    if (in.op == Op::kSt && !in_read_write)
      fail(std::string("PTX error: store to ") + hex + (in_read_only ? ", inside the read-only input," : ", outside the output,") +
           " in " + where(in, p));
    if (in.op == Op::kLd && in.non_coherent && !in_read_only)
      fail(std::string("PTX error: ld.nc from ") + hex + (in_read_write ? ", memory the kernel writes (the non-coherent cache may be stale)," : ", outside the inputs,") +
           " in " + where(in, p));
    if (in.op == Op::kLd && !in_read_only && !in_read_write)
      fail(std::string("PTX error: load from ") + hex + ", outside the inputs and outputs, in " + where(in, p));
  };

  const size_t size = p.code.size();
  for (size_t pc = 0; pc < size;) {
    const Instr& in = p.code[pc];
    ++pc;
    if (in.guard >= 0 && ((read_reg(in.guard, in) != 0) == in.guard_negated)) continue;
    const int bits = in.type.bits;
    switch (in.op) {
      case Op::kMov: write(in.dst, read(in.src[0], in)); break;
      case Op::kMovPack: write(in.dst, read_reg(in.regs[0], in) | read_reg(in.regs[1], in) << 16); break;
      case Op::kMovUnpack: {
        const uint64_t v = read(in.src[0], in);
        write(in.regs[0], v & 0xffffu);
        write(in.regs[1], (v >> 16) & 0xffffu);
        break;
      }
      case Op::kCvt: {
        const uint64_t a = read(in.src[0], in);
        switch (in.cvt) {
          case Cvt::kF32FromF16: write(in.dst, f16_bits_to_f32_bits(static_cast<uint16_t>(a))); break;
          case Cvt::kF32FromBF16: write(in.dst, bf16_bits_to_f32_bits(static_cast<uint16_t>(a))); break;
          case Cvt::kF16FromF32: write(in.dst, f32_bits_to_f16_bits_rn(static_cast<uint32_t>(a))); break;
          case Cvt::kBF16FromF32: write(in.dst, f32_bits_to_bf16_bits_rn(static_cast<uint32_t>(a))); break;
        }
        break;
      }
      case Op::kAdd: write(in.dst, read(in.src[0], in) + read(in.src[1], in)); break;
      case Op::kSub: write(in.dst, read(in.src[0], in) - read(in.src[1], in)); break;
      case Op::kMulLo: write(in.dst, read(in.src[0], in) * read(in.src[1], in)); break;
      case Op::kMadLo: write(in.dst, read(in.src[0], in) * read(in.src[1], in) + read(in.src[2], in)); break;
      case Op::kMulWide:
      case Op::kMadWide: {
        const uint64_t a = read(in.src[0], in), b = read(in.src[1], in);
        const uint64_t product = in.is_signed ? static_cast<uint64_t>(sign_extend(a, 32) * sign_extend(b, 32)) : mask(a, 32) * mask(b, 32);
        write(in.dst, in.op == Op::kMadWide ? product + read(in.src[2], in) : product);
        break;
      }
      case Op::kFAdd:
      case Op::kFSub:
      case Op::kFMul: {
        const uint64_t a = read(in.src[0], in), b = read(in.src[1], in);
        if (bits == 32) {
          const float x = as_f32(a), y = as_f32(b);
          write(in.dst, from_f32(in.op == Op::kFAdd ? x + y : in.op == Op::kFSub ? x - y : x * y));
        } else {
          const double x = as_f64(a), y = as_f64(b);
          write(in.dst, from_f64(in.op == Op::kFAdd ? x + y : in.op == Op::kFSub ? x - y : x * y));
        }
        break;
      }
      case Op::kFma: {
        const uint64_t a = read(in.src[0], in), b = read(in.src[1], in), c = read(in.src[2], in);
        write(in.dst, bits == 32 ? from_f32(std::fmaf(as_f32(a), as_f32(b), as_f32(c))) : from_f64(std::fma(as_f64(a), as_f64(b), as_f64(c))));
        break;
      }
      case Op::kSetp: {
        const uint64_t a = read(in.src[0], in), b = read(in.src[1], in);
        bool r = false;
        if (in.type.kind == Kind::kFloat) {
          const double x = bits == 32 ? as_f32(a) : as_f64(a), y = bits == 32 ? as_f32(b) : as_f64(b);
          switch (in.cmp) {  // ordered comparisons: false when either is NaN
            case Cmp::kEq: r = x == y; break;
            case Cmp::kNe: r = x != y && !std::isnan(x) && !std::isnan(y); break;
            case Cmp::kLt: r = x < y; break;
            case Cmp::kLe: r = x <= y; break;
            case Cmp::kGt: r = x > y; break;
            case Cmp::kGe: r = x >= y; break;
          }
        } else if (in.is_signed) {
          const int64_t x = sign_extend(a, bits), y = sign_extend(b, bits);
          r = in.cmp == Cmp::kEq ? x == y : in.cmp == Cmp::kNe ? x != y : in.cmp == Cmp::kLt ? x < y : in.cmp == Cmp::kLe ? x <= y : in.cmp == Cmp::kGt ? x > y : x >= y;
        } else {
          const uint64_t x = mask(a, bits), y = mask(b, bits);
          r = in.cmp == Cmp::kEq ? x == y : in.cmp == Cmp::kNe ? x != y : in.cmp == Cmp::kLt ? x < y : in.cmp == Cmp::kLe ? x <= y : in.cmp == Cmp::kGt ? x > y : x >= y;
        }
        write(in.dst, r ? 1 : 0);
        break;
      }
      case Op::kBra: pc = static_cast<size_t>(in.target); break;
      case Op::kWait: break;
      case Op::kLd:
      case Op::kSt: {
        const uintptr_t addr = static_cast<uintptr_t>(read(in.src[0], in) + static_cast<uint64_t>(in.offset));
        const size_t element_bytes = static_cast<size_t>(bits / 8);  // 2 or 4
        check_access(in, addr, element_bytes * static_cast<size_t>(in.vec));
        for (int32_t v = 0; v < in.vec; ++v) {
          void* const at = reinterpret_cast<void*>(addr + element_bytes * static_cast<uintptr_t>(v));
          if (bits == 16) {
            uint16_t element;
            if (in.op == Op::kLd) {
              std::memcpy(&element, at, sizeof element);
              write(in.regs[v], element);
            } else {
              element = static_cast<uint16_t>(read_reg(in.regs[v], in));
              std::memcpy(at, &element, sizeof element);
            }
          } else {
            uint32_t element;
            if (in.op == Op::kLd) {
              std::memcpy(&element, at, sizeof element);
              write(in.regs[v], element);
            } else {
              element = static_cast<uint32_t>(read_reg(in.regs[v], in));
              std::memcpy(at, &element, sizeof element);
            }
          }
        }
        break;
      }
    }
  }
}

// Internal linkage: each translation unit (each emitted .cu) has its own cache, which lives and
// dies with the shared object holding its string literals. A cache shared across shared objects
// (what an inline function's statics become: STB_GNU_UNIQUE symbols) would outlive a dlclose'd
// kernel and hand its stale program to the next kernel loaded at the same address.
namespace {

// The tile statement of an emitted kernel: operands %0 = b, %1 = c ("l"), %2 = ld ("r"); b and c
// point to floats or to 16-bit halves (__half, __nv_bfloat16), as the kernel's precision has it.
// The parsed program is cached by the address of `ptx` (a string literal of this translation
// unit: the same text for as long as the code calling this exists).
inline void run_ptx(const char* ptx, const void* b, void* c, unsigned ld) {
  thread_local const char* last_text = nullptr;
  thread_local const Program* last_program = nullptr;
  if (ptx != last_text) {
    static std::mutex mutex;
    static std::unordered_map<const char*, std::unique_ptr<Program>> cache;
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<Program>& slot = cache[ptx];
    if (!slot) slot.reset(new Program(parse_ptx(ptx, {64, 64, 32})));
    last_text = ptx;
    last_program = slot.get();
  }
  ptx_runs().fetch_add(1, std::memory_order_relaxed);
  const uint64_t params[3] = {static_cast<uint64_t>(reinterpret_cast<uintptr_t>(b)),
                              static_cast<uint64_t>(reinterpret_cast<uintptr_t>(c)), ld};
  execute(*last_program, params);
}

}  // namespace

}  // namespace spmmc_emulation

#endif  // SPMMC_TESTS_CUDA_EMULATION_PTX_SUBSET_H
