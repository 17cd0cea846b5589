#include "app/cli/session_option.h"

#include "engine/api/session_file.h"

#include <iostream>

namespace lathe::cli {

bool applySessionFile(const std::string& file, const SessionTakes& takes) {
  const api::SessionFileResult read = api::readSessionFile(file);
  if (!read.ok()) {
    std::cerr << "lathe: error: " << read.failure->message << "\n";
    return false;
  }
  const api::WorkbenchSession& s = *read.session;
  if (!read.modelChange.empty())
    std::cerr << "lathe: warning: " << file << ": " << read.modelChange << "\n";
  const auto fill = [](std::string* field, const std::string& value) {
    if (field && field->empty())
      *field = value;
  };
  fill(takes.model, s.model);
  if (takes.target && !takes.targetGiven)
    *takes.target = s.target;
  fill(takes.inputs, s.inputsNpz);
  if (s.inputsNpz.empty())
    fill(takes.fill, s.fill);
  if (takes.inputShapes && takes.inputShapes->empty() && s.inputsNpz.empty()) {
    std::string text;
    for (const auto& [name, dims] : s.inputShapes) {
      text += (text.empty() ? "" : " ") + name + ":[";
      for (std::size_t d = 0; d < dims.size(); ++d)
        text += (d ? "," : "") + std::to_string(dims[d]);
      text += "]";
    }
    *takes.inputShapes = text;
  }
  fill(takes.tuningRecords, s.tuningRecords);
  fill(takes.schedules, s.schedules);
  return true;
}

void addSessionOption(CLI::App* cmd, std::string& file) {
  cmd->add_option("--session", file,
                  "A workbench session (.lathe): its model (unless one is given), target, "
                  "inputs, input shapes, kept schedules and tuning records (options given here "
                  "win)")
      ->check(CLI::ExistingFile);
}

} // namespace lathe::cli
