#include "flashdir/nand/faulty_chip.h"

#include <fmt/format.h>
#include <vector>

namespace flashdir {

std::string CutReport::describe() const {
  if (!happened) return "no power cut";
  switch (operation) {
    case Operation::read:
      return fmt::format("power cut at operation {}: read of page {} (block {})", operation_index, page.value,
                         block.value);
    case Operation::program:
      if (!torn) {
        return fmt::format("power cut at operation {}: program of page {} (block {}) dropped", operation_index,
                           page.value, block.value);
      }
      return fmt::format("power cut at operation {}: program of page {} (block {}) torn after {} bytes",
                         operation_index, page.value, block.value, torn_prefix_bytes);
    case Operation::erase:
      if (!torn) {
        return fmt::format("power cut at operation {}: erase of block {} dropped", operation_index, block.value);
      }
      return fmt::format("power cut at operation {}: erase of block {} torn, pages [0, {}) left garbage",
                         operation_index, block.value, torn_garbage_pages);
  }
  return "power cut";
}

FaultyChip::FaultyChip(NandChip& inner, FaultPlan plan) : inner_(inner), plan_(plan), random_(plan.seed) {}

std::uint64_t FaultyChip::admit(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t index = operations_ + i;
    if (index == plan_.cut_at_operation || random_.one_in(plan_.cut_one_in)) {
      operations_ = index + 1;  // the one in flight counts
      cut_.happened = true;
      power_lost_.store(true, std::memory_order_release);
      cut_.operation_index = index;
      return i;
    }
  }
  operations_ += n;
  return n;
}

bool FaultyChip::tear_in_flight() {
  switch (plan_.in_flight) {
    case InFlight::torn: return true;
    case InFlight::dropped: return false;
    case InFlight::either: break;
  }
  return random_.uniform(2) == 0;
}

Status FaultyChip::lost() const { return Status::power_lost(fmt::format("the chip lost power ({})", cut_.describe())); }

Status FaultyChip::read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) {
  if (cut_.happened) return lost();
  FLASHDIR_TRY(check_read(first, count, data.size(), oob.size()));
  const std::uint64_t admitted = admit(count);
  if (admitted < count) {
    cut_.operation = CutReport::Operation::read;
    cut_.page = first + admitted;
    cut_.block = geometry().block_of(cut_.page);
    return lost();
  }
  FLASHDIR_TRY(inner_.read(first, count, data, oob));
  flip_bits(count, data, oob);
  return Status::ok();
}

Status FaultyChip::program(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) {
  if (cut_.happened) return lost();
  FLASHDIR_TRY(check_program(first, count, data.size(), oob.size()));
  if (cut_next_program_.exchange(false, std::memory_order_acq_rel)) plan_.cut_at_operation = operations_;
  const std::uint64_t admitted = admit(count);
  if (admitted == count) return inner_.program(first, count, data, oob);

  const Geometry& g = geometry();
  const std::size_t page_bytes = data.empty() ? 0 : g.page_size_bytes;
  if (admitted > 0) {
    FLASHDIR_TRY(inner_.program(first, static_cast<std::uint32_t>(admitted), data.first(admitted * page_bytes),
                                oob.first(admitted * g.oob_size_bytes)));
  }
  cut_.operation = CutReport::Operation::program;
  cut_.page = first + admitted;
  cut_.block = g.block_of(cut_.page);
  cut_.torn = tear_in_flight();
  if (cut_.torn) {
    FLASHDIR_TRY(tear_program(cut_.page, data.subspan(admitted * page_bytes, page_bytes),
                              oob.subspan(admitted * g.oob_size_bytes, g.oob_size_bytes)));
  }
  return lost();
}

Status FaultyChip::tear_program(Ppn page, ConstByteSpan data, ConstByteSpan oob) {
  // The page is programmed as data ++ OOB; a page programmed without data (metadata-only
  // chip) can only show the damage in its OOB.
  const bool keep_data = !data.empty();
  std::vector<std::uint8_t> bytes(keep_data ? data.begin() : data.end(), data.end());
  bytes.insert(bytes.end(), oob.begin(), oob.end());
  const std::size_t prefix = random_.uniform(bytes.size());
  for (std::size_t i = prefix; i < bytes.size(); ++i) {
    bytes[i] ^= static_cast<std::uint8_t>(random_.between(1, 255));  // garbage that differs
  }
  cut_.torn_prefix_bytes = static_cast<std::uint32_t>(prefix);
  const ConstByteSpan torn(bytes);
  const std::size_t data_bytes = keep_data ? data.size() : 0;
  return inner_.program(page, 1, torn.first(data_bytes), torn.subspan(data_bytes));
}

Status FaultyChip::erase(BlockNumber block) {
  if (cut_.happened) return lost();
  FLASHDIR_TRY(check_erase(block));
  if (admit(1) == 1) return inner_.erase(block);
  cut_.operation = CutReport::Operation::erase;
  cut_.block = block;
  cut_.page = geometry().first_page(block);
  cut_.torn = tear_in_flight();
  if (cut_.torn) FLASHDIR_TRY(tear_erase(block));
  return lost();
}

Status FaultyChip::tear_erase(BlockNumber block) {
  // Cells part-way through an erase hold neither the old data nor the erased state: model it
  // as an erased block whose first pages read back as noise.
  FLASHDIR_TRY(inner_.erase(block));
  const Geometry& g = geometry();
  const auto pages = static_cast<std::uint32_t>(random_.between(1, g.pages_per_block));
  const std::size_t data_bytes = inner_.stores_data() ? std::size_t{pages} * g.page_size_bytes : 0;
  std::vector<std::uint8_t> noise(data_bytes + std::size_t{pages} * g.oob_size_bytes);
  for (auto& byte : noise) byte = static_cast<std::uint8_t>(random_.next_u64());
  cut_.torn_garbage_pages = pages;
  const ConstByteSpan all(noise);
  return inner_.program(g.first_page(block), pages, all.first(data_bytes), all.subspan(data_bytes));
}

Status FaultyChip::sync() {
  if (cut_.happened) return lost();
  return inner_.sync();
}

void FaultyChip::flip_bits(std::uint32_t count, ByteSpan data, ByteSpan oob) {
  if (plan_.bit_flip_one_in == 0) return;
  const Geometry& g = geometry();
  const std::size_t page_bytes = data.empty() ? 0 : g.page_size_bytes;
  const std::size_t oob_bytes = oob.empty() ? 0 : g.oob_size_bytes;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (!random_.one_in(plan_.bit_flip_one_in)) continue;
    const std::size_t bit = random_.uniform((page_bytes + oob_bytes) * 8);
    const std::size_t byte = bit / 8;
    const auto mask = static_cast<std::uint8_t>(1u << (bit % 8));
    if (byte < page_bytes) {
      data[i * page_bytes + byte] ^= mask;
    } else {
      oob[i * oob_bytes + (byte - page_bytes)] ^= mask;
    }
    ++bit_flips_;
  }
}

}  // namespace flashdir
