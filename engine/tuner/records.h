#pragma once
// Tuning records: one JSON object per line, appended as trials finish, so that a tuning run
// that is stopped keeps what it measured and can be resumed, and two files can be merged.
// A record says which kernel workload it is for (a hash of the kernel's default loop IR), on
// which target, CPU and thread count it was measured, the schedule trace tried, and its time
// or the error it met. A record for another target, CPU or thread count is never applied.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lathe::tuner {

// Where a measurement is valid: the canonical target string, the CPU the code was tuned on
// (LLVM's name for it, e.g. "znver4") and the threads the kernel ran on.
struct MachineKey {
  std::string target;
  std::string cpu;
  int threads = 1;
  bool operator==(const MachineKey&) const = default;
};

struct TuningRecord {
  std::string workload; // workloadKey() of the kernel's default lowering
  std::string kernel;   // the kernel's name where it was tuned (for people; not matched)
  MachineKey machine;
  std::string trace;   // schedule steps, one per line (empty: the default)
  double medianMs = 0; // of the timed calls; 0 when `error` is set
  double p10Ms = 0, p90Ms = 0;
  double defaultMedianMs = 0; // the default schedule, timed in the same child
  std::string error;          // refused, crashed, timed out, wrong result: why
  std::string time;           // UTC, ISO 8601
  std::string version;        // Lathe's
  bool ok() const { return error.empty(); }
};

// A good record's median over the default's timed next to it in the same child (1 without
// one). Records are ranked by it: a shared machine's drift moves a candidate and the default
// it alternates with alike, but moves two records measured minutes apart differently.
double relativeTime(const TuningRecord& record);
// Whether good record `a` ranks before good record `b` as a workload's best: the lower
// relativeTime, ties by the lower median.
bool ranksBefore(const TuningRecord& a, const TuningRecord& b);

// A veto: the check in the whole model (lathe tune, after the search) found the workload's
// best slower there than the default. Its `error` starts with one of these; its trace is the
// one refuted.
// - kInModelTraceVeto sets aside the good records of its workload and machine before it
//   that have its trace: the next best applies, and the check goes on to check that one.
// - kInModelVeto sets aside every good record of its workload and machine before it, so the
//   default applies until a later run (--resume) finds and checks another. The check writes
//   it when it has no more rounds for the workload's next best.
inline constexpr const char* kInModelVeto = "slower in the model: ";
inline constexpr const char* kInModelTraceVeto = "slower in the model (this trace): ";
bool isVeto(const TuningRecord& record);
bool isTraceVeto(const TuningRecord& record);
// For each record, whether a veto later in `records` sets it aside.
std::vector<bool> setAsideByVetoes(const std::vector<TuningRecord>& records);

std::string toJsonLine(const TuningRecord& record);
// Throws lathe::Error (Invalid) naming `file`, `line` and the field that is wrong.
TuningRecord parseJsonLine(const std::string& text, const std::string& file, int line);

// The records of `path`, in file order; a missing file has none. A malformed line is an error
// naming the file and line (a half-written last line, from a run that was killed, is skipped
// with a warning in `warnings`).
std::vector<TuningRecord> readRecords(const std::string& path,
                                      std::vector<std::string>* warnings = nullptr);
// Appends one line and flushes it: a record is on disk once this returns.
void appendRecord(const std::string& path, const TuningRecord& record);

// The records of one or more files, answering "the fastest good trace for this workload on
// this machine".
class RecordDatabase {
public:
  void add(TuningRecord record);
  void addFile(const std::string& path, std::vector<std::string>* warnings = nullptr);
  // The good record for exactly this workload and machine with the lowest median against
  // the default timed next to it (relativeTime), of those no veto sets aside; null if none.
  const TuningRecord* best(const std::string& workload, const MachineKey& machine) const;
  // How many trials (good records or errors, not vetoes) there are for this workload and
  // machine.
  int trials(const std::string& workload, const MachineKey& machine) const;
  const std::vector<TuningRecord>& records() const { return records_; }
  // Machines that records exist for, other than `machine`: "applied to nothing" reasons.
  std::vector<MachineKey> otherMachines(const MachineKey& machine) const;

private:
  std::vector<TuningRecord> records_;
};

// "2026-12-03T20:40:00Z".
std::string utcNow();
// This build's version, as the records it writes carry it.
std::string latheVersion();

} // namespace lathe::tuner
