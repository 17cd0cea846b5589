#include "engine/frontend/onnx/onnx_sandbox.h"

#include "engine/frontend/onnx/attribute_check.h"
#include "engine/frontend/onnx/version_downgrade.h"
#include "engine/frontend/onnx/version_upgrade.h"
#include "engine/support/diagnostics.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>
#include <poll.h>
#include <set>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace lathe::frontend {
namespace {

// Child -> parent messages: a tag byte, a 4-byte length, the payload.
enum Tag : char {
  kStage = 'S',   // payload: stage name
  kWarning = 'W', // payload: text
  kInvalid = 'I', // payload: error reason (the model is invalid)
  kUnsupported = 'U',
  kRefusedNode = 'N', // payload: node name, NUL, op type, NUL, reason
  kModel = 'M',       // payload: serialized ModelProto
};

constexpr double kTimeLimitSeconds = 300;

// Where the steps report: a pipe to the parent, or (in-process) a list.
using Sink = std::function<void(Tag, const std::string&)>;

#ifndef LATHE_ONNX_STEPS_IN_PROCESS
void writeMessage(int fd, Tag tag, const std::string& payload) {
  const std::uint32_t n = static_cast<std::uint32_t>(payload.size());
  std::string msg(1, tag);
  msg.append(reinterpret_cast<const char*>(&n), sizeof n);
  msg += payload;
  const char* p = msg.data();
  std::size_t left = msg.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w <= 0)
      return;
    p += w;
    left -= static_cast<std::size_t>(w);
  }
}
#endif

std::int64_t elementCount(const onnx::TensorProto& t) {
  std::int64_t n = 1;
  for (std::int64_t d : t.dims())
    n *= std::max<std::int64_t>(d, 0);
  return n;
}

