#pragma once
// ptxas from the CUDA Toolkit (no GPU needed): assembles PTX for an sm_XX and reports, per
// entry function, the registers, shared memory, stack and spills it used.

#include "engine/codegen/llvm/compiler.h"

#include <map>
#include <string>

namespace lathe::codegen::nvptx {

struct PtxasFunctionReport {
  int registers = 0;
  int sharedBytes = 0; // static shared memory
  int stackBytes = 0;  // stack frame (local memory)
  int spillStores = 0, spillLoads = 0;
};

struct PtxasResult {
  bool ran = false;  // false: no ptxas found (`log` says where it was looked for)
  std::string log;   // what ptxas printed
  std::string cubin; // the assembled code, when it ran and succeeded
  std::map<std::string, PtxasFunctionReport> functions;
};

// The ptxas to run: $LATHE_PTXAS, else ptxas in $CUDA_PATH/bin, /usr/local/cuda/bin or PATH;
// empty when there is none.
std::string findPtxas();

// Assembles `ptx` for `arch` ("sm_90"). Throws lathe::Error (Internal) when ptxas refuses
// the PTX: Lathe wrote it, so that is Lathe's bug, reported with ptxas's message.
PtxasResult runPtxas(const std::string& ptx, const std::string& arch);

// The per-function figures in ptxas -v output.
std::map<std::string, PtxasFunctionReport> parsePtxasReport(const std::string& log);

// A kernel's launches as a table: entry, grid, block, registers, shared memory, stack and
// spills (ptxas's figures, "-" where it did not run), its device buffers, and why ptxas did
// not run when it did not.
std::string describeGpuFunctions(const KernelCode& code);

} // namespace lathe::codegen::nvptx
