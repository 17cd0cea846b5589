#include "engine/driver/input_shapes.h"

#include "engine/driver/compile_model.h"
#include "engine/runtime/npy.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <memory>

namespace lathe::driver {

void applyInputShapes(graph::Graph& g,
                      const std::map<std::string, std::vector<std::int64_t>>& shapes,
                      const std::string& path, const std::string& source) {
  for (const auto& [name, dims] : shapes) {
    graph::Value* input = nullptr;
    for (graph::Value* v : g.inputs)
      if (v->name() == name)
        input = v;
    if (!input)
      throw Error(ErrorKind::Invalid, source + " names '" + name + "', which is not an input",
                  {path, {}, {}});
    if (input->type.hasRank() && input->type.rank() != dims.size())
      throw Error(ErrorKind::Invalid,
                  source + " gives '" + name + "' rank " + std::to_string(dims.size()) +
                      " but the model says " + graph::toString(input->type),
                  {path, {}, {}});
    for (std::size_t i = 0; i < dims.size(); ++i) {
      const graph::Dim old =
          input->type.hasRank() ? (*input->type.shape)[i] : graph::Dim::unknown();
      if (old.isKnown() && old.value != dims[i])
        throw Error(ErrorKind::Invalid,
                    source + " gives '" + name + "' dim " + std::to_string(i) + " = " +
                        std::to_string(dims[i]) + " but the model fixes it to " +
                        std::to_string(old.value),
                    {path, {}, {}});
    }
    input->type = graph::TensorType::of(input->type.dtype, dims);
  }
}

std::map<std::string, std::vector<std::int64_t>>
shapesFromInputFile(const graph::Graph& g, const std::string& npz,
                    const std::map<std::string, std::vector<std::int64_t>>& given) {
  std::map<std::string, std::vector<std::int64_t>> shapes;
  const std::vector<std::string> names = runtime::listNpz(npz);
  for (const graph::Value* in : g.inputs) {
    if (in->type.isStatic() || given.count(in->name()) ||
        std::find(names.begin(), names.end(), in->name()) == names.end())
      continue;
    shapes[in->name()] = runtime::readNpzArray(npz, in->name()).shape();
  }
  return shapes;
}

std::vector<std::string> specialiseIntegerScalars(graph::Graph& g, const std::string& npz,
                                                  const std::string& path) {
  std::vector<std::string> notes;
  const std::vector<std::string> names = runtime::listNpz(npz);
  std::vector<graph::Value*> kept;
  for (graph::Value* in : g.inputs) {
    const auto n = in->type.numElements();
    if (!in->type.isStatic() || !graph::isInteger(in->type.dtype) || !n || *n != 1 ||
        std::find(names.begin(), names.end(), in->name()) == names.end()) {
      kept.push_back(in);
      continue;
    }
    const runtime::Tensor t = runtime::readNpzArray(npz, in->name());
    if (t.elementType() != elementTypeOf(in->type.dtype) || t.shape() != in->type.staticDims())
      throw Error(ErrorKind::Invalid,
                  "the input file '" + npz + "' gives '" + in->name() + "' as " +
                      std::string(runtime::elementTypeName(t.elementType())) + " of " +
                      std::to_string(t.shape().size()) + " dims; the model takes " +
                      graph::toString(in->type),
                  {path, {}, {}});
    auto bytes = std::make_shared<const std::string>(
        reinterpret_cast<const char*>(t.bytes().data()), t.byteSize());
    graph::TensorData data(in->type.dtype, in->type.staticDims(), bytes);
    graph::Value* c = g.addConstant(g.uniqueName(in->name()), data);
    g.replaceAllUsesWith(in, c);
    notes.push_back("input '" + in->name() + "' = " + std::to_string(data.elementAsInt(0)) +
                    " is compiled in: integer scalars given in the input file are specialised "
                    "by value");
  }
  g.inputs = kept;
  g.pruneUnusedValues();
  return notes;
}

} // namespace lathe::driver
