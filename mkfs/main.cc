// mkfs.flashdir: formats a cache directory (superblock, erased chip image, empty catalog).
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <optional>

#include "flashdir/cache_dir.h"
#include "flashdir/command_line.h"
#include "flashdir/ftl/ftl.h"
#include "flashdir/size.h"

namespace {

constexpr const char* kTool = "mkfs.flashdir";
constexpr int kExitRefused = 1;
constexpr const char* kSizeSuffixes = "with an optional K, M, G or T suffix (binary multiples)";

int refuse(const flashdir::Status& status) {
  fmt::print(stderr, "{}: {}\n", kTool, status.message());
  return kExitRefused;
}

// Parses a size option into a 32-bit field; the message names the option.
flashdir::Status parse_u32_size(const std::string& option, const std::string& text, std::uint32_t& out) {
  auto value = flashdir::parse_size(text);
  if (!value.is_ok()) return value.status().with_context(option);
  if (*value > UINT32_MAX) return flashdir::Status::invalid_argument(fmt::format("{} {} is too large", option, text));
  out = static_cast<std::uint32_t>(*value);
  return flashdir::Status::ok();
}

void print_summary(const std::string& dir, const flashdir::format::Superblock& sb, flashdir::ImageSpace space) {
  const flashdir::CacheDirPaths paths(dir);
  fmt::print("formatted {}\n", dir);
  fmt::print("  uuid      {}\n", sb.uuid.to_string());
  fmt::print("  chip      {}\n", sb.geometry.describe());
  fmt::print("  latency   {} (read {} us, program {} us, erase {} us)\n",
             flashdir::latency_preset_name(sb.latency.preset), sb.latency.read_us, sb.latency.program_us,
             sb.latency.erase_us);
  const auto logical = flashdir::Ftl::logical_pages_for(sb.geometry, sb.overprovision_permille);
  fmt::print("  logical   {} pages ({}), {}% over-provisioning\n", logical.value(),
             flashdir::format_size(logical.value() * sb.geometry.page_size_bytes), sb.overprovision_permille / 10.0);
  flashdir::RamOptions chosen;
  chosen.policy = sb.ram_policy;
  chosen.static_mapping_percent = sb.static_mapping_percent;
  fmt::print("  FTL       {} mapping, {} GC, {} device RAM shared by {}\n",
             flashdir::format::mapping_scheme_name(sb.mapping_scheme), flashdir::format::gc_policy_name(sb.gc_policy),
             flashdir::format_size(sb.ram_budget_bytes), flashdir::ram_policy_label(chosen));
  fmt::print("  image     {} ({})\n", paths.image.string(),
             space == flashdir::ImageSpace::sparse ? "sparse" : "space reserved");
  fmt::print("  catalog   {}\n", paths.catalog.string());
}

}  // namespace

