#include "engine/export/bundle_manifest.h"

#include "engine/support/diagnostics.h"

#include <limits>
#include <nlohmann/json.hpp>

namespace lathe::exporter {

using Json = nlohmann::json;

std::string manifestToJson(const BundleManifest& m) {
  Json j;
  j["format"] = m.format;
  j["model"] = m.model;
  j["target"] = m.target;
  j["triple"] = m.triple;
  j["library"] = m.library;
  j["library_bytes"] = m.librarySeal.bytes;
  j["library_sha256"] = m.librarySeal.sha256;
  j["weights_bytes"] = m.weightsSeal.bytes;
  j["weights_sha256"] = m.weightsSeal.sha256;
  if (!m.cubin.empty()) {
    j["cubin"] = m.cubin;
    j["cubin_bytes"] = m.cubinSeal.bytes;
    j["cubin_sha256"] = m.cubinSeal.sha256;
  }
  j["kernels"] = Json::array();
  for (const BundleKernel& k : m.kernels) {
    Json params = Json::array();
    for (const BundleParam& p : k.params)
      params.push_back({{"role", p.role}, {"dtype", p.dtype}, {"bytes", p.bytes}});
    Json kernel = {{"name", k.name}, {"params", params}};
    if (!k.launches.empty()) {
      kernel["launches"] = Json::array();
      for (const BundleLaunch& l : k.launches)
        kernel["launches"].push_back({{"name", l.name}, {"grid", l.grid}, {"block", l.block}});
      kernel["scratch"] = k.scratch;
    }
    j["kernels"].push_back(kernel);
  }
  j["slots"] = Json::array();
  for (const BundleSlot& s : m.slots)
    j["slots"].push_back({{"name", s.name},
                          {"role", s.role},
                          {"dtype", s.dtype},
                          {"shape", s.shape},
                          {"weights_offset", s.weightsOffset},
                          {"bytes", s.bytes}});
  j["calls"] = Json::array();
  for (const BundleCall& c : m.calls)
    j["calls"].push_back(
        {{"kernel", c.kernel}, {"args", c.args}, {"nodes", c.nodes}, {"flops", c.flops}});
  j["inputs"] = m.inputs;
  j["outputs"] = m.outputs;
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// Reads typed fields, naming the field ("slots[3].bytes") when one is missing or mistyped.
class ManifestReader {
public:
  explicit ManifestReader(const std::string& bundle) : bundle_(bundle) {}

  [[noreturn]] void fail(const std::string& field, const std::string& reason) const {
    throw Error(ErrorKind::Invalid, "manifest.json: " + field + ": " + reason, {bundle_, {}, {}});
  }

  static std::string item(const std::string& field, std::size_t index) {
    return field + "[" + std::to_string(index) + "]";
  }

  const Json& member(const Json& object, const std::string& path, const char* key) const {
    const std::string field = name(path, key);
    const auto it = object.find(key);
    if (it == object.end())
      fail(field, "missing");
    return *it;
  }

  const Json& object(const Json& v, const std::string& field) const {
    if (!v.is_object())
      fail(field, std::string("must be an object, not ") + v.type_name());
    return v;
  }

  const Json& array(const Json& object, const std::string& path, const char* key) const {
    const Json& v = member(object, path, key);
    if (!v.is_array())
      fail(name(path, key), std::string("must be an array, not ") + v.type_name());
    return v;
  }

  std::string text(const Json& v, const std::string& field) const {
    if (!v.is_string())
      fail(field, "must be a string, not " + shown(v));
    return v.get<std::string>();
  }
  std::string text(const Json& object, const std::string& path, const char* key) const {
    return text(member(object, path, key), name(path, key));
  }

  std::uint64_t size(const Json& object, const std::string& path, const char* key) const {
    const Json& v = member(object, path, key);
    if (!v.is_number_unsigned())
      fail(name(path, key), "must be a non-negative integer, not " + shown(v));
    return v.get<std::uint64_t>();
  }

  std::int64_t integer(const Json& v, const std::string& field) const {
    if (v.is_number_unsigned() &&
        v.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()})
      fail(field, shown(v) + " is out of range");
    if (!v.is_number_integer())
      fail(field, "must be an integer, not " + shown(v));
    return v.get<std::int64_t>();
  }

  // A tensor index: range checks against the slots come later, in validateManifest.
  int index(const Json& v, const std::string& field) const {
    const std::int64_t i = integer(v, field);
    if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max())
      fail(field, shown(v) + " is out of range");
    return static_cast<int>(i);
  }

  double number(const Json& object, const std::string& path, const char* key, double absent) const {
    const auto it = object.find(key);
    if (it == object.end())
      return absent;
    if (!it->is_number())
      fail(name(path, key), "must be a number, not " + shown(*it));
    return it->get<double>();
  }

