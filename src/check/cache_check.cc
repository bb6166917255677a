#include "cache_check.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <map>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "bounded_list.h"
#include "cache/meta/metadata_store.h"
#include "cache/meta/usability_rule.h"
#include "flashdir/cache/options.h"
#include "flashdir/catalog.h"
#include "flashdir/clock.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "overlay_store.h"

namespace flashdir {
namespace {

using cache::MetadataScheme;
using cache::MetadataStore;
using cache::RecoveredSlots;
using cache::SlotIndex;
using cache::SlotLayout;

using CatalogFiles = absl::flat_hash_map<std::uint64_t, CatalogFile>;

// A chip and its FTL, opened as the engine opens them (FTL recovery included), and the slot
// layout the engine lays over it.
struct OpenedFtl {
  SimClock clock;
  std::unique_ptr<SimulatedChip> chip;
  std::unique_ptr<Ftl> ftl;
  SlotLayout layout;
};

Result<std::unique_ptr<OpenedFtl>> open_ftl(std::shared_ptr<PageStore> store, const format::Superblock& superblock) {
  auto opened = std::make_unique<OpenedFtl>();
  opened->chip = std::make_unique<SimulatedChip>(std::move(store), LatencyProfile::of(LatencyPreset::zero), opened->clock);
  auto ftl = Ftl::open(*opened->chip, opened->clock, ftl_options(superblock));
  if (!ftl.is_ok()) return ftl.status().with_context("the FTL does not open");
  opened->ftl = std::move(ftl.value());
  auto layout = SlotLayout::compute(opened->ftl->logical_pages(), opened->ftl->page_size_bytes());
  if (!layout.is_ok()) return layout.status().with_context("the cache's slot layout");
  opened->layout = *layout;
  return opened;
}

std::string slot_range(const SlotLayout& layout, std::uint32_t page) {
  const std::uint64_t first = std::uint64_t{page} * layout.entries_per_page;
  return fmt::format("slots {}-{}", first, first + layout.entries_in(page) - 1);
}

// What the metadata pages say before the store reads them: the damaged ones by name, the
// headers of the others (for the newest page and its window).
struct PageFindings {
  std::vector<std::optional<format::MetadataPageHeader>> headers;
  std::vector<std::string> damaged;
  std::string foreign_scheme;  // a page of another scheme: the engine refuses to open the cache
};

Result<PageFindings> inspect_pages(Ftl& ftl, const SlotLayout& layout, MetadataScheme scheme) {
  PageFindings found;
  found.headers.resize(layout.metadata_pages);
  std::vector<std::uint8_t> buffer(layout.page_size_bytes);
  for (std::uint32_t p = 0; p < layout.metadata_pages; ++p) {
    if (Status read = ftl.read(Lpn(p), 1, buffer); !read.is_ok()) {
      if (read.code() != StatusCode::corruption) return read;
      found.damaged.push_back(fmt::format("metadata page {} ({}) cannot be read: {}", p, slot_range(layout, p), read.message()));
      continue;
    }
    auto page = MetadataStore::decode_page(layout, p, buffer);
    if (page.status().code() == StatusCode::not_found) continue;
    if (!page.is_ok()) {
      found.damaged.push_back(fmt::format("{} (metadata page {}, {})", page.status().message(), p, slot_range(layout, p)));
      continue;
    }
    if (page->header.scheme != cache::meta::scheme_code(scheme) && found.foreign_scheme.empty()) {
      found.foreign_scheme = fmt::format("metadata page {} was written by scheme code {}, the catalog records {}", p,
                                         static_cast<int>(page->header.scheme), cache::metadata_scheme_name(scheme));
    }
    found.headers[p] = page->header;
  }
  return found;
}

// The slots the store keeps, by owner: a catalog file or none (orphans).
struct SlotOwners {
  std::uint64_t kept = 0;
  std::vector<SlotIndex> orphans;
  std::map<std::uint64_t, std::uint64_t> orphan_dirty;  // file id -> dirty slots
  std::map<std::uint64_t, std::uint64_t> dirty;         // catalog file id -> dirty slots
  std::uint64_t orphan_dirty_slots() const {
    std::uint64_t n = 0;
    for (const auto& [id, count] : orphan_dirty) n += count;
    return n;
  }
  std::uint64_t dirty_slots() const {
    std::uint64_t n = 0;
    for (const auto& [id, count] : dirty) n += count;
    return n;
  }
};

// As the engine's restart sorts them (EngineCore::recover): a slot whose file id the catalog
// does not know is an orphan.
SlotOwners owners_of(const RecoveredSlots& recovered, const CatalogFiles& files) {
  SlotOwners owners;
  for (const cache::RecoveredSlot& found : recovered.usable) {
    const bool known = files.contains(found.entry.file_id);
    if (known) {
      ++owners.kept;
    } else {
      owners.orphans.push_back(found.slot);
    }
    if (found.entry.dirty) ++(known ? owners.dirty : owners.orphan_dirty)[found.entry.file_id];
  }
  return owners;
}

Result<CatalogFiles> catalog_files(const Catalog& catalog) {
  auto all = catalog.all_files();
  if (!all.is_ok()) return all.status();
  CatalogFiles files;
  for (CatalogFile& file : all.value()) files.emplace(file.file_id, std::move(file));
  return files;
}

std::string id_list(const std::map<std::uint64_t, std::uint64_t>& by_file, std::size_t limit) {
  std::string text;
  std::size_t listed = 0;
  for (const auto& [id, count] : by_file) {
    if (listed++ == limit) return text + ", ...";
    text += fmt::format("{}{} ({} pages)", text.empty() ? "" : ", ", id, count);
  }
  return text;
}

// What the cache's catalog says of its backing directory: where it is and how its files are told
// apart.
struct RecordedBacking {
  std::filesystem::path path;  // empty if the catalog has no record
  IdentityRule rule = IdentityRule::inode;
};

// The attributes of the regular file at `path` as the engine records them (device relative to
// `root_device`); nullopt if there is none.
std::optional<BackingAttributes> attributes_at(const std::filesystem::path& path, dev_t root_device) {
  struct statx st {};
  if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &st) != 0 ||
      !S_ISREG(st.stx_mode))
    return std::nullopt;
  BackingAttributes now;
  const dev_t device = makedev(st.stx_dev_major, st.stx_dev_minor);
  now.device = device == root_device ? 0 : device;
  now.inode = st.stx_ino;
  now.birth_ns = (st.stx_mask & STATX_BTIME) != 0
                     ? static_cast<std::int64_t>(st.stx_btime.tv_sec) * 1'000'000'000 + st.stx_btime.tv_nsec
                     : 0;
  now.uid = st.stx_uid;
  now.gid = st.stx_gid;
  return now;
}

