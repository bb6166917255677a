#include "cache/restart_image.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace flashdir::cache {
namespace {

constexpr std::uint64_t kMagic = 0x31545253524446ULL;  // "FDRSRT1" in LE
// Version 1 (never in a release) kept CLOCK's hand and reference bits; version 2 was one body
// read whole at open.
constexpr std::uint32_t kVersion = 3;
constexpr std::size_t kHeaderSize = 72;
constexpr std::size_t kHeaderChecksumOffset = 64;

}  // namespace

void ImagePart::save(LittleEndianWriter& out) const {
  out.u64(offset);
  out.u64(length);
  out.u64(checksum);
}

ImagePart ImagePart::load(LittleEndianReader& in) {
  ImagePart part;
  part.offset = in.u64();
  part.length = in.u64();
  part.checksum = in.u64();
  return part;
}

std::filesystem::path restart_image_temporary(const std::filesystem::path& path) { return path.string() + ".new"; }

RestartImageWriter::RestartImageWriter(std::filesystem::path path, UniqueFd fd)
    : path_(std::move(path)), temporary_(restart_image_temporary(path_)), fd_(std::move(fd)), end_(kHeaderSize) {}

RestartImageWriter::~RestartImageWriter() {
  if (!finished_) ::unlink(temporary_.c_str());  // nothing half-written stays
}

Result<std::unique_ptr<RestartImageWriter>> RestartImageWriter::create(const std::filesystem::path& path) {
  const std::filesystem::path temporary = restart_image_temporary(path);
  UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return errno_status(fmt::format("creating {}", temporary.string()));
  return std::unique_ptr<RestartImageWriter>(new RestartImageWriter(path, std::move(fd)));
}

Result<ImagePart> RestartImageWriter::append(ConstByteSpan bytes) {
  const ImagePart part{end_, bytes.size(), format::xxh3(bytes)};
  FLASHDIR_TRY(pwrite_all(fd_.get(), bytes, end_, "restart image part"));
  end_ += bytes.size();
  return part;
}

Status RestartImageWriter::finish(const RestartImageKey& key, ConstByteSpan index) {
  std::vector<std::uint8_t> header(kHeaderSize, 0);
  LittleEndianWriter h(header);
  h.u64(kMagic);
  h.u32(kVersion);
  h.u32(static_cast<std::uint32_t>(kHeaderSize));
  h.bytes(key.cache_uuid.bytes);
  h.u64(key.ftl_generation);
  h.u64(end_);
  h.u64(index.size());
  h.u64(format::xxh3(index));
  h.u64(format::xxh3(ConstByteSpan(header).first(kHeaderChecksumOffset)));
  FLASHDIR_TRY(pwrite_all(fd_.get(), index, end_, "restart image index"));
  FLASHDIR_TRY(pwrite_all(fd_.get(), header, 0, "restart image header"));
  fd_ = UniqueFd();
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    return errno_status(fmt::format("renaming {} to {}", temporary_.string(), path_.string()));
  }
  finished_ = true;
  return Status::ok();
}

RestartImage::RestartImage(UniqueFd fd, std::uint64_t parts_end, std::vector<std::uint8_t> index)
    : fd_(std::move(fd)), parts_end_(parts_end), index_(std::move(index)) {}

Result<std::shared_ptr<const RestartImage>> RestartImage::open(const std::filesystem::path& path,
                                                               const RestartImageKey& key) {
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
  const std::uint64_t index_offset = h.u64();
  const std::uint64_t index_size = h.u64();
  const std::uint64_t index_checksum = h.u64();
  if (magic != kMagic || h.u64() != format::xxh3(ConstByteSpan(header).first(kHeaderChecksumOffset))) {
    return Status::corruption("its header is not a restart image's");
  }
  if (version != kVersion) return Status::invalid_argument(fmt::format("format version {}, not {}", version, kVersion));
  if (!(uuid == key.cache_uuid)) return Status::invalid_argument("it was saved by another cache");
  if (generation != key.ftl_generation) {
    return Status::invalid_argument(fmt::format("it describes FTL checkpoint {}, the chip is at checkpoint {}",
                                                generation, key.ftl_generation));
  }
  if (index_offset < kHeaderSize || index_offset > size || index_size != size - index_offset) {
    return Status::corruption("its size is not the one its header records");
  }
  std::vector<std::uint8_t> index(index_size);
  FLASHDIR_TRY(pread_exact(fd.get(), index, index_offset, "restart image index"));
  if (format::xxh3(index) != index_checksum) return Status::corruption("its index's checksum does not verify");
  return std::shared_ptr<const RestartImage>(new RestartImage(std::move(fd), index_offset, std::move(index)));
}

Result<std::vector<std::uint8_t>> RestartImage::read(const ImagePart& part) const {
  if (part.offset < kHeaderSize || part.offset > parts_end_ || part.length > parts_end_ - part.offset) {
    return Status::corruption("a part the index places outside the image's parts");
  }
  std::vector<std::uint8_t> bytes(part.length);
  FLASHDIR_TRY(pread_exact(fd_.get(), bytes, part.offset, "restart image part"));
  if (format::xxh3(bytes) != part.checksum) return Status::corruption("a part's checksum does not verify");
  return bytes;
}

}  // namespace flashdir::cache
