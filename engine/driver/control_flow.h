#pragma once
// If, Loop and Scan as host calls. Each subgraph is prepared as a
// model of its own (its captured values become inputs), run through the default pipeline,
// compiled for the host and executed by an executor that shares the parent's thread pool.
#include "engine/graph/graph.h"
#include "engine/runtime/host_call.h"
#include "engine/runtime/thread_pool.h"
#include "engine/target/target.h"

#include <memory>

namespace lathe::driver {

// `node` is an If, Loop or Scan of a graph whose values have static shapes (outputs that are
// model outputs may be dynamic); the result no longer refers to `node` or its graph.
std::shared_ptr<runtime::HostCall>
makeControlFlowCall(const graph::Node& node, const target::Target& target,
                    const std::shared_ptr<runtime::ThreadPool>& pool);

} // namespace lathe::driver
