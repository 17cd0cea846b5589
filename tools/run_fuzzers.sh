#!/usr/bin/env bash
# Runs every libFuzzer target of BUILD_DIR for SECONDS each and prints a table: target,
# seconds, executions, crashes. New crashing inputs are written to tests/fuzz/crashes/;
# once fixed, move each into tests/fuzz/corpus/<target>/ so `make test` replays it.
#   tools/run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(onnx_import ir_parser schedule_text schedule_json npy bundle input_shapes)
models=$build/models
declare -A seeds=(
  [onnx_import]="$models $models/old_forms /usr/share/libonnx-testdata/data/node/test_add /usr/share/libonnx-testdata/data/simple"
  [ir_parser]="$root/tests/golden"
  [bundle]="$build/fuzz-seeds/bundle"
)
mkdir -p "$root/tests/fuzz/crashes" "$build/fuzz-seeds/bundle"
# A real bundle as a seed for the tar and manifest parser.
[[ -x $build/app/cli/lathe ]] && "$build/app/cli/lathe" compile "$models/conv_bn_relu.onnx" \
  -o "$build/fuzz-seeds/bundle/conv_bn_relu.tar" >/dev/null 2>&1
printf '%-14s %8s %12s %8s\n' target seconds executions crashes
for t in "${targets[@]}"; do
  work=$build/fuzz-corpus/$t
  mkdir -p "$work"
  before=$(ls "$root/tests/fuzz/crashes" | grep -c "^$t-" || true)
  log=$build/fuzz-$t.log
  # shellcheck disable=SC2086
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$root/tests/fuzz/crashes/$t-" \
    "$work" "$root/tests/fuzz/corpus/$t" ${seeds[$t]:-} >"$log" 2>&1
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  after=$(ls "$root/tests/fuzz/crashes" | grep -c "^$t-" || true)
  printf '%-14s %8s %12s %8s\n' "$t" "$seconds" "${execs:-?}" "$((after - before))"
done