void setStringAttribute(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  for (auto& a : *node.mutable_attribute())
    if (a.name() == name) {
      a.set_s(value);
      return;
    }
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

void markAsymmetric(onnx::NodeProto& resize) {
  setStringAttribute(resize, "coordinate_transformation_mode", "asymmetric");
  setStringAttribute(resize, "nearest_mode", "floor");
}

// The child's work. `m` is the child's own copy-on-write image of the parent's model.
void childSteps(onnx::ModelProto& m, std::int64_t sourceOpset, std::int64_t targetOpset,
                std::int64_t minNativeOpset, std::int64_t keepElements, bool tolerateUnknownOps,
                const Sink& send) {
  if (sourceOpset > targetOpset) {
    // Newer than the library: bring every node down to its opset-17 form first, so the
    // checker and shape inference below see a model they know.
    send(kStage, "converting opset " + std::to_string(sourceOpset) + " to 17");
    try {
      downgradeNodesToOpset17(m, sourceOpset);
    } catch (const NodeRefusal& r) {
      send(kRefusedNode, r.node + '\0' + r.op + '\0' + r.what());
      return;
    }
    sourceOpset = 17;
  }
  send(kStage, "checking");
  if (tolerateUnknownOps) { // the checker refuses ops it has no schema for
    send(kWarning, "the ONNX checker did not check the model: it uses ops the checker "
                   "does not know");
  } else {
    try {
      onnx::checker::check_model(m);
    } catch (const std::exception& e) {
      send(kInvalid, std::string("the ONNX checker rejects the model: ") + e.what());
      return;
    }
  }
  for (auto& init : *m.mutable_graph()->mutable_initializer()) {
    if (elementCount(init) <= keepElements)
      continue;
    init.clear_raw_data();
    init.clear_float_data();
    init.clear_double_data();
    init.clear_int32_data();
    init.clear_int64_data();
    init.clear_uint64_data();
  }
  const onnx::ShapeInferenceOptions inference(/*check_type=*/false, /*error_mode=*/0,
                                              /*data_prop=*/true);
  if (sourceOpset < targetOpset) {
    send(kStage, "inferring shapes");
    try { // some adapters (Softmax 12->13, ...) need the input shapes
      onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), inference);
    } catch (const std::exception&) {
      // reported by the inference after conversion
    }
    send(kStage,
         "converting opset " + std::to_string(sourceOpset) + " to " + std::to_string(targetOpset));
    if (sourceOpset >= minNativeOpset) {
      // Lathe's own converter, node by node: the library's adapters need shapes that
      // dynamic models leave unknown, and some of them change a node's meaning (Hardmax
      // before 13 keeps its old default axis but loses its 2-D coercion).
      try {
        upgradeNodesToOpset(m, sourceOpset, targetOpset, tolerateUnknownOps);
      } catch (const NodeRefusal& r) {
        send(kRefusedNode, r.node + '\0' + r.op + '\0' + r.what());
        return;
      }
    } else {
      // Upsample sampled "asymmetric" coordinates (nearest rounds down); the library turns
      // it into Resize without saying so, which defaults to half_pixel.
      std::set<std::string> asymmetricResizes;
      for (const auto& node : m.graph().node())
        if (node.op_type() == "Upsample" && node.output_size() > 0)
          asymmetricResizes.insert(node.output(0));
      try {
        m = onnx::version_conversion::ConvertVersion(m, static_cast<int>(targetOpset));
        for (auto& node : *m.mutable_graph()->mutable_node())
          if (node.op_type() == "Resize" && node.output_size() > 0 &&
              asymmetricResizes.count(node.output(0)))
            markAsymmetric(node);
      } catch (const std::exception& e) {
        send(kUnsupported, "opset " + std::to_string(sourceOpset) + " could not be converted to " +
                               std::to_string(targetOpset) + ": " + e.what());
        return;
      }
    }
  }
  try {
    checkAttributesHonoured(m, std::max(sourceOpset, targetOpset));
  } catch (const NodeRefusal& r) {
    send(kRefusedNode, r.node + '\0' + r.op + '\0' + r.what());
    return;
  }
  send(kStage, "inferring shapes");
  try {
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), inference);
  } catch (const std::exception& e) {
    send(kWarning, std::string("shape inference stopped early: ") + e.what());
  }
  std::string bytes;
  m.SerializeToString(&bytes);
  send(kModel, bytes);
}

int stagePercent(const std::string& stage) {
  if (stage == "checking")
    return 30;
  if (stage.rfind("converting", 0) == 0)
    return 45;
  return 60;
}

} // namespace

