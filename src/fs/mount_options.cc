#include "fs/mount_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "flashdir/size.h"

namespace flashdir::fs {
namespace {

// Flags that libfuse's mount code understands and the mount(8) helper passes on; everything
// else that is not a flashdir option is refused, so that a typo cannot mount silently.
constexpr std::array<std::string_view, 11> kKernelFlags = {"rw",     "ro",     "suid", "nosuid", "dev",    "nodev",
                                                           "exec",   "noexec", "sync", "async",  "dirsync"};
// Accepted and without effect: they say when the kernel writes timestamps it changed in memory
// to its disk, and a FUSE mount without a kernel writeback cache writes none (the backing file
// system keeps them, with its own lazytime). libfuse 3.14 refuses them.
constexpr std::array<std::string_view, 2> kNoEffect = {"lazytime", "nolazytime"};
// Options that only mean something to mount(8) and fstab; mount.fuse3 drops most of them, and
// a line that still carries one must not fail.
constexpr std::array<std::string_view, 9> kFstabOnly = {"auto",    "noauto", "user",  "nouser",  "users",
                                                        "_netdev", "nofail", "owner", "defaults"};
// Options for other programs (systemd's x-systemd.*, and every x-* by mount(8)'s convention),
// with or without a value: mount(8) keeps them out of the kernel's way, and so does flashdir.
constexpr std::string_view kUserspacePrefix = "x-";

bool one_of(std::string_view name, auto const& list) {
  for (std::string_view candidate : list)
    if (candidate == name) return true;
  return false;
}

// The atime words as mount(8) reads them: each sets or clears one flag, whatever came before.
// relatime and norelatime set none: the kernel reads no relatime flag and mounts relatime
// unless noatime or strictatime is set (so noatime,relatime is noatime, as with mount(8)).
bool apply_atime_word(MountOptions& options, std::string_view name) {
  if (name == "noatime" || name == "atime") {
    options.noatime = name == "noatime";
  } else if (name == "strictatime" || name == "nostrictatime") {
    options.strictatime = name == "strictatime";
  } else if (name != "relatime" && name != "norelatime") {
    return false;
  }
  return true;
}

Status bad(std::string_view option, std::string_view why) {
  return Status::invalid_argument(fmt::format("option '{}': {}", option, why));
}

Status assign_size(std::string_view option, std::string_view value, bool zero_allowed, std::uint64_t& target) {
  auto bytes = parse_size(value);
  if (!bytes.is_ok()) return bad(option, bytes.status().message());
  if (*bytes == 0 && !zero_allowed) return bad(option, "must be greater than zero");
  target = *bytes;
  return Status::ok();
}

// Sets `target` to the enum value named by `value`, or refuses listing the names.
template <typename Enum, std::size_t N>
Status assign_choice(std::string_view option, std::string_view value,
                     const std::array<std::pair<std::string_view, Enum>, N>& names, Enum& target) {
  std::string known;
  for (const auto& [name, e] : names) {
    if (name == value) {
      target = e;
      return Status::ok();
    }
    known += known.empty() ? std::string(name) : fmt::format("|{}", name);
  }
  return bad(option, fmt::format("'{}' is not one of {}", value, known));
}

constexpr std::array<std::pair<std::string_view, WriteMode>, 3> kWriteModes = {{
    {"writethrough", WriteMode::writethrough}, {"writeback", WriteMode::writeback},
    {"writearound", WriteMode::writearound}}};
constexpr std::array<std::pair<std::string_view, MetadataSchemeChoice>, 3> kSchemes = {{
    {"lufuw", MetadataSchemeChoice::lufuw}, {"write-update", MetadataSchemeChoice::write_update},
    {"update-write-update", MetadataSchemeChoice::update_write_update}}};
constexpr std::array<std::pair<std::string_view, NandLatencyMode>, 2> kLatencyModes = {{
    {"account", NandLatencyMode::account}, {"emulate", NandLatencyMode::emulate}}};

constexpr std::array<std::pair<std::string_view, IdentityChoice>, 3> kIdentityChoices = {{
    {"auto", IdentityChoice::automatic}, {"inode", IdentityChoice::inode}, {"path", IdentityChoice::path}}};

constexpr std::array<std::pair<std::string_view, BackingReadsChoice>, 2> kBackingReads = {{
    {"buffered", BackingReadsChoice::buffered}, {"direct", BackingReadsChoice::direct}}};

constexpr std::array<std::pair<std::string_view, Consistency>, 3> kConsistencies = {{
    {"strict", Consistency::strict}, {"cto", Consistency::close_to_open}, {"readmostly", Consistency::read_mostly}}};

constexpr std::array<std::string_view, 20> kValuedOptions = {
    "cache",   "size",     "mode",     "ram",      "ram_policy", "meta",    "seq_cutoff_read", "seq_cutoff_write",
    "nand_latency", "threads", "identity", "min_free", "fsname", "subtype", "max_read", "consistency", "actimeo",
    "writeback_delay", "name_cache", "backing_reads"};

// Seconds as NFS's actimeo= takes them, fractions allowed: 0 to `most`.
Status assign_seconds(std::string_view option, std::string_view value, double most, std::optional<double>& target) {
  double seconds = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (error != std::errc{} || end != value.data() + value.size() || !(seconds >= 0 && seconds <= most))
    return bad(option, fmt::format("must be a number of seconds from 0 to {:g}", most));
  target = seconds;
  return Status::ok();
}

// A FUSE subtype as libfuse and mount(8) take it: the type becomes fuse.NAME.
bool valid_subtype(std::string_view name) {
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return !name.empty();
}

// The most worker threads a mount may ask for; libfuse's own ceiling for max_threads is far
// higher, but beyond this the daemon only adds contention on a small machine.
constexpr unsigned kMaxThreads = 256;

Status apply(MountOptions& options, std::string_view item) {
  const auto equals = item.find('=');
  const std::string_view name = item.substr(0, equals);
  const bool has_value = equals != std::string_view::npos;
  const std::string_view value = has_value ? item.substr(equals + 1) : std::string_view{};
  auto flag = [&](bool& target) -> Status {
    if (has_value) return bad(item, "takes no value");
    target = true;
    return Status::ok();
  };
  auto needs_value = [&]() -> Status {
    if (!has_value || value.empty()) return bad(item, "needs a value (name=value)");
    return Status::ok();
  };

  if (name.starts_with(kUserspacePrefix)) return Status::ok();
  if (name == "allow_other") return flag(options.allow_other);
  if (name == "allow_root") return flag(options.allow_root);
  if (name == "foreground") return flag(options.foreground);
  if (name == "debug") return flag(options.debug);
  if (name == "power_cut_control") return flag(options.power_cut_control);
  if (name == "clone_fd") return flag(options.clone_fd);
  if (!has_value && (one_of(name, kKernelFlags) || one_of(name, kFstabOnly) || one_of(name, kNoEffect))) {
    if (one_of(name, kKernelFlags)) options.kernel_flags.emplace_back(name);
    return Status::ok();
  }
  if (!has_value && apply_atime_word(options, name)) return Status::ok();
  if (name == "default_permissions") return Status::ok();  // always on; accepted for fstab lines

  if (one_of(name, kValuedOptions)) FLASHDIR_TRY(needs_value());
  if (name == "cache") {
    options.cache_dir = std::filesystem::path(value);
    return Status::ok();
  }
  if (name == "size") {
    options.new_cache_size_given = true;
    return assign_size(item, value, false, options.new_cache_bytes);
  }
  if (name == "ram") return assign_size(item, value, false, options.ram_bytes.emplace());
  if (name == "min_free") return assign_size(item, value, true, options.min_free_bytes);
  if (name == "max_read") {
    FLASHDIR_TRY(assign_size(item, value, false, options.max_read_bytes.emplace()));
    if (*options.max_read_bytes > UINT32_MAX) return bad(item, "must be below 4 GiB");
    return Status::ok();
  }
  if (name == "fsname") {
    options.fsname = std::string(value);
    return Status::ok();
  }
  if (name == "subtype") {
    if (!valid_subtype(value)) return bad(item, "must be letters, digits, '_', '-' or '.'");
    options.subtype = std::string(value);
    return Status::ok();
  }
  // 0 turns a cutoff off: every stream is admitted however long it runs.
  if (name == "seq_cutoff_read") return assign_size(item, value, true, options.seq_cutoff_read_bytes.emplace());
  if (name == "seq_cutoff_write") return assign_size(item, value, true, options.seq_cutoff_write_bytes.emplace());
  if (name == "ram_policy") {
    RamOptions ram;
    if (auto s = parse_ram_policy(value, ram); !s.is_ok()) return bad(item, s.message());
    options.ram_policy = ram;
    return Status::ok();
  }
  if (name == "mode") return assign_choice(item, value, kWriteModes, options.write_mode);
  if (name == "meta") return assign_choice(item, value, kSchemes, options.metadata_scheme);
  if (name == "nand_latency") return assign_choice(item, value, kLatencyModes, options.nand_latency);
  if (name == "identity") return assign_choice(item, value, kIdentityChoices, options.identity);
  if (name == "backing_reads") return assign_choice(item, value, kBackingReads, options.backing_reads);
  if (name == "consistency") return assign_choice(item, value, kConsistencies, options.consistency);
  if (name == "actimeo") return assign_seconds(item, value, kMaxCacheSeconds, options.cache_seconds);
  if (name == "writeback_delay")
    return assign_seconds(item, value, kMaxWriteBackDelaySeconds, options.write_back_delay_seconds);
  if (name == "name_cache") {
    std::size_t entries = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), entries);
    if (error != std::errc{} || end != value.data() + value.size() || entries > kMaxNameCacheEntries)
      return bad(item, fmt::format("must be a whole number from 0 to {}", kMaxNameCacheEntries));
    options.name_cache_entries = entries;
    return Status::ok();
  }
  if (name == "threads") {
    unsigned threads = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), threads);
    if (error != std::errc{} || end != value.data() + value.size() || threads == 0 || threads > kMaxThreads)
      return bad(item, fmt::format("must be a whole number from 1 to {}", kMaxThreads));
    options.threads = threads;
    return Status::ok();
  }
  return bad(item, "unknown option (see flashdir --help)");
}

}  // namespace

