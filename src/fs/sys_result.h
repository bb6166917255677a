// A value or an errno: what the daemon's pass-through code returns, so that the FUSE edge can
// answer with exactly the error the backing file system gave (flashdir::Status has only a few
// codes; the kernel needs ENOTEMPTY, EXDEV, ELOOP, ... as they are). The engine's errors reach
// it as a Status, whose errno errno_of uses where the backing file system gave one.
#pragma once

#include <cassert>
#include <cerrno>
#include <utility>
#include <variant>

#include "flashdir/status.h"

namespace flashdir::fs {

struct Errno {
  int value;  // > 0
};

// errno of the last failed call, as an Errno.
inline Errno last_errno() { return Errno{errno != 0 ? errno : EIO}; }

template <typename T>
class [[nodiscard]] SysResult {
 public:
  SysResult(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  SysResult(Errno error) : state_(error) { assert(error.value > 0); }  // NOLINT
  bool is_ok() const { return std::holds_alternative<T>(state_); }
  int error() const { return is_ok() ? 0 : std::get<Errno>(state_).value; }
  T& value() & {
    assert(is_ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(is_ok());
    return std::get<T>(std::move(state_));
  }
  T* operator->() { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Errno> state_;
};

// The errno a layer's Status means to a FUSE caller (the one place where codes become errno):
// the errno of the system call behind the error if there was one (the backing file system's
// exact answer: EDQUOT stays EDQUOT, EFBIG stays EFBIG), else the code's nearest errno.
inline int errno_of(const Status& status) {
  if (status.is_ok()) return 0;
  if (status.sys_errno() > 0) return status.sys_errno();
  switch (status.code()) {
    case StatusCode::ok: return 0;
    case StatusCode::invalid_argument: return EINVAL;
    case StatusCode::no_space: return ENOSPC;
    case StatusCode::not_found: return ENOENT;
    case StatusCode::already_exists: return EEXIST;
    case StatusCode::io_error:
    case StatusCode::corruption:
    case StatusCode::power_lost: return EIO;
  }
  return EIO;
}

}  // namespace flashdir::fs
