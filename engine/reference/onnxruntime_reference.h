#pragma once
// ONNX Runtime as a reference for `lathe compare`: runs a model through Node.js and the npm
// package onnxruntime-node (CPU, graph optimizations off) and returns its outputs. The
// script it runs (onnxruntime_values.js) is built into Lathe.

#include "engine/graph/dtype.h"
#include "engine/runtime/npy.h"

#include <atomic>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace lathe::reference {

struct OnnxRuntimeOptions {
  // The node_modules folder that holds onnxruntime-node (given to node as NODE_PATH);
  // empty: node's own search (NODE_PATH of this process, global folders).
  std::string nodeModules;
  int threads = 0; // intra-op threads; 0: ONNX Runtime's default
  // Polled while node runs; once it is true the process is killed and the call throws
  // lathe::Error (Cancelled).
  const std::atomic<bool>* cancel = nullptr;
};

// Runs the model at `modelPath` on `inputs` (by name) and returns by name its graph outputs
// and those of `values` (name, element type) that its nodes produce: ONNX Runtime returns
// only graph outputs, so it runs a copy of the model that lists them as outputs too.
// lathe::Error (Unsupported) saying what to install when node or onnxruntime-node is
// missing; (Invalid) with ONNX Runtime's message when the run fails.
std::vector<runtime::NamedTensor>
runOnnxRuntime(const std::string& modelPath,
               const std::vector<std::pair<std::string, graph::DType>>& values,
               std::span<const runtime::NamedTensor> inputs, const OnnxRuntimeOptions& options);

// Whether `folder` holds the onnxruntime-node package.
bool hasOnnxRuntimeNode(const std::string& folder);

} // namespace lathe::reference
