#include "views/diff/line_diff.h"

#include <unordered_map>

namespace lathe::views {
namespace {

// Myers' divide-and-conquer diff over line ids: find the middle snake of an optimal path,
// recurse on both sides of it. Memory is O(N + M) however different the texts are.
class Differ {
public:
  Differ(const std::vector<int>& a, const std::vector<int>& b) : a_(a), b_(b) {
    const std::size_t size = 2 * (a.size() + b.size()) + 4;
    forward_.resize(size);
    backward_.resize(size);
  }

  std::vector<DiffOp> run() {
    diff(0, static_cast<int>(a_.size()), 0, static_cast<int>(b_.size()));
    return std::move(ops_);
  }

private:
  struct Snake {
    int x0, y0, x1, y1; // equal lines a[x0, x1) == b[y0, y1)
  };

  void equal(int x, int y, int count) {
    for (int i = 0; i < count; ++i)
      ops_.push_back({DiffOp::Kind::Equal, x + i, y + i});
  }

  void diff(int aLo, int aHi, int bLo, int bHi) {
    int prefix = 0;
    while (aLo + prefix < aHi && bLo + prefix < bHi && a_[aLo + prefix] == b_[bLo + prefix])
      ++prefix;
    equal(aLo, bLo, prefix);
    aLo += prefix;
    bLo += prefix;
    int suffix = 0;
    while (aHi - suffix > aLo && bHi - suffix > bLo && a_[aHi - suffix - 1] == b_[bHi - suffix - 1])
      ++suffix;
    aHi -= suffix;
    bHi -= suffix;

    if (aLo == aHi) {
      for (int y = bLo; y < bHi; ++y)
        ops_.push_back({DiffOp::Kind::Insert, aLo, y});
    } else if (bLo == bHi) {
      for (int x = aLo; x < aHi; ++x)
        ops_.push_back({DiffOp::Kind::Delete, x, bLo});
    } else {
      const Snake s = middleSnake(aLo, aHi, bLo, bHi);
      diff(aLo, s.x0, bLo, s.y0);
      equal(s.x0, s.y0, s.x1 - s.x0);
      diff(s.x1, aHi, s.y1, bHi);
    }
    equal(aHi, bHi, suffix);
  }

  // Both ends differ here (the caller stripped common prefix and suffix), so D >= 2 or
  // one side is empty, and each recursion strictly shrinks the problem.
  Snake middleSnake(int aLo, int aHi, int bLo, int bHi) {
    const int n = aHi - aLo, m = bHi - bLo;
    const int delta = n - m;
    const bool odd = (delta & 1) != 0;
    const int maxD = (n + m + 1) / 2;
    const int offset = maxD + 1;
    int* vf = forward_.data();
    int* vb = backward_.data();
    vf[offset + 1] = 0;
    vb[offset + 1] = 0;
    for (int d = 0; d <= maxD; ++d) {
      for (int k = -d; k <= d; k += 2) {
        int x = (k == -d || (k != d && vf[offset + k - 1] < vf[offset + k + 1]))
                    ? vf[offset + k + 1]
                    : vf[offset + k - 1] + 1;
        int y = x - k;
        const int x0 = x, y0 = y;
        while (x < n && y < m && a_[aLo + x] == b_[bLo + y]) {
          ++x;
          ++y;
        }
        vf[offset + k] = x;
        const int kb = delta - k; // the same diagonal, seen from the end
        if (odd && kb >= -(d - 1) && kb <= d - 1 && x + vb[offset + kb] >= n)
          return {aLo + x0, bLo + y0, aLo + x, bLo + y};
      }
      for (int k = -d; k <= d; k += 2) {
        int x = (k == -d || (k != d && vb[offset + k - 1] < vb[offset + k + 1]))
                    ? vb[offset + k + 1]
                    : vb[offset + k - 1] + 1;
        int y = x - k;
        const int x0 = x, y0 = y;
        while (x < n && y < m && a_[aHi - 1 - x] == b_[bHi - 1 - y]) {
          ++x;
          ++y;
        }
        vb[offset + k] = x;
        const int kf = delta - k;
        if (!odd && kf >= -d && kf <= d && x + vf[offset + kf] >= n)
          return {aHi - x, bHi - y, aHi - x0, bHi - y0};
      }
    }
    // Unreachable: an edit script of at most n + m steps always exists.
    return {aLo, bLo, aLo, bLo};
  }

