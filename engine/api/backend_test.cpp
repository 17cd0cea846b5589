// The ONNX backend-test runner behind `lathe conformance`: one test folder imported,
// compiled, run on each of its data sets and compared with the expected outputs.
#include "engine/api/backend_test.h"

#include "engine/api/session_state.h"
#include "engine/driver/compile_model.h"
#include "engine/driver/tensor_convert.h"
#include "engine/frontend/onnx/tensor_file.h"
#include "engine/runtime/element_type.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace lathe::api {

namespace fs = std::filesystem;

BackendTestResult runBackendTest(const std::string& testDir, const BackendTestOptions& options) {
  const double rtol = options.rtol, atol = options.atol;
  const bool gpuSchedulesOnHost = options.gpuSchedulesOnHost;
  BackendTestResult out;
  Session session;
  const std::string model = (fs::path(testDir) / "model.onnx").string();
  OpenOptions open;
  open.forGpu = gpuSchedulesOnHost;
  const OpenResult opened = session.openModel(model, open);
  auto fail = [&](const Failure& f) {
    out.status = f.kind == "unsupported" ? "skip" : "fail";
    out.message = f.message;
    if (out.message.rfind(model + ": ", 0) == 0)
      out.message = out.message.substr(model.size() + 2);
    return out;
  };
  if (!opened.ok())
    return fail(*opened.failure);
  CompileOptions compile;
  compile.gpuSchedulesOnHost = gpuSchedulesOnHost;
  compile.target = options.target;
  const CompileResult compiled = session.compile(compile);
  if (!compiled.ok())
    return fail(*compiled.failure);
  out.compiledFor = compiled.report->target;
  try {
    runtime::Executor& exec = *session.state_->compiled->executor;
    std::vector<fs::path> sets;
    for (const auto& entry : fs::directory_iterator(testDir))
      if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
        sets.push_back(entry.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty())
      throw Error(ErrorKind::Invalid, "no test_data_set_* folders");
    for (const fs::path& set : sets) {
      std::vector<runtime::Tensor> inputs;
      for (std::size_t i = 0; i < exec.plan().inputs.size(); ++i) {
        const runtime::PlanSlot& slot = exec.plan().slots[exec.plan().inputs[i]];
        runtime::Tensor t = driver::toTensor(
            frontend::readTensorProtoFile((set / ("input_" + std::to_string(i) + ".pb")).string())
                .data);
        // ONNX 1.12's generator stores bfloat16 test data as its uint16 bits.
        if (t.elementType() == runtime::ElementType::U16 && slot.type == runtime::ElementType::BF16)
          t = runtime::Tensor::view(slot.type, t.shape(), t.rawData()).clone();
        if (t.elementType() != slot.type || t.shape() != slot.shape) {
          out.status = "skip";
          out.message =
              "the test data does not fit the model: " + set.filename().string() + " input '" +
              slot.name + "' is " + std::string(runtime::elementTypeName(t.elementType())) +
              runtime::formatShape(t.shape()) + " but the model declares " +
              std::string(runtime::elementTypeName(slot.type)) + runtime::formatShape(slot.shape);
          return out;
        }
        inputs.push_back(std::move(t));
      }
      std::vector<runtime::Tensor> outputs = exec.run(inputs);
      for (std::size_t o = 0; o < outputs.size(); ++o) {
        const fs::path expectedPath = set / ("output_" + std::to_string(o) + ".pb");
        if (!fs::exists(expectedPath))
          continue;
        const graph::TensorData expected =
            frontend::readTensorProtoFile(expectedPath.string()).data;
        const runtime::Tensor& actual = outputs[o];
        const std::string where = set.filename().string() + " output " + std::to_string(o);
        const bool bf16Bits = expected.dtype() == graph::DType::U16 &&
                              actual.elementType() == runtime::ElementType::BF16;
        if ((driver::elementTypeOf(expected.dtype()) != actual.elementType() && !bf16Bits) ||
            expected.dims() != actual.shape())
          throw Error(
              ErrorKind::Invalid,
              where + ": expected " +
                  graph::toString(graph::TensorType::of(expected.dtype(), expected.dims())) +
                  ", got " + std::string(runtime::elementTypeName(actual.elementType())) +
                  " of another shape");
        for (std::int64_t i = 0; i < expected.numElements(); ++i) {
          const double e =
              bf16Bits ? runtime::BFloat16{static_cast<std::uint16_t>(expected.elementAsInt(i))}
                             .toFloat()
                       : expected.elementAsDouble(i);
          const double a = actual.elementAsDouble(i);
          if (std::isnan(e) && std::isnan(a))
            continue;
          const double diff = std::isinf(e) && e == a ? 0.0 : std::abs(a - e);
          out.maxAbsDiff = std::max(out.maxAbsDiff, diff);
          if (!(diff <= atol + rtol * std::abs(e)))
            throw Error(ErrorKind::Invalid, where + " element " + std::to_string(i) +
                                                ": expected " + std::to_string(e) + ", got " +
                                                std::to_string(a));
        }
      }
    }
    out.status = "pass";
  } catch (const Error& e) {
    return fail(toFailure(e));
  }
  return out;
}

} // namespace lathe::api
