#!/usr/bin/env bash
# make package's .deb, unpacked into a temporary root (dpkg -x) and used from there: the
# unpacked lathe and lathe-workbench start, the desktop entry, icon and MIME type are where
# desktops look, and a model exported by the unpacked lathe builds against the installed
# runtime header and library (not the export's own copy) and runs.
# Usage: check_deb.sh BUILD_DIR MODEL.onnx
set -euo pipefail
build=${1:?usage: check_deb.sh BUILD_DIR MODEL.onnx}
model=${2:?usage: check_deb.sh BUILD_DIR MODEL.onnx}
work=$(mktemp -d "${TMPDIR:-/tmp}/lathe-deb-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/out" > "$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$work"/out/lathe_*.deb)
echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes"
info=$(dpkg-deb --info "$deb")
depends=$(grep '^ Depends:' <<< "$info") || fail "no Depends in the control file"
for needed in libllvm19 lld-19 libqt6widgets6 libonnx; do
  grep -q "$needed" <<< "$depends" || fail "Depends lacks $needed: $depends"
done

root="$work/root"
dpkg -x "$deb" "$root"
for f in usr/bin/lathe usr/bin/lathe-workbench usr/include/lathe/lathe_runtime.h \
         usr/share/applications/lathe-workbench.desktop \
         usr/share/icons/hicolor/scalable/apps/lathe.svg usr/share/mime/packages/lathe-onnx.xml \
         usr/share/lathe/runtime/lathe_runtime.c; do
  [[ -e "$root/$f" ]] || fail "the package has no /$f"
done
lib=$(find "$root/usr/lib" -name liblathe_runtime.a | head -n 1)
[[ -n "$lib" ]] || fail "the package has no liblathe_runtime.a"
if command -v desktop-file-validate > /dev/null; then
  desktop-file-validate "$root/usr/share/applications/lathe-workbench.desktop"
fi
grep -q 'glob pattern="\*.onnx"' "$root/usr/share/mime/packages/lathe-onnx.xml" ||
  fail "the MIME type does not claim *.onnx"

version=$("$root/usr/bin/lathe" --version)
[[ "$version" == "lathe "* ]] || fail "lathe --version printed '$version'"
echo "unpacked: $version"
help=$(QT_QPA_PLATFORM=offscreen "$root/usr/bin/lathe-workbench" --help)
grep -q "MODEL.onnx" <<< "$help" || fail "lathe-workbench --help: $help"
QT_QPA_PLATFORM=offscreen "$root/usr/bin/lathe-workbench" --version | grep -q "[0-9]" ||
  fail "lathe-workbench --version"

# An export by the unpacked lathe, built with the installed runtime.
"$root/usr/bin/lathe" export "$model" -o "$work/export" > /dev/null
rm "$work/export/lathe_runtime.h" "$work/export/lathe_runtime.c"
(cd "$work/export" &&
 cc -O2 -std=c11 -I "$root/usr/include/lathe" -o model main.c model.c kernels.o weights.o \
    "$lib" -pthread)
printed=$("$work/export/model")
grep -q '^output 0 ' <<< "$printed" || fail "the example built on the installed runtime: $printed"
echo "PASS: the unpacked lathe and lathe-workbench run; an export links the installed runtime"
