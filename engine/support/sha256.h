#pragma once
// SHA-256 (FIPS 180-4), for the content hashes that tie a bundle's manifest to its files.
// A checksum against damaged or swapped files, not a signature: whoever can edit a bundle
// can also rewrite the hashes in its manifest.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace lathe {

class Sha256 {
public:
  Sha256();
  void update(std::string_view bytes);
  // The digest of everything given to update(); the object is spent afterwards.
  std::array<std::uint8_t, 32> finish();

private:
  void compressBlock(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> pending_{};
  std::size_t pendingBytes_ = 0;
  std::uint64_t totalBytes_ = 0;
};

// A digest as 64 lowercase hexadecimal digits.
std::string hexDigest(const std::array<std::uint8_t, 32>& digest);
// The digest of `bytes` as 64 lowercase hexadecimal digits.
std::string sha256Hex(std::string_view bytes);

} // namespace lathe
