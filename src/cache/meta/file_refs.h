// Small numbers for the file ids that slot entries name, so that an entry in RAM takes 4 bytes
// for its file instead of 8 (MetadataStore; doc/cache.md "Slots and replacement"). A number
// lives while some entry holds it and is reused after; the chip always gets the 64-bit id.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace flashdir::cache::meta {

class FileRefs {
 public:
  // The number of `file_id` (taken for one more holder). Never 0: 0 means "no file".
  std::uint32_t acquire(std::uint64_t file_id);
  // One holder of `ref` let it go; the last one frees the number.
  void release(std::uint32_t ref);
  std::uint64_t file_id(std::uint32_t ref) const { return files_[ref].file_id; }
  // Entries holding `ref` (0: a free number).
  std::uint32_t holders(std::uint32_t ref) const { return files_[ref].holders; }
  std::size_t size() const { return by_id_.size(); }
  // Every number handed out is below this.
  std::uint32_t number_limit() const { return static_cast<std::uint32_t>(files_.size()); }
  // RAM held, measured from the containers.
  std::size_t ram_bytes() const;

  // The numbers a restart image recorded: `file_ids` by number (0: free), each number held by
  // `holders[n]` entries. False if they cannot be (a number 0 in use, an id twice, a holder
  // count on a free number).
  bool restore(const std::vector<std::uint64_t>& file_ids, const std::vector<std::uint32_t>& holders);

 private:
  struct File {
    std::uint64_t file_id = 0;
    std::uint32_t holders = 0;
  };
  std::vector<File> files_{File{}};  // by number; number 0 is never handed out
  absl::flat_hash_map<std::uint64_t, std::uint32_t> by_id_;
  std::vector<std::uint32_t> free_;  // numbers to reuse
  // The number acquire last handed out (0: none), asked first: a restart acquires one for each
  // slot it recovers, mostly of the same file as the slot before.
  std::uint32_t last_ref_ = 0;
};

}  // namespace flashdir::cache::meta
