#pragma once
#include "engine/api/session.h"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lathe::cli {

// Each subcommand registers its options on `app` and returns the exit code from the
// callback through `exitCode`.
void addInspectCommand(CLI::App& app, int& exitCode);
void addConformanceCommand(CLI::App& app, int& exitCode);
void addTableCommands(CLI::App& app, int& exitCode); // ops, passes
void addRunCommand(CLI::App& app, int& exitCode);
void addCompileCommand(CLI::App& app, int& exitCode);
void addCompareCommand(CLI::App& app, int& exitCode); // compare_command.cpp
void addTuneCommands(CLI::App& app, int& exitCode);   // tune, records
void addExportCommands(CLI::App& app, int& exitCode); // export, targets

// Opens an ONNX model (fixing the given input shapes, and those of symbolic inputs to the
// arrays of `inputsFile` when set) and compiles it; prints the error and returns null on
// failure.
std::shared_ptr<const api::CompileReport>
openAndCompile(api::Session& session, const std::string& model, const std::string& inputShapes,
               const api::CompileOptions& options, const std::string& inputsFile = {},
               const std::vector<std::string>& disabledPasses = {});

// --disable-pass NAME (repeatable): a pass of the default pipeline the command leaves out.
void addDisablePassOption(CLI::App* cmd, std::vector<std::string>* passes);

// "tuning records: 3 of 17 kernels tuned (120 trials behind their schedules)" and why records
// did not apply.
void printTuningSummary(std::ostream& out, const api::CompileReport& report);
// For CUDA targets: one line per kernel with its launches and ptxas's registers, stack and
// spills; nothing for other targets.
void printGpuSummary(std::ostream& out, const api::CompileReport& report);

// "name:[1,3,224,224] other:[2,5]" -> shapes by input name (CLI::ValidationError if bad).
std::map<std::string, std::vector<std::int64_t>> parseInputShapes(const std::string& text);

} // namespace lathe::cli
