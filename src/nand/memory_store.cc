// The RAM-backed stores: "memory" keeps page data and OOB; "metadata-only" keeps the OOB of
// every page but data only for pages programmed with a data buffer (the FTL's own translation
// and checkpoint pages), so trace replay stores no host data. Storage is allocated per block
// on first use; a discarded block's buffers wait in a spare list for the next block to need
// them, so memory follows the most blocks live at once, not the chip size, and a GC-heavy
// replay does not pay a fresh allocation (and its page faults: 13% of flashdir-sim's time on
// translation blocks) per erase.
// A block's buffers are not zeroed when allocated: pages at or past the highest one written
// read as zeros without being stored, and a page written past that mark zeroes only the gap.
// The chip programs a block's pages in order, so a replay never zeroes anything; zeroing
// whole blocks was 5% of flashdir-sim's time (doc/sim.md "Speed").
// Concurrent reads (the memory store only: the metadata-only store has no host data to serve)
// take `buffers_` shared; writes and discards, which move buffers between blocks, take it
// exclusively. The owner's own reads need no lock: nothing else writes while it reads.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "flashdir/nand/page_store.h"

namespace flashdir {
namespace {

class MemoryStore final : public PageStore {
 public:
  MemoryStore(const Geometry& geometry, bool keep_data)
      : geometry_(geometry), keep_data_(keep_data), blocks_(geometry.block_count) {}

  const Geometry& geometry() const override { return geometry_; }
  bool stores_data() const override { return keep_data_; }
  std::string_view backend_name() const override { return keep_data_ ? "memory" : "metadata-only"; }

  BlockState block_state(BlockNumber block) const override { return blocks_[block.value].state; }
  Status set_block_state(BlockNumber block, BlockState state) override {
    blocks_[block.value].state = state;
    return Status::ok();
  }

  Status read_pages(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) override {
    copy_out(first, count, data, oob);
    return Status::ok();
  }

  bool concurrent_reads() const override { return keep_data_; }
  Status read_pages_concurrently(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) const override {
    if (!keep_data_) return PageStore::read_pages_concurrently(first, count, data, oob);
    std::shared_lock lock(buffers_);
    copy_out(first, count, data, oob);
    return Status::ok();
  }

  Status write_pages(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) override {
    const auto lock = exclusive();
    visit_pages(*this, first, count, [&](Block& block, std::uint32_t index, std::size_t i) {
      if (!data.empty()) {
        if (!block.data) block.data = take(spare_data_, geometry_.block_size_bytes());
        store(block.data.get(), block.data_end, index, data.data() + i * geometry_.page_size_bytes,
              geometry_.page_size_bytes);
      }
      if (!block.oob) block.oob = take(spare_oob_, std::size_t{geometry_.oob_size_bytes} * geometry_.pages_per_block);
      store(block.oob.get(), block.oob_end, index, oob.data() + i * geometry_.oob_size_bytes,
            geometry_.oob_size_bytes);
    });
    return Status::ok();
  }

  Status discard_block(BlockNumber block) override {
    const auto lock = exclusive();
    Block& discarded = blocks_[block.value];
    if (discarded.data) spare_data_.push_back(std::move(discarded.data));
    if (discarded.oob) spare_oob_.push_back(std::move(discarded.oob));
    discarded = Block{discarded.state, nullptr, nullptr, 0, 0};
    return Status::ok();
  }

  Status sync() override { return Status::ok(); }

 private:
  // Writers exclude concurrent readers; a metadata-only store has none (trace replay pays nothing).
  std::unique_lock<std::shared_mutex> exclusive() {
    return keep_data_ ? std::unique_lock(buffers_) : std::unique_lock<std::shared_mutex>();
  }

  void copy_out(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) const {
    visit_pages(*this, first, count, [&](const Block& block, std::uint32_t index, std::size_t i) {
      if (!data.empty()) {
        std::uint8_t* out = data.data() + i * geometry_.page_size_bytes;
        if (index < block.data_end) {
          std::memcpy(out, block.data.get() + std::size_t{index} * geometry_.page_size_bytes,
                      geometry_.page_size_bytes);
        } else {
          std::memset(out, 0, geometry_.page_size_bytes);
        }
      }
      if (!oob.empty()) {
        std::uint8_t* out = oob.data() + i * geometry_.oob_size_bytes;
        if (index < block.oob_end) {
          std::memcpy(out, block.oob.get() + std::size_t{index} * geometry_.oob_size_bytes, geometry_.oob_size_bytes);
        } else {
          std::memset(out, 0, geometry_.oob_size_bytes);
        }
      }
    });
  }

  using Buffer = std::unique_ptr<std::uint8_t[]>;

  struct Block {
    BlockState state;
    Buffer data;
    Buffer oob;
    // Pages [0, end) of each buffer hold what was written or zeros; the rest read as zeros.
    std::uint32_t data_end = 0;
    std::uint32_t oob_end = 0;
  };

  // A spare buffer, or a new one of `bytes`; either way its content is undefined.
  static Buffer take(std::vector<Buffer>& spares, std::size_t bytes) {
    if (spares.empty()) return std::make_unique_for_overwrite<std::uint8_t[]>(bytes);
    Buffer buffer = std::move(spares.back());
    spares.pop_back();
    return buffer;
  }

  // Copies one page's `bytes` into slot `index` of `buffer`, zeroing the slots skipped since `end`.
  static void store(std::uint8_t* buffer, std::uint32_t& end, std::uint32_t index, const std::uint8_t* page,
                    std::size_t bytes) {
    if (index > end) std::memset(buffer + std::size_t{end} * bytes, 0, std::size_t{index - end} * bytes);
    std::memcpy(buffer + std::size_t{index} * bytes, page, bytes);
    end = std::max(end, index + 1);
  }

  // Visits each page's block (const for a const store) with the page's index in it and in the run.
  template <typename Self, typename Visit>
  static void visit_pages(Self& self, Ppn first, std::uint32_t count, Visit visit) {
    for (std::uint32_t i = 0; i < count; ++i) {
      const Ppn page = first + i;
      visit(self.blocks_[self.geometry_.block_of(page).value], self.geometry_.page_in_block(page), std::size_t{i});
    }
  }

  Geometry geometry_;
  bool keep_data_;
  std::vector<Block> blocks_;
  std::vector<Buffer> spare_data_;  // of discarded blocks, block_size_bytes() each
  std::vector<Buffer> spare_oob_;   // oob_size_bytes * pages_per_block each
  mutable std::shared_mutex buffers_;  // see the top of the file
};

}  // namespace

std::shared_ptr<PageStore> make_memory_store(const Geometry& geometry) {
  return std::make_shared<MemoryStore>(geometry, true);
}

std::shared_ptr<PageStore> make_metadata_store(const Geometry& geometry) {
  return std::make_shared<MemoryStore>(geometry, false);
}

}  // namespace flashdir
