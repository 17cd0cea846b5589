// Fuzz target: what Lathe reads back from the TorchScript helper process (lathe-torchscript-
// import), the part of TorchScript import that runs inside Lathe: the graph in text IR, then
// after a NUL byte the list of aten calls each graph node came from, then after another the
// binary file of the constants the text elides. A helper that was damaged, or an archive
// crafted to make it print something odd, must end in lathe::Error.
// (The helper's own reading of archives runs in its process, and tests/cli's damaged-archive
// check replays damaged archives through it.)
#include "engine/frontend/torchscript/ts_authored_io.h"
#include "engine/frontend/torchscript/ts_helper_output.h"
#include "engine/graph/verifier.h"
#include "engine/support/diagnostics.h"
#include "tests/fuzz/fuzz_support.h"

#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lathe::frontend::torchscript;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::size_t first = all.find('\0');
  const std::size_t second = first == std::string_view::npos ? first : all.find('\0', first + 1);
  const std::string_view graphText = all.substr(0, first);
  const std::string authored(first == std::string_view::npos
                                 ? std::string_view()
                                 : all.substr(first + 1, second - first - 1));
  // No third part: an empty constants file.
  const std::string_view constants =
      second == std::string_view::npos ? kConstantsMagic : all.substr(second + 1);
  try {
    auto graph = readHelperGraph(graphText, constants, "fuzz.pt");
    lathe::graph::verifyGraphOrThrow(*graph, "fuzz.pt");
    const auto ops = parseAuthoredOps(authored, graph->nodes().size(), "fuzz.pt");
    for (const auto& op : ops)
      for (std::size_t n : op.nodes)
        if (n >= graph->nodes().size())
          std::abort(); // an index the reader let through
    for (const lathe::graph::Value* v : graph->constants())
      if (v->constant().isElided())
        std::abort(); // the reader let an elided constant through
  } catch (const lathe::Error&) {
  }
  return 0;
}
