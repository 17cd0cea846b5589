#include "app/cli/escaping_output.h"

#include "engine/api/session.h"

#include <ostream>
#include <streambuf>
#include <string>

namespace lathe::cli {
namespace {

// Collects output up to a line break or a flush, then writes it escaped to `target`.
class EscapingBuffer : public std::streambuf {
public:
  explicit EscapingBuffer(std::streambuf* target) : target_(target) {}
  ~EscapingBuffer() override { sync(); }

protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof()))
      return sync() == 0 ? traits_type::not_eof(ch) : traits_type::eof();
    pending_ += traits_type::to_char_type(ch);
    if (ch == '\n' && sync() != 0)
      return traits_type::eof();
    return ch;
  }

  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<std::size_t>(n));
    if (pending_.find('\n') != std::string::npos && sync() != 0)
      return 0;
    return n;
  }

  int sync() override {
    if (pending_.empty())
      return target_->pubsync();
    const std::string text = api::escapeText(pending_, /*keepLineBreaks=*/true);
    pending_.clear();
    const auto n = static_cast<std::streamsize>(text.size());
    if (target_->sputn(text.data(), n) != n)
      return -1;
    return target_->pubsync();
  }

private:
  std::streambuf* target_;
  std::string pending_;
};

} // namespace

std::shared_ptr<void> escapeOutputOf(std::ostream& stream) {
  auto buffer = std::make_shared<EscapingBuffer>(stream.rdbuf());
  std::streambuf* original = stream.rdbuf(buffer.get());
  // Restores the original buffer (after flushing) when the last owner lets go.
  return std::shared_ptr<void>(nullptr, [&stream, original, buffer](void*) {
    stream.flush();
    stream.rdbuf(original);
  });
}

} // namespace lathe::cli
