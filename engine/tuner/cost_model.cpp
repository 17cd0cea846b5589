#include "engine/tuner/cost_model.h"

#include "engine/support/diagnostics.h"

#include <cmath>
#include <xgboost/c_api.h>

namespace lathe::tuner {
namespace {

void check(int status, const char* what) {
  if (status != 0)
    throw Error(ErrorKind::Internal,
                std::string("the cost model's ") + what + " failed: " + XGBGetLastError());
}

// A DMatrix freed when it goes out of scope.
class Matrix {
public:
  Matrix(const float* data, std::size_t rows) {
    check(XGDMatrixCreateFromMat(data, rows, kFeatureCount, std::nanf(""), &handle_),
          "data matrix");
  }
  ~Matrix() { XGDMatrixFree(handle_); }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  DMatrixHandle get() const { return handle_; }

private:
  DMatrixHandle handle_ = nullptr;
};

} // namespace

CostModel::CostModel() = default;

CostModel::~CostModel() {
  if (booster_)
    XGBoosterFree(booster_);
}

void CostModel::add(const Features& features, float score) {
  rows_.insert(rows_.end(), features.begin(), features.end());
  scores_.push_back(score);
}

void CostModel::train(int rounds) {
  if (scores_.empty())
    return;
  Matrix data(rows_.data(), scores_.size());
  check(XGDMatrixSetFloatInfo(data.get(), "label", scores_.data(), scores_.size()), "labels");
  BoosterHandle booster = nullptr;
  const DMatrixHandle matrices[] = {data.get()};
  check(XGBoosterCreate(matrices, 1, &booster), "booster");
  try {
    // Small, shallow trees: there are tens to hundreds of examples, not millions.
    for (const auto& [key, value] : {std::pair{"objective", "reg:squarederror"},
                                     {"max_depth", "4"},
                                     {"eta", "0.2"},
                                     {"min_child_weight", "1"},
                                     {"subsample", "1"},
                                     {"nthread", "1"},
                                     {"verbosity", "0"},
                                     {"seed", "1"}})
      check(XGBoosterSetParam(booster, key, value), "parameters");
    for (int i = 0; i < rounds; ++i)
      check(XGBoosterUpdateOneIter(booster, i, data.get()), "training");
  } catch (...) {
    XGBoosterFree(booster);
    throw;
  }
  if (booster_)
    XGBoosterFree(booster_);
  booster_ = booster;
}

std::vector<float> CostModel::predict(const std::vector<Features>& rows) const {
  std::vector<float> out(rows.size(), 0.0f);
  if (!booster_ || rows.empty())
    return out;
  std::vector<float> data;
  for (const Features& f : rows)
    data.insert(data.end(), f.begin(), f.end());
  Matrix matrix(data.data(), rows.size());
  bst_ulong length = 0;
  const float* result = nullptr;
  check(XGBoosterPredict(booster_, matrix.get(), 0, 0, 0, &length, &result), "prediction");
  for (std::size_t i = 0; i < out.size() && i < length; ++i)
    out[i] = result[i];
  return out;
}

} // namespace lathe::tuner
