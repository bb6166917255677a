#include "catalog/rocksdb_log.h"

#include <cstdarg>
#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace flashdir::catalog {
namespace {

class SpdlogLogger final : public rocksdb::Logger {
 public:
  explicit SpdlogLogger(std::string database)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), database_(std::move(database)) {}

  using rocksdb::Logger::Logv;
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel()) return;
    char message[1024];
    const int length = std::vsnprintf(message, sizeof message, format, ap);  // a longer one is cut short
    std::string_view text(message, length < 0 ? 0 : std::min<std::size_t>(length, sizeof message - 1));
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    spdlog::log(level >= rocksdb::InfoLogLevel::ERROR_LEVEL ? spdlog::level::err : spdlog::level::warn,
                "{} (RocksDB): {}", database_, text);
  }

 protected:
  // Nothing to close: the sinks belong to spdlog.
  rocksdb::Status CloseImpl() override { return rocksdb::Status::OK(); }

 private:
  const std::string database_;
};

}  // namespace

std::shared_ptr<rocksdb::Logger> rocksdb_log(std::string database) {
  return std::make_shared<SpdlogLogger>(std::move(database));
}

}  // namespace flashdir::catalog
