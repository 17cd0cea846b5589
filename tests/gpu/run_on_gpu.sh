#!/bin/sh
# The GPU check, for a machine with an NVIDIA GPU and its driver (see README, "CUDA"):
#   tests/gpu/run_on_gpu.sh [BUILD_DIR]
# Uses the lathe built in BUILD_DIR (default build) and the models under BUILD_DIR/models;
# prints one table: each model's outputs on the GPU against the CPU path (max error) and
# its GPU latency, and PyTorch's on the same machine when it is installed. A few minutes.
set -eu
BUILD=${1:-build}
here=$(dirname "$0")
exec python3 "$here/gpu_table.py" "$BUILD/app/cli/lathe" "$BUILD/models"
