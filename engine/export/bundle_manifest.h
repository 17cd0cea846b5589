#pragma once
// manifest.json of a module bundle: what the kernels are called with (tensor slots, calls,
// each kernel's parameters) and the size and SHA-256 of each file it goes with. Reading
// checks only the form (fields present, of the right types); validateManifest
// (manifest_check.h) checks that the content is consistent and safe to run.

#include <cstdint>
#include <string>
#include <vector>

namespace lathe::exporter {

// Version 2 added the kernels' parameters and the files' sizes and hashes.
inline constexpr const char* kBundleFormat = "lathe-bundle-2";

struct BundleSlot {
  std::string name;
  std::string role; // "input", "output", "constant", "intermediate"
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t weightsOffset = 0; // constants only
  std::uint64_t bytes = 0;
};

// One parameter of a generated kernel: what the code reads or writes through it.
struct BundleParam {
  std::string role;  // "input" or "output"
  std::string dtype; // element type, as the code sees it (bf16 values are u16)
  std::uint64_t bytes = 0;
};

// A CUDA kernel's launch: an entry function of the PTX, with its grid and block sizes.
struct BundleLaunch {
  std::string name;
  std::vector<std::int64_t> grid, block; // x, y, z
};

struct BundleKernel {
  std::string name;                // the function's symbol in the library
  std::vector<BundleParam> params; // in calling-convention order: inputs, then outputs
  // PTX bundles only: the launches that make up the kernel, run in order, each taking the
  // params and then device buffers of `scratch` bytes each.
  std::vector<BundleLaunch> launches = {};
  std::vector<std::uint64_t> scratch = {};
};

struct BundleCall {
  std::string kernel;
  std::vector<int> args;
  std::vector<std::string> nodes;
  double flops = 0; // floating-point operations per call (0: unknown), for the profiler
};

// The size and SHA-256 (lowercase hex) of a file of the bundle.
struct BundleFileSeal {
  std::uint64_t bytes = 0;
  std::string sha256;
};

struct BundleManifest {
  std::string format = kBundleFormat;
  std::string model;   // the ONNX file it came from
  std::string target;  // canonical target string
  std::string triple;  // resolved LLVM triple
  std::string library; // "kernels.so", "kernels.o" or, for CUDA, "kernels.ptx"
  BundleFileSeal librarySeal, weightsSeal;
  // CUDA bundles compiled where ptxas was found: the PTX assembled for the target's sm_XX,
  // "kernels.sm_90.cubin" (empty when there is none), which a driver loads without JIT.
  std::string cubin;
  BundleFileSeal cubinSeal;
  std::vector<BundleKernel> kernels;
  std::vector<BundleSlot> slots;
  std::vector<BundleCall> calls;
  std::vector<int> inputs, outputs;
};

std::string manifestToJson(const BundleManifest& manifest);

// Parses manifest.json. A malformed document, a missing field or a value of the wrong type
// throws lathe::Error (Invalid) naming `bundle`, the field ("slots[3].bytes") and the reason.
BundleManifest manifestFromJson(const std::string& json, const std::string& bundle);

} // namespace lathe::exporter
