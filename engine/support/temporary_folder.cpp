#include "engine/support/temporary_folder.h"

#include "engine/support/diagnostics.h"

#include <cstdlib>
#include <unistd.h>

namespace lathe {

TemporaryFolder::TemporaryFolder(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    throw Error(ErrorKind::Io, "cannot create a temporary folder");
  path_ = pattern;
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

} // namespace lathe
