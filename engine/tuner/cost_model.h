#pragma once
// The learned cost model: gradient-boosted trees (XGBoost, from Debian's libxgboost) trained
// online on the candidates measured so far, predicting each candidate's time relative to its
// kernel's default from features of its loop IR (features.h). The tuner uses it to rank
// many legal candidates and measure only the most promising.

#include "engine/tuner/features.h"

#include <memory>
#include <vector>

namespace lathe::tuner {

class CostModel {
public:
  CostModel();
  ~CostModel();
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  // Adds a measured example: `score` is log2(time / default time) (lower is faster).
  void add(const Features& features, float score);
  std::size_t examples() const { return scores_.size(); }
  // Trains a fresh model on every example (a few dozen trees; milliseconds for hundreds of
  // examples). Throws lathe::Error (Internal) with XGBoost's message if it fails.
  void train(int rounds = 40);
  bool trained() const { return booster_ != nullptr; }
  // Predicted scores, one per row; all zero before train().
  std::vector<float> predict(const std::vector<Features>& rows) const;

private:
  std::vector<float> rows_; // examples() x kFeatureCount, row-major
  std::vector<float> scores_;
  void* booster_ = nullptr; // BoosterHandle
};

} // namespace lathe::tuner
