#include "engine/export/bundle.h"

#include "engine/export/manifest_check.h"
#include "engine/export/tar_archive.h"
#include "engine/support/atomic_file.h"
#include "engine/support/diagnostics.h"

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lathe::exporter {

namespace fs = std::filesystem;

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

// Writes the library where it will be dlopen'ed and checks that what is there is a regular
// file of the recorded size and hash: mapping a shorter file (a full disk) gives SIGBUS.
void extractLibrary(const std::string& file, const std::string& bytes, const BundleFileSeal& seal,
                    const std::string& bundle) {
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush())
      throw Error(ErrorKind::Io, "cannot extract the kernels to " + file, {bundle, {}, {}});
  }
  struct stat info{};
  if (::lstat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<std::uint64_t>(info.st_size) != seal.bytes)
    throw Error(ErrorKind::Io,
                "the kernels extracted to " + file + " are not a regular file of " +
                    std::to_string(seal.bytes) + " bytes",
                {bundle, {}, {}});
  checkSeal(seal, "library", file, readFile(file), bundle);
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
  unregisterTemp(cleanupSlot);
}

std::unique_ptr<LoadedBundle> readBundle(const std::string& path) {
  std::vector<ArchiveEntry> entries = readTar(path);
  auto find = [&](const std::string& name) -> ArchiveEntry* {
    for (ArchiveEntry& e : entries)
      if (e.path == name)
        return &e;
    return nullptr;
  };
  const ArchiveEntry* manifest = find("manifest.json");
  if (!manifest)
    throw Error(ErrorKind::Invalid, "not a Lathe bundle: no manifest.json", {path, {}, {}});
  auto loaded = std::make_unique<LoadedBundle>();
  loaded->manifest = manifestFromJson(manifest->bytes, path);
  validateManifest(loaded->manifest, path);
  const ArchiveEntry* library = find(loaded->manifest.library);
  ArchiveEntry* weights = find("weights.bin");
  if (!library || !weights)
    throw Error(ErrorKind::Invalid,
                "the bundle lacks " +
                    std::string(library ? "weights.bin" : loaded->manifest.library),
                {path, {}, {}});
  checkSeal(loaded->manifest.weightsSeal, "weights", "weights.bin", weights->bytes, path);
  checkSeal(loaded->manifest.librarySeal, "library", loaded->manifest.library, library->bytes,
            path);
  loaded->weights = std::move(weights->bytes);
  loaded->folder = makeTempFolder();
  loaded->cleanupSlot = registerTemp(loaded->folder, /*isFolder=*/true);
  loaded->libraryPath = (fs::path(loaded->folder) / loaded->manifest.library).string();
  extractLibrary(loaded->libraryPath, library->bytes, loaded->manifest.librarySeal, path);
  return loaded;
}

} // namespace lathe::exporter
