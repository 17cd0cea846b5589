// The TorchScript importer seen from Lathe: it runs lathe-torchscript-import (ts_helper_main.cpp)
// and reads back the graph it prints. Compiled into lathe_frontend, without libtorch.
#include "engine/frontend/torchscript/torchscript_importer.h"
#include "engine/frontend/torchscript/ts_authored_io.h"
#include "engine/frontend/torchscript/ts_helper_output.h"
#include "engine/graph/verifier.h"
#include "engine/support/diagnostics.h"
#include "engine/support/subprocess.h"
#include "engine/support/temporary_folder.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace lathe::frontend {
namespace {

namespace fs = std::filesystem;
constexpr const char* kHelper = "lathe-torchscript-import";

// $LATHE_TORCHSCRIPT_IMPORT, else beside the running program (installed), else the build
// tree's.
std::string helperPath() {
  if (const char* env = std::getenv("LATHE_TORCHSCRIPT_IMPORT"); env && *env)
    return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && fs::is_regular_file(self.parent_path() / kHelper, ec))
    return (self.parent_path() / kHelper).string();
#ifdef LATHE_TORCHSCRIPT_HELPER
  if (fs::is_regular_file(LATHE_TORCHSCRIPT_HELPER, ec))
    return LATHE_TORCHSCRIPT_HELPER;
#endif
  return kHelper; // from PATH
}

ErrorKind kindNamed(const std::string& name) {
  for (ErrorKind k :
       {ErrorKind::Invalid, ErrorKind::Unsupported, ErrorKind::Io, ErrorKind::Cancelled})
    if (name == errorKindName(k))
      return k;
  return ErrorKind::Internal;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

ImportResult importTorchScriptFile(const std::string& path, const ImportOptions& options) {
  const ErrorLocation file{path, {}, {}};
  reportImportProgress(options, path, 0, "loading the TorchScript archive");
  TemporaryFolder work("lathe-torchscript");
  const fs::path out = work.path() / "graph.lir";
  std::vector<std::string> argv{helperPath(), path, out.string()};
  for (const auto& [name, dims] : options.inputShapes) {
    std::string text;
    for (std::int64_t d : dims)
      text += (text.empty() ? "" : ",") + std::to_string(d);
    argv.insert(argv.end(), {"--shape", name + "=" + text});
  }
  for (const auto& [name, dtype] : options.inputTypes)
    argv.insert(argv.end(), {"--type", name + "=" + std::string(graph::dtypeName(dtype))});
  ProcessOptions run;
  run.cancel = options.cancel;
  run.timeoutSeconds = 600;
  const ProcessResult r = runProcess(argv, run);
  if (r.cancelled)
    throw Error(ErrorKind::Cancelled, "cancelled", file);
  if (!r.started)
    throw Error(ErrorKind::Unsupported,
                "cannot run the TorchScript importer '" + argv[0] + "' (" + r.output + ")", file);
  if (r.exitCode == 3) {
    const std::string text = readFile(out);
    std::istringstream lines(text);
    std::string kind, node, op;
    std::getline(lines, kind);
    std::getline(lines, node);
    std::getline(lines, op);
    std::string reason((std::istreambuf_iterator<char>(lines)), std::istreambuf_iterator<char>());
    throw Error(kindNamed(kind), reason, {path, node, op});
  }
  if (!r.ok())
    throw Error(ErrorKind::Invalid,
                "the TorchScript importer stopped on this archive (" +
                    r.describe(run.timeoutSeconds) + ")" +
                    (r.output.empty() ? "" : ": " + r.output.substr(0, r.output.find('\n'))),
                file);
  reportImportProgress(options, path, 80, "reading the imported graph");
  ImportResult result;
  result.format = ModelFormat::TorchScript;
  result.graph = torchscript::readHelperGraph(
      readFile(out), readFile(fs::path(out.string() + ".constants")), path);
  result.sourceOpset = result.graph->opsetVersion;
  graph::verifyGraphOrThrow(*result.graph, path);
  result.authored = torchscript::parseAuthoredOps(readFile(fs::path(out.string() + ".authored")),
                                                  result.graph->nodes().size(), path);
  reportImportProgress(options, path, 100, "imported");
  return result;
}

} // namespace lathe::frontend
