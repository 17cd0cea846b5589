// `lathe`: the command-line front door to the engine (the same engine/api the workbench uses).
#include "app/cli/commands.h"
#include "app/cli/escaping_output.h"
#include "engine/api/session.h"

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"Lathe: an ML compiler workbench. Import ONNX models, inspect the IR after each "
               "pass, compile them to native code, run and time them.",
               "lathe"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "lathe 0.1.0");
  lathe::api::cleanUpTemporaryFilesOnSignals();
  const auto escapedOut = lathe::cli::escapeOutputOf(std::cout);
  const auto escapedErr = lathe::cli::escapeOutputOf(std::cerr);
  int exitCode = 0;
  lathe::cli::addInspectCommand(app, exitCode);
  lathe::cli::addConformanceCommand(app, exitCode);
  lathe::cli::addCompileCommand(app, exitCode);
  lathe::cli::addRunCommand(app, exitCode);
  lathe::cli::addTableCommands(app, exitCode);
  lathe::cli::addCompareCommand(app, exitCode);
  lathe::cli::addTuneCommands(app, exitCode);
  lathe::cli::addExportCommands(app, exitCode);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    // compare's exit status 1 means "a node diverges": its usage errors are 2.
    return code != 0 && app.got_subcommand("compare") ? 2 : code;
  }
  return exitCode;
}
