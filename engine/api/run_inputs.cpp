#include "engine/api/run_inputs.h"

#include "engine/api/session_state.h"
#include "engine/runtime/npy.h"
#include "engine/support/diagnostics.h"
#include "engine/support/text_escape.h"

#include <algorithm>
#include <random>

namespace lathe::api {
namespace {

// Random inputs: floats uniform in [-1, 1), integers 0 or 1 (safe as indices and counts),
// booleans 0/1; every element type the runtime has.
void fillTensor(runtime::Tensor& t, const std::string& mode, std::uint64_t seed) {
  if (mode == "zeros")
    return t.fillZeros();
  if (mode == "ones")
    return t.fillOnes();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const bool floating = runtime::isFloatingPoint(t.elementType());
  t.fillFrom([&]() -> double { return floating ? uniform(rng) : static_cast<double>(rng() % 2); });
}

} // namespace

std::vector<runtime::Tensor> prepareRunInputs(const runtime::ExecutionPlan& plan,
                                              const std::string& inputsNpz, const std::string& fill,
                                              std::uint64_t seed) {
  std::vector<runtime::Tensor> inputs;
  // Only the arrays the model takes are read, each refused before it is inflated if it
  // holds more than its input can (a 4 MB file can inflate to gigabytes).
  std::vector<std::string> given;
  if (!inputsNpz.empty())
    given = runtime::listNpz(inputsNpz);
  for (std::size_t i = 0; i < plan.inputs.size(); ++i) {
    const runtime::PlanSlot& slot = plan.slots[plan.inputs[i]];
    // An input whose name is not plain text is found under its escaped name too (the
    // form --outputs writes such names in).
    auto it = std::find_if(given.begin(), given.end(), [&](const std::string& name) {
      return name == slot.name || name == escapeText(slot.name);
    });
    if (it != given.end()) {
      // At most 8 bytes an element: the type is checked later, and a bf16 input comes as f32.
      std::uint64_t bytes = 8;
      for (std::int64_t d : slot.shape)
        bytes *= static_cast<std::uint64_t>(std::max<std::int64_t>(d, 0));
      inputs.push_back(runtime::readNpzArray(inputsNpz, *it, bytes));
      continue;
    }
    if (!inputsNpz.empty() && fill.empty())
      throw Error(ErrorKind::Invalid, "input '" + slot.name + "' is not in " + inputsNpz);
    runtime::Tensor t = runtime::Tensor::allocate(slot.type, slot.shape);
    fillTensor(t, fill.empty() ? "random" : fill, seed + i);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

InputFileSummary describeInputFile(const std::string& path) {
  InputFileSummary summary;
  try {
    for (const runtime::ArrayInfo& a : runtime::describeNpz(path)) {
      TensorSummary t;
      t.name = a.name;
      t.dtype = std::string(runtime::elementTypeName(a.type));
      for (std::int64_t d : a.shape)
        t.dims.push_back(std::to_string(d));
      std::string dims;
      for (const std::string& d : t.dims)
        dims += (dims.empty() ? "" : ",") + d;
      t.typeText = t.dtype + "[" + dims + "]";
      summary.arrays.push_back(std::move(t));
    }
  } catch (const Error& e) {
    summary.failure = toFailure(e.within({path, {}, {}}));
  } catch (const std::exception& e) {
    summary.failure =
        Failure{"internal", path + ": internal error: " + e.what(), path, {}, {}, e.what()};
  }
  return summary;
}

OutputSummary summarizeOutput(const std::string& name, const runtime::Tensor& t, int topK) {
  OutputSummary s;
  s.name = name;
  s.dtype = std::string(runtime::elementTypeName(t.elementType()));
  s.shape = t.shape();
  if (t.numElements() == 0)
    return s;
  const runtime::TensorSummary values = runtime::summarize(t); // finite values only
  s.min = values.min;
  s.max = values.max;
  s.mean = values.mean;
  s.top = runtime::largest(t, topK);
  return s;
}

void reportOutputs(const runtime::ExecutionPlan& plan, std::vector<runtime::Tensor> outputs,
                   int topK, const std::string& outputsNpz, RunReport& report) {
  std::vector<runtime::NamedTensor> named;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const std::string& name = plan.slots[plan.outputs[o]].name;
    report.outputs.push_back(summarizeOutput(name, outputs[o], topK));
    if (!outputsNpz.empty())
      named.push_back({name, std::move(outputs[o])});
  }
  if (!outputsNpz.empty())
    runtime::writeNpz(outputsNpz, named);
}

} // namespace lathe::api
