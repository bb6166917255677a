#include "fs/backing_kind.h"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace flashdir::fs {
namespace {

// linux/magic.h and the file systems' own headers.
constexpr std::array<std::pair<long, const char*>, 11> kRemoteTypes = {{
    {0x65735546, "fuse"},
    {0x6969, "nfs"},
    {0xFE534D42, "smb2"},
    {0xFF534D42, "cifs"},
    {0x517B, "smb"},
    {0x01021997, "9p"},
    {0x00C36400, "ceph"},
    {0x5346414F, "afs"},
    {0x6B414653, "kafs"},
    {0x47504653, "gpfs"},
    {0x0BD00BD0, "lustre"},
}};

constexpr std::array<std::pair<long, const char*>, 7> kLocalTypes = {{
    {0xEF53, "ext4"},
    {0x58465342, "xfs"},
    {0x9123683E, "btrfs"},
    {0x01021994, "tmpfs"},
    {0x2FC12FC1, "zfs"},
    {0x794C7630, "overlayfs"},
    {0xF2F52010, "f2fs"},
}};

}  // namespace

BackingFileSystem backing_file_system(long f_type) {
  for (const auto& [magic, name] : kRemoteTypes)
    if (magic == f_type) return {BackingKind::remote, name};
  for (const auto& [magic, name] : kLocalTypes)
    if (magic == f_type) return {BackingKind::local, name};
  return {BackingKind::local, fmt::format("{:#x}", static_cast<unsigned long>(f_type))};
}

std::uint64_t default_sequential_cutoff_bytes(BackingKind kind, std::uint64_t engine_default) {
  return kind == BackingKind::remote ? 0 : engine_default;
}

std::uint32_t default_miss_read_pages(BackingKind kind, std::uint32_t engine_default) {
  return kind == BackingKind::remote ? 256 : engine_default;
}

bool stores_writes_behind(BackingKind kind) { return kind == BackingKind::remote; }

cache::BackingReads backing_reads(BackingKind kind, BackingReadsChoice choice) {
  constexpr std::size_t kPieceBytes = 128 * 1024;
  return {.direct_above_bytes = choice == BackingReadsChoice::direct ? kPieceBytes : 0,
          .parallel_piece_bytes = kind == BackingKind::remote ? kPieceBytes : 0};
}

}  // namespace flashdir::fs
