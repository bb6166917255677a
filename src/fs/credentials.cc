#include "fs/credentials.h"

#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace flashdir::fs {
namespace {

// The per-thread calls. setfsuid/setfsgid report the previous value, not an error; asking
// again with -1 (never a valid id) returns the current one, which tells whether it took.
bool set_fsuid(uid_t uid) {
  ::syscall(SYS_setfsuid, uid);
  return static_cast<uid_t>(::syscall(SYS_setfsuid, static_cast<uid_t>(-1))) == uid;
}
bool set_fsgid(gid_t gid) {
  ::syscall(SYS_setfsgid, gid);
  return static_cast<gid_t>(::syscall(SYS_setfsgid, static_cast<gid_t>(-1))) == gid;
}
bool set_thread_groups(const std::vector<gid_t>& groups) {
  return ::syscall(SYS_setgroups, groups.size(), groups.empty() ? nullptr : groups.data()) == 0;
}

// The daemon's own supplementary groups, read once before any thread switches.
const std::vector<gid_t>& daemon_groups() {
  static const std::vector<gid_t> groups = [] {
    std::vector<gid_t> list(static_cast<size_t>(std::max(0, ::getgroups(0, nullptr))));
    const int n = ::getgroups(static_cast<int>(list.size()), list.data());
    list.resize(static_cast<size_t>(std::max(0, n)));
    return list;
  }();
  return groups;
}

}  // namespace

std::vector<gid_t> supplementary_groups_of(pid_t tid) {
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Groups:", 0) != 0) continue;
    std::istringstream fields(line.substr(7));
    std::vector<gid_t> groups;
    for (gid_t gid; fields >> gid;) groups.push_back(gid);
    return groups;
  }
  return {};
}

bool CallerCredentials::switching_enabled() {
  static const bool enabled = ::geteuid() == 0 && ::getegid() == 0 && (daemon_groups(), true);
  return enabled;
}

CallerCredentials::CallerCredentials(const Caller& caller, int& error) {
  error = 0;
  if (!switching_enabled()) return;
  switched_ = true;
  // Groups and gid first: once fsuid is not root the thread could still set them (CAP_SETGID
  // stays), but the order keeps the window in which the thread is half-switched inside
  // privileged ids.
  if (!set_thread_groups(caller.groups) || !set_fsgid(caller.gid) || !set_fsuid(caller.uid)) {
    error = EPERM;
    restore();
  }
}

CallerCredentials::~CallerCredentials() {
  if (switched_) restore();
}

void CallerCredentials::restore() {
  // A thread that cannot get back to the daemon's ids would do the next caller's work with the
  // wrong ones, which is worse than stopping.
  if (!set_fsuid(0) || !set_fsgid(0) || !set_thread_groups(daemon_groups())) std::abort();
  switched_ = false;
}

}  // namespace flashdir::fs
