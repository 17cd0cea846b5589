// Every graph pass of the pipeline and every schedule primitive is explained
// (docs/explain), each explanation names itself and says why, what and what it costs.
#include "engine/api/explain.h"
#include "engine/api/session.h"
#include "engine/schedule/schedule.h"

#include <gtest/gtest.h>

namespace lathe::api {
namespace {

TEST(Explanations, EveryPassAndPrimitiveHasOne) {
  for (const PassInfoSummary& pass : defaultPipeline())
    EXPECT_NE(findExplanation(pass.name, "pass"), nullptr)
        << "docs/explain/passes/" << pass.name << ".md is missing";
  for (schedule::Primitive p : schedule::allPrimitives()) {
    const std::string name = schedule::primitiveName(p);
    EXPECT_NE(findExplanation(name, "primitive"), nullptr)
        << "docs/explain/primitives/" << name << ".md is missing";
  }
  for (const char* stage : {"import", "graph-passes", "lowering", "schedule", "llvm-ir",
                            "llvm-ir-optimised", "assembly", "execution-plan"})
    EXPECT_NE(findExplanation(stage, "stage"), nullptr) << stage;
}

TEST(Explanations, EachNamesItselfAndExplains) {
  ASSERT_FALSE(explanations().empty());
  for (const Explanation& e : explanations()) {
    EXPECT_EQ(e.title().rfind(e.name + ": ", 0), 0u)
        << e.kind << " " << e.name << ": " << e.title();
    if (e.kind == "stage") {
      EXPECT_NE(e.text.find("**What happens.**"), std::string::npos) << e.name;
      EXPECT_NE(e.text.find("**What to look at.**"), std::string::npos) << e.name;
    } else {
      for (const char* part :
           {"**Why it exists.**", "**What it changes.**", "**What it costs or saves.**"})
        EXPECT_NE(e.text.find(part), std::string::npos) << e.name << " lacks " << part;
    }
  }
  EXPECT_EQ(explanationsInOrder().size(), explanations().size());
  EXPECT_EQ(explanationsInOrder().front()->name, "import");
  EXPECT_EQ(findExplanation("no-such-pass"), nullptr);
}

} // namespace
} // namespace lathe::api
