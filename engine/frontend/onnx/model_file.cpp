#include "engine/frontend/onnx/model_file.h"

#include "engine/support/diagnostics.h"

#include <fcntl.h>
#include <filesystem>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

namespace lathe::frontend {
namespace {

namespace fs = std::filesystem;

struct FileCloser {
  int fd;
  ~FileCloser() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

onnx::ModelProto parseModelFile(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw Error(ErrorKind::Io, "no such file", {path, {}, {}});
  if (!fs::is_regular_file(path, ec))
    throw Error(ErrorKind::Io, "not a regular file", {path, {}, {}});
  const auto size = fs::file_size(path, ec);
  if (ec)
    throw Error(ErrorKind::Io, "cannot read the file size: " + ec.message(), {path, {}, {}});
  if (size == 0)
    throw Error(ErrorKind::Invalid, "the file is empty, not an ONNX model", {path, {}, {}});
  if (size >= (std::uint64_t(1) << 31) - 1)
    throw Error(ErrorKind::Unsupported,
                "models of 2 GiB or more must keep their weights in external data files",
                {path, {}, {}});
  // Protobuf parses nested messages recursively: 64 levels (about 20 levels of If, Loop
  // and Scan subgraphs) bound the stack a hostile file can use.
  constexpr int kRecursionLimit = 64;
  auto parse = [&](onnx::ModelProto& model, int recursionLimit) {
    FileCloser file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0)
      throw Error(ErrorKind::Io, "cannot open the file", {path, {}, {}});
    google::protobuf::io::FileInputStream raw(file.fd);
    google::protobuf::io::CodedInputStream coded(&raw);
    // A corrupt length prefix cannot make the parser reserve more than the file holds.
    coded.SetTotalBytesLimit(static_cast<int>(size));
    coded.SetRecursionLimit(recursionLimit);
    return model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  };
  onnx::ModelProto model;
  if (!parse(model, kRecursionLimit)) {
    // Tell a model nested too deep from a corrupt one: the first parses with more room.
    onnx::ModelProto deeper;
    if (parse(deeper, 4 * kRecursionLimit))
      throw Error(ErrorKind::Unsupported,
                  "subgraphs are nested too deep (If, Loop and Scan bodies more than about " +
                      std::to_string(kRecursionLimit / 3) + " levels inside each other)",
                  {path, {}, {}});
    throw Error(ErrorKind::Invalid,
                "not a valid ONNX model: the protobuf data is truncated or corrupt",
                {path, {}, {}});
  }
  if (!model.has_graph())
    throw Error(ErrorKind::Invalid, "the model has no graph (is this an ONNX file?)",
                {path, {}, {}});
  return model;
}

} // namespace lathe::frontend
