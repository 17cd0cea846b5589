// .npy/.npz I/O, against real numpy: npy_interop.py writes files for us to read and checks
// the files we write. Nothing binary is committed.

#include "engine/runtime/npy.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

namespace lathe::runtime {
namespace {

namespace fs = std::filesystem;

// --- helpers ------------------------------------------------------------------------------

// The same formula as value() in npy_interop.py.
double patternValue(ElementType type, std::int64_t i) {
  const std::int64_t k = (i * 37) % 101;
  if (isFloatingPoint(type))
    return static_cast<double>(k - 50) / 4.0;
  if (isSignedInteger(type))
    return static_cast<double>(k - 50);
  if (isUnsignedInteger(type))
    return static_cast<double>(k);
  return i % 3 == 0 ? 1.0 : 0.0;
}

template <class T>
void setElement(Tensor& t, std::int64_t i, double value) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    t.data<T>()[i] = T::fromFloat(static_cast<float>(value));
  else
    t.data<T>()[i] = static_cast<T>(value);
}

void setElementAs(Tensor& t, std::int64_t i, double value) {
  switch (t.elementType()) {
  case ElementType::F32:
    return setElement<float>(t, i, value);
  case ElementType::F64:
    return setElement<double>(t, i, value);
  case ElementType::F16:
    return setElement<Float16>(t, i, value);
  case ElementType::BF16:
    return setElement<BFloat16>(t, i, value);
  case ElementType::I8:
    return setElement<std::int8_t>(t, i, value);
  case ElementType::I16:
    return setElement<std::int16_t>(t, i, value);
  case ElementType::I32:
    return setElement<std::int32_t>(t, i, value);
  case ElementType::I64:
    return setElement<std::int64_t>(t, i, value);
  case ElementType::U8:
    return setElement<std::uint8_t>(t, i, value);
  case ElementType::U16:
    return setElement<std::uint16_t>(t, i, value);
  case ElementType::U32:
    return setElement<std::uint32_t>(t, i, value);
  case ElementType::U64:
    return setElement<std::uint64_t>(t, i, value);
  case ElementType::Bool:
    return setElement<bool>(t, i, value);
  }
}

Tensor pattern(ElementType type, std::vector<std::int64_t> shape = {2, 3, 4}) {
  Tensor t = Tensor::allocate(type, std::move(shape));
  for (std::int64_t i = 0; i < t.numElements(); ++i)
    setElementAs(t, i, patternValue(type, i));
  return t;
}

// Element types numpy has, i.e. all but bf16.
std::vector<ElementType> numpyTypes() {
  std::vector<ElementType> types;
  for (ElementType type : kAllElementTypes)
    if (type != ElementType::BF16)
      types.push_back(type);
  return types;
}

Error errorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a lathe::Error";
  return Error(ErrorKind::Internal, "no error");
}

// An Invalid error whose text names the file and contains `fragment`.
void expectInvalid(const std::function<void()>& fn, const fs::path& file,
                   const std::string& fragment) {
  const Error e = errorOf(fn);
  EXPECT_EQ(e.kind(), ErrorKind::Invalid) << e.what();
  EXPECT_EQ(e.where().file, file.string()) << e.what();
  EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
      << "'" << fragment << "' not in: " << e.what();
}

