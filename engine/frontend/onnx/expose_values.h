#pragma once
// A copy of an ONNX model whose graph outputs also list chosen intermediate values, for
// runtimes that only return graph outputs (ONNX Runtime as `lathe compare`'s reference).

#include "engine/graph/dtype.h"

#include <string>
#include <utility>
#include <vector>

namespace lathe::frontend {

// Writes the model at `modelPath` to `copyPath` with every value of `values` (name, element
// type) that a node of the main graph produces added to the graph outputs. Weights kept in
// external files are inlined, so the copy may live in another folder. Returns the names the
// copy has as outputs, in `values` order (values that were outputs already included).
std::vector<std::string>
writeModelExposingValues(const std::string& modelPath,
                         const std::vector<std::pair<std::string, graph::DType>>& values,
                         const std::string& copyPath);

} // namespace lathe::frontend
