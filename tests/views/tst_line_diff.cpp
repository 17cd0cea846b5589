// views/diff: the line diff (edit scripts checked by replaying them, optimality checked
// against an LCS table), the side-by-side rows built from it, and changedNodes().

#include "views/diff/changed_nodes.h"
#include "views/diff/line_diff.h"

#include <QElapsedTimer>
#include <QTest>
#include <random>

using namespace lathe;
using views::DiffOp;
using views::DiffRow;

namespace {

std::vector<std::string_view> lines(const std::vector<std::string>& text) {
  return {text.begin(), text.end()};
}

// Replays `script` on a and checks it yields b: Equal steps match, indices advance in order.
bool replays(const std::vector<std::string>& a, const std::vector<std::string>& b,
             const std::vector<DiffOp>& script, int* edits = nullptr) {
  int x = 0, y = 0, count = 0;
  std::vector<std::string> built;
  for (const DiffOp& op : script) {
    switch (op.kind) {
    case DiffOp::Kind::Equal:
      if (op.aIndex != x || op.bIndex != y || a[x] != b[y])
        return false;
      built.push_back(a[x]);
      ++x;
      ++y;
      break;
    case DiffOp::Kind::Delete:
      if (op.aIndex != x)
        return false;
      ++x;
      ++count;
      break;
    case DiffOp::Kind::Insert:
      if (op.bIndex != y)
        return false;
      built.push_back(b[y]);
      ++y;
      ++count;
      break;
    }
  }
  if (edits)
    *edits = count;
  return x == static_cast<int>(a.size()) && y == static_cast<int>(b.size()) && built == b;
}

// The fewest insertions + deletions, from the longest common subsequence.
int minimalEdits(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j)
      lcs[i][j] =
          a[i - 1] == b[j - 1] ? lcs[i - 1][j - 1] + 1 : std::max(lcs[i - 1][j], lcs[i][j - 1]);
  return static_cast<int>(a.size() + b.size()) - 2 * lcs[a.size()][b.size()];
}

std::vector<std::string> randomLines(std::mt19937& rng, int count, int alphabet) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i)
    out.push_back("line " + std::to_string(rng() % alphabet));
  return out;
}

// b = a with random deletions, insertions and replacements.
std::vector<std::string> mutate(std::mt19937& rng, const std::vector<std::string>& a, int edits,
                                int alphabet) {
  std::vector<std::string> b = a;
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = b.empty() ? 0 : rng() % (b.size() + 1);
    const std::string fresh = "new " + std::to_string(rng() % alphabet);
    switch (rng() % 3) {
    case 0:
      if (at < b.size())
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at));
      break;
    case 1:
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), fresh);
      break;
    default:
      if (at < b.size())
        b[at] = fresh;
      break;
    }
  }
  return b;
}

api::NodeSummary node(const std::string& out, const std::string& ir) {
  api::NodeSummary n;
  n.outputs = {out};
  n.irLine = ir;
  return n;
}

} // namespace

class TestLineDiff : public QObject {
  Q_OBJECT

private slots:
  void identical();
  void insertDeleteReplace();
  void emptySides();
  void splitLines();
  void randomSmallIsMinimal();
  void randomLargeReplays();
  void sideBySidePairsChanges();
  void sideBySidePairsByDefinedName();
  void changedNodes();
};

void TestLineDiff::identical() {
  const std::vector<std::string> a = {"x", "y", "z"};
  const auto script = views::diffLines(lines(a), lines(a));
  QCOMPARE(script.size(), 3u);
  for (const DiffOp& op : script)
    QVERIFY(op.kind == DiffOp::Kind::Equal);
  const auto d = views::sideBySide(script);
  QCOMPARE(d.removed, 0);
  QCOMPARE(d.added, 0);
  QVERIFY(d.hunkStarts.empty());
}

