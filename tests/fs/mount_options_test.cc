// The daemon's -o options: every option of the issue parsed, anything else refused with a
// message that quotes it.
#include <catch2/catch.hpp>

#include "fs/mount_options.h"

using namespace flashdir;
using namespace flashdir::fs;

namespace {

MountOptions parsed(std::vector<std::string> lists) {
  auto options = parse_mount_options(lists);
  INFO(options.status().message());
  REQUIRE(options.is_ok());
  return options.value();
}

std::string refusal(std::vector<std::string> lists) {
  auto options = parse_mount_options(lists);
  REQUIRE_FALSE(options.is_ok());
  CHECK(options.status().code() == StatusCode::invalid_argument);
  return options.status().message();
}

}  // namespace

TEST_CASE("defaults when no option is given") {
  const MountOptions o = parsed({});
  CHECK_FALSE(o.cache_dir.has_value());
  CHECK(o.new_cache_bytes == kDefaultNewCacheBytes);
  CHECK(o.write_mode == WriteMode::writethrough);
  CHECK(o.metadata_scheme == MetadataSchemeChoice::lufuw);
  CHECK(o.nand_latency == NandLatencyMode::account);
  CHECK(o.threads == 0);
  CHECK(o.name_cache_entries == kDefaultNameCacheEntries);
  CHECK_FALSE(o.allow_other);
  CHECK_FALSE(o.foreground);
}

TEST_CASE("name_cache takes a count of names, 0 for none") {
  CHECK(parsed({"name_cache=0"}).name_cache_entries == 0);
  CHECK(parsed({"name_cache=5000"}).name_cache_entries == 5000);
  CHECK(refusal({"name_cache=-1"}).find("0 to") != std::string::npos);
  CHECK(refusal({"name_cache=1k"}).find("0 to") != std::string::npos);
  CHECK(refusal({"name_cache=99999999999"}).find("0 to") != std::string::npos);
  CHECK(describe(parsed({"name_cache=7"})).find("name_cache        7 names") != std::string::npos);
  CHECK(describe(parsed({"consistency=strict"})).find("name_cache        none") != std::string::npos);
}

TEST_CASE("backing_reads takes buffered or direct, buffered by default") {
  CHECK(parsed({}).backing_reads == BackingReadsChoice::buffered);
  CHECK(parsed({"backing_reads=direct"}).backing_reads == BackingReadsChoice::direct);
  CHECK(parsed({"backing_reads=direct,backing_reads=buffered"}).backing_reads == BackingReadsChoice::buffered);
  CHECK(refusal({"backing_reads=odirect"}).find("buffered|direct") != std::string::npos);
  CHECK(describe(parsed({"backing_reads=direct"})).find("backing_reads     direct") != std::string::npos);
}

TEST_CASE("every option of the issue is understood") {
  const MountOptions o = parsed({"cache=/var/c,size=2G,mode=writeback,ram=32M,ram_policy=static:30",
                                 "meta=update-write-update,seq_cutoff_read=4M,seq_cutoff_write=0",
                                 "nand_latency=emulate,threads=4,clone_fd,allow_other,debug"});
  CHECK(o.cache_dir == std::filesystem::path("/var/c"));
  CHECK(o.new_cache_bytes == (2ULL << 30));
  CHECK(o.new_cache_size_given);
  CHECK(o.write_mode == WriteMode::writeback);
  CHECK(o.ram_bytes == (32ULL << 20));
  REQUIRE(o.ram_policy.has_value());
  CHECK(o.ram_policy->policy == format::RamPolicy::static_split);
  CHECK(o.ram_policy->static_mapping_percent == 30);
  CHECK(o.metadata_scheme == MetadataSchemeChoice::update_write_update);
  CHECK(o.seq_cutoff_read_bytes == (4ULL << 20));
  CHECK(o.seq_cutoff_write_bytes == 0);
  CHECK(o.nand_latency == NandLatencyMode::emulate);
  CHECK(o.threads == 4);
  CHECK(o.clone_fd);
  CHECK(o.allow_other);
  CHECK(o.debug);
  CHECK(o.foreground);  // debug implies foreground
  CHECK(describe(o).find("writeback") != std::string::npos);
}

