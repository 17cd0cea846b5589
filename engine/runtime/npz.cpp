// .npz archives through libzip: it handles STORED and DEFLATE members, ZIP64 (numpy.savez
// writes it for members over 4 GiB), CRC checks, and writes through a temporary file that
// replaces the target only on success.

#include "engine/runtime/npy.h"
#include "engine/runtime/npy_format.h"
#include "engine/support/atomic_file.h"
#include "engine/support/text_escape.h"

#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <zip.h>

namespace lathe::runtime {

namespace {

using detail::failNpy;
using detail::NpyContext;

struct ZipDiscard {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
struct ZipFileClose {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};
using ZipArchive = std::unique_ptr<zip_t, ZipDiscard>;
using ZipMember = std::unique_ptr<zip_file_t, ZipFileClose>;

constexpr std::string_view kNpySuffix = ".npy";

std::string openErrorText(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

ZipArchive openForReading(const std::filesystem::path& path) {
  const NpyContext where{path.string(), ""};
  int code = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (archive != nullptr)
    return ZipArchive(archive);
  if (code == ZIP_ER_NOENT || code == ZIP_ER_OPEN || code == ZIP_ER_READ)
    failNpy(where, ErrorKind::Io, "cannot open for reading: " + openErrorText(code));
  failNpy(where, ErrorKind::Invalid, "not a valid .npz (zip) archive: " + openErrorText(code));
}

// numpy.savez names members "<key>.npy"; numpy.load strips the suffix, and so do we.
std::string arrayNameOf(std::string_view member) {
  if (member.size() > kNpySuffix.size() && member.ends_with(kNpySuffix))
    member.remove_suffix(kNpySuffix.size());
  return std::string(member);
}

bool isDirectory(std::string_view member) {
  return member.ends_with('/');
}

class MemberSource : public detail::ByteSource {
public:
  MemberSource(zip_file_t* file, const NpyContext& where) : file_(file), where_(where) {}
  std::size_t read(void* destination, std::size_t bytes) override {
    std::size_t total = 0;
    while (total < bytes) {
      const zip_int64_t got = zip_fread(file_, static_cast<char*>(destination) + total,
                                        static_cast<zip_uint64_t>(bytes - total));
      if (got < 0) // also how a CRC mismatch or broken deflate stream shows up
        failNpy(where_, ErrorKind::Invalid,
                std::string("corrupt archive member: ") + zip_file_strerror(file_));
      if (got == 0)
        break;
      total += static_cast<std::size_t>(got);
    }
    return total;
  }

private:
  zip_file_t* file_;
  const NpyContext& where_;
};

Tensor readMember(zip_t* archive, zip_uint64_t index, const std::filesystem::path& path,
                  std::optional<std::uint64_t> maxDataBytes = std::nullopt) {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive, index, 0, &stat) != 0)
    failNpy(NpyContext{path.string(), ""}, ErrorKind::Invalid,
            std::string("cannot read archive entry: ") + zip_strerror(archive));
  const NpyContext where{path.string(), arrayNameOf(stat.name)};
  ZipMember file(zip_fopen_index(archive, index, 0));
  if (!file)
    failNpy(where, ErrorKind::Invalid,
            std::string("cannot open archive member: ") + zip_strerror(archive));
  MemberSource source(file.get(), where);
  const bool sizeKnown = (stat.valid & ZIP_STAT_SIZE) != 0;
  return detail::readNpyStream(source,
                               sizeKnown ? std::optional<std::uint64_t>(stat.size) : std::nullopt,
                               where, maxDataBytes);
}

// Calls fn(index, memberName) for every file member (directories skipped).
template <class Fn>
void forEachMember(zip_t* archive, const std::filesystem::path& path, Fn&& fn) {
  const zip_int64_t count = zip_get_num_entries(archive, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* name = zip_get_name(archive, static_cast<zip_uint64_t>(i), 0);
    if (name == nullptr)
      failNpy(NpyContext{path.string(), ""}, ErrorKind::Invalid,
              std::string("cannot read archive entry: ") + zip_strerror(archive));
    if (!isDirectory(name))
      fn(static_cast<zip_uint64_t>(i), std::string_view(name));
  }
}

// libzip deletes an archive that ends up with no members, but numpy.savez() with no
// arrays writes an empty zip, which numpy loads: write that by hand.
void writeEmptyZip(const std::filesystem::path& path) {
  const char endOfCentralDirectory[22] = {'P', 'K', 5, 6};
  writeFileAtomically(path, {endOfCentralDirectory, sizeof endOfCentralDirectory});
}

} // namespace

std::vector<NamedTensor> readNpz(const std::filesystem::path& path) {
  ZipArchive archive = openForReading(path);
  std::vector<NamedTensor> out;
  forEachMember(archive.get(), path, [&](zip_uint64_t index, std::string_view name) {
    out.push_back(NamedTensor{arrayNameOf(name), readMember(archive.get(), index, path)});
  });
  return out;
}

Tensor readNpzArray(const std::filesystem::path& path, std::string_view name,
                    std::optional<std::uint64_t> maxDataBytes) {
  ZipArchive archive = openForReading(path);
  std::optional<zip_uint64_t> found;
  std::string known;
  forEachMember(archive.get(), path, [&](zip_uint64_t index, std::string_view member) {
    const std::string arrayName = arrayNameOf(member);
    if (!found && arrayName == name)
      found = index;
    known += (known.empty() ? "" : ", ") + arrayName;
  });
  if (!found)
    failNpy(NpyContext{path.string(), std::string(name)}, ErrorKind::Invalid,
            "no such array in the archive (it has: " + (known.empty() ? "nothing" : known) + ")");
  return readMember(archive.get(), *found, path, maxDataBytes);
}

std::vector<std::string> listNpz(const std::filesystem::path& path) {
  ZipArchive archive = openForReading(path);
  std::vector<std::string> names;
  forEachMember(archive.get(), path, [&](zip_uint64_t, std::string_view member) {
    names.push_back(arrayNameOf(member));
  });
  return names;
}

std::vector<ArrayInfo> describeNpz(const std::filesystem::path& path) {
  ZipArchive archive = openForReading(path);
  std::vector<ArrayInfo> arrays;
  forEachMember(archive.get(), path, [&](zip_uint64_t index, std::string_view member) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    const NpyContext where{path.string(), arrayNameOf(member)};
    if (zip_stat_index(archive.get(), index, 0, &stat) != 0)
      failNpy(where, ErrorKind::Invalid,
              std::string("cannot read archive entry: ") + zip_strerror(archive.get()));
    ZipMember file(zip_fopen_index(archive.get(), index, 0));
    if (!file)
      failNpy(where, ErrorKind::Invalid,
              std::string("cannot open archive member: ") + zip_strerror(archive.get()));
    MemberSource source(file.get(), where);
    const bool sizeKnown = (stat.valid & ZIP_STAT_SIZE) != 0;
    detail::NpyHeaderInfo header = detail::readNpyHeader(
        source, sizeKnown ? std::optional<std::uint64_t>(stat.size) : std::nullopt, where);
    if (sizeKnown && header.headerBytes + header.dataBytes != stat.size)
      failNpy(where, ErrorKind::Invalid,
              "size mismatch: the header asks for " + std::to_string(header.dataBytes) +
                  " data bytes, the member holds " +
                  std::to_string(stat.size - header.headerBytes));
    arrays.push_back(ArrayInfo{where.array, header.type, std::move(header.shape)});
  });
  return arrays;
}

