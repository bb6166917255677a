// Address compaction: from a trace's byte addresses to a dense range of logical pages.
//
// A folded multi-device trace spans a huge, sparse address space (tpcc-small: ~3 TB for
// ~100 MB touched). The space is cut into chunks of one erase block (pages_per_chunk pages,
// counted from each device's own start, so no chunk holds two devices); each distinct chunk
// the trace touches gets a dense index, and a page at offset k of chunk c becomes logical page
// dense(c) * pages_per_chunk + k. A request (offset, size) covers pages
// [offset / page, (offset + size - 1) / page] of its device.
//
// Dense indexes follow ChunkOrder: by address (device, then chunk: neighbours stay neighbours,
// so a request never has to be cut) or by first touch. A request that crosses chunks is cut
// only where two of its chunks got non-adjacent indexes; runs of adjacent chunks stay one
// request (the FTL's policies depend on request size; nothing is ever cut into single pages).
//
// The result is precomputed once per page size and block size, so that the replay loop does
// no look-up and no allocation per request.
#pragma once

#include <cstdint>
#include <vector>

#include "flashdir/sim/config.h"
#include "flashdir/sim/workload.h"
#include "flashdir/status.h"

namespace flashdir::sim {

// One FTL call of the replay.
struct ReplayRequest {
  std::uint64_t arrival_ns = 0;  // the trace request's arrival time (unscaled)
  std::uint64_t first_lpn = 0;
  std::uint32_t page_count = 0;
  IoRequest::Op op = IoRequest::Op::read;
  // True when the next ReplayRequest is the rest of the same trace request (it was cut).
  bool continues = false;

  bool is_read() const { return op == IoRequest::Op::read; }
  bool operator==(const ReplayRequest&) const = default;
};

struct CompactTrace {
  std::vector<ReplayRequest> requests;
  std::uint32_t page_size_bytes = 0;
  std::uint32_t pages_per_chunk = 0;
  ChunkOrder order = ChunkOrder::address;
  std::uint64_t chunk_count = 0;     // distinct chunks touched
  std::uint64_t touched_pages = 0;   // distinct pages touched
  std::uint64_t trace_requests = 0;  // requests of the trace (requests.size() counts the pieces)
  std::uint64_t cut_requests = 0;    // trace requests cut into several pieces
  std::uint32_t max_request_pages = 0;
  bool timed = false;  // some request arrives after time 0

  // The compacted space: every logical page the replay addresses lies below it.
  std::uint64_t footprint_pages() const { return chunk_count * pages_per_chunk; }
};

// Errors: a request of more than 2^32 - 1 pages, or a device missing from trace.devices.
Result<CompactTrace> compact_trace(const Trace& trace, std::uint32_t page_size_bytes,
                                   std::uint32_t pages_per_chunk, ChunkOrder order);

}  // namespace flashdir::sim
