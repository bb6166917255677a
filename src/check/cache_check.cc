#include "cache_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "backing_check.h"
#include "bounded_list.h"
#include "cache/meta/metadata_store.h"
#include "cache/meta/usability_rule.h"
#include "catalog_check.h"
#include "flashdir/cache/options.h"
#include "flashdir/catalog.h"
#include "flashdir/clock.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/nand/page_store.h"
#include "flashdir/nand/simulated_chip.h"
#include "lost_found_check.h"
#include "overlay_store.h"
#include "slot_sort.h"

namespace flashdir {
namespace {

using cache::MetadataScheme;
using cache::MetadataStore;
using cache::RecoveredSlots;
using cache::SlotIndex;
using cache::SlotLayout;

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
  auto layout = SlotLayout::of(*opened->ftl, superblock.slot_alignment);
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

// `scheme_source` says where the cache's scheme was read ("the catalog records").
Result<PageFindings> inspect_pages(Ftl& ftl, const SlotLayout& layout, MetadataScheme scheme,
                                   const std::string& scheme_source) {
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
      found.foreign_scheme = fmt::format("metadata page {} was written by scheme code {}, {} {}", p,
                                         static_cast<int>(page->header.scheme), scheme_source,
                                         cache::metadata_scheme_name(scheme));
    }
    found.headers[p] = page->header;
  }
  return found;
}

// The scheme of the first metadata page that decodes, for a catalog that lost the record of it;
// nullopt if none does (the cache holds no slot metadata).
Result<std::optional<MetadataScheme>> scheme_on_chip(Ftl& ftl, const SlotLayout& layout) {
  std::vector<std::uint8_t> buffer(layout.page_size_bytes);
  for (std::uint32_t p = 0; p < layout.metadata_pages; ++p) {
    if (Status read = ftl.read(Lpn(p), 1, buffer); !read.is_ok()) {
      if (read.code() != StatusCode::corruption) return read;
      continue;
    }
    auto page = MetadataStore::decode_page(layout, p, buffer);
    if (!page.is_ok()) continue;
    for (MetadataScheme scheme :
         {MetadataScheme::lufuw, MetadataScheme::write_update, MetadataScheme::update_write_update}) {
      if (cache::meta::scheme_code(scheme) == page->header.scheme) return std::optional(scheme);
    }
  }
  return std::optional<MetadataScheme>();
}

