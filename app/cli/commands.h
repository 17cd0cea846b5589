#pragma once
#include "engine/api/session.h"

#include <CLI/CLI.hpp>
#include <cstdint>
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

// Opens an ONNX model (fixing the given input shapes, and those of symbolic inputs to the
// arrays of `inputsFile` when set) and compiles it; prints the error and returns null on
// failure.
std::shared_ptr<const api::CompileReport>
openAndCompile(api::Session& session, const std::string& model, const std::string& inputShapes,
               const api::CompileOptions& options, const std::string& inputsFile = {});

// "name:[1,3,224,224] other:[2,5]" -> shapes by input name (CLI::ValidationError if bad).
std::map<std::string, std::vector<std::int64_t>> parseInputShapes(const std::string& text);

} // namespace lathe::cli
