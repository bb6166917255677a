// Internal to src/check: a copy-on-write layer over a chip image opened read-only. fsck -n runs
// the engine's own restart (FTL recovery, the metadata store's usability rule and repairs) on
// it to learn what that restart would do, and the image is never changed: programs, erases and
// block-table updates land in RAM and are forgotten with the overlay.
//
// Single-threaded, like the chip above it. RAM grows with what is written: a checkpoint and the
// metadata pages a restart rewrites, not the chip.
#pragma once

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "flashdir/nand/page_store.h"

namespace flashdir {

class OverlayStore final : public PageStore {
 public:
  explicit OverlayStore(std::shared_ptr<PageStore> base);

  const Geometry& geometry() const override { return base_->geometry(); }
  bool stores_data() const override { return base_->stores_data(); }
  std::string_view backend_name() const override { return "overlay"; }

  BlockState block_state(BlockNumber block) const override;
  Status set_block_state(BlockNumber block, BlockState state) override;
  Status read_pages(Ppn first, std::uint32_t count, ByteSpan data, ByteSpan oob) override;
  Status write_pages(Ppn first, std::uint32_t count, ConstByteSpan data, ConstByteSpan oob) override;
  Status discard_block(BlockNumber block) override;
  Status sync() override { return Status::ok(); }

 private:
  struct Page {
    std::vector<std::uint8_t> data;
    std::vector<std::uint8_t> oob;
  };
  Status read_page(Ppn page, ByteSpan data, ByteSpan oob);

  std::shared_ptr<PageStore> base_;
  absl::flat_hash_map<std::uint64_t, BlockState> block_states_;
  absl::flat_hash_map<std::uint64_t, Page> pages_;  // by PPN: written since the overlay began
  absl::flat_hash_set<std::uint64_t> discarded_;    // blocks erased since: the base's pages are gone
};

}  // namespace flashdir
