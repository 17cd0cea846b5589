#pragma once
#include "engine/graph/graph.h"

namespace lathe::passes {

// Folds an inference BatchNormalization whose input comes only from a Conv (or a Gemm
// with constant weights) into that op's weights and bias.
bool foldBatchNorm(graph::Graph& graph);

} // namespace lathe::passes
