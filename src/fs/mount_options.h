// The daemon's mount options (`flashdir -o ...`, doc/daemon.md): parsed once, before anything
// is mounted, into one struct; an unknown or malformed option is refused with a message that
// quotes it. No libfuse here: the options are plain values, and the kernel's generic mount
// flags (rw, nosuid, ...) are only checked against a list and handed on.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashdir/ftl/options.h"
#include "flashdir/status.h"

namespace flashdir::fs {

enum class WriteMode { writethrough, writeback, writearound };
enum class MetadataSchemeChoice { lufuw, write_update, update_write_update };
// account: the chip's latency only advances its simulated clock; emulate: the daemon also
// sleeps for it, so a mount feels like the simulated device.
enum class NandLatencyMode { account, emulate };
// How the cache reads its backing files past a miss of 128 KiB (cache::BackingReads): buffered,
// through the store's page cache and its read-ahead; or direct (O_DIRECT), as one request of
// the store's largest size with no attribute check before it, which pays where the store's
// client revalidates attributes at every read (NFS's noac, a FUSE store with no attribute
// timeout) and loses its read-ahead elsewhere (doc/daemon.md "Backing round trips").
enum class BackingReadsChoice { buffered, direct };
// How the cache tells files apart (doc/daemon.md "File identity"): auto lets the backing decide
// (by path where its inode numbers are not stable: FUSE backings such as sshfs).
enum class IdentityChoice { automatic, inode, path };

// How soon a change made behind the mount is seen through it (doc/daemon.md "Consistency"):
// strict at the next system call; close-to-open (NFS's) at the next open for a file's data and
// within the attribute-cache bound for names and attributes; read_mostly the same with a bound
// of minutes, for trees that rarely change behind the mount.
enum class Consistency { strict, close_to_open, read_mostly };

const char* write_mode_name(WriteMode mode);
const char* metadata_scheme_name(MetadataSchemeChoice scheme);
const char* nand_latency_mode_name(NandLatencyMode mode);
const char* identity_choice_name(IdentityChoice choice);
const char* backing_reads_name(BackingReadsChoice choice);
const char* consistency_name(Consistency consistency);

// The size of a cache created on first use when no `cache=` names an existing one.
inline constexpr std::uint64_t kDefaultNewCacheBytes = 1ULL << 30;
// The free space the cache directory's file system keeps: below it the cache stops and the mount
// serves from the backing, so that the catalog never meets a full disk (doc/daemon.md).
inline constexpr std::uint64_t kDefaultMinFreeBytes = 16ULL << 20;
// The attribute-cache bounds when no actimeo= is given: NFS's acregmin and acregmax for
// close-to-open (the bound between them follows the file's age, kernel_cache_seconds below),
// and rclone's --dir-cache-time for a read-mostly tree.
inline constexpr double kCloseToOpenCacheSeconds = 3.0;
inline constexpr double kCloseToOpenMaxCacheSeconds = 60.0;
inline constexpr double kReadMostlyCacheSeconds = 300.0;
// The names the daemon's metadata cache keeps by default (about 250 bytes each in memory), and
// at most.
inline constexpr std::size_t kDefaultNameCacheEntries = 200'000;
inline constexpr std::size_t kMaxNameCacheEntries = 20'000'000;
// The longest actimeo= accepted (a day).
inline constexpr double kMaxCacheSeconds = 86400.0;
// The longest writeback_delay= accepted (an hour).
inline constexpr double kMaxWriteBackDelaySeconds = 3600.0;

struct MountOptions {
  std::optional<std::filesystem::path> cache_dir;         // cache=DIR
  std::uint64_t new_cache_bytes = kDefaultNewCacheBytes;  // size=SIZE (only for a new cache)
  bool new_cache_size_given = false;
  WriteMode write_mode = WriteMode::writethrough;          // mode=
  // writeback_delay=SECONDS (mode=writeback): a close returns once the data is durable in the
  // cache, and the backing file gets it at most this long after (cache::EngineOptions::
  // write_back_delay_ms). Unset: a close waits until the backing file holds it.
  std::optional<double> write_back_delay_seconds;
  std::optional<std::uint64_t> ram_bytes;                  // ram=SIZE (default: the cache's own)
  std::optional<RamOptions> ram_policy;                    // ram_policy=tree|stack|aps|static:P
  MetadataSchemeChoice metadata_scheme = MetadataSchemeChoice::lufuw;  // meta=
  std::optional<std::uint64_t> seq_cutoff_read_bytes;      // seq_cutoff_read=SIZE
  std::optional<std::uint64_t> seq_cutoff_write_bytes;     // seq_cutoff_write=SIZE
  std::uint64_t min_free_bytes = kDefaultMinFreeBytes;     // min_free=SIZE
  NandLatencyMode nand_latency = NandLatencyMode::account;  // nand_latency=
  IdentityChoice identity = IdentityChoice::automatic;      // identity=
  BackingReadsChoice backing_reads = BackingReadsChoice::buffered;  // backing_reads=
  Consistency consistency = Consistency::close_to_open;     // consistency=
  std::optional<double> cache_seconds;  // actimeo=SECONDS: the kernel's entry, attribute and negative timeouts
  std::size_t name_cache_entries = kDefaultNameCacheEntries;  // name_cache=N: the metadata cache's names (0: none)
  unsigned threads = 0;    // threads=N: most FUSE worker threads; 0 = libfuse's default (10)
  bool clone_fd = false;   // clone_fd: one /dev/fuse fd per worker thread
  bool allow_other = false;
  bool allow_root = false;  // allow_root: root may use the mount as well as its owner
  // The mount's source and type as mount(8) and /proc/mounts show them: fsname=NAME (default: the
  // backing directory) and subtype=NAME (the type is fuse.NAME; default flashdir).
  std::optional<std::string> fsname;
  std::optional<std::string> subtype;
  std::optional<std::uint64_t> max_read_bytes;  // max_read=SIZE: the largest read the kernel sends
  bool foreground = false;
  bool debug = false;      // libfuse's request log and the daemon's debug log; implies foreground
  // power_cut_control: MOUNT/.flashdir/power_cut, opened for writing, makes the chip lose power
  // at its next program, tearing that page (demos and tests of a restart; off by default).
  bool power_cut_control = false;
  // Generic mount flags (rw, ro, nosuid, nodev, noexec, sync, ...) handed to the kernel.
  std::vector<std::string> kernel_flags;
  // The atime flags, each set or cleared on its own by the options as mount(8) does; the
  // kernel then gives strictatime precedence over noatime, and relatime otherwise.
  bool noatime = false;      // noatime; atime clears it
  bool strictatime = false;  // strictatime
};

// writeback_delay= in whole milliseconds, as the engine takes it (0: a close waits).
std::uint32_t write_back_delay_ms(const MountOptions& options);

// How reads through the mount change a file's access time, from the atime flags.
enum class AtimeMode { relatime, noatime, strictatime };
AtimeMode atime_mode(const MountOptions& options);

// How long the kernel may answer from its own entry and attribute caches for an object whose
// attributes last changed `age_seconds` ago: 0 for strict; actimeo= when given; readmostly's
// 300 s; and for close-to-open a tenth of the age, from 3 to 60 s (the BSD and Solaris NFS
// clients' rule: a file that changed a minute ago is asked again after 6 s, one untouched for
// ten minutes after a minute). Missing names (no age) get the least.
double kernel_cache_seconds(const MountOptions& options, double age_seconds = 0.0);

// Parses the text of every -o argument in order ("cache=/c,mode=writeback"); a later value of
// an option replaces an earlier one, as with mount(8).
Result<MountOptions> parse_mount_options(const std::vector<std::string>& option_lists);

// One line per option with its effective value, for the start-up log.
std::string describe(const MountOptions& options);

}  // namespace flashdir::fs
