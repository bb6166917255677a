#include "flashdir/status.h"

namespace flashdir {

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
  return {code_, context + ": " + message_};
}

}  // namespace flashdir
