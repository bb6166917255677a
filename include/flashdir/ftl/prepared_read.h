// A host read split in three, so that its chip I/O can run while the FTL's owner lets other
// threads use the FTL (doc/ftl.md, "Concurrent reads"):
//
//   PreparedRead read;                          // reusable; one read at a time
//   { lock; ftl.prepare_read(first, count, data, read); }
//   ftl.read_prepared(read, data);              // no lock
//   { lock; status = ftl.finish_read(read, data); }   // what read() would have returned
//
// The same `data` buffer goes to all three calls. Filled and consumed by the FTL only.
#pragma once

#include <cstdint>
#include <vector>

#include "flashdir/types.h"

namespace flashdir {

namespace ftl {
class FtlCore;
}

class PreparedRead {
 public:
  // Whether read_prepared() reads anything: false on a chip that does not allow concurrent
  // reads (finish_read() then does every chip read itself).
  bool concurrent() const { return concurrent_; }
  // Runs of pages that finish_read() read again under the lock: their blocks were erased after
  // the preparation, or what read_prepared() read failed verification.
  std::uint32_t redone_runs() const { return redone_runs_; }

 private:
  friend class ftl::FtlCore;

  // Physically consecutive pages read with one chip call.
  struct Run {
    std::uint32_t index = 0;  // its first page in the request
    std::uint32_t pages = 0;
    std::uint32_t ppn = 0;    // its first physical page
    bool verified = false;    // read_prepared() read it and it passed verification
  };

  bool pending_ = false;     // prepared, not yet finished
  bool concurrent_ = false;
  Lpn first_;
  std::uint32_t count_ = 0;
  std::uint32_t lost_at_ = 0;  // the first lost page of the request (count_: none)
  std::vector<Run> runs_;      // up to lost_at_
  std::vector<std::uint32_t> erase_counts_;  // per page of the request in a run: its block's, when prepared
  std::vector<std::uint8_t> oob_;            // read_prepared()'s
  std::uint64_t prepare_ns_ = 0;             // simulated time the preparation took
  std::uint64_t ram_page_ops_ = 0;           // pages it copied out of the device RAM
  std::uint32_t redone_runs_ = 0;
};

}  // namespace flashdir
