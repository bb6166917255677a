// The NAND chip as the FTL sees it. Implementations: SimulatedChip (the rules of a real chip
// over a PageStore) and FaultyChip (a wrapper that cuts power, tears pages and flips bits).
#pragma once

#include <cstdint>
#include <string_view>

#include "flashdir/geometry.h"
#include "flashdir/status.h"
#include "flashdir/types.h"

namespace flashdir {

struct ChipCounters {
  std::uint64_t page_reads = 0;  // OOB-only reads included: the chip senses the whole page
  std::uint64_t page_programs = 0;
  std::uint64_t block_erases = 0;
  std::uint64_t busy_ns = 0;  // simulated time spent in operations
};

// Rules every implementation enforces as errors (never undefined behaviour):
//  - addresses in range, runs non-empty, buffers of exactly the size the run needs;
//  - program only erased pages, and the pages of a block in order (page i of a block only
//    when pages 0..i-1 are programmed and i is not): a block's programmed pages are always
//    the prefix [0, next_page);
//  - erase whole blocks; erasing returns every page of the block to the erased state.
// Erased pages read as all 0xFF, data and OOB alike. A program that returned is on the chip.
// Not thread-safe: the FTL that owns the chip serialises calls, read_concurrently() excepted.
class NandChip {
 public:
  virtual ~NandChip() = default;

  virtual const Geometry& geometry() const = 0;
  // False for the metadata-only backend: a program may omit the data, and a page programmed
  // without data reads back as zeros (pages programmed with data keep it).
  virtual bool stores_data() const = 0;
  virtual std::string_view backend_name() const = 0;
  // The datasheet timing the chip charges its clock with.
  virtual LatencyProfile latency() const = 0;

  // Reads `count` consecutive pages starting at `first`; the run may cross blocks.
  // `data` is count*page_size bytes, or empty to read only the OOB areas; `oob` is
  // count*oob_size bytes, or empty to read only data. At least one is non-empty.
  virtual Status read(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) = 0;
  // Programs `count` consecutive pages, each of which must be the next programmable page of
  // its block. The run is checked whole before any page is touched. `oob` is exactly
  // count*oob_size bytes; `data` count*page_size bytes (may be empty if !stores_data()).
  virtual Status program(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) = 0;
  virtual Status erase(BlockNumber block) = 0;
  // Makes everything programmed so far durable against a host crash (fdatasync for images).
  virtual Status sync() = 0;

  // Pages [0, next_page) of the block are programmed (possibly torn), the rest erased.
  // A block out of range answers 0 to both: it has no pages and no erases, and any program,
  // read or erase there fails the range check.
  virtual std::uint32_t next_page(BlockNumber block) const = 0;
  virtual std::uint32_t erase_count(BlockNumber block) const = 0;
  virtual const ChipCounters& counters() const = 0;

  // Concurrent reads, for a chip that allows them (doc/nand.md, "Concurrent reads"):
  // read_concurrently() may run in any thread while the owner programs and erases in another.
  // It checks addresses and buffer sizes only and changes nothing (no counters, no clock), and
  // it does not know which pages are programmed: the caller must know that the pages were
  // programmed when it chose them, and afterwards (serialised again) that their blocks' erase
  // counts did not change, or else discard what it read. charge_reads() (serialised) then
  // counts the pages and advances the clock as read() would have. A chip that must see every
  // operation as it happens (fault injection, real-time pacing) does not allow them; both calls
  // fail there.
  virtual bool concurrent_reads() const { return false; }
  virtual Status read_concurrently(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) const;
  virtual Status charge_reads(std::uint32_t pages);

  bool is_programmed(Ppn ppn) const { return geometry().page_in_block(ppn) < next_page(geometry().block_of(ppn)); }

  // The rules above, checked without touching the chip. Every implementation calls these
  // first, so a request that breaks a rule fails the same way with or without fault injection.
  Status check_read(Ppn first, std::uint32_t count, std::size_t data_bytes, std::size_t oob_bytes) const;
  Status check_program(Ppn first, std::uint32_t count, std::size_t data_bytes, std::size_t oob_bytes) const;
  Status check_erase(BlockNumber block) const;
};

}  // namespace flashdir
