// lathe-torchscript-import ARCHIVE OUT [--shape NAME=D0,D1,...]... [--type NAME=DTYPE]...
//
// Runs the TorchScript importer in its own process, so that libtorch is loaded only when a
// TorchScript archive is opened (it takes most of a second to load) and a fault inside
// libtorch on a damaged archive ends this process, not Lathe. On success OUT holds the graph
// in Lathe's text IR, with constants of more than 16 elements elided and their bytes in
// OUT.constants (ts_constants_io.h), and OUT.authored the aten calls it came from
// (ts_authored_io.h) (exit 0); on a refusal OUT holds the error as four lines, kind, node,
// op, reason (exit 3).
#include "engine/frontend/torchscript/torchscript_importer.h"
#include "engine/frontend/torchscript/ts_authored_io.h"
#include "engine/frontend/torchscript/ts_constants_io.h"
#include "engine/graph/dtype.h"
#include "engine/graph/printer.h"
#include "engine/support/diagnostics.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

namespace {

int fail(const std::string& out, const lathe::Error& e) {
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  std::string reason = e.reason();
  f << lathe::errorKindName(e.kind()) << "\n"
    << e.where().node << "\n"
    << e.where().op << "\n"
    << reason;
  return f ? 3 : 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: lathe-torchscript-import ARCHIVE OUT [--shape NAME=D0,D1,...]... "
                 "[--type NAME=DTYPE]...\n";
    return 1;
  }
  const std::string archive = argv[1], out = argv[2];
  lathe::frontend::ImportOptions options;
  try {
    for (int i = 3; i + 1 < argc; i += 2) {
      const std::string flag = argv[i], value = argv[i + 1];
      const auto eq = value.find('=');
      if (eq == std::string::npos)
        throw lathe::Error(lathe::ErrorKind::Invalid, "bad argument '" + value + "'");
      const std::string name = value.substr(0, eq), rest = value.substr(eq + 1);
      if (flag == "--shape") {
        std::vector<std::int64_t> dims;
        std::size_t pos = 0;
        while (pos < rest.size()) {
          const std::size_t comma = rest.find(',', pos);
          dims.push_back(std::stoll(rest.substr(pos, comma - pos)));
          pos = comma == std::string::npos ? rest.size() : comma + 1;
        }
        options.inputShapes[name] = dims;
      } else if (flag == "--type") {
        const auto dtype = lathe::graph::parseDType(rest);
        if (!dtype)
          throw lathe::Error(lathe::ErrorKind::Invalid, "unknown element type '" + rest + "'");
        options.inputTypes[name] = *dtype;
      } else {
        throw lathe::Error(lathe::ErrorKind::Invalid, "unknown option '" + flag + "'");
      }
    }
    const lathe::frontend::ImportResult result =
        lathe::frontend::importTorchScriptInProcess(archive, options);
    lathe::graph::PrintOptions print;
    print.inlineElements = lathe::frontend::torchscript::kInlineElements;
    std::ofstream f(out, std::ios::binary | std::ios::trunc);
    f << lathe::graph::printGraph(*result.graph, print);
    std::ofstream constants(out + ".constants", std::ios::binary | std::ios::trunc);
    lathe::frontend::torchscript::writeConstants(constants, *result.graph);
    std::ofstream calls(out + ".authored", std::ios::binary | std::ios::trunc);
    calls << lathe::frontend::torchscript::printAuthoredOps(result.authored);
    return f && calls && constants ? 0 : 1;
  } catch (const lathe::Error& e) {
    return fail(out, e);
  } catch (const std::exception& e) {
    return fail(out, lathe::Error(lathe::ErrorKind::Internal, e.what()));
  }
}
