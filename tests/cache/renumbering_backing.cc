#include "renumbering_backing.h"

#include <utility>

namespace flashdir::testing {
namespace {

class RenumberedFile final : public cache::BackingFile {
 public:
  RenumberedFile(std::unique_ptr<cache::BackingFile> real, std::uint64_t number)
      : real_(std::move(real)), number_(number) {}
  Result<std::size_t> read(std::uint64_t offset, ByteSpan out) override { return real_->read(offset, out); }
  Status write(std::uint64_t offset, ConstByteSpan data) override { return real_->write(offset, data); }
  Status truncate(std::uint64_t size_bytes) override { return real_->truncate(size_bytes); }
  Status allocate(int mode, std::uint64_t offset, std::uint64_t length) override {
    return real_->allocate(mode, offset, length);
  }
  Status sync() override { return real_->sync(); }
  Result<BackingAttributes> stat() override {
    auto attributes = real_->stat();
    if (!attributes.is_ok()) return attributes;
    attributes->inode = number_;
    attributes->birth_ns = 0;  // sshfs keeps none
    return attributes;
  }

 private:
  std::unique_ptr<cache::BackingFile> real_;
  const std::uint64_t number_;
};

class RenumberingStore final : public cache::BackingStore {
 public:
  RenumberingStore(std::unique_ptr<cache::BackingStore> real, std::shared_ptr<InodeNumbering> numbering,
                   bool claims_stable)
      : real_(std::move(real)), numbering_(std::move(numbering)), claims_stable_(claims_stable) {}

  Result<std::unique_ptr<cache::BackingFile>> open(std::string_view relative_path) override {
    auto file = real_->open(relative_path);
    if (!file.is_ok()) return file.status();
    return std::unique_ptr<cache::BackingFile>(
        std::make_unique<RenumberedFile>(std::move(file).value(), numbering_->number_of(std::string(relative_path))));
  }
  Status rename(std::string_view from, std::string_view to) override { return real_->rename(from, to); }
  Status unlink(std::string_view relative_path) override { return real_->unlink(relative_path); }
  Result<cache::BackingRoot> root() override {
    auto root = real_->root();
    if (root.is_ok()) root->stable_inode_numbers = claims_stable_;
    return root;
  }

 private:
  std::unique_ptr<cache::BackingStore> real_;
  std::shared_ptr<InodeNumbering> numbering_;
  const bool claims_stable_;
};

}  // namespace

void InodeNumbering::new_session() {
  std::lock_guard lock(mutex_);
  numbers_.clear();
}

std::uint64_t InodeNumbering::number_of(const std::string& path) {
  std::lock_guard lock(mutex_);
  return numbers_.try_emplace(path, numbers_.size() + 2).first->second;  // 1 is the root's
}

std::unique_ptr<cache::BackingStore> make_renumbering_backing_store(std::unique_ptr<cache::BackingStore> real,
                                                                    std::shared_ptr<InodeNumbering> numbering,
                                                                    bool claims_stable) {
  return std::make_unique<RenumberingStore>(std::move(real), std::move(numbering), claims_stable);
}

}  // namespace flashdir::testing
