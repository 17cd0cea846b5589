#pragma once
// This machine's peak single-precision FLOP/s, measured: the "% of peak" column.

namespace lathe::profiler {

// Runs independent chains of fused multiply-adds (AVX-512 or AVX2+FMA where the CPU has them,
// chosen at run time; scalar otherwise) on `threads` threads for a few milliseconds and
// returns the best GFLOP/s of a few trials. threads <= 0: one per core. The first call per
// thread count measures; later ones return the cached figure.
double measurePeakGflops(int threads);

// The instruction set measurePeakGflops uses here: "avx512", "avx2" or "scalar".
const char* peakFlopsIsa();

} // namespace lathe::profiler
