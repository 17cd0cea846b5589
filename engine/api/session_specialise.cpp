// A model with symbolic input dims, compiled once per set of input shapes: the key of a
// specialisation, opening the model again for it, and the compiles kept for reuse.
#include "engine/api/session_state.h"
#include "engine/runtime/npy.h"

#include <algorithm>

namespace lathe::api {
namespace {

std::string shapeText(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

// The value of a one-element integer array, as text.
std::string integerText(const runtime::Tensor& t) {
  using runtime::ElementType;
  switch (t.elementType()) {
  case ElementType::I8:
    return std::to_string(t.data<std::int8_t>()[0]);
  case ElementType::I16:
    return std::to_string(t.data<std::int16_t>()[0]);
  case ElementType::I32:
    return std::to_string(t.data<std::int32_t>()[0]);
  case ElementType::I64:
    return std::to_string(t.data<std::int64_t>()[0]);
  case ElementType::U8:
    return std::to_string(t.data<std::uint8_t>()[0]);
  case ElementType::U16:
    return std::to_string(t.data<std::uint16_t>()[0]);
  case ElementType::U32:
    return std::to_string(t.data<std::uint32_t>()[0]);
  case ElementType::U64:
    return std::to_string(t.data<std::uint64_t>()[0]);
  default: // not an integer: the opening reports the mismatch
    return "(" + std::string(runtime::elementTypeName(t.elementType())) + ")";
  }
}

} // namespace

void Session::State::stashCompile() {
  if (!compiled || compiledOptions.empty() || !compiledReport)
    return;
  variants.remove_if([&](const CompiledVariant& v) {
    return v.shapes == specialisedFor && v.options == compiledOptions;
  });
  CompiledVariant v;
  v.shapes = specialisedFor;
  v.options = compiledOptions;
  v.graph = graph;
  v.compiled = std::move(compiled);
  v.folded = folded;
  v.target = target;
  v.report = compiledReport;
  variants.push_front(std::move(v));
  while (variants.size() > kMaxVariants)
    variants.pop_back();
  forgetCompile();
}

bool Session::State::restoreCompile(const std::string& shapes, const std::string& options) {
  const auto found = std::find_if(variants.begin(), variants.end(), [&](const CompiledVariant& v) {
    return v.shapes == shapes && v.options == options;
  });
  if (found == variants.end())
    return false;
  CompiledVariant v = std::move(*found);
  variants.erase(found);
  stashCompile();
  graph = std::move(v.graph);
  compiled = std::move(v.compiled);
  folded = std::move(v.folded);
  target = std::move(v.target);
  compiledOptions = std::move(v.options);
  compiledReport = std::move(v.report);
  specialisedFor = std::move(v.shapes);
  defaultLowered.reset();
  defaultMedianMs.clear();
  return true;
}

// "x:[1,16000] sr=16000": the shapes a model with symbolic input dims is to be compiled
// for (from `shapes`, else from the arrays of `npz`), and the integer scalars that `npz`
// compiles in by value. Inputs with neither stay out: compile() then says which to give.
std::string
Session::specialisationKey(const std::string& npz,
                           const std::map<std::string, std::vector<std::int64_t>>& shapes) const {
  std::vector<runtime::ArrayInfo> arrays;
  if (!npz.empty())
    arrays = runtime::describeNpz(npz); // headers only: no data is inflated
  const auto inFile = [&](const std::string& name) {
    return std::find_if(arrays.begin(), arrays.end(),
                        [&](const runtime::ArrayInfo& a) { return a.name == name; });
  };
  std::string key;
  for (const State::DeclaredInput& in : state_->declaredInputs) {
    const auto array = inFile(in.name);
    std::string part;
    if (in.symbolic) {
      if (const auto given = shapes.find(in.name); given != shapes.end())
        part = in.name + ":" + shapeText(given->second);
      else if (array != arrays.end())
        part = in.name + ":" + shapeText(array->shape);
    } else if (in.integerScalar && array != arrays.end()) {
      part = in.name + "=" + integerText(runtime::readNpzArray(npz, in.name, 8));
    }
    if (!part.empty())
      key += (key.empty() ? "" : " ") + part;
  }
  return key;
}

// Opens the model again with `key`'s shapes (from `shapes` and the arrays of `npz`) when
// they differ from the last specialisation; a model with symbolic dims then compiles.
void Session::specialiseForInputs(const std::string& npz,
                                  const std::map<std::string, std::vector<std::int64_t>>& shapes,
                                  const std::string& key, const std::atomic<bool>* cancel) {
  if (key == state_->specialisedFor && state_->graph)
    return;
  state_->stashCompile();
  OpenOptions reopen = state_->openOptions;
  for (const auto& [name, shape] : shapes)
    reopen.inputShapes[name] = shape;
  reopen.inputShapesFile = npz;
  reopen.cancel = cancel;
  const OpenOptions original = state_->openOptions;
  const std::vector<State::DeclaredInput> declared = state_->declaredInputs;
  state_->specialising = true;
  const OpenResult opened = openModel(state_->path, reopen);
  state_->specialising = false;
  state_->openOptions = original; // specialise again from the model as opened
  state_->declaredInputs = declared;
  state_->symbolicInputs = true;
  if (!opened.ok()) // the graph is still the last specialisation's
    throw Error(ErrorKind::Invalid, opened.failure->reason,
                {opened.failure->file, opened.failure->node, opened.failure->op});
  state_->specialisedFor = key;
}

} // namespace lathe::api