// Catalog files whose backing file is gone, and files with dirty pages whose path now holds
// another file. A dirty one is an error nothing in the cache can fix: the engine's next open
// writes its pages back if its file is there again, and otherwise keeps them in lost+found.
void check_backing_files(const std::filesystem::path& root, IdentityRule rule, const CatalogFiles& files,
                         const SlotOwners& owners, const CheckOptions& options, CheckReport& report) {
  std::error_code error;
  struct stat root_stat {};
  if (!std::filesystem::is_directory(root, error) || ::stat(root.c_str(), &root_stat) != 0) {
    report.notes.push_back(
        fmt::format("the backing directory {} is not reachable: the catalog's files were not checked", root.string()));
    return;
  }
  report.cache.backing_checked = true;
  std::map<std::string, std::uint64_t> missing;  // path -> file id, sorted for the listing
  for (const auto& [id, file] : files) {
    const auto now = attributes_at(root / file.relative_path, root_stat.st_dev);
    if (!now) {
      missing.emplace(file.relative_path, id);
      continue;
    }
    const auto dirty = owners.dirty.find(id);
    if (dirty != owners.dirty.end() && !file.attributes.proves_same_file(*now, rule)) {
      report.errors.push_back(fmt::format(
          "{} dirty pages of {} (file id {}, owner uid {}) wait to be written back, and {} is now another file "
          "(inode {}, owner uid {}; recorded: inode {}): the engine's next open keeps them in {}/{} for you to look at",
          dirty->second, file.relative_path, id, file.attributes.uid, (root / file.relative_path).string(), now->inode,
          now->uid, file.attributes.inode, "CACHE", kLostFoundDirName));
    }
  }
  report.cache.missing_backing_files = missing.size();
  std::size_t listed = 0;
  for (const auto& [path, id] : missing) {
    const auto dirty = owners.dirty.find(id);
    if (dirty != owners.dirty.end()) {
      report.errors.push_back(fmt::format(
          "{} dirty pages of {} (file id {}) wait to be written back, and its backing file {} is gone: restore it (or "
          "mount the backing directory) before the engine's next open, which otherwise keeps them in CACHE/{}",
          dirty->second, path, id, (root / path).string(), kLostFoundDirName));
    } else {
      list(report.notes, listed, options.max_listed_pages,
           fmt::format("the backing file of {} (file id {}) is gone: its cached pages are never served and leave by "
                       "eviction",
                       path, id));
    }
  }
  if (listed > options.max_listed_pages)
    report.notes.push_back(fmt::format("... and {} more catalog files whose backing file is gone", listed - options.max_listed_pages));
}

