#pragma once
// Helpers shared by the reference kernels (reference_ops*.cpp). Not part of the interface.

#include "engine/graph/graph.h"

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace lathe::reference::ops {

using graph::DType;
using graph::Node;
using graph::TensorData;
using graph::TensorType;
using Dims = std::vector<std::int64_t>;
using Outputs = std::vector<TensorData>;

// Thrown by a kernel that cannot evaluate its node (an unsupported type, attribute or
// mode); evaluateNode turns it into NodeEvaluation::refusal.
struct Refusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void refuse(const std::string& reason);

// A kernel computes every output of one node from its constant inputs; `out` holds the
// static output types from the shape rules (absent outputs included). nullopt defers to the
// constant evaluator (integer variants of ops that it covers).
using Kernel = std::optional<Outputs> (*)(const Node& node, const std::vector<TensorType>& out);
using KernelTable = std::map<std::string, Kernel, std::less<>>;
void addNetworkKernels(KernelTable& table);       // reference_ops_network.cpp
void addNormalizationKernels(KernelTable& table); // reference_ops_normalization.cpp
void addPointwiseKernels(KernelTable& table);     // reference_ops_pointwise.cpp
void addSequenceKernels(KernelTable& table);      // reference_ops_sequence.cpp: Pad, LSTM
void addResizeKernels(KernelTable& table);        // reference_ops_resize.cpp: Resize, Upsample
void addSelectKernels(KernelTable& table);        // reference_ops_select.cpp: TopK, Hardmax

// Input i, which must be present (a refusal otherwise).
const TensorData& input(const Node& node, std::size_t i);
// Input i, or nullptr when the optional input is absent.
const TensorData* optionalInput(const Node& node, std::size_t i);
// Input i's elements as doubles; refuses unless its type is f32 or f64.
std::vector<double> floatInput(const Node& node, std::size_t i);
bool isRealFloat(DType t); // f32 or f64: the types the reference computes in double
// A tensor of output type `type` holding `values` rounded to its element type.
TensorData makeOutput(const TensorType& type, const std::vector<double>& values);
std::int64_t product(const Dims& dims);
Dims stridesOf(const Dims& dims);

} // namespace lathe::reference::ops
