// Bundle manifests: JSON round trip, and every inconsistency that once crashed `lathe run`
// (wrapping weight offsets, missing inputs, shrunk tensors, calls with too few arguments)
// refused by name before anything is loaded.
#include "engine/export/bundle_manifest.h"
#include "engine/export/manifest_check.h"
#include "engine/support/diagnostics.h"

#include <cstdint>
#include <functional>
#include <gtest/gtest.h>
#include <limits>

namespace lathe::exporter {
namespace {

// y = x * w: one kernel, one call, a constant at offset 64 of a 76-byte weights.bin.
BundleManifest validManifest() {
  BundleManifest m;
  m.model = "m.onnx";
  m.target = "llvm";
  m.triple = "x86_64-pc-linux-gnu";
  m.library = "kernels.so";
  m.librarySeal = sealOf("library bytes");
  m.weightsSeal = sealOf(std::string(76, '\0'));
  m.kernels = {{"k0_mul", {{"input", "f32", 12}, {"input", "f32", 12}, {"output", "f32", 12}}}};
  m.slots = {{"x", "input", "f32", {1, 3}, 0, 12},
             {"w", "constant", "f32", {3}, 64, 12},
             {"y", "output", "f32", {1, 3}, 0, 12}};
  m.calls = {{"k0_mul", {0, 1, 2}, {"mul0"}, 6}};
  m.inputs = {0};
  m.outputs = {2};
  return m;
}

// The error validateManifest gives for `m`, or "" when it accepts it.
std::string validationError(const BundleManifest& m) {
  try {
    validateManifest(m, "model.tar");
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    return e.what();
  }
}

TEST(BundleManifest, JsonRoundTrip) {
  const BundleManifest m = validManifest();
  const BundleManifest back = manifestFromJson(manifestToJson(m), "model.tar");
  EXPECT_EQ(back.format, kBundleFormat);
  EXPECT_EQ(back.librarySeal.sha256, m.librarySeal.sha256);
  EXPECT_EQ(back.weightsSeal.bytes, 76u);
  ASSERT_EQ(back.kernels.size(), 1u);
  ASSERT_EQ(back.kernels[0].params.size(), 3u);
  EXPECT_EQ(back.kernels[0].params[2].role, "output");
  EXPECT_EQ(back.kernels[0].params[2].bytes, 12u);
  EXPECT_EQ(back.slots[1].weightsOffset, 64u);
  EXPECT_EQ(back.calls[0].nodes, std::vector<std::string>{"mul0"});
  EXPECT_EQ(back.calls[0].flops, 6);
  EXPECT_EQ(validationError(back), "");
  EXPECT_TRUE(back.kernels[0].launches.empty());
}

TEST(BundleManifest, PtxBundlesKeepTheirLaunches) {
  BundleManifest m = validManifest();
  m.triple = "nvptx64-nvidia-cuda";
  m.library = "kernels.ptx";
  m.kernels[0].launches = {{"k0_mul_l0", {2, 1, 1}, {256, 1, 1}},
                           {"k0_mul_l1", {1, 1, 1}, {3, 1, 1}}};
  m.kernels[0].scratch = {4096};
  const BundleManifest back = manifestFromJson(manifestToJson(m), "model.tar");
  ASSERT_EQ(back.kernels[0].launches.size(), 2u);
  EXPECT_EQ(back.kernels[0].launches[1].name, "k0_mul_l1");
  EXPECT_EQ(back.kernels[0].launches[0].grid, (std::vector<std::int64_t>{2, 1, 1}));
  EXPECT_EQ(back.kernels[0].launches[0].block, (std::vector<std::int64_t>{256, 1, 1}));
  EXPECT_EQ(back.kernels[0].scratch, std::vector<std::uint64_t>{4096});
  EXPECT_EQ(validationError(back), "");
  EXPECT_TRUE(back.cubin.empty()); // compiled without ptxas
  // With ptxas: the assembled module beside the PTX, sealed like the other files.
  m.cubin = "kernels.sm_90.cubin";
  m.cubinSeal = m.librarySeal;
  const BundleManifest withCubin = manifestFromJson(manifestToJson(m), "model.tar");
  EXPECT_EQ(withCubin.cubin, "kernels.sm_90.cubin");
  EXPECT_EQ(withCubin.cubinSeal.sha256, m.librarySeal.sha256);
  EXPECT_EQ(validationError(withCubin), "");
}

struct ManifestEdit {
  const char* what;
  std::function<void(BundleManifest&)> edit;
  const char* field; // the manifest field the message names
  const char* reason;
};

TEST(BundleManifest, RefusesInconsistentManifestsByField) {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  const ManifestEdit edits[] = {
      {"offset + bytes wraps around 2^64", [&](auto& m) { m.slots[1].weightsOffset = max - 11; },
       "slots[1].weights_offset", "lies outside weights.bin (76 bytes)"},
      {"offset past the end", [](auto& m) { m.slots[1].weightsOffset = 65; },
       "slots[1].weights_offset", "lies outside weights.bin"},
      {"no inputs", [](auto& m) { m.inputs = {}; }, "inputs", "'x' (slots[0]) is not listed"},
      {"no outputs", [](auto& m) { m.outputs = {}; }, "outputs", "'y' (slots[2]) is not listed"},
      {"an input twice", [](auto& m) { m.inputs = {0, 0}; }, "inputs[1]", "listed twice"},
      {"a constant as input", [](auto& m) { m.inputs = {0, 1}; }, "inputs[1]", "not an input"},
      {"an input index out of range", [](auto& m) { m.inputs = {-1}; }, "inputs[0]",
       "tensor #-1 does not exist (3 slots)"},
      {"an argument out of range", [](auto& m) { m.calls[0].args[2] = 7; }, "calls[0].args[2]",
       "tensor #7 does not exist"},
      {"too few arguments", [](auto& m) { m.calls[0].args = {0}; }, "calls[0].args",
       "passes 1 tensor(s) to kernel 'k0_mul', which takes 3 parameters"},
      {"too many arguments", [](auto& m) { m.calls[0].args = {0, 1, 2, 2}; }, "calls[0].args",
       "which takes 3 parameters"},
      {"a shrunk output", [](auto& m) { m.slots[2].shape = {1, 1}, m.slots[2].bytes = 4; },
       "calls[0].args[2]", "does not fit the output parameter of kernel 'k0_mul'"},
      {"another element size", [](auto& m) { m.slots[2].dtype = "i16", m.slots[2].shape = {6}; },
       "calls[0].args[2]", "does not fit"},
      {"bytes that the shape does not give", [](auto& m) { m.slots[2].bytes = 8; },
       "slots[2].bytes", "8 bytes, but f32[1,3] takes 12"},
      {"a negative dimension", [](auto& m) { m.slots[0].shape = {1, -3}; }, "slots[0].shape[1]",
       "negative dimension -3"},
      {"a product past 2^63", [](auto& m) { m.slots[0].shape = {INT64_MAX, 2}; }, "slots[0].shape",
       "exceeds 2^48 bytes"},
      {"a tensor past 2^48 bytes", [](auto& m) { m.slots[0].shape = {1 << 24, 1 << 24}; },
       "slots[0].shape", "exceeds 2^48 bytes"},
      {"too many dimensions", [](auto& m) { m.slots[0].shape = std::vector<std::int64_t>(65, 1); },
       "slots[0].shape", "65 dimensions"},
      {"a duplicate tensor name", [](auto& m) { m.slots[2].name = "x"; }, "slots[2].name",
       "'x' is also the name of slots[0]"},
      {"an unknown role", [](auto& m) { m.slots[1].role = "weights"; }, "slots[1].role",
       "unknown tensor role 'weights'"},
      {"an unknown element type", [](auto& m) { m.slots[1].dtype = "f128"; }, "slots[1].dtype",
       "unknown element type 'f128'"},
      {"an unknown kernel", [](auto& m) { m.calls[0].kernel = "k9"; }, "calls[0].kernel",
       "no kernel 'k9'"},
      {"a duplicate kernel", [](auto& m) { m.kernels.push_back(m.kernels[0]); }, "kernels[1].name",
       "also the name of kernels[0]"},
      {"an input parameter after an output",
       [](auto& m) { std::swap(m.kernels[0].params[1], m.kernels[0].params[2]); },
       "kernels[0].params[2].role", "inputs come first"},
      {"a kernel that writes a constant", [](auto& m) { m.calls[0].args = {0, 2, 1}; },
       "calls[0].args[2]", "would write the constant 'w'"},
      {"a kernel that writes an input", [](auto& m) { m.calls[0].args = {2, 1, 0}; },
       "calls[0].args[2]", "would write the input 'x'"},
      {"another library name", [](auto& m) { m.library = "../evil.so"; }, "library",
       "neither kernels.so nor kernels.o"},
      {"PTX under a CPU triple", [](auto& m) { m.library = "kernels.ptx"; }, "library",
       "neither kernels.so nor kernels.o"},
      {"a shared object under nvptx", [](auto& m) { m.triple = "nvptx64-nvidia-cuda"; }, "library",
       "not kernels.ptx (the triple is nvptx64-nvidia-cuda)"},
      {"launches in a CPU bundle",
       [](auto& m) { m.kernels[0].launches = {{"k0_mul", {1, 1, 1}, {32, 1, 1}}}; },
       "kernels[0].launches", "launches belong to PTX bundles only"},
      {"a CUDA kernel without launches",
       [](auto& m) { m.triple = "nvptx64-nvidia-cuda", m.library = "kernels.ptx"; },
       "kernels[0].launches", "needs at least one launch"},
      {"a block of 2048 threads",
       [](auto& m) {
         m.triple = "nvptx64-nvidia-cuda", m.library = "kernels.ptx";
         m.kernels[0].launches = {{"k0_mul", {1, 1, 1}, {64, 32, 1}}};
       },
       "kernels[0].launches[0].block", "2048 threads per block (CUDA allows 1024)"},
      {"a grid of no blocks",
       [](auto& m) {
         m.triple = "nvptx64-nvidia-cuda", m.library = "kernels.ptx";
         m.kernels[0].launches = {{"k0_mul", {1, 0, 1}, {32, 1, 1}}};
       },
       "kernels[0].launches[0].grid", "0 blocks on axis 1 is outside CUDA's limits"},
      {"a cubin in a CPU bundle",
       [](auto& m) { m.cubin = "kernels.sm_90.cubin", m.cubinSeal = m.librarySeal; }, "cubin",
       "a cubin in a bundle without PTX"},
      {"a cubin named like a path",
       [](auto& m) {
         m.triple = "nvptx64-nvidia-cuda", m.library = "kernels.ptx";
         m.kernels[0].launches = {{"k0_mul", {1, 1, 1}, {32, 1, 1}}};
         m.cubin = "../kernels.sm_90.cubin", m.cubinSeal = m.librarySeal;
       },
       "cubin", "not named kernels.sm_NN.cubin"},
      {"a cubin without its hash",
       [](auto& m) {
         m.triple = "nvptx64-nvidia-cuda", m.library = "kernels.ptx";
         m.kernels[0].launches = {{"k0_mul", {1, 1, 1}, {32, 1, 1}}};
         m.cubin = "kernels.sm_80.cubin";
       },
       "cubin_sha256", "64 lowercase hex digits"},
      {"a malformed hash", [](auto& m) { m.librarySeal.sha256 = "abc"; }, "library_sha256",
       "64 lowercase hex digits"},
      {"an absurd weights size", [](auto& m) { m.weightsSeal.bytes = max; }, "weights_bytes",
       "implausibly large"},
  };
  for (const ManifestEdit& e : edits) {
    BundleManifest m = validManifest();
    e.edit(m);
    const std::string error = validationError(m);
    EXPECT_NE(error.find("model.tar: manifest.json: " + std::string(e.field) + ": "),
              std::string::npos)
        << e.what << ": " << error;
    EXPECT_NE(error.find(e.reason), std::string::npos) << e.what << ": " << error;
  }
}

// The error manifestFromJson gives for `json`.
std::string parseError(const std::string& json) {
  try {
    manifestFromJson(json, "model.tar");
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// The valid manifest's JSON with the first `from` replaced by `to`.
std::string editedJson(const std::string& from, const std::string& to) {
  std::string json = manifestToJson(validManifest());
  const std::size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? json : json.replace(at, from.size(), to);
}

TEST(BundleManifest, RefusesMalformedJsonByField) {
  EXPECT_NE(parseError("{not json").find("model.tar: manifest.json is not JSON"),
            std::string::npos);
  EXPECT_NE(parseError("[1, 2]").find("must be an object"), std::string::npos);
  // Deep nesting neither overflows the stack nor passes.
  EXPECT_NE(parseError(std::string(100000, '[') + std::string(100000, ']')), "");
  const std::pair<std::pair<const char*, const char*>, const char*> cases[] = {
      {{"\"format\": \"lathe-bundle-2\"", "\"format\": \"lathe-bundle-1\""},
       "format: 'lathe-bundle-1' comes from an older Lathe"},
      {{"\"format\": \"lathe-bundle-2\"", "\"format\": \"zip\""}, "format: 'zip' is not a format"},
      {{"\"bytes\": 12", "\"bytes\": -12"},
       "kernels[0].params[0].bytes: must be a non-negative integer, not -12"},
      {{"\"weights_offset\": 64", "\"weights_offset\": 6.5"},
       "slots[1].weights_offset: must be a non-negative integer, not 6.5"},
      {{"\"weights_offset\": 64", "\"weights_offset\": \"64\""},
       "slots[1].weights_offset: must be a non-negative integer, not \"64\""},
      {{"\"weights_offset\": 64", "\"offset\": 64"}, "slots[1].weights_offset: missing"},
      {{"\"inputs\": [\n  0\n ]", "\"inputs\": [\n  10000000000\n ]"},
       "inputs[0]: 10000000000 is out of range"},
      {{"\"inputs\": [\n  0\n ]", "\"inputs\": {}"}, "inputs: must be an array, not object"},
      {{"3\n   ],\n   \"weights_offset\": 64",
        "18446744073709551615\n   ],\n   \"weights_offset\": 64"},
       "slots[1].shape[0]: 18446744073709551615 is out of range"},
      {{"\"flops\": 6.0", "\"flops\": \"many\""}, "calls[0].flops: must be a number"},
      {{"\"name\": \"k0_mul\"", "\"name\": 7"}, "kernels[0].name: must be a string, not 7"},
  };
  for (const auto& [edit, reason] : cases) {
    const std::string error = parseError(editedJson(edit.first, edit.second));
    EXPECT_NE(error.find("model.tar: manifest.json"), std::string::npos) << error;
    EXPECT_NE(error.find(reason), std::string::npos) << reason << ": " << error;
  }
}

TEST(BundleManifest, SealsNameTheFileAndTheHash) {
  const BundleFileSeal seal = sealOf("the kernels");
  EXPECT_NO_THROW(checkSeal(seal, "library", "kernels.so", "the kernels", "model.tar"));
  try {
    checkSeal(seal, "library", "kernels.so", "the kernelz", "model.tar");
    ADD_FAILURE() << "a changed file was accepted";
  } catch (const Error& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("model.tar: manifest.json: library_sha256: kernels.so has 11 bytes with "
                        "SHA-256 "),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(seal.sha256), std::string::npos) << text;
  }
  try {
    checkSeal(seal, "library", "kernels.so", "the kern", "model.tar");
    ADD_FAILURE() << "a truncated file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("library_bytes: kernels.so has 8 bytes"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
} // namespace lathe::exporter
