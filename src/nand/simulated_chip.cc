#include "flashdir/nand/simulated_chip.h"

#include <algorithm>
#include <cassert>

namespace flashdir {

SimulatedChip::SimulatedChip(std::shared_ptr<PageStore> store, LatencyProfile latency, SimClock& clock)
    : store_(std::move(store)), latency_(latency), clock_(clock) {
  assert(store_ != nullptr);
}

void SimulatedChip::account(std::uint64_t operations, std::uint32_t latency_us) {
  const std::uint64_t ns = operations * latency_us * 1000ULL;
  counters_.busy_ns += ns;
  clock_.advance_ns(ns);
}

Status SimulatedChip::read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) {
  FLASHDIR_TRY(check_read(first, count, data.size(), oob.size()));
  FLASHDIR_TRY(store_->read_pages(first, count, data, oob));
  // Pages at or past their block's write pointer are erased whatever the medium holds.
  const Geometry& g = geometry();
  for (std::uint32_t i = 0; i < count; ++i) {
    if (is_programmed(first + i)) continue;
    if (!data.empty()) std::fill_n(data.begin() + std::size_t{i} * g.page_size_bytes, g.page_size_bytes, 0xFF);
    if (!oob.empty()) std::fill_n(oob.begin() + std::size_t{i} * g.oob_size_bytes, g.oob_size_bytes, 0xFF);
  }
  counters_.page_reads += count;
  account(count, latency_.read_us);
  return Status::ok();
}

// No erased-page fill here: the block table may be changing under it (the caller knows the
// pages were programmed, and checks their blocks afterwards).
Status SimulatedChip::read_concurrently(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) const {
  FLASHDIR_TRY(check_read(first, count, data.size(), oob.size()));
  return store_->read_pages_concurrently(first, count, data, oob);
}

Status SimulatedChip::charge_reads(std::uint32_t pages) {
  if (!concurrent_reads()) return NandChip::charge_reads(pages);
  counters_.page_reads += pages;
  account(pages, latency_.read_us);
  return Status::ok();
}

Status SimulatedChip::program(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) {
  FLASHDIR_TRY(check_program(first, count, data.size(), oob.size()));
  const Geometry& g = geometry();
  for (std::uint64_t done = 0; done < count;) {
    const Ppn page = first + done;
    const BlockNumber block = g.block_of(page);
    const std::uint32_t index = g.page_in_block(page);
    const auto run = static_cast<std::uint32_t>(std::min<std::uint64_t>(count - done, g.pages_per_block - index));
    BlockState state = store_->block_state(block);
    state.next_page = index + run;
    FLASHDIR_TRY(store_->set_block_state(block, state));
    const ConstByteSpan run_data =
        data.empty() ? data : data.subspan(done * g.page_size_bytes, std::size_t{run} * g.page_size_bytes);
    FLASHDIR_TRY(store_->write_pages(page, run, run_data,
                                     oob.subspan(done * g.oob_size_bytes, std::size_t{run} * g.oob_size_bytes)));
    done += run;
  }
  counters_.page_programs += count;
  account(count, latency_.program_us);
  return Status::ok();
}

Status SimulatedChip::erase(BlockNumber block) {
  FLASHDIR_TRY(check_erase(block));
  // The old content goes before the block table says the block is erased: a process killed in
  // between leaves the programmed pages unreadable, as an interrupted erase does, and a later
  // program cut short never shows a page's record from before the erase.
  FLASHDIR_TRY(store_->discard_block(block));
  BlockState state = store_->block_state(block);
  ++state.erase_count;
  state.next_page = 0;
  FLASHDIR_TRY(store_->set_block_state(block, state));
  ++counters_.block_erases;
  account(1, latency_.erase_us);
  return Status::ok();
}

// A block out of range exists nowhere: it holds no programmed page and was never erased.
// Answering 0 keeps callers on their checked paths (a program or erase there fails its range
// check) at the cost of one comparison on these hot queries.
std::uint32_t SimulatedChip::next_page(BlockNumber block) const {
  return block.value < geometry().block_count ? store_->block_state(block).next_page : 0;
}

std::uint32_t SimulatedChip::erase_count(BlockNumber block) const {
  return block.value < geometry().block_count ? store_->block_state(block).erase_count : 0;
}

}  // namespace flashdir