void TestLineDiff::insertDeleteReplace() {
  const std::vector<std::string> a = {"a", "b", "c", "d"};
  const std::vector<std::string> inserted = {"a", "b", "new", "c", "d"};
  const std::vector<std::string> deleted = {"a", "c", "d"};
  const std::vector<std::string> replaced = {"a", "B", "c", "d"};
  for (const auto* b : {&inserted, &deleted, &replaced}) {
    int edits = 0;
    const auto script = views::diffLines(lines(a), lines(*b));
    QVERIFY(replays(a, *b, script, &edits));
    QCOMPARE(edits, minimalEdits(a, *b));
  }
  const auto d = views::sideBySide(views::diffLines(lines(a), lines(replaced)));
  QCOMPARE(d.rows.size(), 4u);
  QCOMPARE(d.rows[1].kind, DiffRow::Kind::Changed);
  QCOMPARE(d.rows[1].left, 1);
  QCOMPARE(d.rows[1].right, 1);
  QCOMPARE(d.removed, 1);
  QCOMPARE(d.added, 1);
  QCOMPARE(d.hunkStarts, std::vector<int>{1});
}

void TestLineDiff::emptySides() {
  const std::vector<std::string> none, some = {"p", "q"};
  QVERIFY(views::diffLines(lines(none), lines(none)).empty());
  const auto added = views::sideBySide(views::diffLines(lines(none), lines(some)));
  QCOMPARE(added.rows.size(), 2u);
  QCOMPARE(added.rows[0].kind, DiffRow::Kind::Added);
  QCOMPARE(added.rows[0].left, -1);
  QCOMPARE(added.added, 2);
  const auto removed = views::sideBySide(views::diffLines(lines(some), lines(none)));
  QCOMPARE(removed.rows[1].kind, DiffRow::Kind::Removed);
  QCOMPARE(removed.rows[1].right, -1);
  QCOMPARE(removed.removed, 2);
  QVERIFY(replays(some, none, views::diffLines(lines(some), lines(none))));
}

void TestLineDiff::splitLines() {
  QCOMPARE(views::splitLines("").size(), 0u);
  QCOMPARE(views::splitLines("a\nb\n").size(), 2u);
  QCOMPARE(views::splitLines("a\n\nb").size(), 3u);
  QCOMPARE(views::splitLines("a\n\nb")[1], std::string_view());
}

void TestLineDiff::randomSmallIsMinimal() {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    const int alphabet = 2 + static_cast<int>(rng() % 6);
    const auto a = randomLines(rng, static_cast<int>(rng() % 30), alphabet);
    // Half the time unrelated texts, half the time a few edits apart.
    const auto b = rng() % 2 ? randomLines(rng, static_cast<int>(rng() % 30), alphabet)
                             : mutate(rng, a, static_cast<int>(rng() % 6), alphabet);
    int edits = 0;
    const auto script = views::diffLines(lines(a), lines(b));
    QVERIFY2(replays(a, b, script, &edits), qPrintable(QStringLiteral("round %1").arg(round)));
    QCOMPARE(edits, minimalEdits(a, b));
  }
}

void TestLineDiff::randomLargeReplays() {
  std::mt19937 rng(11);
  // An IR-sized text with scattered edits, and two unrelated texts (the worst case).
  const auto a = randomLines(rng, 20000, 5000);
  const auto near = mutate(rng, a, 400, 5000);
  const auto far = randomLines(rng, 5000, 50);
  const auto farA = randomLines(rng, 5000, 50);
  for (const auto& [x, y] : {std::pair{&a, &near}, std::pair{&farA, &far}}) {
    QElapsedTimer timer;
    timer.start();
    const auto script = views::diffLines(lines(*x), lines(*y));
    const qint64 ms = timer.elapsed();
    qInfo("diff of %zu vs %zu lines: %lld ms", x->size(), y->size(), static_cast<long long>(ms));
    QVERIFY(replays(*x, *y, script)); // the time is printed, not asserted
  }
}

