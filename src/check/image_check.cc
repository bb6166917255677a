#include "image_check.h"

#include <fmt/format.h>

#include "flashdir/nand/page_store.h"

namespace flashdir {
namespace {

// Reports a finding: under -n an error (and the chip is left unchecked), under -y repaired by
// `repair`, or an error if that fails. Returns whether the image is as it should be now.
template <typename Repair>
bool settle(const std::string& finding, const std::string& what_y_does, const CheckOptions& options,
            CheckReport& report, CheckState& state, Repair repair) {
  if (!options.repair) {
    report.errors.push_back(fmt::format("{}: fsck -y {}", finding, what_y_does));
    state.image_usable = false;
    return false;
  }
  if (Status s = repair(); !s.is_ok()) {
    report.errors.push_back(fmt::format("{}; repairing it failed: {}", finding, s.message()));
    state.image_usable = false;
    return false;
  }
  report.repairs.push_back(fmt::format("{}; {}", finding, what_y_does));
  return true;
}

std::string describe(const BlockTableFault& fault, const Geometry& g) {
  if (fault.recorded.next_page > g.pages_per_block) {
    return fmt::format("image block table: block {} claims {} programmed pages of {} (its OOB records end at page {})",
                       fault.block, fault.recorded.next_page, g.pages_per_block, fault.rebuilt.next_page);
  }
  return fmt::format("image block table: block {} claims {} programmed pages, and its OOB area holds records up to "
                     "page {}",
                     fault.block, fault.recorded.next_page, fault.rebuilt.next_page);
}

void check_block_table(const CacheDirPaths& paths, const format::ImageHeader& expected, const CheckOptions& options,
                       CheckReport& report, CheckState& state) {
  auto faults = find_block_table_faults(paths.image, expected);
  if (!faults.is_ok()) {
    report.errors.push_back(fmt::format("the image block table was not checked: {}", faults.status().message()));
    state.image_usable = false;
    return;
  }
  if (faults->empty()) return;
  std::string findings;
  std::size_t listed = 0;
  for (const BlockTableFault& fault : *faults) {
    if (listed++ < options.max_listed_pages) findings += (findings.empty() ? "" : "; ") + describe(fault, expected.geometry);
  }
  if (listed > options.max_listed_pages)
    findings += fmt::format("; ... and {} more entries", listed - options.max_listed_pages);
  const std::string finding = fmt::format("{} (a table is written before its pages, and an erase clears the records "
                                          "before the entry: only damage leaves this)",
                                          findings);
  const bool repaired = settle(finding,
                               fmt::format("rebuilds {} entries from the OOB records, then the FTL mapping from a scan",
                                           faults->size()),
                               options, report, state,
                               [&] { return rewrite_block_table(paths.image, expected, *faults); });
  if (repaired) state.rebuild_ftl = true;
}

}  // namespace

void check_image(const CacheDirPaths& paths, const CheckOptions& options, CheckReport& report, CheckState& state) {
  const format::Superblock& sb = report.superblock;
  const format::ImageHeader expected{sb.uuid, sb.geometry, format::image_layout(sb.geometry)};
  auto header = read_image_header(paths.image);
  if (!header.is_ok() && header.status().code() != StatusCode::corruption) {
    report.fatal = fmt::format("cannot use the chip image: {}", header.status().message());
    return;
  }
  if (!header.is_ok()) {
    settle(header.status().message(),
           fmt::format("rewrites it from the superblock (cache {}, {})", sb.uuid.to_string(), sb.geometry.describe()),
           options, report, state, [&] { return rewrite_image_header(paths.image, sb); });
  } else if (Status s = check_image_matches(paths.image, header.value(), sb); !s.is_ok()) {
    report.fatal = s.message();
    return;
  }

  auto size = image_file_size(paths.image);
  if (!size.is_ok()) {
    report.fatal = fmt::format("cannot use the chip image: {}", size.status().message());
    return;
  }
  const std::uint64_t needed = expected.layout.file_size;
  if (*size < needed) {
    const bool extended = settle(
        fmt::format("image {} is {} bytes but its geometry ({}) needs {} bytes: the pages past byte {} are lost",
                    paths.image.string(), *size, sb.geometry.describe(), needed, *size),
        "extends it (the pages cut off read as zeros and fail verification) and rebuilds the FTL mapping without them",
        options, report, state, [&] { return resize_image(paths.image, sb.geometry); });
    if (!extended) {
      report.notes.push_back("the block table was not checked: the image is shorter than its geometry needs");
      return;
    }
    state.rebuild_ftl = true;
  } else if (*size > needed) {
    settle(fmt::format("image {} is {} bytes but its geometry ({}) needs {} bytes", paths.image.string(), *size,
                       sb.geometry.describe(), needed),
           fmt::format("cuts it to {} bytes (no page lives past them)", needed), options, report, state,
           [&] { return resize_image(paths.image, sb.geometry); });
  }
  check_block_table(paths, expected, options, report, state);
}

}  // namespace flashdir
