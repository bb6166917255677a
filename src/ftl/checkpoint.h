// Checkpoints: the FTL state that is not in translation pages, written whole into one of two
// fixed slots so that opening the FTL needs no scan. Format in doc/format.md.
//
// A slot holds the checkpoint pages [0, n) and, once anything on the chip changes after the
// checkpoint was written, one marker page n. No marker means the chip is exactly as the
// checkpoint says (clean start); a marker means recovery must roll forward. Writers alternate
// slots, so a checkpoint torn by a power cut leaves the previous one intact.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "block_table.h"
#include "flashdir/nand/chip.h"
#include "flashdir/status.h"
#include "layout.h"

namespace flashdir::ftl {

struct CheckpointState {
  std::uint64_t generation = 0;          // increases with every checkpoint written
  std::uint64_t next_sequence = 0;       // program sequence counter when it was taken: every
                                         // page with a smaller sequence is reflected in it
  std::uint64_t write_sequence = 0;      // the last sequence number handed to a host write
  HostTime host_time = 0;
  std::uint16_t overprovision_permille = 0;
  std::uint64_t logical_pages = 0;
  std::vector<std::uint32_t> gtd;        // translation page number -> PPN (kUnmappedPpn: never written)
  std::vector<BlockInfo> blocks;         // valid_pages is recomputed from `validity` on decode
  std::vector<std::uint64_t> validity;   // one bit per physical page
  std::vector<std::uint64_t> lost;       // one bit per logical page: lost (doc/ftl.md, "Lost pages")
};

std::vector<std::uint8_t> encode_checkpoint(const CheckpointState& state, const FtlLayout& layout);
Result<CheckpointState> decode_checkpoint(ConstByteSpan bytes, const FtlLayout& layout);
// Whether a decoded checkpoint was written for `layout` (over-provisioning, logical pages);
// the message names the field that differs and says where the layout came from through
// `layout_source` ("the options ask for"). Nothing may use a checkpoint that fails this.
Status check_checkpoint_layout(const CheckpointState& state, const FtlLayout& layout, std::string_view layout_source);

inline constexpr std::uint32_t kMarkerPageIndex = 0xFFFFFFFFu;  // OOB aux of the marker page

class CheckpointSlots {
 public:
  CheckpointSlots(NandChip& chip, const FtlLayout& layout) : chip_(chip), layout_(layout) {}

  struct Loaded {
    CheckpointState state;
    int slot = 0;
    std::uint32_t pages = 0;            // the marker, if any, is the next page
    bool marked = false;                // something changed after it: recovery needed
    std::uint64_t highest_sequence = 0; // of its pages and marker
  };
  // Which slots load_newest reads: the one whose first page names the higher generation, and
  // the other only if that one fails (an open: decoding both doubled its time); or both, so
  // that a damaged older slot is reported too (fsck).
  enum class SlotsRead { newest_first, both };
  // The valid checkpoint with the highest generation; not_found if neither slot holds one.
  // `problems` receives one line per slot read that holds something invalid.
  Result<Loaded> load_newest(std::vector<std::string>* problems = nullptr, SlotsRead read = SlotsRead::newest_first);

  // Erases `slot` and writes `state` into it; pages take sequences from `next_sequence`.
  // Returns the number of checkpoint pages.
  Result<std::uint32_t> write(int slot, const CheckpointState& state, std::uint64_t& next_sequence);
  // Programs the marker page after the `pages` pages of the checkpoint `generation` in `slot`.
  Status write_marker(int slot, std::uint64_t generation, std::uint32_t pages, std::uint64_t& next_sequence);

 private:
  Result<Loaded> load(int slot);
  // The generation page 0 of `slot` names in its OOB record, unverified (0: none): only an
  // order in which to try the slots, load() checks it.
  std::uint64_t claimed_generation(int slot);
  Ppn page(int slot, std::uint32_t index) const { return layout_.geometry.first_page(layout_.slot_first_block(slot)) + index; }

  NandChip& chip_;
  const FtlLayout& layout_;
};

}  // namespace flashdir::ftl
