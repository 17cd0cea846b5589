#include "engine/runtime/npy.h"

#include "engine/runtime/npy_format.h"
#include "engine/support/atomic_file.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <limits>

namespace lathe::runtime {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader assumes a little-endian host");

namespace detail {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
// numpy pads headers so that data starts on this boundary (numpy.lib.format.ARRAY_ALIGN).
constexpr std::size_t kHeaderAlign = 64;
// Real headers are < 200 bytes; the cap keeps a corrupt length from allocating gigabytes.
constexpr std::uint32_t kMaxHeaderBytes = 1u << 24;

struct Descr {
  ElementType type;
  bool byteSwapped; // '>' on a multi-byte type
};

// Why a numpy dtype string has no runtime element type, in words the user recognises.
std::string unsupportedDescr(const std::string& descr) {
  const char kind = descr.size() >= 2 ? descr[1] : '?';
  std::string what;
  switch (kind) {
  case 'U':
    what = "unicode strings";
    break;
  case 'S':
  case 'a':
    what = "byte strings";
    break;
  case 'O':
    what = "Python objects";
    break;
  case 'V':
    what = "raw void/structured records";
    break;
  case 'c':
    what = "complex numbers";
    break;
  case 'M':
  case 'm':
    what = "datetimes";
    break;
  default:
    what = "an unknown type";
  }
  return "unsupported dtype '" + descr + "' (" + what +
         "); Lathe reads bool, int8..int64, uint8..uint64, float16, float32, float64";
}

std::optional<Descr> parseDescr(const std::string& descr) {
  if (descr.size() < 3)
    return std::nullopt;
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return std::nullopt;
  const char kind = descr[1];
  const std::string sizeText = descr.substr(2);
  if (!std::all_of(sizeText.begin(), sizeText.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const int size = std::stoi(sizeText.size() > 3 ? "0" : sizeText);
  std::optional<ElementType> type;
  if (kind == 'f' && size == 2)
    type = ElementType::F16;
  else if (kind == 'f' && size == 4)
    type = ElementType::F32;
  else if (kind == 'f' && size == 8)
    type = ElementType::F64;
  else if (kind == 'b' && size == 1)
    type = ElementType::Bool;
  else if (kind == 'i' || kind == 'u') {
    const bool isSigned = kind == 'i';
    if (size == 1)
      type = isSigned ? ElementType::I8 : ElementType::U8;
    else if (size == 2)
      type = isSigned ? ElementType::I16 : ElementType::U16;
    else if (size == 4)
      type = isSigned ? ElementType::I32 : ElementType::U32;
    else if (size == 8)
      type = isSigned ? ElementType::I64 : ElementType::U64;
  }
  if (!type)
    return std::nullopt;
  return Descr{*type, order == '>' && size > 1};
}

std::string descrOf(ElementType type) {
  switch (type) {
  case ElementType::F16:
    return "<f2";
  case ElementType::F32:
  case ElementType::BF16: // widened on write
    return "<f4";
  case ElementType::F64:
    return "<f8";
  case ElementType::I8:
    return "|i1";
  case ElementType::I16:
    return "<i2";
  case ElementType::I32:
    return "<i4";
  case ElementType::I64:
    return "<i8";
  case ElementType::U8:
    return "|u1";
  case ElementType::U16:
    return "<u2";
  case ElementType::U32:
    return "<u4";
  case ElementType::U64:
    return "<u8";
  case ElementType::Bool:
    return "|b1";
  }
  return "?";
}

struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortranOrder;
  std::optional<std::vector<std::int64_t>> shape;
};

// A parser for the one Python literal numpy writes:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
public:
  HeaderParser(std::string_view text, const NpyContext& where) : text_(text), where_(where) {}

  Header parse() {
    Header header;
    expect('{');
    while (true) {
      if (consume('}'))
        break;
      const std::string key = parseString();
      expect(':');
      if (key == "descr") {
        skipSpace();
        if (peek() == '[')
          fail("unsupported structured dtype " + std::string(rest(40)) + "...");
        header.descr = parseString();
      } else if (key == "fortran_order") {
        header.fortranOrder = parseBool();
      } else if (key == "shape") {
        header.shape = parseShape();
      } else {
        skipValue();
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    skipSpace();
    if (pos_ != text_.size())
      fail("unexpected text after the header dictionary");
    return header;
  }

private:
  [[noreturn]] void fail(const std::string& reason) const {
    failNpy(where_, ErrorKind::Invalid, "bad .npy header: " + reason);
  }
  std::string_view rest(std::size_t limit) const { return text_.substr(pos_, limit); }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool consume(char c) {
    skipSpace();
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!consume(c))
      fail(std::string("expected '") + c + "' at \"" + std::string(rest(20)) + "\"");
  }
  std::string parseString() {
    skipSpace();
    const char quote = peek();
    if (quote != '\'' && quote != '"')
      fail("expected a string at \"" + std::string(rest(20)) + "\"");
    ++pos_;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size())
        ++pos_;
      out += text_[pos_++];
    }
    if (pos_ >= text_.size())
      fail("unterminated string");
    ++pos_;
    return out;
  }
  bool parseBool() {
    skipSpace();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False at \"" + std::string(rest(20)) + "\"");
  }
  std::vector<std::int64_t> parseShape() {
    expect('(');
    std::vector<std::int64_t> shape;
    while (!consume(')')) {
      skipSpace();
      if (peek() == '-')
        fail("negative dimension in shape");
      if (peek() < '0' || peek() > '9')
        fail("expected a dimension at \"" + std::string(rest(20)) + "\"");
      std::int64_t dim = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int digit = peek() - '0';
        if (dim > (std::numeric_limits<std::int64_t>::max() - digit) / 10)
          fail("dimension too large");
        dim = dim * 10 + digit;
        ++pos_;
      }
      if (peek() == 'L') // Python 2 long literal, still found in old files
        ++pos_;
      shape.push_back(dim);
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }
  // Skips a value of a key this reader does not use: balanced brackets and strings.
  void skipValue() {
    int depth = 0;
    skipSpace();
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\'' || c == '"') {
        parseString();
        continue;
      }
      if (depth == 0 && (c == ',' || c == '}'))
        return;
      if (c == '(' || c == '[' || c == '{')
        ++depth;
      if (c == ')' || c == ']' || c == '}')
        --depth;
      ++pos_;
    }
    fail("unterminated value");
  }

  std::string_view text_;
  const NpyContext& where_;
  std::size_t pos_ = 0;
};