  template <typename T, typename ReadItem>
  std::vector<T> list(const Json& object, const std::string& path, const char* key,
                      ReadItem readItem) const {
    const Json& v = array(object, path, key);
    std::vector<T> out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      out.push_back(readItem(v[i], item(name(path, key), i)));
    return out;
  }

private:
  static std::string name(const std::string& path, const char* key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string shown(const Json& v) {
    if (v.is_primitive())
      return v.dump(-1, ' ', false, Json::error_handler_t::replace);
    return v.type_name();
  }

  const std::string& bundle_;
};

BundleManifest readManifest(const Json& j, const ManifestReader& r) {
  r.object(j, "the document");
  BundleManifest m;
  m.format = r.text(j, "", "format");
  if (m.format == "lathe-bundle-1")
    r.fail("format", "'lathe-bundle-1' comes from an older Lathe that recorded neither the "
                     "kernels' parameters nor the files' hashes; compile the model again");
  if (m.format != kBundleFormat)
    r.fail("format", "'" + m.format + "' is not a format this Lathe reads (" + kBundleFormat + ")");
  m.model = r.text(j, "", "model");
  m.target = r.text(j, "", "target");
  m.triple = r.text(j, "", "triple");
  m.library = r.text(j, "", "library");
  m.librarySeal = {r.size(j, "", "library_bytes"), r.text(j, "", "library_sha256")};
  m.weightsSeal = {r.size(j, "", "weights_bytes"), r.text(j, "", "weights_sha256")};
  if (j.contains("cubin")) {
    m.cubin = r.text(j, "", "cubin");
    m.cubinSeal = {r.size(j, "", "cubin_bytes"), r.text(j, "", "cubin_sha256")};
  }
  auto readText = [&](const Json& v, const std::string& field) { return r.text(v, field); };
  auto readIndex = [&](const Json& v, const std::string& field) { return r.index(v, field); };
  m.kernels = r.list<BundleKernel>(j, "", "kernels", [&](const Json& v, const std::string& at) {
    r.object(v, at);
    BundleKernel k{r.text(v, at, "name"), {}};
    k.params = r.list<BundleParam>(v, at, "params", [&](const Json& p, const std::string& pat) {
      r.object(p, pat);
      return BundleParam{r.text(p, pat, "role"), r.text(p, pat, "dtype"), r.size(p, pat, "bytes")};
    });
    if (v.contains("launches")) {
      const auto dims = [&](const Json& l, const std::string& lat, const char* key) {
        return r.list<std::int64_t>(
            l, lat, key, [&](const Json& d, const std::string& dat) { return r.integer(d, dat); });
      };
      k.launches =
          r.list<BundleLaunch>(v, at, "launches", [&](const Json& l, const std::string& lat) {
            r.object(l, lat);
            return BundleLaunch{r.text(l, lat, "name"), dims(l, lat, "grid"),
                                dims(l, lat, "block")};
          });
      k.scratch =
          r.list<std::uint64_t>(v, at, "scratch", [&](const Json& s, const std::string& sat) {
            const std::int64_t bytes = r.integer(s, sat);
            if (bytes < 0)
              r.fail(sat, "must be a non-negative integer");
            return static_cast<std::uint64_t>(bytes);
          });
    }
    return k;
  });
  m.slots = r.list<BundleSlot>(j, "", "slots", [&](const Json& v, const std::string& at) {
    r.object(v, at);
    return BundleSlot{r.text(v, at, "name"),
                      r.text(v, at, "role"),
                      r.text(v, at, "dtype"),
                      r.list<std::int64_t>(
                          v, at, "shape",
                          [&](const Json& d, const std::string& dat) { return r.integer(d, dat); }),
                      r.size(v, at, "weights_offset"),
                      r.size(v, at, "bytes")};
  });
  m.calls = r.list<BundleCall>(j, "", "calls", [&](const Json& v, const std::string& at) {
    r.object(v, at);
    return BundleCall{r.text(v, at, "kernel"), r.list<int>(v, at, "args", readIndex),
                      r.list<std::string>(v, at, "nodes", readText), r.number(v, at, "flops", 0.0)};
  });
  m.inputs = r.list<int>(j, "", "inputs", readIndex);
  m.outputs = r.list<int>(j, "", "outputs", readIndex);
  return m;
}

} // namespace

BundleManifest manifestFromJson(const std::string& text, const std::string& bundle) {
  const ManifestReader reader(bundle);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    throw Error(ErrorKind::Invalid, std::string("manifest.json is not JSON: ") + e.what(),
                {bundle, {}, {}});
  }
  return readManifest(j, reader);
}

} // namespace lathe::exporter
