#include "verify/read_tile_ptx.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "verify/ptx_tokens.h"

namespace spmmc::verify_detail {
namespace {

// Longest statement quoted in a message.
constexpr size_t kMaxStatementText = 80;

// The kinds of register a .reg directive declares (k16: the 16-bit registers half-precision
// elements of B and C pass through).
enum class RegClass : uint8_t { kF32, kB32, kI32, k64, kPred, k16 };

bool class_of_type(std::string_view type, RegClass& out) {
  static const std::map<std::string_view, RegClass> kTypes = {
      {"f32", RegClass::kF32}, {"b32", RegClass::kB32}, {"u32", RegClass::kI32}, {"s32", RegClass::kI32},
      {"b64", RegClass::k64},  {"u64", RegClass::k64},  {"s64", RegClass::k64},  {"pred", RegClass::kPred},
      {"b16", RegClass::k16},  {"u16", RegClass::k16},  {"s16", RegClass::k16},  {"f16", RegClass::k16},
      {"bf16", RegClass::k16}};
  const auto it = kTypes.find(type);
  if (it == kTypes.end()) return false;
  out = it->second;
  return true;
}

enum class Buffer : uint8_t { kB, kC };

// The symbolic value of a register (or of an operand %N).
struct Value {
  // kPrevious: an element of C as the kernels before stored it (rows, lane); kAddedSum: such an
  // element plus a sum (node; rows and lane of the element).
  // Half precision: kRaw is an element of B as loaded, the dtype's 16 bits (load, rows, lane), not
  // yet a float; kElement is then its conversion. kConstant16: a 16-bit constant (mov.b16 z, 0).
  // kRounded: a sum (node) rounded to the dtype for a store (cvt.rn.f16.f32 / cvt.rn.bf16.f32).
  enum class Kind : uint8_t {
    kUnset, kSum, kElement, kAddress, kRowStride, kPredicate, kPrevious, kAddedSum, kRaw, kConstant16, kRounded
  };
  Kind kind = Kind::kUnset;
  Buffer buffer = Buffer::kB;  // kAddress
  bool truth = false;          // kPredicate
  int32_t node = -1;           // kSum, kRounded: its last product; -1 is the empty sum, +0
  int32_t load = -1;           // kElement, kRaw: the load it came from
  int32_t lane = 0;            // kElement, kRaw
  int64_t rows = 0;            // kElement, kRaw: the row of B; kAddress: the row; kRowStride: the multiple
                               // of the stride; kConstant16: its value
  int64_t offset = 0;          // kAddress: bytes past the row's start (the element's bytes x the lane)
};

struct Register {
  std::string_view prefix;  // "a" of a<16>, or the whole name
  int32_t index = -1;       // of a<16>; -1 for a plainly named register
  RegClass cls = RegClass::kF32;
  Value value;

  std::string name() const { return index < 0 ? std::string(prefix) : fmt::format("{}{}", prefix, index); }
};

// Products form persistent chains (each FMA appends one node), so that copying a register is O(1).
struct ProductNode {
  int32_t previous;
  AnalyzedProduct product;
};

struct Operand {
  enum class Form : uint8_t { kWord, kVector, kAddress };
  Form form = Form::kWord;
  bool negative = false;                // -WORD
  std::vector<std::string_view> words;  // the word; the vector's elements; the address's base
  int64_t offset = 0;                   // kAddress: [base+OFFSET] in bytes
};

struct Instruction {
  std::string_view guard;  // the predicate register of @q, or empty
  bool guard_negated = false;
  std::string_view opcode;                  // "ld"
  std::vector<std::string_view> modifiers;  // "global", "nc", "v2", "f32"
  std::vector<Operand> operands;
  size_t operand_count = 0;                 // operands[0 .. operand_count) are this instruction's
};

// Thrown inside the reader only; read_tile_ptx turns it into a CodeDiagnostic.
struct PtxFailure {
  size_t offset;
  std::string message;
};

// A resolved source operand: a register's or %N's value, or an immediate.
struct Source {
  enum class Kind : uint8_t { kValue, kInteger, kFloat } kind = Kind::kValue;
  Value value;
  int width = 32;         // kValue: bits of the register or operand
  int32_t slot = -1;      // kValue: the register, or -1 for %N
  int64_t integer = 0;    // kInteger
  uint32_t float_bits = 0;  // kFloat (0fHHHHHHHH)
  std::string_view text;  // as written
};

bool parse_integer(std::string_view word, bool negative, int64_t& out) {
  if (word.empty() || !std::isdigit(static_cast<unsigned char>(word[0]))) return false;
  if (word.back() == 'U' || word.back() == 'u') word.remove_suffix(1);
  int base = 10;
  if (word.size() > 2 && word[0] == '0' && (word[1] == 'x' || word[1] == 'X')) {
    base = 16;
    word.remove_prefix(2);
  } else if (word.size() > 2 && word[0] == '0' && (word[1] == 'b' || word[1] == 'B')) {
    base = 2;
    word.remove_prefix(2);
  } else if (word.size() > 1 && word[0] == '0') {
    base = 8;
    word.remove_prefix(1);
  }
  if (word.empty()) return false;
  uint64_t value = 0;
  for (char ch : word) {
    int digit = 0;
    if (std::isdigit(static_cast<unsigned char>(ch))) digit = ch - '0';
    else if (ch >= 'a' && ch <= 'f') digit = ch - 'a' + 10;
    else if (ch >= 'A' && ch <= 'F') digit = ch - 'A' + 10;
    else return false;
    if (digit >= base) return false;
    if (value > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(digit)) / static_cast<uint64_t>(base))
      return false;
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
  }
  if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  out = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  return true;
}

// 0fHHHHHHHH: a float's exact bits.
bool parse_float_bits(std::string_view word, uint32_t& out) {
  if (word.size() != 10 || word[0] != '0' || (word[1] != 'f' && word[1] != 'F')) return false;
  uint32_t value = 0;
  for (char ch : word.substr(2)) {
    if (!std::isxdigit(static_cast<unsigned char>(ch))) return false;
    value = value * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0'
                                                                                         : std::tolower(ch) - 'a' + 10);
  }
  out = value;
  return true;
}