  const std::vector<int>& a_;
  const std::vector<int>& b_;
  std::vector<int> forward_, backward_;
  std::vector<DiffOp> ops_;
};

} // namespace

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<DiffOp> diffLines(const std::vector<std::string_view>& a,
                              const std::vector<std::string_view>& b) {
  // Equal lines get equal ids, so the inner loops compare ints, not strings.
  std::unordered_map<std::string_view, int> ids;
  ids.reserve(a.size() + b.size());
  const auto toIds = [&ids](const std::vector<std::string_view>& lines) {
    std::vector<int> out;
    out.reserve(lines.size());
    for (std::string_view line : lines)
      out.push_back(ids.try_emplace(line, static_cast<int>(ids.size())).first->second);
    return out;
  };
  const std::vector<int> aIds = toIds(a);
  const std::vector<int> bIds = toIds(b);
  return Differ(aIds, bIds).run();
}

namespace {

// Collects the runs of deletions and insertions between equal lines and hands each run to
// `pair`, which appends its rows.
template <typename PairRun>
SideBySideDiff buildRows(const std::vector<DiffOp>& script, PairRun pair) {
  SideBySideDiff out;
  std::vector<int> deleted, inserted;
  const auto flush = [&] {
    if (deleted.empty() && inserted.empty())
      return;
    out.hunkStarts.push_back(static_cast<int>(out.rows.size()));
    pair(deleted, inserted, out.rows);
    out.removed += static_cast<int>(deleted.size());
    out.added += static_cast<int>(inserted.size());
    deleted.clear();
    inserted.clear();
  };
  for (const DiffOp& op : script) {
    switch (op.kind) {
    case DiffOp::Kind::Equal:
      flush();
      out.rows.push_back({DiffRow::Kind::Same, op.aIndex, op.bIndex});
      break;
    case DiffOp::Kind::Delete:
      deleted.push_back(op.aIndex);
      break;
    case DiffOp::Kind::Insert:
      inserted.push_back(op.bIndex);
      break;
    }
  }
  flush();
  return out;
}

DiffRow changeRow(int left, int right) {
  const DiffRow::Kind kind = left < 0    ? DiffRow::Kind::Added
                             : right < 0 ? DiffRow::Kind::Removed
                                         : DiffRow::Kind::Changed;
  return {kind, left, right};
}

} // namespace

SideBySideDiff sideBySide(const std::vector<DiffOp>& script) {
  return buildRows(script, [](const std::vector<int>& deleted, const std::vector<int>& inserted,
                              std::vector<DiffRow>& rows) {
    const std::size_t count = std::max(deleted.size(), inserted.size());
    for (std::size_t i = 0; i < count; ++i)
      rows.push_back(
          changeRow(i < deleted.size() ? deleted[i] : -1, i < inserted.size() ? inserted[i] : -1));
  });
}

std::string_view pairingKey(std::string_view line) {
  const std::size_t end = line.find_first_of(":=");
  if (end == std::string_view::npos)
    return {};
  std::string_view key = line.substr(0, end);
  while (!key.empty() && (key.back() == ' ' || key.back() == '\t'))
    key.remove_suffix(1);
  return key;
}

SideBySideDiff sideBySide(const std::vector<DiffOp>& script, const std::vector<std::string_view>& a,
                          const std::vector<std::string_view>& b) {
  return buildRows(script, [&](const std::vector<int>& deleted, const std::vector<int>& inserted,
                               std::vector<DiffRow>& rows) {
    std::vector<std::string_view> left, right;
    for (int i : deleted)
      left.push_back(pairingKey(a[i]));
    for (int i : inserted)
      right.push_back(pairingKey(b[i]));
    for (const DiffOp& op : diffLines(left, right)) {
      switch (op.kind) {
      case DiffOp::Kind::Equal:
        rows.push_back(changeRow(deleted[op.aIndex], inserted[op.bIndex]));
        break;
      case DiffOp::Kind::Delete:
        rows.push_back(changeRow(deleted[op.aIndex], -1));
        break;
      case DiffOp::Kind::Insert:
        rows.push_back(changeRow(-1, inserted[op.bIndex]));
        break;
      }
    }
  });
}

SideBySideDiff diffTexts(std::string_view before, std::string_view after) {
  const std::vector<std::string_view> a = splitLines(before), b = splitLines(after);
  return sideBySide(diffLines(a, b), a, b);
}

} // namespace lathe::views
