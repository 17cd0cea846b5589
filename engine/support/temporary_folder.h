#pragma once
// A fresh private folder under the system's temporary directory, removed with everything in
// it when the object goes out of scope.

#include <filesystem>
#include <string>

namespace lathe {

class TemporaryFolder {
public:
  // `prefix` starts the folder's name ("lathe-ort"). Throws lathe::Error (Io) when it cannot
  // be made.
  explicit TemporaryFolder(const std::string& prefix);
  ~TemporaryFolder();
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

} // namespace lathe
