#pragma once
// A model with symbolic input dims made static for one set of inputs: shapes given by name,
// the shapes of an input file's arrays, and the integer scalars of that file compiled in by
// value.
#include "engine/graph/graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lathe::driver {

// Replaces the dims of named inputs (symbolic ones, typically) before shape inference.
// `source` says where the shapes come from in messages ("--input-shapes", "file 'x.npz'");
// a name that is no input, another rank or a dim the model fixes otherwise is refused.
void applyInputShapes(graph::Graph& g,
                      const std::map<std::string, std::vector<std::int64_t>>& shapes,
                      const std::string& path, const std::string& source);

// The shapes of the arrays in `npz` that feed inputs whose shapes are not static (and
// that `given` does not fix).
std::map<std::string, std::vector<std::int64_t>>
shapesFromInputFile(const graph::Graph& g, const std::string& npz,
                    const std::map<std::string, std::vector<std::int64_t>>& given);

// Integer scalars among the arrays of `npz` (a sample rate, a step count) often decide
// control flow and shapes: they become constants of `g`. Returns a note per input compiled
// in.
std::vector<std::string> specialiseIntegerScalars(graph::Graph& g, const std::string& npz,
                                                  const std::string& path);

} // namespace lathe::driver
