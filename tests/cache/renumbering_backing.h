// A backing store double that numbers inodes the way sshfs and object-store FUSE mounts do: in
// the order paths are first opened, afresh in each session (a remount), so that a number says
// nothing about which file it is across sessions. It passes everything else to a real store.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "flashdir/cache/backing_store.h"

namespace flashdir::testing {

class InodeNumbering {
 public:
  // Forgets every number given: the next session numbers paths from 1 again as they are met.
  void new_session();
  std::uint64_t number_of(const std::string& path);

 private:
  std::mutex mutex_;
  std::map<std::string, std::uint64_t> numbers_;
};

// `claims_stable`: whether root() says the numbers are stable (a backing the engine cannot tell
// renumbers, unlike FUSE, which it can).
std::unique_ptr<cache::BackingStore> make_renumbering_backing_store(std::unique_ptr<cache::BackingStore> real,
                                                                    std::shared_ptr<InodeNumbering> numbering,
                                                                    bool claims_stable);

}  // namespace flashdir::testing