std::map<std::uint64_t, std::uint64_t> counts(const std::map<std::uint64_t, std::vector<cache::RecoveredSlot>>& by_file) {
  std::map<std::uint64_t, std::uint64_t> counted;
  for (const auto& [id, slots] : by_file) counted[id] = slots.size();
  return counted;
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

// What the catalog says, read once (an unusable catalog says nothing: CatalogRead{}).
struct CatalogRead {
  CatalogView view;
  std::optional<MetadataScheme> scheme;  // as its options record it
  RecordedBacking backing;
};

// nullopt, with the error reported, if what the catalog says cannot be read.
std::optional<CatalogRead> read_catalog(const CacheDirPaths& paths, CheckReport& report) {
  auto catalog = Catalog::open(paths.catalog, Catalog::Access::read_only);
  if (!catalog.is_ok()) return std::nullopt;  // check_catalog found it unusable
  CatalogRead read;
  if (auto text = (*catalog)->options_text(); text.status().code() != StatusCode::not_found) {
    auto recorded = text.is_ok() ? cache::recorded_metadata_scheme(text.value()) : Result<MetadataScheme>(text.status());
    if (!recorded.is_ok()) {
      report.errors.push_back(
          fmt::format("catalog: {}; the cache metadata was not checked", recorded.status().message()));
      return std::nullopt;
    }
    read.scheme = *recorded;
  }
  if (auto root = (*catalog)->backing_root(); root.is_ok()) read.backing.path = root->path;
  if (auto rule = (*catalog)->identity_rule(); rule.is_ok()) read.backing.rule = *rule;
  auto next = (*catalog)->next_file_id();
  auto all = (*catalog)->all_files();
  if (!next.is_ok() || !all.is_ok()) return std::nullopt;  // check_catalog found it unusable
  read.view.next_file_id = *next;
  for (CatalogFile& file : all.value()) read.view.files.emplace(file.file_id, std::move(file));
  return read;
}

struct Findings {
  std::optional<MetadataScheme> scheme;  // nullopt: no slot metadata on the chip
  std::vector<std::string> fixable;      // errors -y corrects
  std::vector<std::string> to_drop;      // what the engine's next open drops (notes; -y drops it now)
  bool needs_repair = false;
};

// What the sorted slots call for, as errors -y fixes, notes, and counts in the summary.
void judge_slots(const SlotSort& sort, const CatalogView& catalog, bool replacing, const CheckOptions& options,
                 Findings& findings, CheckReport& report) {
  CacheCheckSummary& summary = report.cache;
  summary.usable_slots = sort.kept;
  summary.dirty_slots = sort.dirty_slots();
  summary.dirty_files = sort.dirty.size();
  summary.orphan_slots = sort.orphans.size() + sort.orphan_dirty_slots();
  summary.orphan_dirty_slots = sort.orphan_dirty_slots();
  summary.lost_record_files = sort.lost_files.size();
  summary.lost_record_slots = sort.lost_clean.size() + sort.lost_dirty_slots();
  summary.lost_record_dirty_slots = sort.lost_dirty_slots();
  summary.damaged_dirty_slots = sort.damaged.size();

  if (!sort.orphans.empty()) {
    findings.to_drop.push_back(fmt::format(
        "{} clean slots name files the catalog does not know (orphans: files unlinked while open)", sort.orphans.size()));
  }
  if (!sort.orphan_dirty.empty()) {
    findings.fixable.push_back(fmt::format(
        "{} DIRTY slots name files the catalog does not know (file ids {}): their data has no backing file to go back "
        "to; fsck -y saves it in CACHE/{}, as the engine's next open would",
        sort.orphan_dirty_slots(), id_list(counts(sort.orphan_dirty), options.max_listed_pages), kLostFoundDirName));
  }
  if (!sort.lost_files.empty()) {
    const std::string what = fmt::format(
        "{} clean pages and {} dirty pages of {} files (file ids {})", sort.lost_clean.size(), sort.lost_dirty_slots(),
        sort.lost_files.size(), id_list(sort.lost_files, options.max_listed_pages));
    // With the catalog replaced its error says it all; these are what it leaves behind.
    if (replacing) {
      report.notes.push_back(fmt::format("with no usable catalog, {} name no file: fsck -y drops the clean pages and "
                                         "saves the dirty ones in CACHE/{}",
                                         what, kLostFoundDirName));
    } else {
      findings.fixable.push_back(fmt::format(
          "the catalog lost the records of {} files the cache's metadata names, at or past its next file id {} (its "
          "write-ahead log deleted, or an older copy put back): {} are never served and have no file to go back to; "
          "fsck -y drops the clean pages and saves the dirty ones in CACHE/{}",
          sort.lost_files.size(), catalog.next_file_id, what, kLostFoundDirName));
    }
  }
  std::size_t listed = 0;
  for (const DamagedDirtySlot& damaged : sort.damaged) {
    list(findings.fixable, listed, options.max_listed_pages,
         fmt::format("dirty {} cannot be read ({}): it was never written back and nothing else holds its bytes: LOST; "
                     "fsck -y drops it, as the engine's next open would",
                     describe_page(catalog, damaged.slot, damaged.entry), damaged.why));
  }
  if (listed > options.max_listed_pages)
    findings.fixable.push_back(fmt::format("... and {} more damaged dirty pages", listed - options.max_listed_pages));
  if (!sort.dirty.empty()) {
    report.notes.push_back(fmt::format(
        "{} dirty pages of {} files (file ids {}) wait to be written back: the engine writes them back at its next "
        "open; fsck -y keeps them, they hold the only copy",
        summary.dirty_slots, sort.dirty.size(), id_list(sort.dirty, options.max_listed_pages)));
  }
}

// The dry run: the engine's restart on an overlay of the read-only image. `scheme`: the one the
// catalog records, if any (else the chip's metadata pages say).
std::optional<Findings> inspect(const CacheDirPaths& paths, std::optional<MetadataScheme> scheme,
                                const CatalogRead& catalog, bool replacing, const CheckOptions& options,
                                CheckReport& report) {
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
  Findings findings;
  const std::string scheme_source = scheme ? "the catalog records" : "its first metadata page says";
  if (!scheme) {
    auto found = scheme_on_chip(*medium.ftl, medium.layout);
    if (!found.is_ok()) {
      report.errors.push_back(fmt::format("cache metadata not checked: {}", found.status().message()));
      return std::nullopt;
    }
    if (!*found) {
      report.notes.push_back("no metadata page on the chip decodes: the cache holds no slot metadata to check");
      return findings;
    }
    scheme = *found;
  }
  findings.scheme = scheme;
  CacheCheckSummary& summary = report.cache;
  summary.scheme = cache::metadata_scheme_name(*scheme);
  summary.slots = medium.layout.slot_count;
  summary.metadata_pages = medium.layout.metadata_pages;
  auto pages = inspect_pages(*medium.ftl, medium.layout, *scheme, scheme_source);
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

  auto store = MetadataStore::open(*medium.ftl, medium.layout, *scheme);
  if (!store.is_ok()) {
    report.errors.push_back(fmt::format("cache metadata: the engine's restart fails: {}", store.status().message()));
    return std::nullopt;
  }
  const RecoveredSlots& recovered = store->second;
  auto sort = sort_slots(recovered, catalog.view, *medium.ftl, medium.layout);
  if (!sort.is_ok()) {
    report.errors.push_back(fmt::format("cache metadata not checked: {}", sort.status().message()));
    return std::nullopt;
  }
  summary.checked = true;
  summary.damaged_metadata_pages = recovered.damaged_pages;
  summary.clean_shutdown = recovered.clean_shutdown;
  summary.dropped_slots = recovered.dropped;
  summary.duplicate_slots = recovered.duplicates;

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
  judge_slots(*sort, catalog.view, replacing, options, findings, report);
  const std::filesystem::path root = options.backing_dir.empty() ? catalog.backing.path : options.backing_dir;
  if (!root.empty() && !replacing)
    check_backing_files(root, catalog.backing.rule, catalog.view.files, sort->dirty, options, report);
  findings.needs_repair = recovered.damaged_pages > 0 || recovered.dropped > 0 || sort->anything_to_drop() || replacing;
  return findings;
}

// Where a saved file's pages came from, for its .txt in lost+found.
std::function<std::string(std::uint64_t)> save_reason(const CatalogView& catalog, const CheckState& state,
                                                      bool lost_record) {
  if (!state.catalog_unusable.empty()) {
    return [why = state.catalog_unusable](std::uint64_t) { return fmt::format("fsck.flashdir -y replaced the catalog: {}", why); };
  }
  if (lost_record) {
    return [next = catalog.next_file_id](std::uint64_t id) {
      return fmt::format("the catalog lost its record of file {} (its next file id was {})", id, next);
    };
  }
  return [](std::uint64_t id) { return fmt::format("the catalog has no record of file {}", id); };
}

// fsck -y: the engine's restart on the image itself (MetadataStore::open drops and trims what
// the usability rule refuses and rewrites damaged pages); the dirty pages no catalog file names
// saved in lost+found, then dropped with the orphans, the clean pages of lost records and the
// damaged dirty pages; the store and the FTL closed cleanly, under the superblock's clean flag
// as MountedCache keeps it; last the catalog made to agree (replaced, or its next file id moved
// past every id the metadata named). Returns what it did.
Result<std::vector<std::string>> repair(const CacheDirPaths& paths, MetadataScheme scheme, const CatalogView& catalog,
                                        const CheckOptions& options, CheckState& state, CheckReport& report) {
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
  auto sort = sort_slots(recovered, catalog, *medium.ftl, medium.layout);
  if (!sort.is_ok()) return sort.status();
  std::vector<std::string> done;
  if (recovered.damaged_pages > 0) {
    done.push_back(fmt::format("rewrote {} damaged metadata pages without their slots", recovered.damaged_pages));
  }
  if (recovered.dropped > 0) {
    done.push_back(fmt::format("dropped {} slot entries the usability rule refuses and trimmed their pages", recovered.dropped));
  }
  // The only copies go to lost+found (synced) before their slots are dropped.
  std::vector<std::string> lost;
  FLASHDIR_TRY(save_in_lost_found(paths, *medium.ftl, medium.layout, sort->orphan_dirty,
                                  save_reason(catalog, state, false), done, lost));
  FLASHDIR_TRY(save_in_lost_found(paths, *medium.ftl, medium.layout, sort->lost_dirty,
                                  save_reason(catalog, state, true), done, lost));
  std::size_t listed = 0;
  for (const DamagedDirtySlot& damaged : sort->damaged) {
    list(lost, listed, options.max_listed_pages,
         fmt::format("LOST: dirty {} could not be read ({}); dropped", describe_page(catalog, damaged.slot, damaged.entry),
                     damaged.why));
  }
  if (listed > options.max_listed_pages)
    lost.push_back(fmt::format("LOST: ... and {} more damaged dirty pages dropped", listed - options.max_listed_pages));
  if (const std::vector<SlotIndex> drop = sort->to_drop(); !drop.empty()) {
    FLASHDIR_TRY(store->first->drop(drop, Durability::forced));
    done.push_back(fmt::format("dropped {} slots: {} orphans, {} of records the catalog {}, {} damaged dirty pages",
                               drop.size(), sort->orphans.size() + sort->orphan_dirty_slots(),
                               sort->lost_clean.size() + sort->lost_dirty_slots(),
                               state.catalog_unusable.empty() ? "lost" : "no longer has", sort->damaged.size()));
  }
  done.insert(done.end(), lost.begin(), lost.end());
  FLASHDIR_TRY(store->first->close_clean());
  FLASHDIR_TRY(medium.ftl->close());
  superblock.clean_shutdown = true;
  FLASHDIR_TRY(update_superblock_file(paths.superblock, superblock));
  done.push_back("closed the cache metadata and the FTL cleanly");

  // Ids are never given out twice: the next one is past every id the metadata named.
  const std::uint64_t past_named = sort->lost_files.empty() ? 1 : sort->lost_files.rbegin()->first + 1;
  if (!state.catalog_unusable.empty()) {
    done.push_back(fmt::format("{}; replaced it with an empty catalog", state.catalog_unusable));
    FLASHDIR_TRY(replace_catalog(paths, superblock, state.catalog_unusable,
                                 std::max(past_named, superblock.file_id_limit), done));
    state.catalog_replaced = true;
  } else if (!sort->lost_files.empty()) {
    auto writable = Catalog::open(paths.catalog, Catalog::Access::read_write);
    if (!writable.is_ok()) return writable.status();
    FLASHDIR_TRY((*writable)->skip_file_ids_to(past_named));
    done.push_back(fmt::format("moved the catalog's next file id to {}, past every id the metadata named", past_named));
  }
  return done;
}

}  // namespace