struct Findings {
  std::vector<std::string> fixable;    // errors -y corrects
  std::vector<std::string> to_drop;    // what the engine's next open drops (notes; -y drops it now)
  bool needs_repair = false;
};

// The dry run: the engine's restart on an overlay of the read-only image.
std::optional<Findings> inspect(const CacheDirPaths& paths, MetadataScheme scheme, const CatalogFiles& files,
                                const RecordedBacking& recorded, const CheckOptions& options, CheckReport& report) {
  auto image = open_image_store(paths.image, ImageAccess::read_only);
  if (!image.is_ok()) {
    report.errors.push_back(fmt::format("cache metadata not checked: {}", image.status().message()));
    return std::nullopt;
  }
  auto opened = open_ftl(std::make_shared<OverlayStore>(std::move(image.value())), report.superblock);
  if (!opened.is_ok()) {
    report.errors.push_back(fmt::format("cache metadata not checked: {}", opened.status().message()));
    return std::nullopt;
  }
  OpenedFtl& medium = **opened;
  CacheCheckSummary& summary = report.cache;
  summary.scheme = cache::metadata_scheme_name(scheme);
  summary.slots = medium.layout.slot_count;
  summary.metadata_pages = medium.layout.metadata_pages;
  auto pages = inspect_pages(*medium.ftl, medium.layout, scheme);
  if (!pages.is_ok()) {
    report.errors.push_back(fmt::format("cache metadata not checked: {}", pages.status().message()));
    return std::nullopt;
  }
  if (!pages->foreign_scheme.empty()) {
    report.errors.push_back(fmt::format("{}: the engine refuses to open the cache, and fsck does not choose between them",
                                        pages->foreign_scheme));
    return std::nullopt;
  }
  const cache::meta::ChipSummary newest = cache::meta::summarize(pages->headers);
  summary.newest_sequence = newest.newest_sequence;
  summary.newest_page = newest.newest_page;
  summary.window_pages = newest.window.size();

  auto store = MetadataStore::open(*medium.ftl, medium.layout, scheme);
  if (!store.is_ok()) {
    report.errors.push_back(fmt::format("cache metadata: the engine's restart fails: {}", store.status().message()));
    return std::nullopt;
  }
  const RecoveredSlots& recovered = store->second;
  const SlotOwners owners = owners_of(recovered, files);
  summary.checked = true;
  summary.damaged_metadata_pages = recovered.damaged_pages;
  summary.clean_shutdown = recovered.clean_shutdown;
  summary.usable_slots = owners.kept;
  summary.dirty_slots = owners.dirty_slots();
  summary.dirty_files = owners.dirty.size();
  summary.dropped_slots = recovered.dropped;
  summary.duplicate_slots = recovered.duplicates;
  summary.orphan_slots = owners.orphans.size();
  summary.orphan_dirty_slots = owners.orphan_dirty_slots();

  Findings findings;
  std::size_t listed = 0;
  for (const std::string& damaged : pages->damaged) {
    list(findings.fixable, listed, options.max_listed_pages, fmt::format("{}: its slots are dropped", damaged));
  }
  if (listed > options.max_listed_pages)
    findings.fixable.push_back(fmt::format("... and {} more damaged metadata pages", listed - options.max_listed_pages));
  if (recovered.dropped > 0) {
    findings.to_drop.push_back(fmt::format(
        "{} slot entries fail the usability rule ({}: writes in flight when the power was cut{})", recovered.dropped,
        summary.scheme,
        recovered.duplicates > 0 ? fmt::format(", {} older copies of pages cached twice", recovered.duplicates) : ""));
  }
  const std::uint64_t clean_orphans = owners.orphans.size() - summary.orphan_dirty_slots;
  if (clean_orphans > 0) {
    findings.to_drop.push_back(
        fmt::format("{} clean slots name files the catalog does not know (orphans: files unlinked while open)", clean_orphans));
  }
  if (!owners.orphan_dirty.empty()) {
    findings.fixable.push_back(fmt::format(
        "{} DIRTY slots name files the catalog does not know (file ids {}): their data has no backing file to go back "
        "to and is LOST when they are dropped",
        summary.orphan_dirty_slots, id_list(owners.orphan_dirty, options.max_listed_pages)));
  }
  if (!owners.dirty.empty()) {
    report.notes.push_back(fmt::format(
        "{} dirty pages of {} files (file ids {}) wait to be written back: the engine writes them back at its next "
        "open; fsck -y keeps them, they hold the only copy",
        summary.dirty_slots, owners.dirty.size(), id_list(owners.dirty, options.max_listed_pages)));
  }
  const std::filesystem::path root = options.backing_dir.empty() ? recorded.path : options.backing_dir;
  if (!root.empty()) check_backing_files(root, recorded.rule, files, owners, options, report);
  findings.needs_repair = recovered.damaged_pages > 0 || recovered.dropped > 0 || !owners.orphans.empty();
  return findings;
}