float float_of_bits(uint32_t bits) {
  float f = 0.0f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

class TileReader;
using OpcodeHandler = void (TileReader::*)(const Instruction&);

class TileReader {
 public:
  TileReader(const TilePtx& ptx, AnalyzedTile& tile) : ptx_(ptx), tile_(tile) {}

  void run() {
    PtxStatementReader reader(ptx_.text);
    PtxStatement s;
    Scope outer;
    outer.id = next_scope_id_++;
    scopes_.push_back(std::move(outer));
    while (reader.next(s)) {
      statement_offset_ = s.offset;
      statement_end_ = s.end;
      switch (s.kind) {
        case PtxStatement::Kind::kOpen: {
          Scope scope;
          scope.id = next_scope_id_++;
          scopes_.push_back(std::move(scope));
          break;
        }
        case PtxStatement::Kind::kClose:
          if (scopes_.size() == 1) fail("'}' closes no '{'", "}");
          scopes_.pop_back();
          break;
        case PtxStatement::Kind::kLabel:
          label(s.tokens[0].text);
          break;
        case PtxStatement::Kind::kBody:
          ++statement_index_;
          if (s.tokens[0].kind == PtxToken::Kind::kWord && s.tokens[0].text[0] == '.') {
            directive(s.tokens);
          } else {
            ++tile_.statements;
            parse_instruction(s.tokens);
            if (instruction_.opcode == "bra") note_branch();
            if (!skipping_) execute();
          }
          break;
      }
    }
    if (!reader.error().empty()) {
      statement_offset_ = reader.error_offset();
      statement_end_ = std::min(ptx_.text.size(), statement_offset_ + 40);
      fail(reader.error());
    }
    if (!pending_.empty()) {
      statement_offset_ = pending_[0].offset;
      statement_end_ = pending_[0].end;
      statement_index_ = pending_[0].index;
      fail(fmt::format("a branch to {}, a label not defined in a scope it can reach", pending_[0].label));
    }
    if (skipping_) {
      statement_offset_ = skip_from_;
      statement_end_ = skip_from_end_;
      statement_index_ = skip_index_;
      fail(fmt::format("a branch to {}, which is not defined after it in a scope it can reach", skip_to_));
    }
    if (scopes_.size() != 1) {
      statement_offset_ = ptx_.text.size();
      statement_end_ = ptx_.text.size();
      fail(fmt::format("{} '{{' never closed", scopes_.size() - 1), "(the end of the PTX)");
    }
    finish();
  }

 private:
  struct Scope {
    int32_t id = 0;
    std::unordered_map<std::string_view, int32_t> plain;                    // name -> register
    std::unordered_map<std::string_view, std::pair<int32_t, int32_t>> ranges;  // prefix of name<N> -> (first, N)
    std::unordered_map<std::string_view, int32_t> labels;                   // name -> statement index
  };

  // ---- failures ---------------------------------------------------------------------------

  [[noreturn]] void fail(const std::string& what, std::string text = {}) const {
    if (text.empty()) {
      text = ptx_one_line(ptx_.text.substr(statement_offset_, statement_end_ - statement_offset_));
      if (text.size() > kMaxStatementText) text = text.substr(0, kMaxStatementText) + "...";
    }
    throw PtxFailure{statement_offset_,
                     fmt::format("{} in '{}' (PTX statement {} of {})", what, text, statement_index_, ptx_.function)};
  }

  // ---- directives, labels, scopes ---------------------------------------------------------

  // .reg .TYPE name<N>, name, ...;
  void directive(const std::vector<PtxToken>& t) {
    if (t[0].text != ".reg") fail(fmt::format("unsupported directive {}", t[0].text));
    RegClass cls = RegClass::kF32;
    if (t.size() < 3 || t[1].kind != PtxToken::Kind::kWord || t[1].text[0] != '.' ||
        !class_of_type(t[1].text.substr(1), cls))
      fail(t.size() < 2 ? std::string("a .reg without a type")
                        : fmt::format("unsupported register type '{}' (f32 b32 u32 s32 b64 u64 s64 pred are understood)",
                                      t[1].text));
    Scope& scope = scopes_.back();
    size_t i = 2;
    for (;;) {
      if (i >= t.size() || t[i].kind != PtxToken::Kind::kWord || !is_register_name(t[i].text))
        fail(i >= t.size() ? std::string("a .reg without a register name")
                           : fmt::format("'{}' is not a register name", t[i].text));
      const std::string_view name = t[i].text;
      ++i;
      if (scope.plain.count(name) || scope.ranges.count(name)) fail(fmt::format("'{}' is declared twice", name));
      if (i < t.size() && t[i].is('<')) {
        int64_t count = 0;
        if (i + 2 >= t.size() || !parse_integer(t[i + 1].text, false, count) || !t[i + 2].is('>') || count < 1 ||
            count > (int64_t{1} << 22))
          fail(fmt::format("a bad register count after '{}'", name));
        i += 3;
        scope.ranges[name] = {static_cast<int32_t>(registers_.size()), static_cast<int32_t>(count)};
        for (int32_t r = 0; r < count; ++r) registers_.push_back({name, r, cls, {}});
      } else {
        scope.plain[name] = static_cast<int32_t>(registers_.size());
        registers_.push_back({name, -1, cls, {}});
      }
      if (i == t.size()) return;
      if (!t[i].is(',')) fail(fmt::format("unexpected '{}' in a .reg directive", t[i].text));
      ++i;
    }
  }

  static bool is_register_name(std::string_view name) {
    if (name.empty() || name.find('.') != std::string_view::npos) return false;
    const unsigned char first = static_cast<unsigned char>(name[0]);
    return std::isalpha(first) || first == '_' || first == '$';
  }

  // Every branch, taken or not, must have its label in a scope it can reach (ptxas rejects it
  // otherwise): defined before it (a backward branch) or after it.
  void note_branch() {
    const Instruction& in = instruction_;
    if (in.operand_count != 1 || in.operands[0].form != Operand::Form::kWord) return;  // execute() says why
    const std::string_view target = in.operands[0].words[0];
    for (const Scope& scope : scopes_)
      if (scope.labels.count(target)) return;
    PendingBranch b;
    b.label = target;
    b.offset = statement_offset_;
    b.end = statement_end_;
    b.index = statement_index_;
    for (const Scope& scope : scopes_) b.scopes.push_back(scope.id);
    pending_.push_back(std::move(b));
  }

  void label(std::string_view name) {
    Scope& scope = scopes_.back();
    if (scope.labels.count(name)) fail(fmt::format("the label {} is defined twice in one scope", name), std::string(name) + ":");
    scope.labels[name] = statement_index_;
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                  [&](const PendingBranch& b) {
                                    return b.label == name &&
                                           std::find(b.scopes.begin(), b.scopes.end(), scope.id) != b.scopes.end();
                                  }),
                   pending_.end());
    if (skipping_ && name == skip_to_ &&
        std::find(skip_scopes_.begin(), skip_scopes_.end(), scope.id) != skip_scopes_.end())
      skipping_ = false;
  }

  // The register `name` names in the innermost scope declaring it, or -1.
  int32_t find_register(std::string_view name) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      if (const auto it = scope->plain.find(name); it != scope->plain.end()) return it->second;
      // name = prefix + index of some prefix<N>: try every split inside the trailing digits.
      size_t digits = name.size();
      while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
      for (size_t split = digits; split < name.size(); ++split) {
        const std::string_view index_text = name.substr(split);
        if (index_text.size() > 1 && index_text[0] == '0') continue;
        const auto it = scope->ranges.find(name.substr(0, split));
        if (it == scope->ranges.end()) continue;
        int64_t index = 0;
        if (parse_integer(index_text, false, index) && index < it->second.second)
          return it->second.first + static_cast<int32_t>(index);
      }
    }
    return -1;
  }

  // ---- instructions: syntax -----------------------------------------------------------------

  void parse_instruction(const std::vector<PtxToken>& t) {
    Instruction& in = instruction_;
    in.guard = {};
    in.guard_negated = false;
    in.modifiers.clear();
    in.operand_count = 0;
    size_t i = 0;
    if (t[i].is('@')) {
      ++i;
      if (i < t.size() && t[i].is('!')) {
        in.guard_negated = true;
        ++i;
      }
      if (i >= t.size() || t[i].kind != PtxToken::Kind::kWord) fail("a guard '@' without its predicate");
      in.guard = t[i++].text;
    }
    if (i >= t.size() || t[i].kind != PtxToken::Kind::kWord) fail("expected an opcode");
    const std::string_view op = t[i++].text;
    size_t dot = op.find('.');
    in.opcode = op.substr(0, dot);
    while (dot != std::string_view::npos) {
      const size_t next = op.find('.', dot + 1);
      in.modifiers.push_back(op.substr(dot + 1, next == std::string_view::npos ? std::string_view::npos : next - dot - 1));
      dot = next;
    }
    while (i < t.size()) {
      if (in.operand_count == in.operands.size()) in.operands.emplace_back();
      Operand& o = in.operands[in.operand_count++];
      o.form = Operand::Form::kWord;
      o.negative = false;
      o.words.clear();
      o.offset = 0;
      if (t[i].is('{')) {
        o.form = Operand::Form::kVector;
        ++i;
        for (;;) {
          if (i >= t.size() || t[i].kind != PtxToken::Kind::kWord) fail("expected a register in '{...}'");
          o.words.push_back(t[i++].text);
          if (i < t.size() && t[i].is(',')) {
            ++i;
            continue;
          }
          if (i < t.size() && t[i].is('}')) {
            ++i;
            break;
          }
          fail("expected ',' or '}' in a vector operand");
        }
      } else if (t[i].is('[')) {
        o.form = Operand::Form::kAddress;
        ++i;
        if (i >= t.size() || t[i].kind != PtxToken::Kind::kWord) fail("expected an address register in '[...]'");
        o.words.push_back(t[i++].text);
        if (i < t.size() && (t[i].is('+') || t[i].is('-'))) {
          bool negative = t[i].is('-');
          ++i;
          if (i < t.size() && t[i].is('-')) {
            negative = !negative;
            ++i;
          }
          if (i >= t.size() || !parse_integer(t[i].text, negative, o.offset)) fail("expected a byte offset in '[...]'");
          ++i;
        }
        if (i >= t.size() || !t[i].is(']')) fail("expected ']' after an address");
        ++i;
      } else if (t[i].is('-')) {
        ++i;
        if (i >= t.size() || t[i].kind != PtxToken::Kind::kWord) fail("expected a number after '-'");
        o.negative = true;
        o.words.push_back(t[i++].text);
      } else if (t[i].kind == PtxToken::Kind::kWord) {
        o.words.push_back(t[i++].text);
      } else {
        fail(fmt::format("unexpected '{}'", t[i].text));
      }
      if (i < t.size()) {
        if (!t[i].is(',')) fail(fmt::format("unexpected '{}' after an operand", t[i].text));
        ++i;
        if (i == t.size()) fail("an operand missing after ','");
      }
    }
  }

  // ---- instructions: semantics ----------------------------------------------------------------

  static const std::map<std::string_view, OpcodeHandler>& opcodes() {
    static const std::map<std::string_view, OpcodeHandler> kOpcodes = {
        {"mov", &TileReader::op_mov}, {"mad", &TileReader::op_mad}, {"mul", &TileReader::op_mul},
        {"add", &TileReader::op_add}, {"ld", &TileReader::op_ld},   {"st", &TileReader::op_st},
        {"fma", &TileReader::op_fma}, {"setp", &TileReader::op_setp}, {"bra", &TileReader::op_bra},
        {"cvt", &TileReader::op_cvt}, {"griddepcontrol", &TileReader::op_griddepcontrol}};
    return kOpcodes;
  }

  void execute() {
    const Instruction& in = instruction_;
    const auto it = opcodes().find(in.opcode);
    if (it == opcodes().end()) fail(fmt::format("unrecognised instruction '{}'", in.opcode));
    if (!in.guard.empty()) {
      const int32_t slot = find_register(in.guard);
      if (slot < 0 || registers_[static_cast<size_t>(slot)].cls != RegClass::kPred)
        fail(fmt::format("the guard @{} is not a declared predicate", in.guard));
      const Value& v = registers_[static_cast<size_t>(slot)].value;
      if (v.kind != Value::Kind::kPredicate) fail(fmt::format("cannot decide the guard @{}{}", in.guard_negated ? "!" : "", in.guard));
      if (v.truth == in.guard_negated) return;  // not executed
    }
    (this->*(it->second))(in);
  }

  static std::string join_opcode(const Instruction& in) {
    std::string out(in.opcode);
    for (std::string_view m : in.modifiers) out += "." + std::string(m);
    return out;
  }

  void expect_operands(const Instruction& in, size_t count) const {
    if (in.operand_count != count)
      fail(fmt::format("expected {} operands, found {}", count, in.operand_count));
  }

  // The register a plain word names, of one of `allowed` classes.
  int32_t register_operand(const Operand& o, const char* role, std::initializer_list<RegClass> allowed) const {
    if (o.form != Operand::Form::kWord || o.negative) fail(fmt::format("expected a register as the {}", role));
    return named_register(o.words[0], role, allowed);
  }

  int32_t named_register(std::string_view name, const char* role, std::initializer_list<RegClass> allowed) const {
    const int32_t slot = find_register(name);
    if (slot < 0) {
      if (!name.empty() && (name[0] == '%' || std::isdigit(static_cast<unsigned char>(name[0]))))
        fail(fmt::format("expected a register as the {}, found '{}'", role, name));
      fail(fmt::format("'{}' is not a declared register", name));
    }
    const RegClass cls = registers_[static_cast<size_t>(slot)].cls;
    if (std::find(allowed.begin(), allowed.end(), cls) == allowed.end())
      fail(fmt::format("'{}' is not a register of the right type for the {}", name, role));
    return slot;
  }

  const Value& read_register(int32_t slot) const {
    const Register& r = registers_[static_cast<size_t>(slot)];
    if (r.value.kind == Value::Kind::kUnset) fail(fmt::format("'{}' is read before it is written", r.name()));
    return r.value;
  }

  // A source operand: a register, %N or an immediate.
  Source source(const Operand& o, const char* role) const {
    if (o.form != Operand::Form::kWord) fail(fmt::format("unexpected operand form for the {}", role));
    Source s;
    const std::string_view w = o.words[0];
    s.text = w;
    if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0]))) {
      if (!o.negative && parse_float_bits(w, s.float_bits)) {
        s.kind = Source::Kind::kFloat;
        return s;
      }
      if (!parse_integer(w, o.negative, s.integer)) fail(fmt::format("unrecognised immediate '{}'", w));
      s.kind = Source::Kind::kInteger;
      return s;
    }
    if (o.negative) fail(fmt::format("unexpected '-' before '{}'", w));
    if (!w.empty() && w[0] == '%') {
      int64_t n = -1;
      if (!parse_integer(w.substr(1), false, n) || n >= static_cast<int64_t>(ptx_.operands.size()))
        fail(fmt::format("{} is not an operand of the asm statement", w));
      const PtxOperandRole role_of = ptx_.operands[static_cast<size_t>(n)];
      switch (role_of) {
        case PtxOperandRole::kB:
        case PtxOperandRole::kC:
          s.value.kind = Value::Kind::kAddress;
          s.value.buffer = role_of == PtxOperandRole::kB ? Buffer::kB : Buffer::kC;
          s.width = 64;
          break;
        case PtxOperandRole::kRowStride:
          s.value.kind = Value::Kind::kRowStride;
          s.value.rows = 1;
          s.width = 32;
          break;
        case PtxOperandRole::kUnknown:
          fail(fmt::format("{} is an operand of the asm statement the verifier does not recognise", w));
      }
      return s;
    }
    s.slot = named_register(w, role, {RegClass::kF32, RegClass::kB32, RegClass::kI32, RegClass::k64, RegClass::kPred,
                                      RegClass::k16});
    s.value = read_register(s.slot);
    const RegClass cls = registers_[static_cast<size_t>(s.slot)].cls;
    s.width = cls == RegClass::k64 ? 64 : cls == RegClass::kPred ? 1 : cls == RegClass::k16 ? 16 : 32;
    return s;
  }

  void write(int32_t slot, const Value& v) { registers_[static_cast<size_t>(slot)].value = v; }

  // The bytes of an element of an ld or st of type `t` (f32 b32: 4; b16 u16 s16: 2), 0 for others.
  static int element_bytes_of(std::string_view t) {
    if (t == "f32" || t == "b32") return 4;
    if (t == "b16" || t == "u16" || t == "s16") return 2;
    return 0;
  }

  // "float16 (dtype 'float16', 2-byte elements)": the file's dtype, for messages.
  std::string dtype_text() const {
    return fmt::format("{} ({}-byte elements)", dtype_info_name(ptx_.dtype), dtype_bytes(ptx_.dtype));
  }

  // How the file's dtype converts an element of B to float32, for messages.
  std::string expected_conversion() const {
    switch (ptx_.dtype) {
      case DType::kFp16: return "cvt.f32.f16 x,h";
      case DType::kBf16:
        return "mov.b32 x,{z,h} with z = 0 (the bfloat16's bits are the float's upper half), or cvt.f32.bf16 x,h";
      case DType::kTf32:  // read as float32 (a tfloat32 file's tiles are float32's code)
      case DType::kFp32: break;
    }
    return "no conversion (float32 elements are loaded as floats)";
  }

  // mov.b32 x, {lo, hi}: a float from two 16-bit halves. Understood only as the conversion of a
  // bfloat16 element of B: hi the element, lo the constant 0, so the float is the element's value.
  void op_pack(const Instruction& in) {
    if (in.modifiers.size() != 1 || in.modifiers[0] != "b32")
      fail("only mov.b32 x,{lo,hi} packs two 16-bit halves into a float");
    const Operand& halves = in.operands[1];
    if (halves.words.size() != 2) fail("expected mov.b32 x,{lo,hi} of two 16-bit registers");
    if (ptx_.dtype != DType::kBf16)
      fail(fmt::format("mov.b32 x,{{lo,hi}} reads bfloat16 bits as a float, but the file's elements are {}: expected {}",
                       dtype_text(), expected_conversion()));
    const int32_t d = register_operand(in.operands[0], "destination", {RegClass::kF32, RegClass::kB32});
    Operand part;
    part.words.push_back(halves.words[0]);
    const Source lo = source(part, "low half");
    part.words[0] = halves.words[1];
    const Source hi = source(part, "high half");
    const auto is = [](const Source& x, Value::Kind k) {
      return x.kind == Source::Kind::kValue && x.width == 16 && x.value.kind == k;
    };
    if (is(lo, Value::Kind::kRaw) && is(hi, Value::Kind::kConstant16))
      fail(fmt::format("the element '{}' is in the low half: the float would hold its bits below the mantissa, not its "
                       "value (expected mov.b32 x,{{z,h}} with z = 0)",
                       lo.text));
    if (!is(hi, Value::Kind::kRaw))
      fail(fmt::format("the high half '{}' does not hold a loaded element of B (expected mov.b32 x,{{z,h}} with h loaded "
                       "by ld.global.nc.b16 and z = 0)",
                       hi.text));
    if (!is(lo, Value::Kind::kConstant16))
      fail(fmt::format("the low half '{}' is not the constant 0 (expected mov.b32 x,{{z,h}} after mov.b16 z,0)", lo.text));
    if (lo.value.rows != 0)
      fail(fmt::format("the low half '{}' is 0x{:04x}, not 0: the float is not the bfloat16's value", lo.text,
                       static_cast<uint64_t>(lo.value.rows)));
    Value v = hi.value;
    v.kind = Value::Kind::kElement;
    write(d, v);
  }

  // cvt.f32.f16 x, h (fp16) / cvt.f32.bf16 x, h (bf16): an element of B as a float.
  // cvt.rn.f16.f32 o, a (fp16) / cvt.rn.bf16.f32 o, a (bf16): a sum rounded for its store to C.
  void op_cvt(const Instruction& in) {
    expect_operands(in, 2);
    const std::vector<std::string_view>& m = in.modifiers;
    const std::string op = join_opcode(in);
    const auto half_name = [](std::string_view t) { return t == "f16" || t == "bf16"; };
    const char* expected_rounding = ptx_.dtype == DType::kBf16 ? "cvt.rn.bf16.f32" : "cvt.rn.f16.f32";
    if (m.size() == 2 && m[0] == "f32" && half_name(m[1])) {  // widening: exact, no rounding
      const DType reads = m[1] == "f16" ? DType::kFp16 : DType::kBf16;
      if (reads != ptx_.dtype)
        fail(fmt::format("{} reads the element as {}, but the file's elements are {}: expected {}", op,
                         dtype_info_name(reads), dtype_text(), expected_conversion()));
      const int32_t d = register_operand(in.operands[0], "destination", {RegClass::kF32, RegClass::kB32});
      const Source h = source(in.operands[1], "source");
      if (h.kind != Source::Kind::kValue || h.width != 16 || h.value.kind != Value::Kind::kRaw)
        fail(fmt::format("'{}' does not hold a loaded element of B (ld.global.nc.b16)", h.text));
      Value v = h.value;
      v.kind = Value::Kind::kElement;
      write(d, v);
      return;
    }
    if (m.size() == 3 && half_name(m[1]) && m[2] == "f32") {  // narrowing a sum for its store
      const DType to = m[1] == "f16" ? DType::kFp16 : DType::kBf16;
      if (to != ptx_.dtype)
        fail(fmt::format("{} rounds to {}, but the file's elements are {}{}", op, dtype_info_name(to), dtype_text(),
                         ptx_.dtype == DType::kFp32 ? ": float32 sums are stored as they are"
                                                    : fmt::format(": expected {}", expected_rounding)));
      if (m[0] != "rn")
        fail(fmt::format("{} does not round to nearest even, as the generic path ({}) and the CPU reference do: expected "
                         "{}",
                         op, to == DType::kFp16 ? "__float2half_rn" : "__float2bfloat16_rn", expected_rounding));
      const int32_t d = register_operand(in.operands[0], "destination", {RegClass::k16});
      const Source a = source(in.operands[1], "source");
      if (a.kind != Source::Kind::kValue || a.width != 32 || a.value.kind != Value::Kind::kSum)
        fail(fmt::format("'{}' does not hold a sum of products (only sums are rounded and stored to C)", a.text));
      Value v;
      v.kind = Value::Kind::kRounded;
      v.node = a.value.node;
      write(d, v);
      return;
    }
    fail(fmt::format("unrecognised instruction '{}' (only cvt.f32.f16 and cvt.rn.f16.f32 for float16 elements, "
                     "cvt.f32.bf16 and cvt.rn.bf16.f32 for bfloat16 are understood)",
                     op));
  }

  // mov.{b32,f32} a, 0f00000000 | register;  mov.{b64,u64,s64} p, %N | register;  mov.{u32,s32} r, %N | register;
  // mov.b16 z, CONSTANT | register;  mov.b32 x, {z, h} (op_pack)
  void op_mov(const Instruction& in) {
    expect_operands(in, 2);
    if (in.modifiers.size() != 1) fail("expected mov.TYPE");
    if (in.operands[1].form == Operand::Form::kVector) return op_pack(in);
    const std::string_view type = in.modifiers[0];
    RegClass cls = RegClass::kF32;
    if (!class_of_type(type, cls)) fail(fmt::format("unsupported type .{}", type));
    const bool wide = cls == RegClass::k64;
    const bool narrow = cls == RegClass::k16;
    const int32_t d = register_operand(in.operands[0], "destination",
                                       wide ? std::initializer_list<RegClass>{RegClass::k64}
                                       : cls == RegClass::kPred ? std::initializer_list<RegClass>{RegClass::kPred}
                                       : narrow ? std::initializer_list<RegClass>{RegClass::k16}
                                       : std::initializer_list<RegClass>{RegClass::kF32, RegClass::kB32, RegClass::kI32});
    const Source s = source(in.operands[1], "source");
    if (narrow && s.kind == Source::Kind::kInteger) {
      if (s.integer < 0 || s.integer > 0xffff) fail(fmt::format("the constant '{}' does not fit 16 bits", s.text));
      Value c;
      c.kind = Value::Kind::kConstant16;
      c.rows = s.integer;
      write(d, c);
      return;
    }
    if (s.kind != Source::Kind::kValue) {
      const bool zero = (s.kind == Source::Kind::kFloat && s.float_bits == 0) || (s.kind == Source::Kind::kInteger && s.integer == 0);
      if (!zero || wide || narrow || cls == RegClass::kPred)
        fail(fmt::format("unrecognised constant '{}' (only +0, 0f00000000, starts a sum)", s.text));
      Value empty;
      empty.kind = Value::Kind::kSum;
      write(d, empty);
      return;
    }
    if ((s.width == 64) != wide || (s.width == 1) != (cls == RegClass::kPred) || (s.width == 16) != narrow)
      fail(fmt::format("'{}' does not fit a mov.{}", s.text, type));
    write(d, s.value);
  }

  // The row stride times a row number: (stride, ROW) or (ROW, stride), the stride a 32-bit value.
  int64_t stride_times_row(const Operand& a, const Operand& b) const {
    const Source x = source(a, "multiplicand");
    const Source y = source(b, "multiplicand");
    const Source* stride = nullptr;
    const Source* row = nullptr;
    if (x.kind == Source::Kind::kValue && y.kind == Source::Kind::kInteger) {
      stride = &x;
      row = &y;
    } else if (y.kind == Source::Kind::kValue && x.kind == Source::Kind::kInteger) {
      stride = &y;
      row = &x;
    }
    if (!stride || stride->value.kind != Value::Kind::kRowStride || stride->width != 32)
      fail("expected the row stride (%2) times a row number");
    if (row->integer < 0 || row->integer > std::numeric_limits<uint32_t>::max())
      fail(fmt::format("the row number {} is not a .u32", row->integer));
    return stride->value.rows * row->integer;
  }

  void expect_wide_u32(const Instruction& in) const {
    if (in.modifiers.size() != 2 || in.modifiers[0] != "wide" || in.modifiers[1] != "u32")
      fail(fmt::format("unrecognised instruction '{}' (only {}.wide.u32 is understood)", join_opcode(in), in.opcode));
  }

  // Adds a 64-bit value (an address, a row offset or a byte offset) to another.
  Value add_64(const Source& x, const Source& y) const {
    const auto is_address = [](const Source& s) { return s.kind == Source::Kind::kValue && s.value.kind == Value::Kind::kAddress; };
    const auto is_rows = [](const Source& s) {
      return s.kind == Source::Kind::kValue && s.value.kind == Value::Kind::kRowStride && s.width == 64;
    };
    const Source* address = is_address(x) ? &x : is_address(y) ? &y : nullptr;
    const Source* other = address == &x ? &y : &x;
    if (!address) {
      if (is_rows(x) && is_rows(y)) {
        Value v = x.value;
        v.rows += y.value.rows;
        return v;
      }
      fail("expected an address of B or C plus rows or bytes");
    }
    Value v = address->value;
    if (is_rows(*other)) {
      v.rows += other->value.rows;
    } else if (other->kind == Source::Kind::kInteger) {
      v.offset += other->integer;
    } else {
      fail("expected an address of B or C plus rows or bytes");
    }
    return v;
  }

  // mad.wide.u32 p, %2, ROW, BASE: BASE + ROW rows.
  void op_mad(const Instruction& in) {
    expect_wide_u32(in);
    expect_operands(in, 4);
    const int32_t d = register_operand(in.operands[0], "destination", {RegClass::k64});
    Source rows;
    rows.value.kind = Value::Kind::kRowStride;
    rows.value.rows = stride_times_row(in.operands[1], in.operands[2]);
    rows.width = 64;
    const Source base = source(in.operands[3], "addend");
    if (base.kind != Source::Kind::kValue || base.width != 64) fail("the addend is not an address of B or C");
    write(d, add_64(base, rows));
  }

  // mul.wide.u32 r, %2, ROW: ROW rows.
  void op_mul(const Instruction& in) {
    expect_wide_u32(in);
    expect_operands(in, 3);
    const int32_t d = register_operand(in.operands[0], "destination", {RegClass::k64});
    Value v;
    v.kind = Value::Kind::kRowStride;
    v.rows = stride_times_row(in.operands[1], in.operands[2]);
    write(d, v);
  }

  // griddepcontrol.wait: wait until the kernels this one depends on have completed.
  void op_griddepcontrol(const Instruction& in) {
    if (in.modifiers.size() != 1 || in.modifiers[0] != "wait")
      fail(fmt::format("unrecognised instruction '{}' (only griddepcontrol.wait is understood)", join_opcode(in)));
    expect_operands(in, 0);
    tile_.waits = true;
  }

  // add.f32 d, x, y: an element of C (loaded) plus a sum, in either order.
  void add_to_previous(const Instruction& in) {
    expect_operands(in, 3);
    const int32_t d = register_operand(in.operands[0], "destination", {RegClass::kF32, RegClass::kB32});
    const Source x = source(in.operands[1], "first addend");
    const Source y = source(in.operands[2], "second addend");
    const auto is = [](const Source& s, Value::Kind k) { return s.kind == Source::Kind::kValue && s.width == 32 && s.value.kind == k; };
    const Source* previous = is(x, Value::Kind::kPrevious) ? &x : is(y, Value::Kind::kPrevious) ? &y : nullptr;
    const Source* sum = previous == &x ? &y : &x;
    if (!previous || !is(*sum, Value::Kind::kSum))
      fail("only an element of C loaded before plus a sum of products is understood for add.f32");
    Value v;
    v.kind = Value::Kind::kAddedSum;
    v.node = sum->value.node;
    v.rows = previous->value.rows;
    v.lane = previous->value.lane;
    write(d, v);
  }

  // add.{s64,u64} p, x, y;  add.f32 d, c, a (see add_to_previous)
  void op_add(const Instruction& in) {
    if (in.modifiers.size() == 1 && in.modifiers[0] == "f32") return add_to_previous(in);
    if (in.modifiers.size() != 1 || (in.modifiers[0] != "s64" && in.modifiers[0] != "u64"))
      fail(fmt::format("unrecognised instruction '{}' (only add.s64 and add.u64 of addresses, and add.f32 of an element of C "
                       "and a sum, are understood)",
                       join_opcode(in)));
    expect_operands(in, 3);
    const int32_t d = register_operand(in.operands[0], "destination", {RegClass::k64});
    const Source x = source(in.operands[1], "first addend");
    const Source y = source(in.operands[2], "second addend");
    if ((x.kind == Source::Kind::kValue && x.width != 64) || (y.kind == Source::Kind::kValue && y.width != 64))
      fail("an addend is not a 64-bit value");
    write(d, add_64(x, y));
  }

  struct Access {
    Buffer buffer;
    int64_t row;
    int32_t lane;
    int32_t vec;
  };

  // The modifiers of ld or st: [.global] [.nc] [cache operator] [.v2|.v4] .TYPE, TYPE of the file's
  // elements: f32 (or b32) for float32, b16 (or u16, s16) for the half precisions.
  int32_t access_modifiers(const Instruction& in, bool load) const {
    int32_t vec = 1;
    bool global = false, nc = false, cache = false;
    for (size_t i = 0; i + 1 < in.modifiers.size(); ++i) {
      const std::string_view m = in.modifiers[i];
      const bool cache_op = load ? (m == "ca" || m == "cg" || m == "cs" || m == "lu" || m == "cv")
                                 : (m == "wb" || m == "cg" || m == "cs" || m == "wt");
      if (m == "global" && !global) global = true;
      else if (load && m == "nc" && !nc) nc = true;
      else if (cache_op && !cache) cache = true;
      else if ((m == "v2" || m == "v4") && vec == 1) vec = m == "v2" ? 2 : 4;
      else fail(fmt::format("unsupported modifier .{} of {}", m, in.opcode));
    }
    const int want = dtype_bytes(ptx_.dtype);
    const char* want_type = want == 4 ? "f32" : "b16";
    const int bytes = in.modifiers.empty() ? 0 : element_bytes_of(in.modifiers.back());
    if (bytes == 0)
      fail(fmt::format("only {}{}.{} accesses are understood (the file's elements are {})", in.opcode,
                       vec > 1 ? fmt::format(".v{}", vec) : "", want_type, dtype_text()));
    if (bytes != want)
      fail(fmt::format("a {}-byte access (.{}), but B's and C's elements are {}: expected .{} accesses", bytes,
                       in.modifiers.back(), dtype_text(), want_type));
    if (nc && !global) fail("ld.nc needs .global");
    return vec;
  }

  // [p], [p+OFF]: row, lane and alignment of an access of `vec` elements of the file's dtype.
  Access address(const Operand& o, int32_t vec) const {
    if (o.form != Operand::Form::kAddress) fail("expected an address [p] or [p+OFFSET]");
    Operand base;
    base.words.push_back(o.words[0]);
    const Source s = source(base, "address");
    if (s.kind != Source::Kind::kValue || s.value.kind != Value::Kind::kAddress)
      fail(fmt::format("'{}' does not hold an address of B or C", o.words[0]));
    const int64_t offset = s.value.offset + o.offset;
    const int64_t bytes = dtype_bytes(ptx_.dtype);
    if (offset < 0) fail(fmt::format("the access is {} bytes before the thread's first column", -offset));
    if (offset % (bytes * vec) != 0)
      fail(fmt::format("a misaligned access: byte offset {} of a {}-byte access", offset, bytes * vec));
    if (offset / bytes > std::numeric_limits<int32_t>::max() / 2) fail("the byte offset is too large");
    return {s.value.buffer, s.value.rows, static_cast<int32_t>(offset / bytes), vec};
  }

  // The registers of `o`: one word for vec = 1, {r, ...} of vec words otherwise; 32-bit registers
  // for float32 elements, 16-bit ones for the half precisions.
  std::vector<int32_t> vector_registers(const Operand& o, int32_t vec, const char* role) const {
    if (vec == 1 ? o.form != Operand::Form::kWord || o.negative
                 : o.form != Operand::Form::kVector || static_cast<int32_t>(o.words.size()) != vec)
      fail(vec == 1 ? fmt::format("expected one register as the {}", role)
                    : fmt::format("expected {{...}} of {} registers as the {}", vec, role));
    std::vector<int32_t> slots;
    for (std::string_view w : o.words) {
      const int32_t slot = named_register(w, role, {RegClass::kF32, RegClass::kB32, RegClass::k16});
      const bool narrow = registers_[static_cast<size_t>(slot)].cls == RegClass::k16;
      if (narrow != (ptx_.dtype != DType::kFp32)) {
        const Value& v = registers_[static_cast<size_t>(slot)].value;
        if (!narrow && v.kind == Value::Kind::kSum)
          fail(fmt::format("the sum in '{}' is stored unconverted, but C's elements are {}: expected {} o,{} and a store "
                           "of o",
                           w, dtype_text(), ptx_.dtype == DType::kBf16 ? "cvt.rn.bf16.f32" : "cvt.rn.f16.f32", w));
        fail(fmt::format("'{}' is a {}-bit register, but the {} of an access of {} is {}-bit", w, narrow ? 16 : 32, role,
                         dtype_text(), narrow ? 32 : 16));
      }
      slots.push_back(slot);
    }
    return slots;
  }

  void op_ld(const Instruction& in) {
    const int32_t vec = access_modifiers(in, true);
    expect_operands(in, 2);
    const Access a = address(in.operands[1], vec);
    const std::vector<int32_t> slots = vector_registers(in.operands[0], vec, "destination");
    if (a.buffer == Buffer::kC) {  // what the kernels before stored: the tile adds to it
      if (ptx_.dtype != DType::kFp32)
        fail(fmt::format("a load of C, but only float32 tiles add to C (the split along K): the file's elements are {}, "
                         "to which the partial sums would be rounded",
                         dtype_text()));
      if (in.modifiers.size() > 1 && std::find(in.modifiers.begin(), in.modifiers.end(), "nc") != in.modifiers.end())
        fail("ld.global.nc of C, which the kernels write (the non-coherent cache may be stale)");
      if (tile_.first_c_read.file.empty()) tile_.first_c_read = ptx_.locate(statement_offset_);
      if (!tile_.waits) tile_.reads_c_early = true;
      for (int32_t i = 0; i < vec; ++i) {
        Value v;
        v.kind = Value::Kind::kPrevious;
        v.rows = a.row;
        v.lane = a.lane + i;
        write(slots[static_cast<size_t>(i)], v);
      }
      return;
    }
    AnalyzedLoad load;
    load.row = a.row;
    load.first_lane = a.lane;
    load.lanes = vec;
    load.where = ptx_.locate(statement_offset_);
    tile_.load_sites.push_back(std::move(load));
    ++tile_.loads;
    for (int32_t i = 0; i < vec; ++i) {
      Value v;
      v.kind = ptx_.dtype == DType::kFp32 ? Value::Kind::kElement : Value::Kind::kRaw;  // half: converted before use
      v.load = static_cast<int32_t>(tile_.load_sites.size() - 1);
      v.rows = a.row;
      v.lane = a.lane + i;
      write(slots[static_cast<size_t>(i)], v);
    }
  }

  void op_st(const Instruction& in) {
    const int32_t vec = access_modifiers(in, false);
    expect_operands(in, 2);
    const Access a = address(in.operands[0], vec);
    if (a.buffer != Buffer::kC) fail("a store to B (only C is written)");
    const std::vector<int32_t> slots = vector_registers(in.operands[1], vec, "source");
    const CodeLocation where = ptx_.locate(statement_offset_);
    for (int32_t i = 0; i < vec; ++i) {
      const int32_t slot = slots[static_cast<size_t>(i)];
      const Value& v = read_register(slot);
      if (ptx_.dtype != DType::kFp32 && v.kind != Value::Kind::kRounded)
        fail(fmt::format("the value stored to row {} of C ('{}') is not a sum of products rounded to the dtype ({} o,a "
                         "before the store)",
                         a.row, registers_[static_cast<size_t>(slot)].name(),
                         ptx_.dtype == DType::kBf16 ? "cvt.rn.bf16.f32" : "cvt.rn.f16.f32"));
      if (ptx_.dtype == DType::kFp32 && v.kind != Value::Kind::kSum && v.kind != Value::Kind::kAddedSum)
        fail(fmt::format("the value stored to row {} of C ('{}') is not a sum of products",
                         a.row, registers_[static_cast<size_t>(slot)].name()));
      if (v.kind == Value::Kind::kAddedSum && (v.rows != a.row || v.lane != a.lane + i))
        fail(fmt::format("the sum stored to C({}, col + {}) adds C({}, col + {}), another element", a.row, a.lane + i, v.rows,
                         v.lane));
      AnalyzedStore store;
      store.row = a.row;
      store.lane = a.lane + i;
      store.where = where;
      store.adds = v.kind == Value::Kind::kAddedSum;
      store.products = products_of(v.node);
      if (v.node >= 0) stored_[static_cast<size_t>(v.node)] = true;
      tile_.stores.push_back(std::move(store));
    }
  }

  // fma.rn.f32 d, x, 0fWEIGHT, a (or the weight first): d = a + WEIGHT x element.
  void op_fma(const Instruction& in) {
    if (in.modifiers.size() != 2 || in.modifiers[0] != "rn" || in.modifiers[1] != "f32")
      fail(fmt::format("unrecognised instruction '{}' (only fma.rn.f32 is understood: other forms round or flush differently)", join_opcode(in)));
    expect_operands(in, 4);
    const int32_t d = register_operand(in.operands[0], "destination", {RegClass::kF32, RegClass::kB32});
    const Source x = source(in.operands[1], "first factor");
    const Source y = source(in.operands[2], "second factor");
    const Source* weight = x.kind == Source::Kind::kFloat ? &x : y.kind == Source::Kind::kFloat ? &y : nullptr;
    const Source* element = weight == &x ? &y : &x;
    if (!weight) {
      if (x.kind == Source::Kind::kInteger || y.kind == Source::Kind::kInteger)
        fail("the weight is not written as 0fHHHHHHHH");
      fail("neither factor is an immediate weight (0fHHHHHHHH)");
    }
    if (element->kind == Source::Kind::kValue && element->value.kind == Value::Kind::kRaw)
      fail(fmt::format("the factor '{}' holds an element of B as loaded ({}), not converted to float32: expected {} "
                       "before the FMA",
                       element->text, dtype_text(), expected_conversion()));
    if (element->kind != Source::Kind::kValue || element->width != 32) fail("neither factor is an element of B");
    if (element->value.kind != Value::Kind::kElement)
      fail(fmt::format("the factor '{}' does not hold a loaded element of B", element->text));
    const Source a = source(in.operands[3], "addend");
    Value sum;
    sum.kind = Value::Kind::kSum;
    if (a.kind == Source::Kind::kFloat && a.float_bits == 0) {
      sum.node = -1;
    } else if (a.kind == Source::Kind::kValue && a.width == 32 && a.value.kind == Value::Kind::kSum) {
      sum.node = a.value.node;
    } else {
      fail(fmt::format("the addend '{}' is not a sum of products", a.text));
    }
    tile_.load_sites[static_cast<size_t>(element->value.load)].used = true;
    ++tile_.fmas;
    AnalyzedProduct product;
    product.column = element->value.rows;
    product.value = float_of_bits(weight->float_bits);
    product.lane = element->value.lane;
    product.where = ptx_.locate(statement_offset_);
    nodes_.push_back({sum.node, std::move(product)});
    stored_.push_back(false);
    sum.node = static_cast<int32_t>(nodes_.size() - 1);
    write(d, sum);
  }

  // setp.{eq,ne}.{u32,s32,b32} q, %2, 0: the stride (n x the element's bytes, n >= 1) is never 0.
  void op_setp(const Instruction& in) {
    expect_operands(in, 3);
    const bool compare_ok = in.modifiers.size() == 2 && (in.modifiers[0] == "eq" || in.modifiers[0] == "ne") &&
                            (in.modifiers[1] == "u32" || in.modifiers[1] == "s32" || in.modifiers[1] == "b32");
    const int32_t d = register_operand(in.operands[0], "destination", {RegClass::kPred});
    const Source x = source(in.operands[1], "first operand");
    const Source y = source(in.operands[2], "second operand");
    const auto is_stride = [](const Source& s) {
      return s.kind == Source::Kind::kValue && s.value.kind == Value::Kind::kRowStride && s.value.rows == 1 && s.width == 32;
    };
    const auto is_zero = [](const Source& s) { return s.kind == Source::Kind::kInteger && s.integer == 0; };
    if (!compare_ok || !((is_stride(x) && is_zero(y)) || (is_zero(x) && is_stride(y))))
      fail("cannot decide this comparison (only the row stride %2 against 0, which it never equals, is understood)");
    Value v;
    v.kind = Value::Kind::kPredicate;
    v.truth = in.modifiers[0] == "ne";
    write(d, v);
  }

  // [@q] bra[.uni] LABEL: forward, to a label of this scope or an enclosing one.
  void op_bra(const Instruction& in) {
    if (!(in.modifiers.empty() || (in.modifiers.size() == 1 && in.modifiers[0] == "uni")))
      fail(fmt::format("unrecognised instruction '{}' (only bra and bra.uni are understood)", join_opcode(in)));
    expect_operands(in, 1);
    if (in.operands[0].form != Operand::Form::kWord || in.operands[0].negative) fail("expected a label");
    const std::string_view target = in.operands[0].words[0];
    for (const Scope& scope : scopes_)
      if (scope.labels.count(target)) fail(fmt::format("a backward branch to {} (a loop)", target));
    skipping_ = true;
    skip_to_ = target;
    skip_from_ = statement_offset_;
    skip_from_end_ = statement_end_;
    skip_index_ = statement_index_;
    skip_scopes_.clear();
    for (const Scope& scope : scopes_) skip_scopes_.push_back(scope.id);
  }

  // ---- results ----------------------------------------------------------------------------------

  std::vector<AnalyzedProduct> products_of(int32_t node) const {
    std::vector<AnalyzedProduct> out;
    for (int32_t p = node; p >= 0; p = nodes_[static_cast<size_t>(p)].previous)
      out.push_back(nodes_[static_cast<size_t>(p)].product);
    std::reverse(out.begin(), out.end());
    return out;
  }

  void finish() {
    for (const AnalyzedLoad& load : tile_.load_sites)
      if (!load.used) ++tile_.dead_loads;
    for (const Register& r : registers_) {
      if (r.value.kind != Value::Kind::kSum || r.value.node < 0 || stored_[static_cast<size_t>(r.value.node)]) continue;
      UnstoredSum u;
      u.variable = r.name();
      u.products = products_of(r.value.node);
      u.where = u.products.back().where;
      tile_.unstored.push_back(std::move(u));
    }
  }

  const TilePtx& ptx_;
  AnalyzedTile& tile_;
  std::vector<Scope> scopes_;
  int32_t next_scope_id_ = 0;
  std::vector<Register> registers_;
  std::vector<ProductNode> nodes_;
  std::vector<bool> stored_;  // per node: some store wrote the sum ending there
  Instruction instruction_;
  size_t statement_offset_ = 0, statement_end_ = 0;
  int32_t statement_index_ = 0;
  // Branches whose label is not defined yet.
  struct PendingBranch {
    std::string_view label;
    std::vector<int32_t> scopes;  // ids of the scopes it can reach
    size_t offset = 0, end = 0;
    int32_t index = 0;
  };
  std::vector<PendingBranch> pending_;
  // A taken branch: statements are skipped up to its label.
  bool skipping_ = false;
  std::string_view skip_to_;
  std::vector<int32_t> skip_scopes_;
  size_t skip_from_ = 0, skip_from_end_ = 0;
  int32_t skip_index_ = 0;
};

}  // namespace

bool read_tile_ptx(const TilePtx& ptx, AnalyzedTile& tile, std::vector<CodeDiagnostic>& errors) {
  try {
    TileReader(ptx, tile).run();
    return true;
  } catch (const PtxFailure& f) {
    errors.push_back({ptx.locate(f.offset), f.message});
    return false;
  }
}

}  // namespace spmmc::verify_detail
