// Fuzz target: what Lathe reads back from the TorchScript helper process (lathe-torchscript-
// import), the part of TorchScript import that runs inside Lathe: the graph in text IR and,
// after a NUL byte, the list of aten calls each graph node came from. A helper that was
// damaged, or an archive crafted to make it print something odd, must end in lathe::Error.
// (The helper's own reading of archives runs in its process, and tests/cli's mutated-archive
// check replays damaged archives through it.)
#include "engine/frontend/torchscript/ts_authored_io.h"
#include "engine/graph/parser.h"
#include "engine/graph/verifier.h"
#include "engine/support/diagnostics.h"
#include "tests/fuzz/fuzz_support.h"

#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = all.find('\0');
  const std::string_view graphText = all.substr(0, nul);
  const std::string authored(nul == std::string_view::npos ? std::string_view()
                                                           : all.substr(nul + 1));
  try {
    auto graph = lathe::graph::parseGraph(graphText, "fuzz.pt");
    lathe::graph::verifyGraphOrThrow(*graph, "fuzz.pt");
    const auto ops =
        lathe::frontend::torchscript::parseAuthoredOps(authored, graph->nodes().size(), "fuzz.pt");
    for (const auto& op : ops)
      for (std::size_t n : op.nodes)
        if (n >= graph->nodes().size())
          std::abort(); // an index the reader let through
  } catch (const lathe::Error&) {
  }
  return 0;
}