// fsck -y: the engine's restart on the image itself (MetadataStore::open drops and trims what
// the usability rule refuses and rewrites damaged pages), the orphans dropped as the engine
// drops them, then the store and the FTL closed cleanly, under the superblock's clean flag as
// MountedCache keeps it. Returns what it did.
Result<std::vector<std::string>> repair(const CacheDirPaths& paths, MetadataScheme scheme, const CatalogFiles& files,
                                        CheckReport& report) {
  format::Superblock& superblock = report.superblock;
  superblock.clean_shutdown = false;
  FLASHDIR_TRY(update_superblock_file(paths.superblock, superblock));
  auto image = open_image_store(paths.image, ImageAccess::read_write);
  if (!image.is_ok()) return image.status();
  auto opened = open_ftl(std::move(image.value()), superblock);
  if (!opened.is_ok()) return opened.status();
  OpenedFtl& medium = **opened;
  auto store = MetadataStore::open(*medium.ftl, medium.layout, scheme);
  if (!store.is_ok()) return store.status();
  const RecoveredSlots& recovered = store->second;
  const SlotOwners owners = owners_of(recovered, files);
  std::vector<std::string> done;
  if (recovered.damaged_pages > 0) {
    done.push_back(fmt::format("rewrote {} damaged metadata pages without their slots", recovered.damaged_pages));
  }
  if (recovered.dropped > 0) {
    done.push_back(fmt::format("dropped {} slot entries the usability rule refuses and trimmed their pages", recovered.dropped));
  }
  if (!owners.orphans.empty()) {
    FLASHDIR_TRY(store->first->drop(owners.orphans, Durability::forced));
    done.push_back(fmt::format("dropped {} orphan slots", owners.orphans.size()));
  }
  if (!owners.orphan_dirty.empty()) {
    done.push_back(fmt::format("LOST: {} dirty pages of files the catalog does not know (file ids {}) were dropped",
                               owners.orphan_dirty_slots(), id_list(owners.orphan_dirty, SIZE_MAX)));
  }
  FLASHDIR_TRY(store->first->close_clean());
  FLASHDIR_TRY(medium.ftl->close());
  superblock.clean_shutdown = true;
  FLASHDIR_TRY(update_superblock_file(paths.superblock, superblock));
  done.push_back("closed the cache metadata and the FTL cleanly");
  return done;
}