TEST_CASE("a later value replaces an earlier one, as with mount(8)") {
  const MountOptions o = parsed({"mode=writeback", "mode=writearound,meta=write-update"});
  CHECK(o.write_mode == WriteMode::writearound);
  CHECK(o.metadata_scheme == MetadataSchemeChoice::write_update);
}

TEST_CASE("generic mount flags go to the kernel; fstab-only words are accepted") {
  const MountOptions o = parsed({"rw,nosuid,nodev,noatime,_netdev,nofail,default_permissions"});
  CHECK(o.kernel_flags == std::vector<std::string>{"rw", "nosuid", "nodev"});
  CHECK(atime_mode(o) == AtimeMode::noatime);
}

TEST_CASE("the options of mount(8), fstab and FUSE users are understood or accepted") {
  const MountOptions o = parsed({"fsname=server:/export,subtype=slow.cache,max_read=128K,allow_root",
                                 "defaults,owner,_netdev,x-systemd.automount,x-systemd.idle-timeout=60,x-any"});
  CHECK(o.fsname == std::string("server:/export"));
  CHECK(o.subtype == std::string("slow.cache"));
  CHECK(o.max_read_bytes == (128U << 10));
  CHECK(o.allow_root);
  CHECK(o.kernel_flags.empty());
  CHECK(refusal({"allow_other,allow_root"}).find("exclude each other") != std::string::npos);
  CHECK(refusal({"subtype=a/b"}).find("'subtype=a/b'") != std::string::npos);
  CHECK(refusal({"max_read=0"}).find("greater than zero") != std::string::npos);
  CHECK(refusal({"max_read=8G"}).find("below 4 GiB") != std::string::npos);
  CHECK(refusal({"fsname="}).find("needs a value") != std::string::npos);
}

TEST_CASE("each atime word sets or clears its own flag, as mount(8) reads them") {
  CHECK(atime_mode(parsed({})) == AtimeMode::relatime);
  CHECK(atime_mode(parsed({"relatime"})) == AtimeMode::relatime);
  CHECK(atime_mode(parsed({"norelatime"})) == AtimeMode::relatime);
  CHECK(atime_mode(parsed({"noatime,relatime"})) == AtimeMode::noatime);  // mount(8) on tmpfs: noatime
  CHECK(atime_mode(parsed({"noatime", "atime"})) == AtimeMode::relatime);
  CHECK(atime_mode(parsed({"strictatime,noatime"})) == AtimeMode::strictatime);
  CHECK(atime_mode(parsed({"noatime,strictatime,nostrictatime"})) == AtimeMode::noatime);
  const MountOptions lazy = parsed({"lazytime,nolazytime"});  // accepted, without effect
  CHECK(lazy.kernel_flags.empty());
  CHECK(atime_mode(lazy) == AtimeMode::relatime);
}

TEST_CASE("unknown and malformed options are refused with the option quoted") {
  CHECK(refusal({"bogus"}).find("'bogus'") != std::string::npos);
  CHECK(refusal({"mode=fast"}).find("writethrough|writeback|writearound") != std::string::npos);
  CHECK(refusal({"meta=lufu"}).find("'meta=lufu'") != std::string::npos);
  CHECK(refusal({"nand_latency=real"}).find("account|emulate") != std::string::npos);
  CHECK(refusal({"size=0"}).find("greater than zero") != std::string::npos);
  CHECK(refusal({"size=1X"}).find("'size=1X'") != std::string::npos);
  CHECK(refusal({"ram=-1"}).find("'ram=-1'") != std::string::npos);
  CHECK(refusal({"ram_policy=lru"}).find("'ram_policy=lru'") != std::string::npos);
  CHECK(refusal({"threads=0"}).find("1 to") != std::string::npos);
  CHECK(refusal({"threads=4x"}).find("1 to") != std::string::npos);
  CHECK(refusal({"threads=100000"}).find("1 to") != std::string::npos);
  CHECK(refusal({"cache="}).find("needs a value") != std::string::npos);
  CHECK(refusal({"mode"}).find("needs a value") != std::string::npos);
  CHECK(refusal({"allow_other=yes"}).find("takes no value") != std::string::npos);
  CHECK(refusal({"rw=1"}).find("'rw=1'") != std::string::npos);
  CHECK(refusal({"mode=writeback,,debug"}).find("empty option") != std::string::npos);
  CHECK(refusal({""}).find("empty option") != std::string::npos);
}

