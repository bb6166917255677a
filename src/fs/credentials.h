// Runs a piece of the daemon's work as the FUSE caller: the calling thread's fsuid, fsgid and
// supplementary groups become the caller's for the guard's lifetime. Linux keeps these per
// thread (the raw syscalls are used: glibc's setgroups() would change every thread), so worker
// threads do not disturb each other. With a non-root fsuid the kernel also drops the thread's
// file-system capabilities (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_MKNOD), so
// the backing file system applies exactly the checks and side effects (setgid inheritance and
// clearing, sticky directories) it would apply to the caller.
// A daemon that is not root cannot switch; the guard then does nothing and objects belong to
// the daemon's user, as in any unprivileged FUSE file system.
#pragma once

#include <sys/types.h>

#include <vector>

namespace flashdir::fs {

struct Caller {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups
};

// The supplementary groups of thread `tid` (any process's), from /proc/TID/status; empty if
// the thread is gone. Used instead of libfuse's fuse_req_getgroups(), which in 3.14 searches
// its read buffer with strstr() without terminating it.
std::vector<gid_t> supplementary_groups_of(pid_t tid);

class CallerCredentials {
 public:
  // Returns an errno (EPERM) in `error` if a switch failed; the thread is then back to the
  // daemon's credentials and the operation must not run.
  CallerCredentials(const Caller& caller, int& error);
  ~CallerCredentials();
  CallerCredentials(const CallerCredentials&) = delete;
  CallerCredentials& operator=(const CallerCredentials&) = delete;

  // True when the daemon runs as root and therefore switches.
  static bool switching_enabled();

 private:
  void restore();
  bool switched_ = false;
};

}  // namespace flashdir::fs
