#!/usr/bin/env bash
# Runs every libFuzzer target of BUILD_DIR for SECONDS each and prints a table: target,
# wall seconds, CPU seconds, executions, crashes. Each run is also appended to
# BUILD_DIR/fuzz-ledger.tsv, and tools/fuzz_ledger.sh sums that ledger per target.
# New crashing inputs are written to tests/fuzz/crashes/; once fixed, move each into
# tests/fuzz/corpus/<target>/ so `make test` replays it.
#   tools/run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]
# FUZZ_JOBS=N runs N targets at once (default 1).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(onnx_import tflite_import torchscript_output ir_parser schedule_text schedule_json npy bundle input_shapes)
jobs=${FUZZ_JOBS:-1}
models=$build/models
declare -A seeds=(
  [onnx_import]="$models $models/old_forms /usr/share/libonnx-testdata/data/node/test_add /usr/share/libonnx-testdata/data/simple"
  [tflite_import]="$models/tflite"
  [ir_parser]="$root/tests/golden"
  [torchscript_output]="$root/tests/fuzz/corpus/torchscript_output"
  [bundle]="$build/fuzz-seeds/bundle"
)
mkdir -p "$root/tests/fuzz/crashes" "$build/fuzz-seeds/bundle"
# A real bundle as a seed for the tar and manifest parser.
[[ -x $build/app/cli/lathe ]] && "$build/app/cli/lathe" compile "$models/conv_bn_relu.onnx" \
  -o "$build/fuzz-seeds/bundle/conv_bn_relu.tar" >/dev/null 2>&1
ledger=$build/fuzz-ledger.tsv
[[ -f $ledger ]] || printf 'date\ttarget\twall_s\tcpu_s\texecutions\tcrashes\n' >"$ledger"

fuzz_one() {
  local t=$1 work=$build/fuzz-corpus/$1 log=$build/fuzz-$1.log times=$build/fuzz-$1.time
  mkdir -p "$work"
  local before after execs cpu start end
  before=$(ls "$root/tests/fuzz/crashes" | grep -c "^$t-" || true)
  start=$(date +%s)
  # shellcheck disable=SC2086
  /usr/bin/time -f '%U %S' -o "$times" \
    "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$root/tests/fuzz/crashes/$t-" \
    "$work" "$root/tests/fuzz/corpus/$t" ${seeds[$t]:-} >"$log" 2>&1
  end=$(date +%s)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  cpu=$(awk '{printf "%d", $1 + $2}' "$times" 2>/dev/null)
  after=$(ls "$root/tests/fuzz/crashes" | grep -c "^$t-" || true)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$((end - start))" "${cpu:-0}" \
    "${execs:-0}" "$((after - before))" >>"$ledger"
  printf '%-14s %8s %8s %12s %8s\n' "$t" "$((end - start))" "${cpu:-?}" "${execs:-?}" \
    "$((after - before))"
}

printf '%-14s %8s %8s %12s %8s\n' target wall_s cpu_s executions crashes
running=0
for t in "${targets[@]}"; do
  fuzz_one "$t" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
done
wait
