// slowstore: a passthrough FUSE file system that makes its backing directory as slow as a
// network store, to measure flashdir against one (bench/slowstore/run.sh, issue 19). Every call
// the kernel makes waits a round trip before it reaches the backing (latency_us, 1 ms by
// default, an NFS call on a LAN), reads and writes also wait for their bytes on a line of
// bandwidth_mbps; the kernel caches nothing by default (entry, attribute and negative timeouts
// 0; the page cache dropped at each open), so the latency is never hidden.
//
//   slowstore BACKING MOUNTPOINT [-f] [-o latency_us=N,bandwidth_mbps=N,counts=FILE,whole_seconds,
//                                     attr_timeout=S,entry_timeout=S,negative_timeout=S,...]
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "store.h"

namespace {

// Filled by fuse_opt_parse, which allocates the strings.
struct Settings {
  char* backing = nullptr;
  unsigned latency_us = 1000;
  unsigned bandwidth_mbps = 0;
  char* counts = nullptr;
  int whole_seconds = 0;
  int help = 0;

  ~Settings() {
    std::free(backing);
    std::free(counts);
  }
};

// The arguments libfuse parses, freed on every way out of main.
struct Arguments {
  fuse_args args;
  ~Arguments() { fuse_opt_free_args(&args); }
};

const fuse_opt kSpec[] = {
    {"latency_us=%u", offsetof(Settings, latency_us), 0},
    {"bandwidth_mbps=%u", offsetof(Settings, bandwidth_mbps), 0},
    {"counts=%s", offsetof(Settings, counts), 0},
    {"whole_seconds", offsetof(Settings, whole_seconds), 1},
    {"-h", offsetof(Settings, help), 1},
    {"--help", offsetof(Settings, help), 1},
    FUSE_OPT_END,
};

// Defaults put before the user's options, which override them (fuse_opt: the last one wins).
// default_permissions: the kernel checks modes, since the daemon runs every call as itself.
constexpr const char* kDefaults = "-odefault_permissions,entry_timeout=0,attr_timeout=0,negative_timeout=0";

// The first word that is not an option is the backing directory; the second, the mount point,
// stays for libfuse.
int take_backing(void* data, const char* arg, int key, fuse_args*) {
  auto& settings = *static_cast<Settings*>(data);
  if (key == FUSE_OPT_KEY_NONOPT && settings.backing == nullptr) {
    settings.backing = ::strdup(arg);
    return 0;
  }
  return 1;
}

void print_usage(const char* program) {
  std::printf(
      "usage: %s BACKING MOUNTPOINT [options]\n"
      "A passthrough of BACKING that makes every call as slow as a network store's.\n\n"
      "    -o latency_us=N        round trip each call waits (default 1000)\n"
      "    -o bandwidth_mbps=N    read and write payload share a line of N Mbit/s (default 0: no limit)\n"
      "    -o counts=FILE         at unmount and at each SIGUSR1, write the calls made so far per kind\n"
      "                           as JSON to FILE\n"
      "    -o whole_seconds       report times in whole seconds, as an SFTP store (sshfs) does\n"
      "    -o attr_timeout=S, entry_timeout=S, negative_timeout=S\n"
      "                           how long the kernel keeps attributes and names (default 0: it asks each time)\n\n",
      program);
}

}  // namespace

int main(int argc, char* argv[]) {
  Arguments arguments{FUSE_ARGS_INIT(argc, argv)};
  fuse_args& args = arguments.args;
  Settings settings;
  if (fuse_opt_parse(&args, &settings, kSpec, take_backing) != 0) return 1;
  if (settings.help != 0) {
    print_usage(argv[0]);
    fuse_opt_add_arg(&args, "--help");
    args.argv[0][0] = '\0';  // libfuse's help then lists its options without a second usage line
    const fuse_operations ops = slowstore::passthrough_operations();
    return fuse_main(args.argc, args.argv, &ops, nullptr);
  }
  if (settings.backing == nullptr) {
    print_usage(argv[0]);
    return 1;
  }
  slowstore::Store store{.root_fd = ::open(settings.backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC),
                         .latency = slowstore::Latency(std::chrono::microseconds(settings.latency_us),
                                                       settings.bandwidth_mbps * 1e6),
                         .counts = {},
                         .counts_path = settings.counts != nullptr ? settings.counts : "",
                         .whole_seconds = settings.whole_seconds != 0};
  if (store.root_fd < 0) {
    std::fprintf(stderr, "slowstore: %s: %s\n", settings.backing, std::strerror(errno));
    return 1;
  }
  fuse_opt_insert_arg(&args, 1, kDefaults);
  slowstore::write_counts_on_sigusr1(store);
  const fuse_operations ops = slowstore::passthrough_operations();
  return fuse_main(args.argc, args.argv, &ops, &store);
}