int main(int argc, char** argv) {
  using flashdir::Geometry;
  CLI::App app{
      "Formats DIR as a flashdir cache: a superblock, a simulated NAND chip image (its space reserved) "
      "and an empty catalog.",
      "mkfs.flashdir"};
  std::string dir;
  std::string size_text;
  std::string page_size_text = "4K";
  std::string oob_size_text = "64";
  std::uint32_t pages_per_block = Geometry::kDefaultPagesPerBlock;
  std::string latency_name = "slc";
  std::string mapping_name = "cftl";
  std::string gc_name = "dual-greedy";
  std::optional<double> op_percent;  // unset: the default, or more on a small chip
  std::string ram_text;  // empty: scaled with the size
  std::string ram_policy_text = "stack";
  bool force = false;
  bool sparse = false;

  app.add_option("DIR", dir, "Cache directory to format (created if its parent exists)")->required();
  app.add_option("-s,--size", size_text,
                 fmt::format("Chip capacity in bytes, {} (e.g. 256M); a whole number of blocks, at least {}",
                             kSizeSuffixes, flashdir::kMinimumCacheBlocks))
      ->required();
  app.add_option("--page-size", page_size_text,
                 fmt::format("NAND page size in bytes, {}; a power of two from {} to {}", kSizeSuffixes,
                             flashdir::format_size(Geometry::kMinPageSizeBytes),
                             flashdir::format_size(Geometry::kMaxPageSizeBytes)))
      ->capture_default_str();
  app.add_option("--oob-size", oob_size_text,
                 fmt::format("Out-of-band bytes per page, {}; {} to {}", kSizeSuffixes,
                             flashdir::format::kOobRecordSize, Geometry::kMaxOobSizeBytes))
      ->capture_default_str();
  const std::string pages_per_block_help =
      fmt::format("Pages per erase block, {} to {}", Geometry::kMinPagesPerBlock, Geometry::kMaxPagesPerBlock);
  app.add_option("--pages-per-block", pages_per_block, pages_per_block_help)->capture_default_str();
  app.add_option("--latency", latency_name,
                 "Latency preset: slc (25/200/1500 us read/program/erase), mlc (50/900/3500 us) "
                 "or zero")
      ->capture_default_str();
  app.add_option("--mapping", mapping_name,
                 "FTL mapping scheme: cftl (CPMT + CBMT, convertible), dftl (cached page map) or page "
                 "(whole map in RAM)")
      ->capture_default_str();
  app.add_option("--gc", gc_name, "Garbage-collection policy: dual-greedy, greedy or cost-benefit")
      ->capture_default_str();
  const double max_op_percent = flashdir::kMaxOverprovisionPermille / 10.0;
  app.add_option("--op", op_percent,
                 fmt::format("Over-provisioning: percent of the data area kept spare, 0 to {} (default: {}, or on a small "
                             "chip the least that lets garbage collection always make room)",
                             max_op_percent, flashdir::kDefaultOverprovisionPermille / 10.0));
  app.add_option("--ram", ram_text,
                 fmt::format("Device RAM for the mapping cache and write buffer in bytes, {} (default: a "
                             "sixteenth of --size, from 4M to 64M); 0 runs the FTL without a write buffer, "
                             "reading a translation page for each lookup",
                             kSizeSuffixes));
  app.add_option("--ram-policy", ram_policy_text,
                 "How the device RAM is shared: tree (TreeFTL), stack (TreeFTL with CFTL's compact mapping and LRU data "
                 "pages), aps (adaptive partitioning) or static:P (P percent for mapping)")
      ->capture_default_str();
  app.set_version_flag("-V,--version", fmt::format("mkfs.flashdir {}", FLASHDIR_VERSION));
  app.add_flag("--sparse", sparse,
               "Leave the image sparse (its space is taken as pages are written) instead of reserving it: a cache "
               "larger than the free space is then accepted, and a full disk stops it; for experiments");
  app.add_flag("-f,--force", force,
               "Replace the flashdir cache in DIR (only flashdir's own files); a directory holding anything else is "
               "refused");
  if (auto stop = flashdir::parse_command_line(app, argc, argv, kTool, kExitRefused)) return *stop;

  flashdir::FormatOptions options;
  options.force = force;
  if (sparse) options.image_space = flashdir::ImageSpace::sparse;
  options.pages_per_block = pages_per_block;
  auto capacity = flashdir::parse_size(size_text);
  if (!capacity.is_ok()) return refuse(capacity.status().with_context("--size"));
  options.capacity_bytes = *capacity;
  if (auto s = parse_u32_size("--page-size", page_size_text, options.page_size_bytes); !s.is_ok()) return refuse(s);
  if (auto s = parse_u32_size("--oob-size", oob_size_text, options.oob_size_bytes); !s.is_ok()) return refuse(s);
  auto latency = flashdir::LatencyProfile::parse(latency_name);
  if (!latency.is_ok()) return refuse(latency.status().with_context("--latency"));
  options.latency = *latency;
  auto mapping = flashdir::format::parse_mapping_scheme(mapping_name);
  if (!mapping.is_ok()) return refuse(mapping.status().with_context("--mapping"));
  options.mapping = *mapping;
  auto gc = flashdir::format::parse_gc_policy(gc_name);
  if (!gc.is_ok()) return refuse(gc.status().with_context("--gc"));
  options.gc = *gc;
  if (op_percent) {
    if (!(*op_percent >= 0.0 && *op_percent <= max_op_percent)) {  // NaN too
      return refuse(flashdir::Status::invalid_argument(
          fmt::format("--op {}% is outside the accepted 0 to {}%", *op_percent, max_op_percent)));
    }
    options.overprovision_permille = static_cast<std::uint16_t>(*op_percent * 10.0 + 0.5);
  }
  if (!ram_text.empty()) {
    auto ram = flashdir::parse_size(ram_text);
    if (!ram.is_ok()) return refuse(ram.status().with_context("--ram"));
    options.ram_budget_bytes = *ram;
  }
  flashdir::RamOptions ram_options;
  const flashdir::Status ram_policy = flashdir::parse_ram_policy(ram_policy_text, ram_options);
  if (!ram_policy.is_ok()) return refuse(ram_policy.with_context("--ram-policy"));
  options.ram_policy = ram_options.policy;
  options.static_mapping_percent = ram_options.static_mapping_percent;

  // Everything mkfs and RocksDB create is private to the user, whatever the caller's umask.
  ::umask(077);
  auto formatted = flashdir::format_cache_dir(dir, options);
  if (!formatted.is_ok()) return refuse(formatted.status());
  for (const auto& warning : formatted->warnings) fmt::print(stderr, "{}: {}\n", kTool, warning);
  print_summary(dir, formatted->superblock, options.image_space);
  return 0;
}
