#!/usr/bin/env bash
# Sums BUILD_DIR/fuzz-ledger.tsv (written by tools/run_fuzzers.sh) per target: runs, wall
# seconds, CPU seconds, executions and crashing inputs found.
#   tools/fuzz_ledger.sh [BUILD_DIR]
set -euo pipefail
ledger=${1:-build-fuzz}/fuzz-ledger.tsv
awk -F'\t' 'NR > 1 { runs[$2]++; wall[$2] += $3; cpu[$2] += $4; ex[$2] += $5; cr[$2] += $6 }
  END {
    printf "%-14s %5s %8s %8s %13s %8s\n", "target", "runs", "wall_s", "cpu_s", "executions", "crashes"
    for (t in runs) printf "%-14s %5d %8d %8d %13d %8d\n", t, runs[t], wall[t], cpu[t], ex[t], cr[t]
  }' "$ledger"
