// flashdir: mounts a backing directory as a cached directory (the FUSE daemon), and reads a
// mount's statistics. doc/daemon.md has the options, the mount(8)/fstab forms and the rules.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "flashdir/command_line.h"
#include "fs/daemon.h"
#include "fs/mount_options.h"
#include "stats_command.h"

namespace {

constexpr const char* kTool = "flashdir";
constexpr int kExitUsage = 2;

constexpr const char* kOptionsHelp = R"(Mount options (-o, comma-separated, may repeat):
  cache=DIR              cache directory (default: ${XDG_CACHE_HOME:-~/.cache}/flashdir/NAME-HASH,
                         root's /var/cache/flashdir/NAME-HASH; one per backing directory, created
                         on first use; owned by you, nobody else able to write along its path)
  size=SIZE              size of a cache created by this mount (default 1G; K/M/G/T suffixes)
  mode=MODE              writethrough (default) | writeback | writearound
  writeback_delay=SECS   writeback: a close returns once the data is durable in the cache, and the
                         backing gets it within SECS (fractions allowed, up to 3600); another client
                         of the backing sees it that much later, and an error writing it back is
                         only logged. Default: a close waits until the backing holds the file
  ram=SIZE               device RAM of the simulated SSD (default: as the cache was made: size/16, 4M to 64M)
  ram_policy=P           tree | stack | aps | static:PERCENT (default: as the cache was made)
  meta=SCHEME            lufuw (default) | write-update | update-write-update
  seq_cutoff_read=SIZE   sequential read streams longer than this bypass the cache (0: never; default
                         0 over a network or FUSE store, 16M over a local file system)
  seq_cutoff_write=SIZE  the same for writes
  min_free=SIZE          free space kept on the cache directory's file system (default 16M): below it
                         the cache stops and the mount serves from the backing until space returns
  consistency=MODEL      when a change made behind the mount is seen: cto (default; NFS's close-to-open:
                         a file's data at its next open, names and attributes within 3 to 60 s, a
                         tenth of the time since they changed) | readmostly (data, names and
                         attributes within 300 s; a warm open asks the backing nothing) | strict
                         (at the next system call; the kernel caches nothing)
  actimeo=SECONDS        a fixed bound for names, attributes and missing names (fractions allowed)
  name_cache=N           names (with their attributes, or missing) the daemon itself remembers within
                         that bound, and directory listings counted by their names, kept in the
                         cache directory across restarts (default 200000, about 250 bytes each;
                         0: none; none under strict)
  backing_reads=HOW      buffered (default) | direct: a miss longer than 128 KiB reads the backing
                         with O_DIRECT, one large request with no attribute check before it; faster
                         where the store revalidates attributes at every read (NFS's noac)
  nand_latency=MODE      account (default: simulated time only) | emulate (sleep for it)
  threads=N              most FUSE worker threads (default: libfuse's, 10)
  clone_fd               one /dev/fuse descriptor per worker thread
  allow_other            let other users use the mount (root, or user_allow_other in /etc/fuse.conf)
  allow_root             let root use the mount as well as you (not with allow_other)
  fsname=NAME            the mount's source in mount(8) and /proc/mounts (default: BACKING)
  subtype=NAME           the mount's type is fuse.NAME (default flashdir)
  max_read=SIZE          the largest read the kernel sends (default: the kernel's)
  defaults, auto, noauto, user, nouser, users, owner, _netdev, nofail, x-*      fstab words, accepted
  foreground             stay in the foreground (log to stderr)
  debug                  log every request (implies foreground)
  power_cut_control      MOUNT/.flashdir/power_cut: opened for writing, the simulated chip loses
                         power at its next program, tearing that page (demos, tests; off by default)
  rw, ro, nosuid, nodev, noexec, sync, ...      generic mount flags, handed to the kernel
  noatime, atime, relatime, norelatime, strictatime (root only), lazytime, nolazytime
                         atime flags as with mount(8) (default relatime; lazytime: no effect)
)";

// A number above 0 (CLI11's own PositiveNumber quotes the largest double in its message).
std::string positive(std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value > 0)) return fmt::format("{} is not a number above 0", text);
  return {};
}

// `flashdir stats`: its options, on the subcommand `stats`.
void add_stats_options(CLI::App& stats, flashdir::stats::StatsCommand& command) {
  stats.add_option("MOUNT", command.mount, "A flashdir mount point")->required();
  auto* all = stats.add_flag("--all", command.all, "Print every counter (raw, in pages and nanoseconds)");
  auto* json = stats.add_flag("--json", command.json, "Print every counter as JSON");
  auto* interval = stats.add_option("--interval", command.interval_seconds,
                                    "Print the rates over each interval of SECONDS (like iostat), until interrupted")
                       ->type_name("SECONDS")
                       ->check(CLI::Validator(positive, "", "positive"));
  stats.add_option("--count", command.count, "With --interval: stop after COUNT lines")
      ->type_name("COUNT")
      ->check(CLI::Validator(positive, "", "positive"))
      ->needs(interval);
  auto* reset = stats.add_flag("--reset", command.reset,
                               "Zero the mount's counters for every reader (not the fill, dirty pages or restart report)");
  all->excludes(json, interval, reset);
  json->excludes(interval, reset);
  interval->excludes(reset);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"flashdir: mounts BACKING at MOUNTPOINT as a cached directory whose cache is a simulated NAND "
               "flash device.\nUsage: flashdir [-o OPTIONS] BACKING MOUNTPOINT | flashdir stats MOUNT [--all | --json | "
               "--interval SECONDS [--count N] | --reset]",
               kTool};
  app.footer(kOptionsHelp);
  app.set_version_flag("--version", fmt::format("flashdir {}", FLASHDIR_VERSION));
  std::vector<std::string> option_lists;
  std::string backing;
  std::string mountpoint;
  app.add_option("-o", option_lists, "Mount options (below)")->take_all()->allow_extra_args(false);
  app.add_option("BACKING", backing, "The directory to cache");
  app.add_option("MOUNTPOINT", mountpoint, "Where the cached directory appears");

  auto* stats = app.add_subcommand("stats", "Prints a mount's statistics: a summary in human units (hit ratio, bytes "
                                            "from the cache and the backing, fill, dirty, bypassed, write "
                                            "amplification, restart report), or every counter");
  flashdir::stats::StatsCommand stats_command;
  add_stats_options(*stats, stats_command);

  if (auto stop = flashdir::parse_command_line(app, argc, argv, kTool, kExitUsage)) return *stop;
  if (stats->parsed()) return flashdir::stats::run_stats_command(stats_command);
  if (backing.empty() || mountpoint.empty()) {
    fmt::print(stderr, "{}: need BACKING and MOUNTPOINT (see {} --help)\n", kTool, kTool);
    return kExitUsage;
  }
  auto options = flashdir::fs::parse_mount_options(option_lists);
  if (!options.is_ok()) {
    fmt::print(stderr, "{}: {}\n", kTool, options.status().message());
    return kExitUsage;
  }
  flashdir::fs::MountRequest request{backing, mountpoint, options.value(), argv[0]};
  return flashdir::fs::run_mount(request);
}