// Dirty pages a restart kept in lost+found: data only an admin can put back.
void report_lost_found(const CacheDirPaths& paths, CheckReport& report) {
  std::error_code error;
  std::vector<std::string> saved;
  for (const auto& entry : std::filesystem::directory_iterator(paths.dir / kLostFoundDirName, error))
    if (entry.path().extension() != ".txt") saved.push_back(entry.path().filename().string());
  if (saved.empty()) return;
  std::sort(saved.begin(), saved.end());
  std::string names;
  for (const std::string& name : saved) names += (names.empty() ? "" : ", ") + name;
  report.notes.push_back(fmt::format(
      "{}/{} holds dirty pages a restart could not prove belong to the file at their path: {}; each .txt says "
      "whose they were: copy what is wanted back into the backing directory, then delete them",
      paths.dir.string(), kLostFoundDirName, names));
}

}  // namespace

void check_cache(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report) {
  report_lost_found(paths, report);
  std::optional<MetadataScheme> scheme;
  CatalogFiles files;
  RecordedBacking recorded;
  {
    auto catalog = Catalog::open(paths.catalog, Catalog::Access::read_only);
    if (!catalog.is_ok()) return;  // check_catalog reported it
    auto text = (*catalog)->options_text();
    if (text.status().code() == StatusCode::not_found) {
      report.notes.push_back("the cache engine has not used this cache yet: no slot metadata to check");
      return;
    }
    auto recorded_scheme =
        text.is_ok() ? cache::recorded_metadata_scheme(text.value()) : Result<MetadataScheme>(text.status());
    if (!recorded_scheme.is_ok()) {
      report.errors.push_back(
          fmt::format("catalog: {}; the cache metadata was not checked", recorded_scheme.status().message()));
      return;
    }
    scheme = *recorded_scheme;
    if (auto root = (*catalog)->backing_root(); root.is_ok()) recorded.path = root->path;
    if (auto rule = (*catalog)->identity_rule(); rule.is_ok()) recorded.rule = *rule;
    auto all = catalog_files(**catalog);
    if (!all.is_ok()) {
      report.errors.push_back(fmt::format("catalog: {}; the cache metadata was not checked", all.status().message()));
      return;
    }
    files = std::move(all.value());
  }
  // Errors the checks before this one leave (a chip or FTL -y could not repair): the restart
  // would run over a doubtful FTL, so -y leaves the cache metadata alone.
  const bool sound_below = report.errors.empty();
  auto findings = inspect(paths, *scheme, files, recorded, options, report);
  if (!findings) return;
  if (options.repair && findings->needs_repair && !sound_below) {
    report.errors.insert(report.errors.end(), findings->fixable.begin(), findings->fixable.end());
    report.errors.push_back("the cache metadata is not repaired while the errors above remain");
    return;
  }
  if (!options.repair || !findings->needs_repair) {
    report.errors.insert(report.errors.end(), findings->fixable.begin(), findings->fixable.end());
    for (const std::string& drop : findings->to_drop) {
      report.notes.push_back(fmt::format("{}: the engine's next open drops them, as fsck -y does", drop));
    }
    return;
  }
  auto done = repair(paths, *scheme, files, report);
  if (!done.is_ok()) {
    report.errors.insert(report.errors.end(), findings->fixable.begin(), findings->fixable.end());
    report.errors.push_back(fmt::format("repairing the cache metadata failed: {}", done.status().message()));
    return;
  }
  report.repairs.insert(report.repairs.end(), findings->fixable.begin(), findings->fixable.end());
  report.repairs.insert(report.repairs.end(), done->begin(), done->end());
}

}  // namespace flashdir
