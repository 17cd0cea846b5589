#include "engine/export/bundle.h"

#include "engine/export/tar_archive.h"
#include "engine/support/diagnostics.h"

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace lathe::exporter {

namespace fs = std::filesystem;

std::string manifestToJson(const BundleManifest& m) {
  nlohmann::json j;
  j["format"] = m.format;
  j["model"] = m.model;
  j["target"] = m.target;
  j["triple"] = m.triple;
  j["library"] = m.library;
  // Written even when empty (a model without nodes has no calls): readers require them.
  j["slots"] = nlohmann::json::array();
  j["calls"] = nlohmann::json::array();
  for (const BundleSlot& s : m.slots)
    j["slots"].push_back({{"name", s.name},
                          {"role", s.role},
                          {"dtype", s.dtype},
                          {"shape", s.shape},
                          {"weights_offset", s.weightsOffset},
                          {"bytes", s.bytes}});
  for (const BundleCall& c : m.calls)
    j["calls"].push_back(
        {{"kernel", c.kernel}, {"args", c.args}, {"nodes", c.nodes}, {"flops", c.flops}});
  j["inputs"] = m.inputs;
  j["outputs"] = m.outputs;
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

BundleManifest manifestFromJson(const std::string& text, const std::string& source) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    BundleManifest m;
    m.format = j.at("format").get<std::string>();
    if (m.format != "lathe-bundle-1")
      throw Error(ErrorKind::Unsupported, "bundle format '" + m.format + "'", {source, {}, {}});
    m.model = j.at("model").get<std::string>();
    m.target = j.at("target").get<std::string>();
    m.triple = j.at("triple").get<std::string>();
    m.library = j.at("library").get<std::string>();
    for (const auto& s : j.at("slots"))
      m.slots.push_back(
          {s.at("name").get<std::string>(), s.at("role").get<std::string>(),
           s.at("dtype").get<std::string>(), s.at("shape").get<std::vector<std::int64_t>>(),
           s.at("weights_offset").get<std::uint64_t>(), s.at("bytes").get<std::uint64_t>()});
    for (const auto& c : j.at("calls"))
      m.calls.push_back({c.at("kernel").get<std::string>(), c.at("args").get<std::vector<int>>(),
                         c.at("nodes").get<std::vector<std::string>>(),
                         c.value("flops", 0.0)}); // older bundles have none
    m.inputs = j.at("inputs").get<std::vector<int>>();
    m.outputs = j.at("outputs").get<std::vector<int>>();
    const auto slotCount = static_cast<int>(m.slots.size());
    auto checkSlot = [&](int s) {
      if (s < 0 || s >= slotCount)
        throw Error(ErrorKind::Invalid,
                    "the manifest refers to tensor #" + std::to_string(s) + " of " +
                        std::to_string(slotCount),
                    {source, {}, {}});
    };
    for (const BundleCall& c : m.calls)
      for (int a : c.args)
        checkSlot(a);
    for (int s : m.inputs)
      checkSlot(s);
    for (int s : m.outputs)
      checkSlot(s);
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::Invalid, std::string("corrupt manifest.json: ") + e.what(),
                {source, {}, {}});
  }
}

namespace {

std::string linkerFor(const std::string& triple) {
  if (triple.rfind("wasm32", 0) == 0)
    return LATHE_WASM_LD;
  if (triple.find("-none-") != std::string::npos || triple.rfind("thumb", 0) == 0)
    return ""; // bare metal: no shared objects
  return LATHE_LD_LLD;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A private temporary folder, removed by its owner.
std::string makeTempFolder() {
  std::string pattern = (fs::temp_directory_path() / "lathe-XXXXXX").string();
  if (!::mkdtemp(pattern.data()))
    throw Error(ErrorKind::Io, "cannot create a temporary folder");
  return pattern;
}

} // namespace

bool canLinkSharedObject(const std::string& triple) {
  const std::string linker = linkerFor(triple);
  return !linker.empty() && ::access(linker.c_str(), X_OK) == 0;
}

std::string linkSharedObject(const std::string& object, const std::string& triple) {
  const std::string linker = linkerFor(triple);
  if (linker.empty())
    throw Error(ErrorKind::Unsupported, "no shared objects for " + triple + " (bare metal)");
  const std::string folder = makeTempFolder();
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{folder};
  const fs::path obj = fs::path(folder) / "kernels.o";
  const fs::path lib = fs::path(folder) / "kernels.so";
  const fs::path log = fs::path(folder) / "link.log";
  std::ofstream(obj, std::ios::binary) << object;
  std::vector<std::string> args{linker};
  if (triple.rfind("wasm32", 0) == 0)
    args.insert(args.end(), {"--no-entry", "--export-all", "--allow-undefined"});
  else
    args.insert(args.end(), {"-shared", "--allow-shlib-undefined"});
  args.insert(args.end(), {"-o", lib.string(), obj.string()});
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> argv;
    for (std::string& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(linker.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(ErrorKind::Internal,
                "linking the kernels with " + linker + " failed: " + readFile(log));
  return readFile(lib);
}

void writeBundle(const std::string& path, const BundleManifest& manifest,
                 const std::string& library, const std::string& weights,
                 const std::vector<std::pair<std::string, std::string>>& extraFiles) {
  std::vector<ArchiveEntry> entries{{"manifest.json", manifestToJson(manifest)},
                                    {manifest.library, library},
                                    {"weights.bin", weights}};
  for (const auto& [name, bytes] : extraFiles)
    entries.push_back({name, bytes});
  writeTar(path, entries);
}

LoadedBundle::~LoadedBundle() {
  std::error_code ec;
  if (!folder.empty())
    fs::remove_all(folder, ec);
}

std::unique_ptr<LoadedBundle> readBundle(const std::string& path) {
  const std::vector<ArchiveEntry> entries = readTar(path);
  auto find = [&](const std::string& name) -> const ArchiveEntry* {
    for (const ArchiveEntry& e : entries)
      if (e.path == name)
        return &e;
    return nullptr;
  };
  const ArchiveEntry* manifest = find("manifest.json");
  if (!manifest)
    throw Error(ErrorKind::Invalid, "not a Lathe bundle: no manifest.json", {path, {}, {}});
  auto loaded = std::make_unique<LoadedBundle>();
  loaded->manifest = manifestFromJson(manifest->bytes, path);
  const ArchiveEntry* library = find(loaded->manifest.library);
  const ArchiveEntry* weights = find("weights.bin");
  if (!library || !weights)
    throw Error(ErrorKind::Invalid,
                "the bundle lacks " +
                    std::string(library ? "weights.bin" : loaded->manifest.library),
                {path, {}, {}});
  for (const BundleSlot& s : loaded->manifest.slots)
    if (s.role == "constant" && s.weightsOffset + s.bytes > weights->bytes.size())
      throw Error(ErrorKind::Invalid, "constant '" + s.name + "' lies outside weights.bin",
                  {path, {}, {}});
  loaded->weights = weights->bytes;
  loaded->folder = makeTempFolder();
  loaded->libraryPath = (fs::path(loaded->folder) / loaded->manifest.library).string();
  std::ofstream(loaded->libraryPath, std::ios::binary) << library->bytes;
  return loaded;
}

} // namespace lathe::exporter
