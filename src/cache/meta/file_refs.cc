#include "cache/meta/file_refs.h"

#include <cassert>

namespace flashdir::cache::meta {

std::uint32_t FileRefs::acquire(std::uint64_t file_id) {
  if (last_ref_ != 0 && files_[last_ref_].file_id == file_id) {
    ++files_[last_ref_].holders;
    return last_ref_;
  }
  auto [it, inserted] = by_id_.try_emplace(file_id, 0);
  if (inserted) {
    if (free_.empty()) {
      it->second = static_cast<std::uint32_t>(files_.size());
      files_.push_back({file_id, 0});
    } else {
      it->second = free_.back();
      free_.pop_back();
      files_[it->second] = {file_id, 0};
    }
  }
  ++files_[it->second].holders;
  last_ref_ = it->second;
  return it->second;
}

void FileRefs::release(std::uint32_t ref) {
  File& file = files_[ref];
  assert(ref != 0 && file.holders > 0);
  if (--file.holders > 0) return;
  by_id_.erase(file.file_id);
  file = File{};
  if (ref == last_ref_) last_ref_ = 0;
  free_.push_back(ref);
}

std::size_t FileRefs::ram_bytes() const {
  return files_.capacity() * sizeof(File) + free_.capacity() * sizeof(std::uint32_t) +
         by_id_.bucket_count() * (1 + sizeof(std::pair<const std::uint64_t, std::uint32_t>));
}

bool FileRefs::restore(const std::vector<std::uint64_t>& file_ids, const std::vector<std::uint32_t>& holders) {
  if (file_ids.empty() || file_ids[0] != 0 || holders.size() != file_ids.size() || holders[0] != 0) return false;
  files_.assign(file_ids.size(), File{});
  by_id_.clear();
  free_.clear();
  last_ref_ = 0;
  for (std::uint32_t n = 1; n < file_ids.size(); ++n) {
    if ((file_ids[n] == 0) != (holders[n] == 0)) return false;
    if (holders[n] == 0) {
      free_.push_back(n);
      continue;
    }
    if (!by_id_.try_emplace(file_ids[n], n).second) return false;
    files_[n] = {file_ids[n], holders[n]};
  }
  return true;
}

}  // namespace flashdir::cache::meta