void writeNpz(const std::filesystem::path& path, std::span<const NamedTensor> arrays) {
  const NpyContext where{path.string(), ""};
  std::set<std::string_view> seen;
  for (const NamedTensor& array : arrays) {
    if (array.name.empty())
      failNpy(where, ErrorKind::Invalid, "an array to save has an empty name");
    if (!seen.insert(array.name).second)
      failNpy(NpyContext{path.string(), array.name}, ErrorKind::Invalid,
              "two arrays to save have this name");
  }
  if (arrays.empty()) {
    writeEmptyZip(path);
    return;
  }

  int code = 0;
  ZipArchive archive(zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (!archive)
    failNpy(where, ErrorKind::Io, "cannot open for writing: " + openErrorText(code));

  // libzip reads the member bytes only in zip_close, so they must live until then; the
  // tensor data is referenced in place, not copied.
  std::vector<detail::EncodedNpy> encoded;
  encoded.reserve(arrays.size());
  for (const NamedTensor& array : arrays) {
    const NpyContext member{path.string(), array.name};
    detail::EncodedNpy& parts = encoded.emplace_back(detail::encodeNpyParts(array.tensor));
    zip_buffer_fragment_t fragments[2] = {
        {reinterpret_cast<zip_uint8_t*>(parts.header.data()), parts.header.size()},
        {reinterpret_cast<zip_uint8_t*>(const_cast<std::byte*>(parts.data.data())),
         parts.data.size()},
    };
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* source =
        zip_source_buffer_fragment_create(fragments, parts.data.empty() ? 1 : 2, 0, &error);
    if (source == nullptr) {
      const std::string text = zip_error_strerror(&error);
      zip_error_fini(&error);
      failNpy(member, ErrorKind::Io, "cannot add to archive: " + text);
    }
    zip_error_fini(&error);
    // Names from a hostile model may hold control bytes or invalid UTF-8, which a zip
    // member name (and numpy) cannot: those are written escaped ("\xNN").
    const std::string memberName = escapeText(array.name) + std::string(kNpySuffix);
    const zip_int64_t index =
        zip_file_add(archive.get(), memberName.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);
      failNpy(member, ErrorKind::Io,
              std::string("cannot add to archive: ") + zip_strerror(archive.get()));
    }
    if (zip_set_file_compression(archive.get(), static_cast<zip_uint64_t>(index), ZIP_CM_STORE,
                                 0) != 0)
      failNpy(member, ErrorKind::Io,
              std::string("cannot store uncompressed: ") + zip_strerror(archive.get()));
  }
  if (zip_close(archive.get()) != 0)
    failNpy(where, ErrorKind::Io, std::string("cannot write: ") + zip_strerror(archive.get()));
  (void)archive.release(); // zip_close freed it
}

} // namespace lathe::runtime
