#!/usr/bin/env bash
# Installs the Debian packages listed in packaging/debian-packages.txt that are
# not installed yet. A second run finds nothing missing and returns at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# An optional argument names another list (make fuzz: debian-packages-fuzz.txt).
list=${1:-$here/debian-packages.txt}
mapfile -t wanted < <(grep -vE '^\s*(#|$)' "$list")

# Node.js (for the ONNX Runtime oracle) may come from elsewhere than Debian; keep that one.
if command -v node >/dev/null && command -v npm >/dev/null; then
  mapfile -t wanted < <(printf '%s\n' "${wanted[@]}" | grep -vxE 'nodejs|npm')
fi

missing=()
for pkg in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "lathe: installing ${#missing[@]} Debian packages: ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "lathe: run as root (or install sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