const char* write_mode_name(WriteMode mode) {
  for (const auto& [name, e] : kWriteModes)
    if (e == mode) return name.data();
  return "?";
}
const char* metadata_scheme_name(MetadataSchemeChoice scheme) {
  for (const auto& [name, e] : kSchemes)
    if (e == scheme) return name.data();
  return "?";
}
const char* nand_latency_mode_name(NandLatencyMode mode) {
  for (const auto& [name, e] : kLatencyModes)
    if (e == mode) return name.data();
  return "?";
}

const char* identity_choice_name(IdentityChoice choice) {
  for (const auto& [name, e] : kIdentityChoices)
    if (e == choice) return name.data();
  return "?";
}

const char* backing_reads_name(BackingReadsChoice choice) {
  for (const auto& [name, e] : kBackingReads)
    if (e == choice) return name.data();
  return "?";
}

const char* consistency_name(Consistency consistency) {
  for (const auto& [name, e] : kConsistencies)
    if (e == consistency) return name.data();
  return "?";
}

double kernel_cache_seconds(const MountOptions& options, double age_seconds) {
  switch (options.consistency) {
    case Consistency::strict:
      return 0.0;
    case Consistency::close_to_open:
      if (options.cache_seconds) return *options.cache_seconds;
      return std::clamp(age_seconds / 10, kCloseToOpenCacheSeconds, kCloseToOpenMaxCacheSeconds);
    case Consistency::read_mostly:
      return options.cache_seconds.value_or(kReadMostlyCacheSeconds);
  }
  return 0.0;
}