LibraryStepsResult
runOnnxLibrarySteps(const onnx::ModelProto& model, std::int64_t sourceOpset,
                    std::int64_t targetOpset, std::int64_t minNativeOpset,
                    std::int64_t keepElements, bool tolerateUnknownOps, const std::string& path,
                    const std::function<void(int, const std::string&)>& progress) {
  const ErrorLocation where{path, {}, {}};
  std::string lastStage = "starting";
  int lastPercent = 0;
  LibraryStepsResult result;
  bool gotModel = false;
  // One message from the steps: progress, a warning, the model, or why it stops.
  const auto handle = [&](char tag, std::string payload) {
    switch (tag) {
    case kStage:
      lastStage = payload;
      lastPercent = std::max(lastPercent, stagePercent(payload)); // never goes backwards
      progress(lastPercent, payload);
      break;
    case kWarning:
      result.warnings.push_back(std::move(payload));
      break;
    case kInvalid:
      throw Error(ErrorKind::Invalid, payload, where);
    case kUnsupported:
      throw Error(ErrorKind::Unsupported, payload, where);
    case kRefusedNode: {
      const std::size_t a = payload.find('\0'), b = payload.find('\0', a + 1);
      if (b == std::string::npos)
        throw Error(ErrorKind::Internal, "bad message from the ONNX library steps", where);
      std::string reason = payload.substr(b + 1);
      if (sourceOpset != targetOpset)
        reason += " (the model's opset is " + std::to_string(sourceOpset) + "; Lathe runs it as " +
                  std::to_string(targetOpset) + ")";
      throw Error(ErrorKind::Unsupported, reason,
                  {path, payload.substr(0, a), payload.substr(a + 1, b - a - 1)});
    }
    case kModel:
      if (!result.model.ParseFromString(payload))
        throw Error(ErrorKind::Internal, "the ONNX library steps returned an unreadable model",
                    where);
      gotModel = true;
      break;
    default:
      throw Error(ErrorKind::Internal, "bad message from the ONNX library steps", where);
    }
  };

#ifdef LATHE_ONNX_STEPS_IN_PROCESS
  // Sanitizer builds: GCC's ASan allocator is not fork-safe, and a child forked while another
  // thread allocates hangs in it. The steps run here instead, without the crash isolation.
  onnx::ModelProto copy = model;
  std::vector<std::pair<char, std::string>> messages;
  try {
    childSteps(copy, sourceOpset, targetOpset, minNativeOpset, keepElements, tolerateUnknownOps,
               [&](Tag tag, const std::string& payload) { messages.emplace_back(tag, payload); });
  } catch (...) {
    messages.emplace_back(kInvalid, "the ONNX library failed on this model");
  }
  for (auto& [tag, payload] : messages)
    handle(tag, std::move(payload));
  if (!gotModel)
    throw Error(ErrorKind::Invalid, "the ONNX library stopped without a result", where);
  return result;
#else
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(ErrorKind::Io, "cannot create a pipe for the ONNX library steps", where);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(ErrorKind::Io, "cannot start a process for the ONNX library steps", where);
  }
  if (pid == 0) {
    ::close(fds[0]);
    const Sink toParent = [fd = fds[1]](Tag tag, const std::string& payload) {
      writeMessage(fd, tag, payload);
    };
    try {
      childSteps(const_cast<onnx::ModelProto&>(model), sourceOpset, targetOpset, minNativeOpset,
                 keepElements, tolerateUnknownOps, toParent);
    } catch (...) {
      toParent(kInvalid, "the ONNX library failed on this model");
    }
    ::_exit(0); // no destructors or atexit handlers of the parent's objects
  }
  ::close(fds[1]);

  struct Reaper { // always collect the child, killing it if we leave early
    pid_t pid;
    int fd;
    bool done = false;
    int status = 0;
    ~Reaper() {
      ::close(fd);
      if (!done) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
      }
    }
  } reaper{pid, fds[0]};

  std::string buffer;
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    pollfd pfd{fds[0], POLLIN, 0};
    ::poll(&pfd, 1, 100);
    char chunk[65536];
    const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n > 0)
      buffer.append(chunk, static_cast<std::size_t>(n));
    // Handle every complete message.
    while (buffer.size() >= 5) {
      std::uint32_t len = 0;
      std::memcpy(&len, buffer.data() + 1, sizeof len);
      if (buffer.size() < 5 + len)
        break;
      const char tag = buffer[0];
      std::string payload = buffer.substr(5, len);
      buffer.erase(0, 5 + len);
      handle(tag, std::move(payload));
    }
    if (n == 0) // end of file: the child has exited
      break;
    progress(-1, lastStage); // lets the caller cancel
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > kTimeLimitSeconds)
      throw Error(ErrorKind::Invalid,
                  "the ONNX library did not finish " + lastStage + " within " +
                      std::to_string(static_cast<int>(kTimeLimitSeconds)) + " s",
                  where);
  }
  ::waitpid(pid, &reaper.status, 0);
  reaper.done = true;
  if (!gotModel) {
    const int status = reaper.status;
    const std::string how = WIFSIGNALED(status)
                                ? std::string("crashed (") + strsignal(WTERMSIG(status)) + ")"
                                : "stopped without a result";
    throw Error(ErrorKind::Invalid,
                "the ONNX library " + how + " while " + lastStage +
                    "; the model is malformed in a way its checker does not catch",
                where);
  }
  return result;
#endif
}

} // namespace lathe::frontend
