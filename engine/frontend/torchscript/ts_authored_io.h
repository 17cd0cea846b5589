#pragma once
// The helper process hands the aten calls it translated (AuthoredOp) back beside the graph, as
// lines of tab-separated fields:
//   op   TYPE NAME LOCATION NODE,NODE,...
//   attr KEY VALUE            (an option of the op above)
// with backslash, tab and newline escaped. Header-only: the helper and the client both use it.

#include "engine/frontend/authored_ops.h"
#include "engine/support/diagnostics.h"

#include <charconv>
#include <sstream>
#include <string>
#include <vector>

namespace lathe::frontend::torchscript {

inline std::string escapeField(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

inline std::string unescapeField(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
  }
  return out;
}

inline std::string printAuthoredOps(const std::vector<AuthoredOp>& ops) {
  std::string text;
  for (const AuthoredOp& op : ops) {
    std::string nodes;
    for (std::size_t n : op.nodes)
      nodes += (nodes.empty() ? "" : ",") + std::to_string(n);
    text += "op\t" + escapeField(op.opType) + "\t" + escapeField(op.name) + "\t" +
            escapeField(op.location) + "\t" + nodes + "\n";
    for (const auto& [key, value] : op.attributes)
      text += "attr\t" + escapeField(key) + "\t" + escapeField(value) + "\n";
  }
  return text;
}

// Throws Internal (naming `path`) on a line that does not read, or a node index not below
// `nodeCount`.
inline std::vector<AuthoredOp> parseAuthoredOps(const std::string& text, std::size_t nodeCount,
                                                const std::string& path) {
  std::vector<AuthoredOp> ops;
  std::istringstream lines(text);
  std::string line;
  auto bad = [&](const std::string& why) {
    throw Error(ErrorKind::Internal, "the TorchScript importer's list of aten calls " + why,
                {path, {}, {}});
  };
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (;;) {
      const std::size_t tab = line.find('\t', start);
      fields.push_back(unescapeField(line.substr(start, tab - start)));
      if (tab == std::string::npos)
        break;
      start = tab + 1;
    }
    if (fields[0] == "op" && fields.size() == 5) {
      AuthoredOp op{fields[1], fields[2], fields[3], {}, {}};
      const std::string& list = fields[4];
      for (std::size_t pos = 0; pos < list.size();) {
        std::size_t end = list.find(',', pos);
        if (end == std::string::npos)
          end = list.size();
        std::size_t n = 0;
        const auto r = std::from_chars(list.data() + pos, list.data() + end, n);
        if (r.ec != std::errc() || r.ptr != list.data() + end || n >= nodeCount)
          bad("names node '" + list.substr(pos, end - pos) + "', which the graph does not have");
        op.nodes.push_back(n);
        pos = end + 1;
      }
      ops.push_back(std::move(op));
    } else if (fields[0] == "attr" && fields.size() == 3 && !ops.empty()) {
      ops.back().attributes.emplace_back(fields[1], fields[2]);
    } else if (!line.empty()) {
      bad("has a line that does not read: " + line.substr(0, 80));
    }
  }
  return ops;
}

} // namespace lathe::frontend::torchscript