std::uint32_t write_back_delay_ms(const MountOptions& options) {
  return static_cast<std::uint32_t>(std::lround(options.write_back_delay_seconds.value_or(0) * 1000));
}

AtimeMode atime_mode(const MountOptions& options) {
  if (options.strictatime) return AtimeMode::strictatime;
  return options.noatime ? AtimeMode::noatime : AtimeMode::relatime;
}

Result<MountOptions> parse_mount_options(const std::vector<std::string>& option_lists) {
  MountOptions options;
  for (const std::string& list : option_lists) {
    std::string_view rest = list;
    while (true) {
      const auto comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      if (item.empty()) return Status::invalid_argument(fmt::format("empty option in '-o {}'", list));
      FLASHDIR_TRY(apply(options, item));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  if (options.debug) options.foreground = true;
  if (options.allow_other && options.allow_root)
    return Status::invalid_argument("options 'allow_other' and 'allow_root' exclude each other (allow_other lets root in too)");
  if (options.consistency == Consistency::strict && options.cache_seconds)
    return Status::invalid_argument("option 'actimeo' needs consistency=cto or readmostly (strict caches nothing in the kernel)");
  if (options.write_back_delay_seconds && options.write_mode != WriteMode::writeback)
    return Status::invalid_argument("option 'writeback_delay' needs mode=writeback (only write-back holds data a close could leave behind)");
  return options;
}

std::string describe(const MountOptions& o) {
  auto or_default = [](const std::optional<std::uint64_t>& bytes, const char* otherwise) {
    return bytes ? format_size(*bytes) : std::string(otherwise);
  };
  std::string text;
  text += fmt::format("  cache             {}\n", o.cache_dir ? o.cache_dir->string() : "(default location)");
  text += fmt::format("  size              {} (for a new cache)\n", format_size(o.new_cache_bytes));
  text += fmt::format("  mode              {}\n", write_mode_name(o.write_mode));
  text += fmt::format("  ram               {}\n", or_default(o.ram_bytes, "as formatted"));
  text += fmt::format("  ram_policy        {}\n", o.ram_policy ? ram_policy_label(*o.ram_policy) : "as formatted");
  text += fmt::format("  meta              {}\n", metadata_scheme_name(o.metadata_scheme));
  text += fmt::format("  seq_cutoff_read   {}\n", or_default(o.seq_cutoff_read_bytes, "by backing (0 remote, 16M local)"));
  text += fmt::format("  seq_cutoff_write  {}\n", or_default(o.seq_cutoff_write_bytes, "by backing (0 remote, 16M local)"));
  if (o.write_mode == WriteMode::writeback)
    text += write_back_delay_ms(o) != 0
                ? fmt::format("  writeback_delay   {:g} s (a close does not wait for the backing)\n", *o.write_back_delay_seconds)
                : std::string("  writeback_delay   none (a close waits until the backing holds the file)\n");
  text += fmt::format("  min_free          {}\n", format_size(o.min_free_bytes));
  text += fmt::format("  nand_latency      {}\n", nand_latency_mode_name(o.nand_latency));
  text += fmt::format("  identity          {}\n", identity_choice_name(o.identity));
  text += fmt::format("  backing_reads     {}\n", backing_reads_name(o.backing_reads));
  const double least = kernel_cache_seconds(o), most = kernel_cache_seconds(o, 10 * kMaxCacheSeconds);
  text += least == most ? fmt::format("  consistency       {} (kernel caches {:g} s)\n", consistency_name(o.consistency), least)
                        : fmt::format("  consistency       {} (kernel caches {:g} to {:g} s by age)\n",
                                      consistency_name(o.consistency), least, most);
  text += o.consistency == Consistency::strict || o.name_cache_entries == 0
              ? std::string("  name_cache        none\n")
              : fmt::format("  name_cache        {} names, kept across restarts\n", o.name_cache_entries);
  text += fmt::format("  threads           {}{}\n", o.threads == 0 ? std::string("libfuse default") : std::to_string(o.threads),
                      o.clone_fd ? ", clone_fd" : "");
  text += fmt::format("  allow_other       {}\n", o.allow_other ? "yes" : "no");
  constexpr std::array<const char*, 3> kAtimeNames = {"relatime", "noatime", "strictatime"};  // AtimeMode's order
  text += fmt::format("  atime             {}\n", kAtimeNames[static_cast<std::size_t>(atime_mode(o))]);
  return text;
}

}  // namespace flashdir::fs
