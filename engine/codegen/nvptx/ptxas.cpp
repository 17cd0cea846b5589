#include "engine/codegen/nvptx/ptxas.h"

#include "engine/support/diagnostics.h"
#include "engine/support/subprocess.h"
#include "engine/support/temporary_folder.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace lathe::codegen::nvptx {

std::string findPtxas() {
  if (const char* explicitPath = std::getenv("LATHE_PTXAS"); explicitPath && *explicitPath)
    return programInPath(explicitPath) ? explicitPath : std::string();
  std::vector<std::string> candidates;
  if (const char* cuda = std::getenv("CUDA_PATH"); cuda && *cuda)
    candidates.push_back(std::string(cuda) + "/bin/ptxas");
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  for (const std::string& c : candidates)
    if (programInPath(c))
      return c;
  return programInPath("ptxas") ? "ptxas" : std::string();
}

std::map<std::string, PtxasFunctionReport> parsePtxasReport(const std::string& log) {
  static const std::regex function(R"(Function properties for (\S+))");
  static const std::regex compiling(R"(Compiling entry function '([^']+)')");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::map<std::string, PtxasFunctionReport> out;
  std::string current;
  std::istringstream in(log);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, compiling) || std::regex_search(line, m, function)) {
      current = m[1];
      out[current];
      continue;
    }
    if (current.empty())
      continue;
    PtxasFunctionReport& r = out[current];
    if (std::regex_search(line, m, frame)) {
      r.stackBytes = std::stoi(m[1]);
      r.spillStores = std::stoi(m[2]);
      r.spillLoads = std::stoi(m[3]);
    }
    if (std::regex_search(line, m, used))
      r.registers = std::stoi(m[1]);
    if (std::regex_search(line, m, smem))
      r.sharedBytes = std::stoi(m[1]);
  }
  return out;
}

PtxasResult runPtxas(const std::string& ptx, const std::string& arch) {
  PtxasResult result;
  const std::string ptxas = findPtxas();
  if (ptxas.empty()) {
    result.log = "ptxas not found ($LATHE_PTXAS, $CUDA_PATH/bin, /usr/local/cuda/bin, PATH): "
                 "the PTX was not assembled";
    return result;
  }
  TemporaryFolder folder("lathe-ptxas");
  const std::filesystem::path input = folder.path() / "kernel.ptx";
  const std::filesystem::path output = folder.path() / "kernel.cubin";
  {
    std::ofstream out(input, std::ios::binary);
    out << ptx;
    if (!out)
      throw Error(ErrorKind::Io, "cannot write " + input.string());
  }
  ProcessOptions options;
  options.timeoutSeconds = 120;
  const ProcessResult run =
      runProcess({ptxas, "-arch=" + arch, "-v", "-o", output.string(), input.string()}, options);
  result.ran = run.started;
  result.log = run.output;
  if (!run.started) {
    result.log = "ptxas (" + ptxas + ") could not be started";
    return result;
  }
  if (!run.ok())
    throw Error(ErrorKind::Internal, "ptxas -arch=" + arch + " refused the PTX Lathe generated (" +
                                         run.describe(options.timeoutSeconds) + "): " + run.output);
  std::ifstream cubin(output, std::ios::binary);
  result.cubin.assign(std::istreambuf_iterator<char>(cubin), std::istreambuf_iterator<char>());
  result.functions = parsePtxasReport(run.output);
  return result;
}

std::string describeGpuFunctions(const KernelCode& code) {
  const auto dims = [](const std::int64_t(&d)[3]) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
  };
  const auto figure = [](int v) { return v < 0 ? std::string("-") : std::to_string(v); };
  std::size_t width = 5;
  for (const GpuFunctionCode& f : code.gpuFunctions)
    width = std::max(width, f.name.size());
  std::ostringstream out;
  const auto row = [&](const std::vector<std::string>& cells) {
    out << cells[0] << std::string(width + 2 - cells[0].size(), ' ');
    for (std::size_t i = 1; i < cells.size(); ++i)
      out << std::string(cells[i].size() < 14 ? 14 - cells[i].size() : 1, ' ') << cells[i];
    out << "\n";
  };
  row({"entry", "grid", "block", "registers", "shared B", "stack B", "spill st B", "spill ld B"});
  for (const GpuFunctionCode& f : code.gpuFunctions)
    row({f.name, dims(f.grid), dims(f.block), figure(f.registers), figure(f.sharedBytes),
         figure(f.stackBytes), figure(f.spillStores), figure(f.spillLoads)});
  for (const auto& [name, bytes] : code.gpuScratch)
    out << "device buffer " << name << ": " << bytes << " bytes\n";
  if (!code.ptxasLog.empty())
    out << code.ptxasLog << (code.ptxasLog.back() == '\n' ? "" : "\n");
  return out.str();
}

} // namespace lathe::codegen::nvptx