int runInterop(const std::string& mode, const fs::path& dir) {
  const std::string command = std::string("'") + LATHE_PYTHON + "' '" + LATHE_NPY_INTEROP_SCRIPT +
                              "' " + mode + " '" + dir.string() + "'";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A fresh directory per test process (ctest runs tests in parallel).
fs::path freshDir(const std::string& tag) {
  const fs::path dir =
      fs::temp_directory_path() / ("lathe-runtime-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A .npy with a hand-written header dictionary and `dataBytes` zero bytes of data.
std::vector<std::byte> rawNpy(const std::string& dict, std::size_t dataBytes, int major = 1) {
  std::string text = "\x93NUMPY";
  text += static_cast<char>(major);
  text += '\0';
  const std::string header = dict + "\n";
  const int lengthBytes = major == 1 ? 2 : 4;
  for (int i = 0; i < lengthBytes; ++i)
    text += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  text += header;
  std::vector<std::byte> out(text.size() + dataBytes);
  std::memcpy(out.data(), text.data(), text.size());
  return out;
}

void writeBytes(const fs::path& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// --- reading files numpy wrote ---------------------------------------------------------

class NumpyFiles : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = freshDir("numpy");
    ASSERT_EQ(runInterop("generate", dir_), 0) << "npy_interop.py generate failed";
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static fs::path file(const std::string& name) { return dir_ / name; }

  static inline fs::path dir_;
};

TEST_F(NumpyFiles, ReadsEveryDtype) {
  for (ElementType type : numpyTypes()) {
    const Tensor t = readNpy(file(std::string(elementTypeName(type)) + ".npy"));
    EXPECT_TRUE(bitwiseEqual(t, pattern(type))) << elementTypeName(type) << " " << describe(t);
    EXPECT_TRUE(t.isAligned());
  }
}

TEST_F(NumpyFiles, ReadsScalarsEmptyAndSpecialValues) {
  const Tensor scalar = readNpy(file("scalar.npy"));
  EXPECT_EQ(describe(scalar), "f64[]");
  EXPECT_EQ(scalar.data<double>()[0], 3.5);
  EXPECT_EQ(describe(readNpy(file("empty.npy"))), "f32[0,5]");

  const Tensor special = readNpy(file("special.npy"));
  const std::span<const float> v = special.values<float>();
  ASSERT_EQ(v.size(), 5u);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[2], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(v[3]));
  EXPECT_EQ(formatSummary(summarize(special)), "min -0 max 1.5 mean 0.75 (1 NaN, 2 inf)");

  const Tensor extremes = readNpy(file("extremes.npy"));
  EXPECT_EQ(extremes.data<std::int64_t>()[0], std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(extremes.data<std::int64_t>()[1], std::numeric_limits<std::int64_t>::max());
}

TEST_F(NumpyFiles, ReadsVersion2And3Headers) {
  EXPECT_TRUE(bitwiseEqual(readNpy(file("v2.npy")), pattern(ElementType::I32)));
  EXPECT_TRUE(bitwiseEqual(readNpy(file("v3.npy")), pattern(ElementType::F64)));
}

TEST_F(NumpyFiles, Float16RoundingMatchesNumpy) {
  const Tensor f32 = readNpzArray(file("f16_rounding.npz"), "f32");
  const Tensor f16 = readNpzArray(file("f16_rounding.npz"), "f16");
  ASSERT_EQ(f32.numElements(), f16.numElements());
  for (std::int64_t i = 0; i < f32.numElements(); ++i) {
    const float value = f32.data<float>()[i];
    ASSERT_EQ(Float16::fromFloat(value).bits, f16.data<Float16>()[i].bits) << value;
  }
}

TEST_F(NumpyFiles, RefusesWhatItCannotRepresent) {
  const auto refuses = [&](const std::string& name, const std::string& fragment) {
    expectInvalid([&] { readNpy(file(name)); }, file(name), fragment);
  };
  refuses("fortran.npy", "fortran_order");
  refuses("unicode.npy", "'<U10' (unicode strings)");
  refuses("object.npy", "'|O' (Python objects)");
  refuses("bigendian.npy", "big-endian dtype '>f4'");
  refuses("complex.npy", "'<c8' (complex numbers)");
  refuses("structured.npy", "structured dtype");
}

TEST_F(NumpyFiles, ReadsStoredAndCompressedNpz) {
  for (const char* name : {"stored.npz", "compressed.npz"}) {
    SCOPED_TRACE(name);
    const std::vector<NamedTensor> arrays = readNpz(file(name));
    std::vector<std::string> names;
    for (const NamedTensor& a : arrays)
      names.push_back(a.name);
    const std::vector<std::string> expected = {"weights", "ids", "mask", "scalar", "empty", "half"};
    EXPECT_EQ(names, expected);
    EXPECT_EQ(listNpz(file(name)), expected);
    EXPECT_TRUE(bitwiseEqual(arrays[0].tensor, pattern(ElementType::F32)));
    EXPECT_TRUE(bitwiseEqual(arrays[1].tensor, pattern(ElementType::I64)));
    EXPECT_TRUE(bitwiseEqual(arrays[2].tensor, pattern(ElementType::Bool)));
    EXPECT_EQ(describe(arrays[3].tensor), "f64[]");
    EXPECT_EQ(describe(arrays[4].tensor), "f32[0,5]");
    EXPECT_TRUE(bitwiseEqual(readNpzArray(file(name), "half"), pattern(ElementType::F16)));
  }
  expectInvalid([&] { readNpzArray(file("stored.npz"), "bias"); }, file("stored.npz"),
                "array 'bias': no such array in the archive (it has: weights, ids, mask");
}

TEST_F(NumpyFiles, PositionalAndEmptyArchives) {
  const std::vector<NamedTensor> arrays = readNpz(file("positional.npz"));
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].name, "arr_0");
  EXPECT_TRUE(bitwiseEqual(arrays[0].tensor, pattern(ElementType::U16)));
  EXPECT_EQ(arrays[1].name, "arr_1");
  EXPECT_TRUE(bitwiseEqual(arrays[1].tensor, pattern(ElementType::I8)));
  EXPECT_TRUE(readNpz(file("empty.npz")).empty());
}

TEST_F(NumpyFiles, BadMemberNamesTheArray) {
  expectInvalid([&] { readNpz(file("bad_member.npz")); }, file("bad_member.npz"),
                "array 'names': unsupported dtype '<U10'");
  EXPECT_TRUE(
      bitwiseEqual(readNpzArray(file("bad_member.npz"), "good"), pattern(ElementType::F32)));
}

// --- numpy reading files Lathe wrote ---------------------------------------------------

TEST(NpyInterop, NumpyReadsWhatLatheWrites) {
  const fs::path dir = freshDir("lathe-written");
  for (ElementType type : numpyTypes())
    writeNpy(dir / ("lathe_" + std::string(elementTypeName(type)) + ".npy"), pattern(type));
  Tensor scalar = Tensor::allocate(ElementType::F64, {});
  scalar.data<double>()[0] = 3.5;
  writeNpy(dir / "lathe_scalar.npy", scalar);
  writeNpy(dir / "lathe_empty.npy", Tensor::allocate(ElementType::F32, {0, 5}));
  Tensor bf16 = Tensor::allocate(ElementType::BF16, {3});
  setElementAs(bf16, 0, 1.0);
  setElementAs(bf16, 1, -2.5);
  setElementAs(bf16, 2, 0.0078125);
  writeNpy(dir / "lathe_bf16.npy", bf16);

  Tensor ids = pattern(ElementType::I64);
  std::vector<NamedTensor> arrays;
  arrays.push_back({"weights", pattern(ElementType::F32)});
  arrays.push_back({"ids", ids.view()}); // saved through a view, not copied
  arrays.push_back({"mask", pattern(ElementType::Bool)});
  arrays.push_back({"dir/nested", pattern(ElementType::U8, {7})});
  writeNpz(dir / "lathe.npz", arrays);
  writeNpz(dir / "lathe_empty.npz", {});

  EXPECT_EQ(runInterop("check", dir), 0) << "numpy rejected a file in " << dir;
  // And we read our own files back.
  const std::vector<NamedTensor> back = readNpz(dir / "lathe.npz");
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(back[3].name, "dir/nested");
  EXPECT_TRUE(bitwiseEqual(back[1].tensor, ids));
  EXPECT_TRUE(readNpz(dir / "lathe_empty.npz").empty());
  fs::remove_all(dir);
}

// --- without numpy: round trips and broken files ---------------------------------------

TEST(Npy, InMemoryRoundTripEveryType) {
  for (ElementType type : kAllElementTypes) {
    for (const std::vector<std::int64_t>& shape :
         {std::vector<std::int64_t>{}, {0}, {5}, {2, 3, 4}, {1, 1, 1, 1, 1, 3}}) {
      Tensor t = Tensor::allocate(type, shape);
      t.fillRandom(11);
      const std::vector<std::byte> bytes = encodeNpy(t);
      EXPECT_EQ((bytes.size() - t.byteSize() * (type == ElementType::BF16 ? 2 : 1)) % 64, 0u);
      const Tensor back = decodeNpy(bytes);
      if (type == ElementType::BF16) { // widened to f32, exactly
        ASSERT_EQ(describe(back), "f32" + formatShape(shape));
        for (std::int64_t i = 0; i < t.numElements(); ++i)
          EXPECT_EQ(back.elementAsDouble(i), t.elementAsDouble(i));
      } else {
        EXPECT_TRUE(bitwiseEqual(back, t)) << describe(t);
      }
    }
  }
}

TEST(Npy, BrokenBytes) {
  const fs::path dir = freshDir("broken");
  const auto refuses = [&](const std::string& name, std::span<const std::byte> bytes,
                           const std::string& fragment) {
    writeBytes(dir / name, bytes);
    expectInvalid([&] { readNpy(dir / name); }, dir / name, fragment);
    // The in-memory decoder says the same, naming its source.
    const Error e = errorOf([&] { decodeNpy(bytes, "buffer"); });
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  };
  const std::vector<std::byte> good = encodeNpy(pattern(ElementType::F32, {2, 3}));

  refuses("empty.npy", {}, "not a .npy file");
  std::vector<std::byte> wrongMagic = good;
  wrongMagic[1] = std::byte{'X'};
  refuses("magic.npy", wrongMagic, "not a .npy file");
  std::vector<std::byte> version = good;
  version[6] = std::byte{4};
  refuses("version.npy", version, "unsupported .npy format version 4.0");
  refuses("cut-header.npy", std::span(good).first(40), "truncated .npy header");
  refuses("cut-data.npy", std::span(good).first(good.size() - 4),
          "truncated: shape (2, 3) of '<f4' needs 24 data bytes, the file has 20");
  std::vector<std::byte> trailing = good;
  trailing.push_back(std::byte{0});
  refuses("trailing.npy", trailing, "size mismatch");

  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  refuses("shape-too-big.npy", rawNpy(ok, 20), "needs 24 data bytes, the file has 20");
  refuses("v2-ok-but-short.npy", rawNpy(ok, 8, 2), "the file has 8");
  refuses("no-shape.npy", rawNpy("{'descr': '<f4', 'fortran_order': False}", 4),
          "needs 'descr', 'fortran_order' and 'shape'");
  refuses("syntax.npy", rawNpy("{'descr' '<f4'}", 4), "bad .npy header: expected ':'");
  refuses("negative.npy", rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", 4),
          "negative dimension");
  refuses("overflow.npy",
          rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (9999999999, "
                 "9999999999, 9999999999), }",
                 4),
          "too large");
  refuses("kind.npy", rawNpy("{'descr': '<f3', 'fortran_order': False, 'shape': (1,), }", 4),
          "unsupported dtype '<f3'");
  std::vector<std::byte> hugeHeader = good;
  hugeHeader[8] = hugeHeader[9] = std::byte{0xFF};
  refuses("huge-header.npy", hugeHeader, "truncated .npy header");

  // Python 2 files spell dimensions with an L; extra keys are ignored.
  const Tensor old = decodeNpy(
      rawNpy("{'descr': '|u1', 'fortran_order': False, 'shape': (3L,), 'x': [1, (2,)]}", 3));
  EXPECT_EQ(describe(old), "u8[3]");

  // numpy writes bools as 0/1, but any nonzero byte is true and must read as exactly 1.
  std::vector<std::byte> bools =
      rawNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 3);
  bools[bools.size() - 2] = std::byte{7};
  const Tensor b = decodeNpy(bools);
  EXPECT_EQ(static_cast<int>(b.bytes()[1]), 1);

  const Error missing = errorOf([&] { readNpy(dir / "missing.npy"); });
  EXPECT_EQ(missing.kind(), ErrorKind::Io);
  const Error unwritable =
      errorOf([&] { writeNpy(dir / "no-such-dir" / "x.npy", pattern(ElementType::F32)); });
  EXPECT_EQ(unwritable.kind(), ErrorKind::Io);
  fs::remove_all(dir);
}

