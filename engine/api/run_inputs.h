#pragma once
// Internal to engine/api: the inputs of a run, from an .npz file or filled (seeded), and
// the summary of an output.
#include "engine/api/session.h"
#include "engine/runtime/executor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lathe::api {

// The inputs of one run of `plan`, in plan order: the arrays of `inputsNpz` by name, the
// others filled by `fill` ("random": floats uniform in [-1, 1), integers 0 or 1; "zeros";
// "ones"; empty: "random" without a file, an error for an input the file lacks). Input i
// is filled from seed + i, so the same seed gives the same inputs in every command.
std::vector<runtime::Tensor> prepareRunInputs(const runtime::ExecutionPlan& plan,
                                              const std::string& inputsNpz, const std::string& fill,
                                              std::uint64_t seed);

// An output's dtype, shape, min/max/mean of its finite values and its `topK` largest.
OutputSummary summarizeOutput(const std::string& name, const runtime::Tensor& t, int topK);

// The outputs of one run of `plan` (in plan order) summarised into `report`, and written by
// name to `outputsNpz` when it is set.
void reportOutputs(const runtime::ExecutionPlan& plan, std::vector<runtime::Tensor> outputs,
                   int topK, const std::string& outputsNpz, RunReport& report);

} // namespace lathe::api
