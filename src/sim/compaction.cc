#include "flashdir/sim/compaction.h"

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>
#include <algorithm>
#include <bit>

namespace flashdir::sim {
namespace {

// Chunks [first, last] of one device (by its index in Trace::devices).
struct ChunkSpan {
  std::uint32_t device_index = 0;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

// Where a request lands, before chunks get their dense numbers.
struct Placed {
  ChunkSpan chunks;
  std::uint64_t first_page = 0;  // pages counted from the device's start
  std::uint64_t last_page = 0;
};

// Dense numbering by address: the touched chunks of each device as merged intervals, in
// (device, chunk) order; a chunk's number is the count of touched chunks before it.
class AddressNumbering {
 public:
  explicit AddressNumbering(std::vector<ChunkSpan> spans) {
    std::sort(spans.begin(), spans.end(), [](const ChunkSpan& a, const ChunkSpan& b) {
      return a.device_index != b.device_index ? a.device_index < b.device_index : a.first < b.first;
    });
    for (const ChunkSpan& span : spans) {
      if (!runs_.empty() && runs_.back().span.device_index == span.device_index &&
          span.first <= runs_.back().span.last + 1) {
        runs_.back().span.last = std::max(runs_.back().span.last, span.last);
        continue;
      }
      runs_.push_back(Run{span, 0});
    }
    for (Run& run : runs_) {
      run.dense_first = count_;
      count_ += run.span.last - run.span.first + 1;
    }
  }

  std::uint64_t count() const { return count_; }
  std::uint64_t dense(std::uint32_t device_index, std::uint64_t chunk) const {
    // The last run starting at or before (device, chunk); the chunk was touched, so it is inside.
    auto it = std::upper_bound(runs_.begin(), runs_.end(), std::make_pair(device_index, chunk),
                               [](const std::pair<std::uint32_t, std::uint64_t>& key, const Run& run) {
                                 return key.first != run.span.device_index ? key.first < run.span.device_index
                                                                           : key.second < run.span.first;
                               });
    --it;
    return it->dense_first + (chunk - it->span.first);
  }

 private:
  struct Run {
    ChunkSpan span;
    std::uint64_t dense_first = 0;
  };
  std::vector<Run> runs_;
  std::uint64_t count_ = 0;
};

// Dense numbering by first touch; the chunks of one request are numbered in address order.
class FirstTouchNumbering {
 public:
  std::uint64_t dense(std::uint32_t device_index, std::uint64_t chunk) {
    const auto [it, inserted] = index_.try_emplace(std::make_pair(device_index, chunk), index_.size());
    return it->second;
  }
  std::uint64_t count() const { return index_.size(); }

 private:
  absl::flat_hash_map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> index_;
};

// Marks logical pages in a bitmap and counts the distinct ones.
class PageSet {
 public:
  void add(std::uint64_t first, std::uint64_t count) {
    const std::uint64_t end = first + count;
    if (words_.size() * 64 < end) words_.resize((end + 63) / 64, 0);
    for (std::uint64_t page = first; page < end;) {
      const std::uint64_t word = page / 64;
      const std::uint64_t bit = page % 64;
      const std::uint64_t n = std::min<std::uint64_t>(64 - bit, end - page);
      const std::uint64_t mask = (n == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1)) << bit;
      words_[word] |= mask;
      page += n;
    }
  }
  std::uint64_t count() const {
    std::uint64_t total = 0;
    for (std::uint64_t w : words_) total += static_cast<std::uint64_t>(std::popcount(w));
    return total;
  }

