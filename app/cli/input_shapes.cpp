// The --input-shapes option's parser (commands.h), in a file of its own so that the fuzz
// target tests/fuzz/fuzz_input_shapes.cpp can link it alone.
#include "app/cli/commands.h"

#include <sstream>

namespace lathe::cli {

// "name:[1,3,224,224] other:[2,5]" -> map. Throws CLI::ValidationError on bad text.
std::map<std::string, std::vector<std::int64_t>> parseInputShapes(const std::string& text) {
  std::map<std::string, std::vector<std::int64_t>> shapes;
  std::istringstream in(text);
  std::string item;
  while (in >> item) {
    const auto colon = item.rfind(":[");
    if (colon == std::string::npos || item.back() != ']')
      throw CLI::ValidationError("--input-shapes", "expected name:[d0,d1,...], got '" + item + "'");
    std::vector<std::int64_t> dims;
    std::istringstream ds(item.substr(colon + 2, item.size() - colon - 3));
    std::string d;
    while (std::getline(ds, d, ',')) {
      try {
        std::size_t used = 0;
        const long long v = std::stoll(d, &used);
        if (used != d.size() || v < 0)
          throw std::invalid_argument(d);
        dims.push_back(v);
      } catch (const std::exception&) {
        throw CLI::ValidationError("--input-shapes",
                                   "'" + d + "' is not a dimension in '" + item + "'");
      }
    }
    shapes[item.substr(0, colon)] = dims;
  }
  return shapes;
}

} // namespace lathe::cli
