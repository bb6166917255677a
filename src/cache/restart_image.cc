#include "cache/restart_image.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "flashdir/endian.h"
#include "flashdir/file_io.h"

namespace flashdir::cache {
namespace {

constexpr std::uint64_t kMagic = 0x31545253524446ULL;  // "FDRSRT1" in LE
// Version 1 (never in a release) kept CLOCK's hand and reference bits.
constexpr std::uint32_t kVersion = 2;
constexpr std::size_t kHeaderSize = 64;
constexpr std::size_t kHeaderChecksumOffset = 56;

}  // namespace

std::filesystem::path restart_image_temporary(const std::filesystem::path& path) { return path.string() + ".new"; }

Status write_restart_image(const std::filesystem::path& path, const RestartImageKey& key,
                           const std::vector<std::uint8_t>& body) {
  std::vector<std::uint8_t> header(kHeaderSize, 0);
  LittleEndianWriter h(header);
  h.u64(kMagic);
  h.u32(kVersion);
  h.u32(static_cast<std::uint32_t>(kHeaderSize));
  h.bytes(key.cache_uuid.bytes);
  h.u64(key.ftl_generation);
  h.u64(body.size());
  h.u64(format::xxh3(body));
  h.u64(format::xxh3(ConstByteSpan(header).first(kHeaderChecksumOffset)));

  const std::filesystem::path temporary = restart_image_temporary(path);
  UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return errno_status(fmt::format("creating {}", temporary.string()));
  Status written = pwrite_all(fd.get(), header, 0, "restart image header");
  if (written.is_ok()) written = pwrite_all(fd.get(), body, kHeaderSize, "restart image");
  fd = UniqueFd();
  if (written.is_ok() && ::rename(temporary.c_str(), path.c_str()) != 0) {
    written = errno_status(fmt::format("renaming {} to {}", temporary.string(), path.string()));
  }
  if (!written.is_ok()) ::unlink(temporary.c_str());  // a full disk, say: nothing half-written stays
  return written;
}

Result<std::vector<std::uint8_t>> read_restart_image(const std::filesystem::path& path, const RestartImageKey& key) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return Status::not_found(fmt::format("{} does not exist", path.string()));
    return errno_status(fmt::format("opening {}", path.string()));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_status(fmt::format("examining {}", path.string()));
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    return Status::invalid_argument(fmt::format("{} is not a regular file of this user", path.string()));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < kHeaderSize) return Status::corruption("it is shorter than its header");
  std::vector<std::uint8_t> header(kHeaderSize);
  FLASHDIR_TRY(pread_exact(fd.get(), header, 0, "restart image header"));
  LittleEndianReader h(header);
  const std::uint64_t magic = h.u64();
  const std::uint32_t version = h.u32();
  h.skip(4);
  format::Uuid uuid;
  h.bytes(uuid.bytes);
  const std::uint64_t generation = h.u64();
  const std::uint64_t body_size = h.u64();
  const std::uint64_t body_checksum = h.u64();
  if (magic != kMagic || h.u64() != format::xxh3(ConstByteSpan(header).first(kHeaderChecksumOffset))) {
    return Status::corruption("its header is not a restart image's");
  }
  if (version != kVersion) return Status::invalid_argument(fmt::format("format version {}, not {}", version, kVersion));
  if (!(uuid == key.cache_uuid)) return Status::invalid_argument("it was saved by another cache");
  if (generation != key.ftl_generation) {
    return Status::invalid_argument(fmt::format("it describes FTL checkpoint {}, the chip is at checkpoint {}",
                                                generation, key.ftl_generation));
  }
  if (body_size != size - kHeaderSize) return Status::corruption("its size is not the one its header records");
  std::vector<std::uint8_t> body(body_size);
  FLASHDIR_TRY(pread_exact(fd.get(), body, kHeaderSize, "restart image"));
  if (format::xxh3(body) != body_checksum) return Status::corruption("its checksum does not verify");
  return body;
}

}  // namespace flashdir::cache