 private:
  std::vector<std::uint64_t> words_;
};

// Emits the pieces of one request: runs of its chunks whose dense numbers follow each other.
template <typename Numbering>
Status emit(const IoRequest& request, const Placed& placed, std::uint32_t pages_per_chunk,
            Numbering& numbering, CompactTrace& out, PageSet& pages) {
  const std::uint64_t P = pages_per_chunk;
  const std::size_t first_piece = out.requests.size();
  std::uint64_t chunk = placed.chunks.first;
  while (chunk <= placed.chunks.last) {
    const std::uint64_t dense_first = numbering.dense(placed.chunks.device_index, chunk);
    std::uint64_t end_chunk = chunk + 1;  // the run is [chunk, end_chunk)
    while (end_chunk <= placed.chunks.last &&
           numbering.dense(placed.chunks.device_index, end_chunk) == dense_first + (end_chunk - chunk)) {
      ++end_chunk;
    }
    const std::uint64_t run_first_page = std::max(placed.first_page, chunk * P);
    const std::uint64_t run_last_page = std::min(placed.last_page, end_chunk * P - 1);
    const std::uint64_t count = run_last_page - run_first_page + 1;
    if (count > UINT32_MAX) {
      return Status::invalid_argument(
          fmt::format("a request of {} bytes covers more than 2^32 - 1 pages", request.size_bytes));
    }
    ReplayRequest piece;
    piece.arrival_ns = request.arrival_ns;
    piece.first_lpn = dense_first * P + (run_first_page - chunk * P);
    piece.page_count = static_cast<std::uint32_t>(count);
    piece.op = request.op;
    piece.continues = true;
    out.requests.push_back(piece);
    out.max_request_pages = std::max(out.max_request_pages, piece.page_count);
    pages.add(piece.first_lpn, count);
    chunk = end_chunk;
  }
  out.requests.back().continues = false;
  if (out.requests.size() - first_piece > 1) ++out.cut_requests;
  return Status::ok();
}

}  // namespace

Result<CompactTrace> compact_trace(const Trace& trace, std::uint32_t page_size_bytes,
                                   std::uint32_t pages_per_chunk, ChunkOrder order) {
  if (page_size_bytes == 0 || pages_per_chunk == 0) {
    return Status::invalid_argument("compaction needs a non-zero page size and chunk size");
  }
  absl::flat_hash_map<std::uint32_t, std::uint32_t> device_index;
  for (std::size_t i = 0; i < trace.devices.size(); ++i) {
    device_index.emplace(trace.devices[i].device, static_cast<std::uint32_t>(i));
  }
  const std::uint64_t P = pages_per_chunk;

  std::vector<Placed> placed(trace.requests.size());
  for (std::size_t i = 0; i < trace.requests.size(); ++i) {
    const IoRequest& request = trace.requests[i];
    const auto it = device_index.find(request.device);
    if (it == device_index.end()) {
      return Status::invalid_argument(fmt::format(
          "{}: request {} names device {}, which the trace does not list", trace.source, i, request.device));
    }
    if (request.size_bytes == 0) {
      return Status::invalid_argument(fmt::format("{}: request {} has no bytes", trace.source, i));
    }
    const DeviceRange& device = trace.devices[it->second];
    const std::uint64_t offset = request.offset_bytes - device.base_bytes;  // within the device
    Placed& p = placed[i];
    p.first_page = offset / page_size_bytes;
    p.last_page = (offset + request.size_bytes - 1) / page_size_bytes;
    p.chunks = ChunkSpan{it->second, p.first_page / P, p.last_page / P};
  }

  CompactTrace out;
  out.page_size_bytes = page_size_bytes;
  out.pages_per_chunk = pages_per_chunk;
  out.order = order;
  out.trace_requests = trace.requests.size();
  out.requests.reserve(trace.requests.size());
  PageSet pages;
  if (order == ChunkOrder::address) {
    std::vector<ChunkSpan> spans(placed.size());
    std::transform(placed.begin(), placed.end(), spans.begin(), [](const Placed& p) { return p.chunks; });
    AddressNumbering numbering(std::move(spans));
    for (std::size_t i = 0; i < placed.size(); ++i) {
      FLASHDIR_TRY(emit(trace.requests[i], placed[i], pages_per_chunk, numbering, out, pages));
    }
    out.chunk_count = numbering.count();
  } else {
    FirstTouchNumbering numbering;
    for (std::size_t i = 0; i < placed.size(); ++i) {
      FLASHDIR_TRY(emit(trace.requests[i], placed[i], pages_per_chunk, numbering, out, pages));
    }
    out.chunk_count = numbering.count();
  }
  out.touched_pages = pages.count();
  out.timed = !trace.requests.empty() && trace.requests.back().arrival_ns > 0;
  return out;
}

}  // namespace flashdir::sim
