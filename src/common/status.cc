#include "flashdir/status.h"

namespace flashdir {

// The errno rides in the padding after the code: carrying it costs nothing per Status.
static_assert(sizeof(Status) == sizeof(StatusCode) + sizeof(int) + sizeof(std::string));

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::ok: return "ok";
    case StatusCode::invalid_argument: return "invalid argument";
    case StatusCode::io_error: return "I/O error";
    case StatusCode::corruption: return "corruption";
    case StatusCode::no_space: return "no space";
    case StatusCode::not_found: return "not found";
    case StatusCode::already_exists: return "already exists";
    case StatusCode::power_lost: return "power lost";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (is_ok()) return *this;
  Status result(code_, context + ": " + message_);
  result.sys_errno_ = sys_errno_;
  return result;
}

Status Status::with_errno(int error) const {
  assert(!is_ok() && error > 0 && "only an error carries an errno");
  Status result = *this;
  result.sys_errno_ = error;
  return result;
}

}  // namespace flashdir
