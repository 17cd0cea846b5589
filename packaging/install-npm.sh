#!/usr/bin/env bash
# Installs the npm packages the tests use (ONNX Runtime as the oracle) into DIR/node_modules.
# A second run finds them installed and returns at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: install-npm.sh DIR}
mkdir -p "$dir"
if cmp -s "$here/../tests/oracle/package.json" "$dir/package.json" && \
   [[ -f "$dir/node_modules/onnxruntime-node/package.json" && -f "$dir/node_modules/adm-zip/package.json" ]]; then
  exit 0
fi
cp "$here/../tests/oracle/package.json" "$dir/package.json"
echo "lathe: installing npm packages into $dir (onnxruntime-node, adm-zip)"
# onnxruntime-node's install script would download CUDA files; the CPU binaries ship in the
# package itself.
(cd "$dir" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --loglevel=error)