std::string shapeLiteral(std::span<const std::int64_t> shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    out += ",";
  return out + ")";
}

std::uint32_t readLittleEndian(const unsigned char* bytes, int count) {
  std::uint32_t value = 0;
  for (int i = count - 1; i >= 0; --i)
    value = (value << 8) | bytes[i];
  return value;
}

class SpanSource : public ByteSource {
public:
  explicit SpanSource(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::size_t read(void* destination, std::size_t bytes) override {
    const std::size_t count = std::min(bytes, bytes_.size() - pos_);
    if (count > 0)
      std::memcpy(destination, bytes_.data() + pos_, count);
    pos_ += count;
    return count;
  }

private:
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

class FileSource : public ByteSource {
public:
  explicit FileSource(std::ifstream& in) : in_(in) {}
  std::size_t read(void* destination, std::size_t bytes) override {
    in_.read(static_cast<char*>(destination), static_cast<std::streamsize>(bytes));
    return static_cast<std::size_t>(in_.gcount());
  }

private:
  std::ifstream& in_;
};

} // namespace

void failNpy(const NpyContext& where, ErrorKind kind, const std::string& reason) {
  const std::string prefix = where.array.empty() ? "" : "array '" + where.array + "': ";
  throw Error(kind, prefix + reason, ErrorLocation{where.file, "", ""});
}

NpyHeaderInfo readNpyHeader(ByteSource& in, std::optional<std::uint64_t> totalBytes,
                            const NpyContext& where) {
  unsigned char prefix[12];
  if (in.read(prefix, 10) != 10 || std::memcmp(prefix, kMagic, kMagicSize) != 0)
    failNpy(where, ErrorKind::Invalid, "not a .npy file (no \\x93NUMPY magic)");
  const int major = prefix[6];
  const int minor = prefix[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    failNpy(where, ErrorKind::Invalid,
            "unsupported .npy format version " + std::to_string(major) + "." +
                std::to_string(minor) + " (Lathe reads 1.0, 2.0 and 3.0)");
  std::size_t prefixSize = 10;
  std::uint32_t headerBytes = readLittleEndian(prefix + 8, 2);
  if (major >= 2) { // a 4-byte header length
    if (in.read(prefix + 10, 2) != 2)
      failNpy(where, ErrorKind::Invalid, "truncated .npy header");
    headerBytes = readLittleEndian(prefix + 8, 4);
    prefixSize = 12;
  }
  if (headerBytes > kMaxHeaderBytes || (totalBytes && prefixSize + headerBytes > *totalBytes))
    failNpy(where, ErrorKind::Invalid,
            "truncated .npy header (declares " + std::to_string(headerBytes) + " bytes)");
  std::string headerText(headerBytes, '\0');
  if (in.read(headerText.data(), headerBytes) != headerBytes)
    failNpy(where, ErrorKind::Invalid, "truncated .npy header");

  const Header header = HeaderParser(headerText, where).parse();
  if (!header.descr || !header.fortranOrder || !header.shape)
    failNpy(where, ErrorKind::Invalid,
            "bad .npy header: needs 'descr', 'fortran_order' and 'shape': " + headerText);
  const std::optional<Descr> descr = parseDescr(*header.descr);
  if (!descr)
    failNpy(where, ErrorKind::Invalid, unsupportedDescr(*header.descr));
  if (descr->byteSwapped)
    failNpy(
        where, ErrorKind::Invalid,
        "big-endian dtype '" + *header.descr +
            "' is not supported; save it little-endian, e.g. a.astype(a.dtype.newbyteorder('<'))");
  const std::vector<std::int64_t>& shape = *header.shape;
  if (*header.fortranOrder && shape.size() > 1)
    failNpy(where, ErrorKind::Invalid,
            "fortran_order arrays are not supported; save np.ascontiguousarray(a) instead");

  // Checked here, not by Tensor::allocate, so a bad shape is the file's fault, not ours.
  const std::size_t itemSize = elementSize(descr->type);
  std::uint64_t count = 1;
  for (std::int64_t dim : shape) {
    if (dim != 0 && count > std::numeric_limits<std::uint64_t>::max() / 2 / itemSize /
                                static_cast<std::uint64_t>(dim))
      failNpy(where, ErrorKind::Invalid, "shape " + shapeLiteral(shape) + " is too large");
    count *= static_cast<std::uint64_t>(dim);
  }
  NpyHeaderInfo info;
  info.type = descr->type;
  info.shape = shape;
  info.dataBytes = count * itemSize;
  info.headerBytes = prefixSize + headerBytes;
  info.descr = *header.descr;
  return info;
}

Tensor readNpyStream(ByteSource& in, std::optional<std::uint64_t> totalBytes,
                     const NpyContext& where, std::optional<std::uint64_t> maxDataBytes) {
  const NpyHeaderInfo info = readNpyHeader(in, totalBytes, where);
  const std::vector<std::int64_t>& shape = info.shape;
  const std::uint64_t dataBytes = info.dataBytes;
  const std::string need = "shape " + shapeLiteral(shape) + " of '" + info.descr + "' needs " +
                           std::to_string(dataBytes) + " data bytes";
  // Checked before anything is allocated or inflated: a small compressed member cannot
  // make the reader produce more than the caller can use.
  if (maxDataBytes && dataBytes > *maxDataBytes)
    failNpy(where, ErrorKind::Invalid,
            need + ", more than the " + std::to_string(*maxDataBytes) + " bytes expected");
  if (totalBytes && info.headerBytes + dataBytes > *totalBytes)
    failNpy(where, ErrorKind::Invalid,
            "truncated: " + need + ", the file has " +
                std::to_string(*totalBytes - info.headerBytes));

  Tensor tensor = Tensor::allocate(info.type, shape);
  const std::size_t got = in.read(tensor.rawData(), tensor.byteSize());
  if (got != tensor.byteSize())
    failNpy(where, ErrorKind::Invalid,
            "truncated: " + need + ", the file has " + std::to_string(got));
  char extra;
  if (in.read(&extra, 1) != 0)
    failNpy(where, ErrorKind::Invalid, "size mismatch: " + need + ", the file has more");
  // Any nonzero byte is true to numpy; C++ bool must hold exactly 0 or 1.
  if (info.type == ElementType::Bool)
    for (std::byte& b : tensor.bytes())
      b = b != std::byte{0} ? std::byte{1} : std::byte{0};
  return tensor;
}

EncodedNpy encodeNpyParts(const Tensor& tensor) {
  EncodedNpy out;
  out.data = tensor.bytes();
  if (tensor.elementType() == ElementType::BF16) {
    out.widened = Tensor::allocate(ElementType::F32, tensor.shape());
    const std::span<const BFloat16> from = tensor.values<BFloat16>();
    std::span<float> to = out.widened.values<float>();
    for (std::size_t i = 0; i < from.size(); ++i)
      to[i] = from[i].toFloat();
    out.data = out.widened.bytes();
  }

  std::string dict = "{'descr': '" + descrOf(tensor.elementType()) +
                     "', 'fortran_order': False, 'shape': " + shapeLiteral(tensor.shape()) + ", }";
  // Version 1.0 stores the header length in 2 bytes; 2.0 is only for headers beyond that.
  const bool version2 = dict.size() + 1 + 10 + kHeaderAlign > 0xFFFF;
  const std::size_t prefixSize = version2 ? 12 : 10;
  const std::size_t unpadded = prefixSize + dict.size() + 1; // + the closing '\n'
  const std::size_t total = (unpadded + kHeaderAlign - 1) / kHeaderAlign * kHeaderAlign;
  dict.append(total - unpadded, ' ');
  dict += '\n';

  const std::uint32_t length = static_cast<std::uint32_t>(dict.size());
  out.header.assign(kMagic, kMagicSize);
  out.header += static_cast<char>(version2 ? 2 : 1);
  out.header += '\0';
  for (std::size_t i = 0; i < prefixSize - 8; ++i)
    out.header += static_cast<char>((length >> (8 * i)) & 0xFF);
  out.header += dict;
  return out;
}

} // namespace detail

Tensor readNpy(const std::filesystem::path& path) {
  const detail::NpyContext where{path.string(), ""};
  std::ifstream in(path, std::ios::binary);
  if (!in)
    detail::failNpy(where, ErrorKind::Io, "cannot open for reading");
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  detail::FileSource source(in);
  Tensor tensor =
      detail::readNpyStream(source, ec ? std::nullopt : std::optional<std::uint64_t>(size), where);
  if (in.bad())
    detail::failNpy(where, ErrorKind::Io, "read error");
  return tensor;
}

void writeNpy(const std::filesystem::path& path, const Tensor& tensor) {
  const detail::NpyContext where{path.string(), ""};
  const detail::EncodedNpy encoded = detail::encodeNpyParts(tensor);
  AtomicFile out(path);
  out.write(encoded.header);
  out.write({reinterpret_cast<const char*>(encoded.data.data()), encoded.data.size()});
  out.commit();
}

Tensor decodeNpy(std::span<const std::byte> bytes, const std::string& source) {
  detail::SpanSource in(bytes);
  return detail::readNpyStream(in, bytes.size(), detail::NpyContext{source, ""});
}

std::vector<std::byte> encodeNpy(const Tensor& tensor) {
  const detail::EncodedNpy encoded = detail::encodeNpyParts(tensor);
  std::vector<std::byte> out(encoded.header.size() + encoded.data.size());
  std::memcpy(out.data(), encoded.header.data(), encoded.header.size());
  if (!encoded.data.empty())
    std::memcpy(out.data() + encoded.header.size(), encoded.data.data(), encoded.data.size());
  return out;
}

} // namespace lathe::runtime
