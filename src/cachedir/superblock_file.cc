#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <vector>

#include "flashdir/cache_dir.h"
#include "flashdir/file_io.h"

namespace flashdir {
namespace {

constexpr std::uint64_t slot_offset(int slot) { return static_cast<std::uint64_t>(slot) * format::kSuperblockSlotSize; }

Status write_slots(const std::filesystem::path& path, const format::Superblock& sb, std::initializer_list<int> slots) {
  // Never through a link (a cache directory holds none; trusted_dir.h), and private to its owner.
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return errno_status(fmt::format("opening superblock {}", path.string()));
  std::vector<std::uint8_t> bytes(format::kSuperblockSlotSize);
  format::encode_superblock(sb, bytes);
  for (int slot : slots) {
    FLASHDIR_TRY(pwrite_all(fd.get(), bytes, slot_offset(slot), "superblock"));
  }
  if (::fdatasync(fd.get()) != 0) return errno_status(fmt::format("syncing superblock {}", path.string()));
  return Status::ok();
}

}  // namespace

Result<SuperblockFile> read_superblock_file(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return errno_status(fmt::format("opening superblock {}", path.string()));
  std::optional<SuperblockFile> best;
  std::vector<std::string> damaged;
  for (int slot = 0; slot < format::kSuperblockSlots; ++slot) {
    std::vector<std::uint8_t> bytes(format::kSuperblockSlotSize);
    Status read = pread_exact(fd.get(), bytes, slot_offset(slot), "superblock");
    auto sb = read.is_ok() ? format::decode_superblock(bytes) : Result<format::Superblock>(read);
    if (!sb.is_ok()) {
      damaged.push_back(fmt::format("superblock slot {}: {}", slot, sb.status().message()));
      continue;
    }
    if (!best || sb->sequence > best->superblock.sequence) best = SuperblockFile{sb.value(), slot, {}};
  }
  if (!best) {
    std::string reasons;
    for (const auto& message : damaged) reasons += (reasons.empty() ? "" : "; ") + message;
    return Status::corruption(fmt::format("{}: no valid superblock ({})", path.string(), reasons));
  }
  best->damaged = std::move(damaged);
  return std::move(*best);
}

Status update_superblock_file(const std::filesystem::path& path, format::Superblock& superblock) {
  auto current = read_superblock_file(path);
  if (!current.is_ok()) return current.status();
  superblock.sequence = current->superblock.sequence + 1;
  return write_slots(path, superblock, {1 - current->slot});
}

Status write_superblock_file(const std::filesystem::path& path, const format::Superblock& superblock) {
  return write_slots(path, superblock, {0, 1});
}

}  // namespace flashdir
