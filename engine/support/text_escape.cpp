#include "engine/support/text_escape.h"

#include <cstdint>

namespace lathe {
namespace {

// Length of the valid UTF-8 sequence starting at s[i] (1 to 4), or 0 if it is not one.
std::size_t utf8Length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<std::uint8_t>(s[k]); };
  const std::uint8_t c = b(i);
  if (c < 0x80)
    return 1;
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size())
    return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not valid UTF-8.
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
    return 0;
  if (cp >= 0x80 && cp <= 0x9F) // C1 control characters
    return 0;
  return n;
}

bool isControl(unsigned char c, bool keepLineBreaks) {
  if (keepLineBreaks && (c == '\n' || c == '\t'))
    return false;
  return c < 0x20 || c == 0x7F;
}

void appendHex(std::string& out, unsigned char c) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  out += "\\x";
  out += kDigits[c >> 4];
  out += kDigits[c & 0xF];
}

} // namespace

std::string escapeText(std::string_view bytes, bool keepLineBreaks) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    const std::size_t n = utf8Length(bytes, i);
    if (n == 0 || (n == 1 && isControl(c, keepLineBreaks))) {
      appendHex(out, c);
      ++i;
      continue;
    }
    out.append(bytes.substr(i, n));
    i += n;
  }
  return out;
}

bool isPlainText(std::string_view bytes, bool keepLineBreaks) {
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = utf8Length(bytes, i);
    if (n == 0 || (n == 1 && isControl(static_cast<unsigned char>(bytes[i]), keepLineBreaks)))
      return false;
    i += n;
  }
  return true;
}

} // namespace lathe