void TestLineDiff::sideBySidePairsChanges() {
  // Two lines replaced by three: two Changed rows, one Added, on one hunk.
  const std::vector<std::string> a = {"keep", "old1", "old2", "tail", "x"};
  const std::vector<std::string> b = {"keep", "new1", "new2", "new3", "tail", "y"};
  const auto d = views::sideBySide(views::diffLines(lines(a), lines(b)));
  QCOMPARE(d.removed, 3);
  QCOMPARE(d.added, 4);
  QCOMPARE(d.hunkStarts, (std::vector<int>{1, 5}));
  QCOMPARE(d.rows.size(), 6u);
  QCOMPARE(d.rows[1].kind, DiffRow::Kind::Changed);
  QCOMPARE(d.rows[2].kind, DiffRow::Kind::Changed);
  QCOMPARE(d.rows[3].kind, DiffRow::Kind::Added);
  QCOMPARE(d.rows[3].left, -1);
  QCOMPARE(d.rows[4].kind, DiffRow::Kind::Same);
  QCOMPARE(d.rows[5].kind, DiffRow::Kind::Changed);
  // Both columns list their own lines, in order, with -1 fillers only.
  std::vector<int> left, right;
  for (const DiffRow& r : d.rows) {
    if (r.left >= 0)
      left.push_back(r.left);
    if (r.right >= 0)
      right.push_back(r.right);
  }
  QCOMPARE(left, (std::vector<int>{0, 1, 2, 3, 4}));
  QCOMPARE(right, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

void TestLineDiff::sideBySidePairsByDefinedName() {
  const std::vector<std::string> a = {"keep", "%a: f32 = Conv(%x)", "%b: f32 = Relu(%a)", "old",
                                      "end"};
  const std::vector<std::string> b = {"keep", "const %w: f32 = elided", "%a: f32 = Conv(%x, %w)",
                                      "new", "end"};
  const auto script = views::diffLines(lines(a), lines(b));
  const auto d = views::sideBySide(script, lines(a), lines(b));
  QCOMPARE(views::pairingKey("  %a: f32[1] = Conv(%x)"), std::string_view("  %a"));
  QCOMPARE(views::pairingKey("  const %w : f32 = elided"), std::string_view("  const %w"));
  QCOMPARE(views::pairingKey("}"), std::string_view());
  // The new const gets its own row; the conv pairs with the conv; the relu has no partner;
  // the key-less lines pair in order.
  QCOMPARE(d.rows.size(), 6u);
  QCOMPARE(d.rows[1].kind, DiffRow::Kind::Added);
  QCOMPARE(d.rows[1].right, 1);
  QCOMPARE(d.rows[2].kind, DiffRow::Kind::Changed);
  QCOMPARE(d.rows[2].left, 1);
  QCOMPARE(d.rows[2].right, 2);
  QCOMPARE(d.rows[3].kind, DiffRow::Kind::Removed);
  QCOMPARE(d.rows[3].left, 2);
  QCOMPARE(d.rows[4].kind, DiffRow::Kind::Changed);
  QCOMPARE(d.rows[4].left, 3);
  QCOMPARE(d.removed, 3);
  QCOMPARE(d.added, 3);
  QCOMPARE(d.hunkStarts, std::vector<int>{1});
}

void TestLineDiff::changedNodes() {
  api::GraphSnapshot before, after;
  before.nodes = {node("c", "%c = Conv(%x, %w)"), node("b", "%b = BatchNormalization(%c, ...)"),
                  node("r", "%r = Relu(%b)")};
  // BN folded into the conv: the conv now writes %b with new weights; %c is gone.
  after.nodes = {node("b", "%b = Conv(%x, %w_folded, %bias)"), node("r", "%r = Relu(%b)"),
                 node("extra", "%extra = Identity(%r)")};
  const views::NodeChanges changes = views::changedNodes(before, after);
  QCOMPARE(changes.changed, (std::vector<int>{0, 2}));
  QCOMPARE(changes.removed, 1);
  const views::NodeChanges none = views::changedNodes(after, after);
  QVERIFY(none.changed.empty());
  QCOMPARE(none.removed, 0);

  // Fusion changes no IR line, only grouping: the grouped nodes count as changed.
  api::GraphSnapshot fused = after;
  fused.groups = {{"fused_conv_relu_0", "Conv+Relu", {0, 1}}};
  fused.nodes[0].group = 0;
  fused.nodes[1].group = 0;
  QCOMPARE(views::changedNodes(after, fused).changed, (std::vector<int>{0, 1}));
  QCOMPARE(views::changedNodes(after, fused).removed, 0);
}

QTEST_GUILESS_MAIN(TestLineDiff)
#include "tst_line_diff.moc"