TEST_CASE("the consistency model and its kernel cache bound") {
  CHECK(parsed({}).consistency == Consistency::close_to_open);
  CHECK(kernel_cache_seconds(parsed({})) == kCloseToOpenCacheSeconds);
  CHECK(kernel_cache_seconds(parsed({"consistency=strict"})) == 0.0);
  CHECK(kernel_cache_seconds(parsed({"consistency=readmostly"})) == kReadMostlyCacheSeconds);
  CHECK(kernel_cache_seconds(parsed({"consistency=readmostly,actimeo=30"})) == 30.0);
  CHECK(kernel_cache_seconds(parsed({"actimeo=0.5"})) == 0.5);
  CHECK(kernel_cache_seconds(parsed({"actimeo=0"})) == 0.0);
  // close-to-open without actimeo=: a tenth of the time since the file changed, from 3 to 60 s.
  CHECK(kernel_cache_seconds(parsed({}), 5) == kCloseToOpenCacheSeconds);
  CHECK(kernel_cache_seconds(parsed({}), 100) == 10.0);
  CHECK(kernel_cache_seconds(parsed({}), 1e6) == kCloseToOpenMaxCacheSeconds);
  CHECK(kernel_cache_seconds(parsed({"actimeo=5"}), 1e6) == 5.0);
  CHECK(kernel_cache_seconds(parsed({"consistency=readmostly"}), 0) == kReadMostlyCacheSeconds);
  CHECK(kernel_cache_seconds(parsed({"consistency=strict"}), 1e6) == 0.0);
  CHECK(describe(parsed({})).find("3 to 60 s") != std::string::npos);
  CHECK(describe(parsed({"consistency=readmostly"})).find("readmostly") != std::string::npos);
  CHECK(refusal({"consistency=nfs"}).find("strict|cto|readmostly") != std::string::npos);
  CHECK(refusal({"actimeo=-1"}).find("seconds") != std::string::npos);
  CHECK(refusal({"actimeo=1s"}).find("seconds") != std::string::npos);
  CHECK(refusal({"actimeo=100000"}).find("seconds") != std::string::npos);
  CHECK(refusal({"consistency=strict,actimeo=3"}).find("actimeo") != std::string::npos);
}

TEST_CASE("writeback_delay: seconds after a close, write-back only") {
  CHECK_FALSE(parsed({"mode=writeback"}).write_back_delay_seconds.has_value());
  CHECK(parsed({"mode=writeback,writeback_delay=5"}).write_back_delay_seconds == 5.0);
  CHECK(parsed({"mode=writeback,writeback_delay=0.25"}).write_back_delay_seconds == 0.25);
  CHECK(describe(parsed({"mode=writeback,writeback_delay=5"})).find("writeback_delay   5 s") != std::string::npos);
  CHECK(describe(parsed({"mode=writeback"})).find("a close waits") != std::string::npos);
  CHECK(write_back_delay_ms(parsed({"mode=writeback,writeback_delay=0.25"})) == 250);
  CHECK(write_back_delay_ms(parsed({"mode=writeback,writeback_delay=0.0004"})) == 0);
  CHECK(write_back_delay_ms(parsed({"mode=writeback"})) == 0);
  // Below a millisecond the engine has no delay: the banner says so.
  CHECK(describe(parsed({"mode=writeback,writeback_delay=0"})).find("a close waits") != std::string::npos);
  CHECK(refusal({"writeback_delay=5"}).find("needs mode=writeback") != std::string::npos);
  CHECK(refusal({"mode=writethrough,writeback_delay=5"}).find("needs mode=writeback") != std::string::npos);
  CHECK(refusal({"mode=writeback,writeback_delay=5s"}).find("seconds from 0 to 3600") != std::string::npos);
  CHECK(refusal({"mode=writeback,writeback_delay=3601"}).find("seconds from 0 to 3600") != std::string::npos);
}
