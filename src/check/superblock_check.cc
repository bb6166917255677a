#include "superblock_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <system_error>

#include "flashdir/catalog.h"
#include "flashdir/clock.h"
#include "flashdir/endian.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "ftl/checkpoint.h"
#include "ftl/layout.h"
#include "slot_alignment_scan.h"

namespace flashdir {
namespace {

// Where the over-provisioning sits in a checkpoint's header, which its first page holds
// (doc/format.md "Checkpoints").
constexpr std::size_t kCheckpointOverprovisionOffset = 56;

struct Rebuilt {
  format::Superblock superblock;
  std::string source;
};

// The over-provisioning of the newest checkpoint: read from the header of a first checkpoint
// page, then proven by loading the checkpoint with the layout it gives. Each checkpoint begins
// on the first page of its slot's first block.
Result<std::uint16_t> checkpoint_overprovision(const std::filesystem::path& image) {
  auto store = open_image_store(image, ImageAccess::read_only);
  if (!store.is_ok()) return store.status();
  SimClock clock;
  SimulatedChip chip(store.value(), LatencyProfile::of(LatencyPreset::zero), clock);
  const Geometry& g = chip.geometry();
  std::vector<std::uint8_t> data(g.page_size_bytes), oob(g.oob_size_bytes);
  for (std::uint64_t b = 0; b < g.block_count; ++b) {
    if (chip.next_page(BlockNumber(b)) == 0) continue;
    FLASHDIR_TRY(chip.read(g.first_page(BlockNumber(b)), 1, data, oob));
    auto record = format::decode_oob(oob);
    if (!record.is_ok() || record->kind != format::PageKind::checkpoint || record->aux != 0) continue;
    const std::uint16_t permille =
        LittleEndianReader(ConstByteSpan(data).subspan(kCheckpointOverprovisionOffset, 2)).u16();
    auto layout = ftl::FtlLayout::compute(g, permille);
    if (!layout.is_ok()) continue;
    ftl::CheckpointSlots slots(chip, *layout);
    auto loaded = slots.load_newest();
    if (loaded.is_ok() && ftl::check_checkpoint_layout(loaded->state, *layout, "its header").is_ok()) return permille;
  }
  return Status::not_found("the chip holds no valid FTL checkpoint to take the over-provisioning from");
}

// The catalog's copy, if it is this chip's: the image header's uuid and geometry, or with the
// header damaged too, an image of the size the copy's geometry needs.
Result<Rebuilt> from_catalog_copy(const Catalog& catalog, const CacheDirPaths& paths,
                                  const Result<format::ImageHeader>& header) {
  auto copy = catalog.superblock_copy();
  if (!copy.is_ok()) return copy.status();
  if (header.is_ok()) {
    if (copy->uuid != header->uuid || copy->geometry != header->geometry) {
      return Status::invalid_argument(fmt::format("its copy is of cache {} ({}), the image of {} ({})",
                                                  copy->uuid.to_string(), copy->geometry.describe(),
                                                  header->uuid.to_string(), header->geometry.describe()));
    }
  } else {
    auto size = image_file_size(paths.image);
    if (!size.is_ok()) return size.status();
    if (*size != format::image_layout(copy->geometry).file_size) {
      return Status::invalid_argument(fmt::format(
          "its copy's geometry ({}) needs an image of {} bytes, and the image (its header damaged) is {} bytes",
          copy->geometry.describe(), format::image_layout(copy->geometry).file_size, *size));
    }
  }
  return Rebuilt{*copy, "the catalog's copy"};
}

// The image header's uuid and geometry, the checkpoint's over-provisioning, mkfs's defaults.
Result<Rebuilt> from_image_header(const CacheDirPaths& paths, const format::ImageHeader& header) {
  auto permille = checkpoint_overprovision(paths.image);
  if (!permille.is_ok()) return permille.status();
  const FormatOptions defaults;
  format::Superblock sb;
  sb.uuid = header.uuid;
  sb.geometry = header.geometry;
  sb.latency = defaults.latency;
  sb.mapping_scheme = defaults.mapping;
  sb.gc_policy = defaults.gc;
  sb.overprovision_permille = *permille;
  sb.ram_budget_bytes = default_ram_budget_bytes(header.geometry.capacity_bytes());
  sb.ram_policy = defaults.ram_policy;
  sb.static_mapping_percent = defaults.static_mapping_percent;
  sb.created_unix_s = static_cast<std::uint64_t>(std::time(nullptr));
  // What the chip was written with, unlike the defaults above: read at the wrong LPNs, slots
  // would serve other slots' data.
  auto alignment = slot_alignment_on_chip(paths.image, *permille);
  if (!alignment.is_ok()) return alignment.status();
  sb.slot_alignment = *alignment;
  return Rebuilt{sb, fmt::format("the image header and the FTL checkpoint (over-provisioning {} per mille; mkfs's "
                                 "defaults for latency, mapping, GC and device RAM; data slots {}, as the chip's "
                                 "data pages show)",
                                 *permille,
                                 *alignment == format::SlotAlignment::logical_block ? "from a logical-block boundary"
                                                                                    : "right after the metadata pages")};
}

Result<Rebuilt> rebuild(const CacheDirPaths& paths) {
  const Result<format::ImageHeader> header = read_image_header(paths.image);
  std::string why;
  std::uint64_t next_file_id = 0;
  std::optional<Rebuilt> rebuilt;
  if (auto catalog = Catalog::open(paths.catalog, Catalog::Access::read_only); !catalog.is_ok()) {
    why = fmt::format("the catalog cannot be read ({})", catalog.status().message());
  } else {
    if (auto next = (*catalog)->next_file_id(); next.is_ok()) next_file_id = *next;
    auto copy = from_catalog_copy(**catalog, paths, header);
    if (copy.is_ok()) {
      rebuilt = std::move(copy.value());
    } else {
      why = fmt::format("the catalog's copy is no use ({})", copy.status().message());
    }
  }
  if (!rebuilt) {
    if (!header.is_ok()) {
      return Status::corruption(fmt::format("{}, and the image header is damaged ({})", why, header.status().message()));
    }
    auto from_header = from_image_header(paths, header.value());
    if (!from_header.is_ok()) return Status::corruption(fmt::format("{}; {}", why, from_header.status().message()));
    rebuilt = std::move(from_header.value());
  }
  // The copy was taken before the engine gave out any file id: every id the catalog gave out
  // is below its next one. Ids start at 1; a limit of 0 says the engine never used the cache.
  format::Superblock& sb = rebuilt->superblock;
  if (next_file_id > 1) sb.file_id_limit = std::max(sb.file_id_limit, next_file_id);
  // Nothing says whether the cache was shut down cleanly: recovery rolls forward either way.
  sb.clean_shutdown = false;
  sb.sequence = 1;
  return std::move(*rebuilt);
}

}  // namespace

void check_superblock(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report) {
  std::error_code ec;
  if (paths.dir.empty()) {
    report.fatal = "the cache directory path is empty";
    return;
  }
  if (!std::filesystem::is_directory(paths.dir, ec)) {
    report.fatal = fmt::format("{} is not a directory", paths.dir.string());
    return;
  }
  auto file = read_superblock_file(paths.superblock);
  // A superblock that is missing, or cannot be opened, is not damaged: mkfs writes it last, so a
  // directory without one holds no complete cache.
  if (!file.is_ok() && file.status().code() != StatusCode::corruption) {
    report.fatal = fmt::format("cannot read the superblock: {}", file.status().message());
    return;
  }
  if (!file.is_ok()) {
    auto rebuilt = rebuild(paths);
    if (!rebuilt.is_ok()) {
      report.fatal = fmt::format(
          "{}; nothing is left to rebuild it from: {}. The cache cannot be used; mkfs.flashdir --force {} makes a new "
          "one (what it cached is lost)",
          file.status().message(), rebuilt.status().message(), paths.dir.string());
      return;
    }
    report.have_superblock = true;
    report.superblock = rebuilt->superblock;
    if (!options.repair) {
      report.errors.push_back(
          fmt::format("{}: fsck -y rebuilds it from {}", file.status().message(), rebuilt->source));
    } else if (Status s = write_superblock_file(paths.superblock, rebuilt->superblock); !s.is_ok()) {
      report.fatal = fmt::format("{}; writing the superblock rebuilt from {} failed: {}", file.status().message(),
                                 rebuilt->source, s.message());
    } else {
      report.repairs.push_back(fmt::format("{}; rebuilt it from {}", file.status().message(), rebuilt->source));
    }
    return;
  }
  report.have_superblock = true;
  report.superblock = file->superblock;
  for (const auto& damage : file->damaged) {
    if (!options.repair) {
      report.errors.push_back(fmt::format("{} (the other slot is intact): fsck -y rewrites it", damage));
      continue;
    }
    if (Status s = write_superblock_file(paths.superblock, file->superblock); !s.is_ok()) {
      report.errors.push_back(fmt::format("{}; rewriting it failed: {}", damage, s.message()));
    } else {
      report.repairs.push_back(fmt::format("{}; rewrote it from slot {}", damage, file->slot));
    }
  }
}

}  // namespace flashdir
