#!/usr/bin/env bash
# Two models exported for this machine (their kernels' symbols start with each export's C
# name) link into one program with one runtime, and each gives what its own example gives.
# Usage: check_two_models.sh LATHE FIRST.onnx SECOND.onnx WORKDIR
set -euo pipefail
lathe=$1 first=$2 second=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
"$lathe" export "$first" --name first -o "$work/first" > /dev/null
"$lathe" export "$second" --name second -o "$work/second" > /dev/null
nm "$work/first/kernels.o" | grep -q ' T first_' || { echo "FAIL: kernels are not prefixed"; exit 1; }
make -s -C "$work/first" > /dev/null
make -s -C "$work/second" > /dev/null
expected=$( ("$work/first/model"; "$work/second/model") | grep '^output ')
cc -O2 -std=c11 -c -o "$work/first_model.o" "$work/first/model.c"
cc -O2 -std=c11 -c -o "$work/second_model.o" "$work/second/model.c"
cc -O2 -std=c11 -Wall -Wextra -Werror -DLATHE_RUNTIME_PTHREADS -pthread -I "$work/first" \
   -o "$work/both" "$here/two_models.c" "$work/first_model.o" "$work/second_model.o" \
   "$work/first/lathe_runtime.c" "$work/first/kernels.o" "$work/first/weights.o" \
   "$work/second/kernels.o" "$work/second/weights.o"
got=$("$work/both")
if [[ "$got" != "$expected" ]]; then
  printf 'FAIL: one program gave\n%s\nthe examples gave\n%s\n' "$got" "$expected"
  exit 1
fi
printf '%s\nPASS: both models in one program match their own examples\n' "$got"
