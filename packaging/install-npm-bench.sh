#!/usr/bin/env bash
# Installs the npm packages only the wasm benchmark needs (onnxruntime-web, from
# tests/bench/package.json) into DIR/node_modules. Not part of `make deps` or `make test`:
# `make bench-wasm` runs it. onnxruntime-web must be the release of onnxruntime-node, the
# oracle (tests/oracle/package.json): this refuses when the two pins differ.
# A second run finds it installed and returns at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: install-npm-bench.sh DIR}
bench="$here/../tests/bench/package.json"
oracle="$here/../tests/oracle/package.json"
# The version a package.json pins for a dependency.
pin() { node -e 'process.stdout.write(require(process.argv[1]).dependencies[process.argv[2]] || "")' "$1" "$2"; }
web=$(pin "$bench" onnxruntime-web)
native=$(pin "$oracle" onnxruntime-node)
if [[ -z "$web" || "$web" != "$native" ]]; then
  echo "install-npm-bench.sh: onnxruntime-web is pinned to '$web' in tests/bench/package.json," \
       "onnxruntime-node to '$native' in tests/oracle/package.json: pin both to the same release" >&2
  exit 1
fi
mkdir -p "$dir"
if cmp -s "$bench" "$dir/package.json" && \
   [[ -f "$dir/node_modules/onnxruntime-web/package.json" ]] && \
   [[ "$(node -e 'process.stdout.write(require(process.argv[1]).version)' \
         "$(cd "$dir" && pwd)/node_modules/onnxruntime-web/package.json")" == "$web" ]]; then
  exit 0
fi
cp "$bench" "$dir/package.json"
echo "lathe: installing onnxruntime-web@$web into $dir"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error)