void check_cache(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report, CheckState& state) {
  report_lost_found(paths, report);
  const bool replacing = !state.catalog_unusable.empty();
  CatalogRead catalog;
  if (!replacing) {
    auto read = read_catalog(paths, report);
    if (!read) return;
    catalog = std::move(*read);
  }
  // Errors the checks before this one leave (a chip or FTL -y could not repair): the restart
  // would run over a doubtful FTL, so -y leaves the cache metadata alone.
  const bool sound_below = report.errors.empty();
  // The engine's rule (EngineCore::open): a cache it used has its options in the catalog or a
  // file id limit in the superblock. A catalog being replaced says nothing: the chip does.
  if (!catalog.scheme && report.superblock.file_id_limit == 0 && !replacing) {
    report.notes.push_back("the cache engine has not used this cache yet: no slot metadata to check");
    return;
  }
  auto findings = inspect(paths, catalog.scheme, catalog, replacing, options, report);
  if (!findings) return;
  if (!findings->scheme) {
    // Nothing on the chip names a file: an unusable catalog is replaced as it is.
    if (!replacing || !options.repair || !sound_below) return;
    std::vector<std::string> done{fmt::format("{}; replaced it with an empty catalog", state.catalog_unusable)};
    if (Status s = replace_catalog(paths, report.superblock, state.catalog_unusable,
                                   std::max<std::uint64_t>(1, report.superblock.file_id_limit), done);
        !s.is_ok()) {
      report.errors.push_back(fmt::format("replacing the catalog failed: {}", s.message()));
      return;
    }
    state.catalog_replaced = true;
    report.repairs.insert(report.repairs.end(), done.begin(), done.end());
    return;
  }
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
  auto done = repair(paths, *findings->scheme, catalog.view, options, state, report);
  if (!done.is_ok()) {
    report.errors.insert(report.errors.end(), findings->fixable.begin(), findings->fixable.end());
    report.errors.push_back(fmt::format("repairing the cache metadata failed: {}", done.status().message()));
    return;
  }
  report.repairs.insert(report.repairs.end(), findings->fixable.begin(), findings->fixable.end());
  report.repairs.insert(report.repairs.end(), done->begin(), done->end());
}

}  // namespace flashdir