TEST(Npy, RandomCorruptionIsAnErrorNeverACrash) {
  const std::vector<std::byte> good = encodeNpy(pattern(ElementType::I16, {3, 5}));
  std::mt19937 rng(99);
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<std::byte> bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) // mostly in the magic and header, where parsing happens
      bytes[rng() % 140] = static_cast<std::byte>(rng());
    if (rng() % 4 == 0)
      bytes.resize(rng() % bytes.size());
    try {
      const Tensor t = decodeNpy(bytes);
      EXPECT_EQ(t.byteSize() + 128, bytes.size()); // what decodes is self-consistent
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Invalid) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 1000);
}

TEST(Npz, RoundTripAndBrokenArchives) {
  const fs::path dir = freshDir("npz");
  std::vector<NamedTensor> arrays;
  arrays.push_back({"a", pattern(ElementType::F32, {64, 64})});
  arrays.push_back({"b", pattern(ElementType::I16, {3})});
  writeNpz(dir / "ok.npz", arrays);
  const std::vector<NamedTensor> back = readNpz(dir / "ok.npz");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(bitwiseEqual(back[0].tensor, arrays[0].tensor));
  EXPECT_TRUE(bitwiseEqual(back[1].tensor, arrays[1].tensor));

  // Overwrites an existing file, even one that is not a zip.
  writeBytes(dir / "over.npz", encodeNpy(pattern(ElementType::U8)));
  writeNpz(dir / "over.npz", arrays);
  EXPECT_EQ(listNpz(dir / "over.npz").size(), 2u);

  std::ifstream in(dir / "ok.npz", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto writeVariant = [&](const std::string& name, std::vector<char> content) {
    std::ofstream(dir / name, std::ios::binary).write(content.data(), content.size());
    return dir / name;
  };
  // A flipped data byte of the STORED member "a": the CRC check catches it.
  std::vector<char> flipped = bytes;
  flipped[1000] ^= 0x55; // inside the 16 KiB of data
  const fs::path corrupt = writeVariant("crc.npz", flipped);
  expectInvalid([&] { readNpz(corrupt); }, corrupt, "array 'a': corrupt archive member");

  const fs::path cut = writeVariant("cut.npz", {bytes.begin(), bytes.begin() + bytes.size() / 2});
  expectInvalid([&] { readNpz(cut); }, cut, "not a valid .npz (zip) archive");
  const fs::path notZip = writeVariant("text.npz", {'h', 'e', 'l', 'l', 'o'});
  expectInvalid([&] { listNpz(notZip); }, notZip, "not a valid .npz (zip) archive");
  EXPECT_EQ(errorOf([&] { readNpz(dir / "missing.npz"); }).kind(), ErrorKind::Io);

  std::vector<NamedTensor> duplicate;
  duplicate.push_back({"x", pattern(ElementType::F32)});
  duplicate.push_back({"x", pattern(ElementType::F32)});
  expectInvalid([&] { writeNpz(dir / "dup.npz", duplicate); }, dir / "dup.npz",
                "array 'x': two arrays to save have this name");
  duplicate[1].name = "";
  expectInvalid([&] { writeNpz(dir / "dup.npz", duplicate); }, dir / "dup.npz", "empty name");
  EXPECT_FALSE(fs::exists(dir / "dup.npz"));
  fs::remove_all(dir);
}

} // namespace
} // namespace lathe::runtime
