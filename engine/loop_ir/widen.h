#pragma once
// VectorWidener: rebuilds expressions in which some variables have become vectors (a ramp
// for a vectorized loop variable, a vector value): every node above them is rebuilt at the
// vector width, scalar operands next to vectors are broadcast, and a let whose value becomes
// a vector binds a vector variable of the same name. What has no vector form (an extern call
// other than bitcast, a ramp or broadcast of something that became a vector) goes to
// refuse(), which a subclass turns into an error or a flag; the node then stays as it was.

#include "engine/loop_ir/ir_mutator.h"

#include <map>
#include <string>

namespace lathe::loop {

class VectorWidener : public IRMutator {
public:
  // `vectors`: variable name -> the vector expression it stands for.
  explicit VectorWidener(std::map<std::string, Expr> vectors) : vectors_(std::move(vectors)) {}

  // `e` as a vector of `lanes`: e itself when it already is one, else broadcast.
  static Expr broadcastTo(const Expr& e, int lanes);

protected:
  virtual void refuse(const std::string& why) = 0;

  // A binding whose value may have become a vector: the variable to bind (the same one, or
  // a vector variable of its name, which then replaces it until unbind()).
  Expr bind(const std::string& name, const Expr& var, const Expr& value);
  void unbind(const std::string& name);

  Expr mutateVar(const Var* op) override;
  Expr mutateBinary(const BinaryExprNode* op) override;
  Expr mutateNot(const Not* op) override;
  Expr mutateSelect(const Select* op) override;
  Expr mutateCast(const Cast* op) override;
  Expr mutateRamp(const Ramp* op) override;
  Expr mutateBroadcast(const Broadcast* op) override;
  Expr mutateCall(const Call* op) override;
  Expr mutateLet(const Let* op) override;

private:
  std::map<std::string, Expr> vectors_;
  std::map<std::string, std::vector<Expr>> shadowed_; // what bind() replaced, per name
};

} // namespace lathe::loop
