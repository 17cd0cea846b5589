// An operator's builtin options as text, for the graph view's "as authored": every field of
// its options table by name, read through flatc's mini reflection (--reflect-names), so
// that each new option table shows without code of its own. Mini reflection carries no
// defaults: the ones the schema declares come from it at build time (option_defaults.py).
#include "engine/frontend/tflite/tflite_convert.h"

#include <cstring>
#include <flatbuffers/minireflect.h>
#include <sstream>

namespace lathe::frontend::tflite {
namespace {

using flatbuffers::ElementaryType;
using flatbuffers::TypeTable;

// {table, field, default} for every field tflite_schema.fbs gives a default.
struct DeclaredDefault {
  const char* table;
  const char* field;
  const char* value;
};
constexpr DeclaredDefault kDeclaredDefaults[] = {
#include "tflite_option_defaults.inc"
};

// The fields of one options table; values of nested vectors and tables go into their
// field's text.
class OptionsPrinter : public flatbuffers::IterationVisitor {
public:
  explicit OptionsPrinter(std::string table) : table_(std::move(table)) {}

  std::vector<std::pair<std::string, std::string>> fields;

  void StartSequence() override {
    if (++depth_ > 1)
      append("{");
  }
  void EndSequence() override {
    if (depth_-- > 1)
      append("}");
  }
  void Field(size_t, size_t setIndex, ElementaryType type, bool isVector, const TypeTable* table,
             const char* name, const std::uint8_t* value) override {
    const std::string key = name ? name : "?";
    if (depth_ > 1) {
      if (value)
        append(std::string(setIndex > 0 ? ", " : "") + key + ": ");
      return;
    }
    if (value) {
      fields.emplace_back(key, std::string());
      return;
    }
    // Absent: the schema's default, or 0 / false / an enum's value 0 where it declares none.
    if (isVector || type == ElementaryType::ET_STRING || type == ElementaryType::ET_SEQUENCE)
      return;
    std::string declared = type == ElementaryType::ET_BOOL ? "false" : "0";
    for (const DeclaredDefault& d : kDeclaredDefaults)
      if (table_ == d.table && key == d.field)
        declared = d.value;
    const bool isEnum = table && table->names && table->num_elems > 0;
    const bool numeric =
        !declared.empty() && declared.find_first_not_of("-0123456789") == std::string::npos;
    fields.emplace_back(key, isEnum && numeric ? enumName(std::stoll(declared), table) : declared);
  }
  void UType(std::uint8_t v, const char* n) override { number(v, n); }
  void Bool(bool v) override { append(v ? "true" : "false"); }
  void Char(std::int8_t v, const char* n) override { number(v, n); }
  void UChar(std::uint8_t v, const char* n) override { number(v, n); }
  void Short(std::int16_t v, const char* n) override { number(v, n); }
  void UShort(std::uint16_t v, const char* n) override { number(v, n); }
  void Int(std::int32_t v, const char* n) override { number(v, n); }
  void UInt(std::uint32_t v, const char* n) override { number(v, n); }
  void Long(std::int64_t v) override { number(v, nullptr); }
  void ULong(std::uint64_t v) override { number(v, nullptr); }
  void Float(float v) override { real(v); }
  void Double(double v) override { real(v); }
  void String(const flatbuffers::String* s) override { append("\"" + s->str() + "\""); }
  void Unknown(const std::uint8_t*) override { append("?"); }
  void StartVector() override { append("["); }
  void EndVector() override { append("]"); }
  void Element(size_t i, ElementaryType, const TypeTable*, const std::uint8_t*) override {
    if (i > 0)
      append(", ");
  }

private:
  static std::string enumName(std::int64_t v, const TypeTable* table) {
    for (size_t i = 0; i < table->num_elems; ++i)
      if ((table->values ? table->values[i] : static_cast<std::int64_t>(i)) == v)
        return table->names[i];
    return std::to_string(v);
  }
  template <typename T>
  void number(T v, const char* enumName) {
    append(enumName ? std::string(enumName) : std::to_string(v));
  }
  void real(double v) {
    std::ostringstream s;
    s << v;
    append(s.str());
  }
  void append(const std::string& text) {
    if (!fields.empty() && fields.back().second.size() < 400)
      fields.back().second += text;
  }

  std::string table_;
  int depth_ = 0;
};

} // namespace

std::vector<std::pair<std::string, std::string>> describeOptions(const lathe_tflite::Operator& op) {
  const void* options = op.builtin_options();
  if (!options)
    return {};
  const TypeTable* unionTable = lathe_tflite::BuiltinOptionsTypeTable();
  const auto type = static_cast<std::int64_t>(op.builtin_options_type());
  for (size_t i = 0; i < unionTable->num_elems; ++i) {
    const std::int64_t value =
        unionTable->values ? unionTable->values[i] : static_cast<std::int64_t>(i);
    const flatbuffers::TypeCode code = unionTable->type_codes[i];
    if (value != type || code.sequence_ref < 0)
      continue;
    OptionsPrinter printer(unionTable->names[i]);
    flatbuffers::IterateObject(static_cast<const std::uint8_t*>(options),
                               unionTable->type_refs[code.sequence_ref](), &printer);
    return printer.fields;
  }
  return {};
}

} // namespace lathe::frontend::tflite
