#include "file_size_limit.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>

namespace flashdir::testing {

FileSizeLimit::FileSizeLimit(rlim_t limit_bytes) {
  if (::getrlimit(RLIMIT_FSIZE, &old_limit_) != 0)
    throw std::runtime_error(std::string("getrlimit(RLIMIT_FSIZE): ") + std::strerror(errno));
  old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
  if (old_handler_ == SIG_ERR) throw std::runtime_error("cannot ignore SIGXFSZ");
  rlimit limit = old_limit_;
  limit.rlim_cur = limit_bytes;
  if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) {
    std::signal(SIGXFSZ, old_handler_);
    throw std::runtime_error(std::string("setrlimit(RLIMIT_FSIZE): ") + std::strerror(errno));
  }
}

FileSizeLimit::~FileSizeLimit() {
  // Restoring what the constructor read cannot fail (the soft limit goes back up to at most
  // the unchanged hard limit).
  static_cast<void>(::setrlimit(RLIMIT_FSIZE, &old_limit_));
  static_cast<void>(std::signal(SIGXFSZ, old_handler_));
}

}  // namespace flashdir::testing
