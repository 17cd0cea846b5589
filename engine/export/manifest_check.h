#pragma once
// Checks a bundle's manifest before any of the bundle is loaded or run: a corrupt or edited
// manifest must give a clear error, never a crash in the kernels or the executor.

#include "engine/export/bundle_manifest.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace lathe::exporter {

// The largest tensor, and the most bytes all tensors together, a manifest may describe:
// every size, sum and aligned offset computed from them stays far from overflowing.
inline constexpr std::int64_t kMaxBundleBytes = std::int64_t{1} << 48;
inline constexpr std::size_t kMaxBundleRank = 64;

// Bytes per element of a manifest element type (f32, bf16, bool, ...); 0 when unknown.
int bundleElementBytes(std::string_view dtype);

// Checks with overflow-checked arithmetic that: the library is kernels.so or kernels.o;
// every slot has a unique name, a known role and element type, a non-negative bounded shape
// and the byte size its shape and type give; every constant lies inside weights.bin (of
// weights_bytes bytes); every kernel name is unique and its parameters are inputs, then
// outputs; every call names a kernel, passes one slot per parameter, of the parameter's
// size, and writes no input or constant; inputs and outputs are unique slot indices, and
// every input and output slot is listed. Throws lathe::Error (Invalid) naming `bundle`,
// the manifest field and the reason.
void validateManifest(const BundleManifest& manifest, const std::string& bundle);

// The size and SHA-256 of a file's bytes, as the manifest records them.
BundleFileSeal sealOf(std::string_view bytes);

// Checks that `bytes`, the bundle's file `fileName`, are what `seal` (the manifest's field
// `field`, e.g. "library") records; throws lathe::Error (Invalid) saying which differs.
void checkSeal(const BundleFileSeal& seal, const std::string& field, const std::string& fileName,
               std::string_view bytes, const std::string& bundle);

} // namespace lathe::exporter
