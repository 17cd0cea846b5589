#pragma once
// TFLite (.tflite flatbuffer, schema version 3) -> graph IR. The graph keeps the model's NHWC
// layout at its inputs and outputs: convolutions and pools run in NCHW between a pair of
// Transposes, weights are permuted when imported. Quantized tensors keep their integer type
// and parameters: convolutions become QLinearConv, fully connected layers MatMulInteger with
// an int32 bias and a requantization, other operators run in float between
// DequantizeLinear and QuantizeLinear. Bad input throws lathe::Error naming the file, the
// operator's output tensor, the operator and the reason.

#include "engine/frontend/import_result.h"

#include <string>

namespace lathe::frontend {

ImportResult importTfliteFile(const std::string& path, const ImportOptions& options = {});

// The builtin operators the importer translates, by their TFLite names.
std::vector<std::string> supportedTfliteOperators();

} // namespace lathe::frontend
