// Errors as values. Every fallible call in flashdir returns a Status or a Result<T>; nothing
// throws across a layer boundary. The codes are few on purpose: each one asks the caller for a
// different reaction (retry, report corruption, stop after a power cut, ...). Translation to
// errno happens in one place, at the FUSE edge. An error that a system call reported also
// carries that call's errno (with_errno), so that the FUSE edge can answer with exactly the
// backing file system's error (EDQUOT, EFBIG, EOPNOTSUPP, ...) where the code alone would say
// less.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace flashdir {

enum class StatusCode {
  ok,
  invalid_argument,  // the caller broke a precondition that it could have checked
  io_error,          // the host's I/O failed (pread, fdatasync, RocksDB, ...)
  corruption,        // stored bytes fail a checksum or a structural check
  no_space,          // the device or a bounded structure is full
  not_found,
  already_exists,
  power_lost,        // the simulated chip lost power; every later operation fails too
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  static Status invalid_argument(std::string m) { return {StatusCode::invalid_argument, std::move(m)}; }
  static Status io_error(std::string m) { return {StatusCode::io_error, std::move(m)}; }
  static Status corruption(std::string m) { return {StatusCode::corruption, std::move(m)}; }
  static Status no_space(std::string m) { return {StatusCode::no_space, std::move(m)}; }
  static Status not_found(std::string m) { return {StatusCode::not_found, std::move(m)}; }
  static Status already_exists(std::string m) { return {StatusCode::already_exists, std::move(m)}; }
  static Status power_lost(std::string m) { return {StatusCode::power_lost, std::move(m)}; }

  bool is_ok() const { return code_ == StatusCode::ok; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "corruption: superblock checksum mismatch"
  std::string to_string() const;

  // Prefixes context to the message, keeping the code and the errno: "opening image: <message>".
  Status with_context(const std::string& context) const;

  // The same error, remembering that system call errno `error` (> 0) caused it. Callers still
  // react to code(); sys_errno() is for telling a caller outside flashdir what happened.
  Status with_errno(int error) const;
  // The errno of the system call behind this error; 0 if none (or ok).
  int sys_errno() const { return sys_errno_; }

 private:
  StatusCode code_ = StatusCode::ok;
  int sys_errno_ = 0;  // fills the padding after code_: a Status stays an enum and a string
  std::string message_;
};

// A value or the Status that explains its absence.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(state_).is_ok() && "a Result built from a Status must be an error");
  }

  bool is_ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status ok_status;
    return is_ok() ? ok_status : std::get<Status>(state_);
  }
  T& value() & {
    assert(is_ok());
    return std::get<T>(state_);
  }
  const T& value() const& {
    assert(is_ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(is_ok());
    return std::get<T>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> state_;
};

// Early return of a failed Status from a function that returns Status or Result<T>.
#define FLASHDIR_TRY(expr)                       \
  do {                                           \
    ::flashdir::Status flashdir_try_s_ = (expr); \
    if (!flashdir_try_s_.is_ok()) return flashdir_try_s_; \
  } while (0)

}  // namespace flashdir
