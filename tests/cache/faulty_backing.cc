#include "faulty_backing.h"

#include <fmt/format.h>

#include <cstring>
#include <thread>

namespace flashdir::testing {
namespace {

Status injected(int error, const char* what) {
  return Status::io_error(fmt::format("{} (injected): {}", what, std::strerror(error))).with_errno(error);
}

class FaultyBackingFile final : public cache::BackingFile {
 public:
  FaultyBackingFile(std::unique_ptr<cache::BackingFile> real, std::shared_ptr<BackingFaults> faults)
      : real_(std::move(real)), faults_(std::move(faults)) {}

  Result<std::size_t> read(std::uint64_t offset, ByteSpan out) override {
    ++faults_->reads;
    if (const auto us = faults_->read_latency_us.load(); us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
    return real_->read(offset, out);
  }
  Status write(std::uint64_t offset, ConstByteSpan data) override {
    ++faults_->writes;
    if (const auto us = faults_->write_latency_us.load(); us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
    if (const int error = faults_->write_errno.load(); error != 0) return injected(error, "writing");
    return real_->write(offset, data);
  }
  Status truncate(std::uint64_t size_bytes) override { return real_->truncate(size_bytes); }
  Status allocate(int mode, std::uint64_t offset, std::uint64_t length) override {
    return real_->allocate(mode, offset, length);
  }
  Status sync() override {
    ++faults_->syncs;
    return real_->sync();
  }
  Result<BackingAttributes> stat() override {
    ++faults_->stats;
    return real_->stat();
  }

 private:
  std::unique_ptr<cache::BackingFile> real_;
  std::shared_ptr<BackingFaults> faults_;
};

class FaultyBackingStore final : public cache::BackingStore {
 public:
  FaultyBackingStore(std::unique_ptr<cache::BackingStore> real, std::shared_ptr<BackingFaults> faults)
      : real_(std::move(real)), faults_(std::move(faults)) {}

  Result<std::unique_ptr<cache::BackingFile>> open(std::string_view relative_path) override {
    ++faults_->opens;
    auto file = real_->open(relative_path);
    if (!file.is_ok()) return file.status();
    return std::unique_ptr<cache::BackingFile>(std::make_unique<FaultyBackingFile>(std::move(file).value(), faults_));
  }
  Status rename(std::string_view from, std::string_view to) override { return real_->rename(from, to); }
  Status unlink(std::string_view relative_path) override { return real_->unlink(relative_path); }
  Result<cache::BackingRoot> root() override { return real_->root(); }

 private:
  std::unique_ptr<cache::BackingStore> real_;
  std::shared_ptr<BackingFaults> faults_;
};

}  // namespace

std::unique_ptr<cache::BackingStore> make_faulty_backing_store(std::unique_ptr<cache::BackingStore> real,
                                                               std::shared_ptr<BackingFaults> faults) {
  return std::make_unique<FaultyBackingStore>(std::move(real), std::move(faults));
}

}  // namespace flashdir::testing
