#pragma once
// TorchScript (torch.jit.save archives) -> graph IR, with libtorch: the module is loaded on
// the CPU, frozen (parameters become constants) and its forward graph inlined; each aten op
// is translated to graph IR ops (torchscript_ops.cpp). TorchScript records no input shapes,
// so they come from ImportOptions::inputShapes (lathe's --input-shapes or the arrays of
// --inputs); the forward's tensor arguments are the graph's inputs, by their Python names,
// and its returned tensors (tuples and lists flattened) the outputs, named output0, ...
// Unsupported ops are refused by name with their Python source location.

#include "engine/frontend/import_result.h"

#include <string>
#include <vector>

namespace lathe::frontend {

// Runs the importer in the lathe-torchscript-import helper process (torchscript_client.cpp):
// libtorch is loaded only there, and a fault in it on a damaged archive is reported as a
// refusal of the file.
ImportResult importTorchScriptFile(const std::string& path, const ImportOptions& options = {});

// The importer itself, in this process (the helper's; links libtorch).
ImportResult importTorchScriptInProcess(const std::string& path, const ImportOptions& options = {});

} // namespace lathe::frontend
