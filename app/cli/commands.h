#pragma once
#include <CLI/CLI.hpp>

namespace lathe::cli {

// Each subcommand registers its options on `app` and returns the exit code from the
// callback through `exitCode`.
void addInspectCommand(CLI::App& app, int& exitCode);
void addConformanceCommand(CLI::App& app, int& exitCode);
void addTableCommands(CLI::App& app, int& exitCode); // ops, passes

} // namespace lathe::cli
