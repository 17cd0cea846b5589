// Names from untrusted files made safe to print: control characters and invalid UTF-8
// become \xNN, valid UTF-8 passes.
#include "engine/support/diagnostics.h"
#include "engine/support/text_escape.h"

#include <gtest/gtest.h>

namespace lathe {
namespace {

TEST(TextEscape, PlainAndUnicodeTextPasses) {
  EXPECT_EQ(escapeText("conv1/weight:0"), "conv1/weight:0");
  EXPECT_EQ(escapeText("gr\xc3\xb6\xc3\x9f"
                       "e \xe2\x86\x92 \xf0\x9f\x99\x82"),
            "gr\xc3\xb6\xc3\x9f"
            "e \xe2\x86\x92 \xf0\x9f\x99\x82");
  EXPECT_TRUE(isPlainText("a b"));
}

TEST(TextEscape, ControlCharactersAreEscaped) {
  EXPECT_EQ(escapeText("y\x1b[31m"), "y\\x1B[31m");
  EXPECT_EQ(escapeText("a\nb\tc\x7f"), "a\\x0Ab\\x09c\\x7F");
  EXPECT_EQ(escapeText("a\nb\tc", /*keepLineBreaks=*/true), "a\nb\tc");
  EXPECT_EQ(escapeText("c1 \xc2\x9b"), "c1 \\xC2\\x9B"); // C1 control CSI
  EXPECT_FALSE(isPlainText("\x1b"));
}

TEST(TextEscape, InvalidUtf8IsEscapedBytewise) {
  EXPECT_EQ(escapeText("x\xff\xfe\x80zz"), "x\\xFF\\xFE\\x80zz");
  EXPECT_EQ(escapeText("\xc0\xaf"), "\\xC0\\xAF");          // overlong '/'
  EXPECT_EQ(escapeText("\xed\xa0\x80"), "\\xED\\xA0\\x80"); // a surrogate
  EXPECT_EQ(escapeText("\xe2\x86"), "\\xE2\\x86");          // cut short
}

TEST(TextEscape, ErrorMessagesAreEscaped) {
  const Error e(ErrorKind::Invalid, "output 'y\x1b[2J' is bad", {"m\xff.onnx", "n\x1b", "Relu"});
  EXPECT_STREQ(e.what(), "m\\xFF.onnx: node 'n\\x1B' (Relu): output 'y\\x1B[2J' is bad");
}

} // namespace
} // namespace lathe
