#include "engine/export/manifest_check.h"

#include "engine/support/checked_int.h"
#include "engine/support/diagnostics.h"
#include "engine/support/sha256.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace lathe::exporter {

int bundleElementBytes(std::string_view dtype) {
  static const std::map<std::string_view, int> kBytes = {
      {"f64", 8},  {"i64", 8}, {"u64", 8}, {"f32", 4}, {"i32", 4}, {"u32", 4}, {"f16", 2},
      {"bf16", 2}, {"i16", 2}, {"u16", 2}, {"i8", 1},  {"u8", 1},  {"bool", 1}};
  const auto it = kBytes.find(dtype);
  return it == kBytes.end() ? 0 : it->second;
}

namespace {

[[noreturn]] void fail(const std::string& bundle, const std::string& field,
                       const std::string& reason) {
  throw Error(ErrorKind::Invalid, "manifest.json: " + field + ": " + reason, {bundle, {}, {}});
}

std::string at(const char* list, std::size_t index) {
  return std::string(list) + "[" + std::to_string(index) + "]";
}

bool isSha256Hex(const std::string& text) {
  if (text.size() != 64)
    return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

class ManifestValidator {
public:
  ManifestValidator(const BundleManifest& m, const std::string& bundle) : m_(m), bundle_(bundle) {}

  void run() {
    const bool ptx = m_.triple.rfind("nvptx", 0) == 0;
    if (ptx ? m_.library != "kernels.ptx" : m_.library != "kernels.so" && m_.library != "kernels.o")
      fail(bundle_, "library",
           "'" + m_.library + "' is " +
               (ptx ? "not kernels.ptx (the triple is " + m_.triple + ")"
                    : std::string("neither kernels.so nor kernels.o")));
    checkSealForm(m_.librarySeal, "library");
    checkSealForm(m_.weightsSeal, "weights");
    if (!m_.cubin.empty()) {
      // kernels.sm_NN.cubin, beside PTX only.
      const std::string digits =
          m_.cubin.size() > 17 ? m_.cubin.substr(11, m_.cubin.size() - 17) : std::string();
      const bool named = m_.cubin.rfind("kernels.sm_", 0) == 0 && m_.cubin.size() > 17 &&
                         m_.cubin.substr(m_.cubin.size() - 6) == ".cubin" && !digits.empty() &&
                         digits.size() <= 3 &&
                         digits.find_first_not_of("0123456789") == std::string::npos;
      if (!ptx || !named)
        fail(bundle_, "cubin",
             "'" + m_.cubin + "' is " +
                 (ptx ? "not named kernels.sm_NN.cubin" : "a cubin in a bundle without PTX"));
      checkSealForm(m_.cubinSeal, "cubin");
    }
    checkKernels();
    checkSlots();
    checkCalls();
    checkModelTensors(m_.inputs, "inputs", "input");
    checkModelTensors(m_.outputs, "outputs", "output");
  }

private:
  void checkSealForm(const BundleFileSeal& seal, const std::string& file) const {
    if (seal.bytes > static_cast<std::uint64_t>(kMaxBundleBytes))
      fail(bundle_, file + "_bytes", std::to_string(seal.bytes) + " is implausibly large");
    if (!isSha256Hex(seal.sha256))
      fail(bundle_, file + "_sha256", "is not a SHA-256 digest (64 lowercase hex digits)");
  }

  void checkKernels() {
    for (std::size_t k = 0; k < m_.kernels.size(); ++k) {
      const BundleKernel& kernel = m_.kernels[k];
      const std::string field = at("kernels", k);
      if (kernel.name.empty() || kernel.name.find('\0') != std::string::npos)
        fail(bundle_, field + ".name", "is not a symbol name");
      if (!kernels_.emplace(kernel.name, k).second)
        fail(bundle_, field + ".name",
             "'" + kernel.name + "' is also the name of " + at("kernels", kernels_[kernel.name]));
      checkLaunches(kernel, field);
      bool seenOutput = false;
      for (std::size_t p = 0; p < kernel.params.size(); ++p) {
        const BundleParam& param = kernel.params[p];
        const std::string pfield = field + "." + at("params", p);
        if (param.role != "input" && param.role != "output")
          fail(bundle_, pfield + ".role", "'" + param.role + "' is neither input nor output");
        if (param.role == "input" && seenOutput)
          fail(bundle_, pfield + ".role", "an input after an output (inputs come first)");
        seenOutput = seenOutput || param.role == "output";
        const int elementBytes = bundleElementBytes(param.dtype);
        if (elementBytes == 0)
          fail(bundle_, pfield + ".dtype", "unknown element type '" + param.dtype + "'");
        if (param.bytes > static_cast<std::uint64_t>(kMaxBundleBytes) ||
            param.bytes % static_cast<std::uint64_t>(elementBytes) != 0)
          fail(bundle_, pfield + ".bytes",
               std::to_string(param.bytes) + " is not a plausible size of " + param.dtype +
                   " elements");
      }
    }
  }

  // A PTX bundle's kernels each have launches within CUDA's limits; others have none.
  void checkLaunches(const BundleKernel& kernel, const std::string& field) const {
    const bool ptx = m_.library == "kernels.ptx";
    if (!ptx && (!kernel.launches.empty() || !kernel.scratch.empty()))
      fail(bundle_, field + ".launches", "launches belong to PTX bundles only");
    if (ptx && kernel.launches.empty())
      fail(bundle_, field + ".launches", "a CUDA kernel needs at least one launch");
    static constexpr std::int64_t kGrid[] = {2147483647, 65535, 65535};
    static constexpr std::int64_t kBlock[] = {1024, 1024, 64};
    for (std::size_t l = 0; l < kernel.launches.size(); ++l) {
      const BundleLaunch& launch = kernel.launches[l];
      const std::string lfield = field + "." + at("launches", l);
      if (launch.name.empty() || launch.name.find('\0') != std::string::npos)
        fail(bundle_, lfield + ".name", "is not a symbol name");
      if (launch.grid.size() != 3 || launch.block.size() != 3)
        fail(bundle_, lfield, "grid and block need 3 sizes each (x, y, z)");
      std::int64_t threads = 1;
      for (std::size_t d = 0; d < 3; ++d) {
        if (launch.grid[d] < 1 || launch.grid[d] > kGrid[d])
          fail(bundle_, lfield + ".grid",
               std::to_string(launch.grid[d]) + " blocks on axis " + std::to_string(d) +
                   " is outside CUDA's limits");
        if (launch.block[d] < 1 || launch.block[d] > kBlock[d])
          fail(bundle_, lfield + ".block",
               std::to_string(launch.block[d]) + " threads on axis " + std::to_string(d) +
                   " is outside CUDA's limits");
        threads *= launch.block[d];
      }
      if (threads > 1024)
        fail(bundle_, lfield + ".block",
             std::to_string(threads) + " threads per block (CUDA allows 1024)");
    }
    for (std::size_t s = 0; s < kernel.scratch.size(); ++s)
      if (kernel.scratch[s] > static_cast<std::uint64_t>(kMaxBundleBytes))
        fail(bundle_, field + "." + at("scratch", s), "is implausibly large");
  }

  void checkSlots() {
    std::map<std::string, std::size_t> names;
    std::int64_t total = 0;
    for (std::size_t s = 0; s < m_.slots.size(); ++s) {
      const BundleSlot& slot = m_.slots[s];
      const std::string field = at("slots", s);
      if (!names.emplace(slot.name, s).second)
        fail(bundle_, field + ".name",
             "'" + slot.name + "' is also the name of " + at("slots", names[slot.name]));
      if (slot.role != "input" && slot.role != "output" && slot.role != "constant" &&
          slot.role != "intermediate")
        fail(bundle_, field + ".role", "unknown tensor role '" + slot.role + "'");
      const std::int64_t bytes = slotBytes(slot, field);
      if (static_cast<std::uint64_t>(bytes) != slot.bytes)
        fail(bundle_, field + ".bytes",
             std::to_string(slot.bytes) + " bytes, but " + slot.dtype + shapeText(slot.shape) +
                 " takes " + std::to_string(bytes));
      const std::optional<std::int64_t> sum = checkedAdd(total, bytes);
      if (!sum || *sum > kMaxBundleBytes)
        fail(bundle_, field + ".bytes", "the tensors together exceed 2^48 bytes");
      total = *sum;
      if (slot.role == "constant")
        checkWeightsRange(slot, field, bytes);
    }
  }

  // The byte size a slot's shape and element type give, with every product checked.
  std::int64_t slotBytes(const BundleSlot& slot, const std::string& field) const {
    const int elementBytes = bundleElementBytes(slot.dtype);
    if (elementBytes == 0)
      fail(bundle_, field + ".dtype", "unknown element type '" + slot.dtype + "'");
    if (slot.shape.size() > kMaxBundleRank)
      fail(bundle_, field + ".shape",
           std::to_string(slot.shape.size()) + " dimensions (at most " +
               std::to_string(kMaxBundleRank) + ")");
    std::int64_t bytes = elementBytes;
    for (std::size_t d = 0; d < slot.shape.size(); ++d) {
      if (slot.shape[d] < 0)
        fail(bundle_, field + "." + at("shape", d),
             "negative dimension " + std::to_string(slot.shape[d]));
      const std::optional<std::int64_t> product = checkedMul(bytes, slot.shape[d]);
      if (!product || *product > kMaxBundleBytes)
        fail(bundle_, field + ".shape",
             shapeText(slot.shape) + " of " + slot.dtype + " exceeds 2^48 bytes");
      bytes = *product;
    }
    return bytes;
  }

  void checkWeightsRange(const BundleSlot& slot, const std::string& field,
                         std::int64_t bytes) const {
    const std::uint64_t size = m_.weightsSeal.bytes; // bounded by checkSealForm
    // Compared without adding first: offset + bytes may wrap around 2^64.
    if (slot.weightsOffset > size || static_cast<std::uint64_t>(bytes) > size - slot.weightsOffset)
      fail(bundle_, field + ".weights_offset",
           "constant '" + slot.name + "' at offset " + std::to_string(slot.weightsOffset) +
               " with " + std::to_string(bytes) + " bytes lies outside weights.bin (" +
               std::to_string(size) + " bytes)");
  }

  void checkCalls() {
    for (std::size_t c = 0; c < m_.calls.size(); ++c) {
      const BundleCall& call = m_.calls[c];
      const std::string field = at("calls", c);
      const auto kernel = kernels_.find(call.kernel);
      if (kernel == kernels_.end())
        fail(bundle_, field + ".kernel", "no kernel '" + call.kernel + "' in kernels");
      const std::vector<BundleParam>& params = m_.kernels[kernel->second].params;
      if (call.args.size() != params.size())
        fail(bundle_, field + ".args",
             "passes " + std::to_string(call.args.size()) + " tensor(s) to kernel '" + call.kernel +
                 "', which takes " + std::to_string(params.size()) + " parameters");
      if (!std::isfinite(call.flops) || call.flops < 0)
        fail(bundle_, field + ".flops", "not a count of operations");
      for (std::size_t a = 0; a < params.size(); ++a)
        checkArgument(call, params[a], field + "." + at("args", a), call.args[a]);
    }
  }

  void checkArgument(const BundleCall& call, const BundleParam& param, const std::string& field,
                     int index) const {
    const BundleSlot& slot = slotAt(index, field);
    if (slot.bytes != param.bytes ||
        bundleElementBytes(slot.dtype) != bundleElementBytes(param.dtype))
      fail(bundle_, field,
           "tensor '" + slot.name + "' (" + slot.dtype + ", " + std::to_string(slot.bytes) +
               " bytes) does not fit the " + param.role + " parameter of kernel '" + call.kernel +
               "' (" + param.dtype + ", " + std::to_string(param.bytes) + " bytes)");
    if (param.role == "output" && slot.role != "output" && slot.role != "intermediate")
      fail(bundle_, field,
           "kernel '" + call.kernel + "' would write the " + slot.role + " '" + slot.name + "'");
  }

  // Model inputs or outputs: unique slots of the role, and every slot of the role listed
  // (the executor has no memory for one that is not).
  void checkModelTensors(const std::vector<int>& list, const char* field, const char* role) const {
    std::set<int> listed;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const BundleSlot& slot = slotAt(list[i], at(field, i));
      if (std::string(role) == "input" && slot.role != "input")
        fail(bundle_, at(field, i),
             "tensor '" + slot.name + "' is a " + slot.role + ", not an input");
      if (!listed.insert(list[i]).second)
        fail(bundle_, at(field, i), "tensor '" + slot.name + "' is listed twice");
    }
    for (std::size_t s = 0; s < m_.slots.size(); ++s)
      if (m_.slots[s].role == role && !listed.count(static_cast<int>(s)))
        fail(bundle_, field,
             "the " + std::string(role) + " tensor '" + m_.slots[s].name + "' (" + at("slots", s) +
                 ") is not listed");
  }

  const BundleSlot& slotAt(int index, const std::string& field) const {
    if (index < 0 || static_cast<std::size_t>(index) >= m_.slots.size())
      fail(bundle_, field,
           "tensor #" + std::to_string(index) + " does not exist (" +
               std::to_string(m_.slots.size()) + " slots)");
    return m_.slots[static_cast<std::size_t>(index)];
  }

  static std::string shapeText(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
      s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
  }

  const BundleManifest& m_;
  const std::string& bundle_;
  std::map<std::string, std::size_t> kernels_; // name -> index in m_.kernels
};

} // namespace

void validateManifest(const BundleManifest& manifest, const std::string& bundle) {
  ManifestValidator(manifest, bundle).run();
}

BundleFileSeal sealOf(std::string_view bytes) {
  return {bytes.size(), sha256Hex(bytes)};
}

void checkSeal(const BundleFileSeal& seal, const std::string& field, const std::string& fileName,
               std::string_view bytes, const std::string& bundle) {
  const std::string digest = sha256Hex(bytes);
  if (bytes.size() == seal.bytes && digest == seal.sha256)
    return;
  fail(bundle, field + (bytes.size() != seal.bytes ? "_bytes" : "_sha256"),
       fileName + " has " + std::to_string(bytes.size()) + " bytes with SHA-256 " + digest +
           ", the manifest records " + std::to_string(seal.bytes) + " bytes with SHA-256 " +
           seal.sha256 + ": the file was truncated, damaged or replaced after compiling");
}

} // namespace lathe::exporter
