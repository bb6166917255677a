// The metadata store's part of a restart image (cache/restart_image.h): its RAM entries and
// file numbers as a clean close leaves them, so that the next open need not read and judge
// every metadata page.
#include <fmt/format.h>

#include "cache/meta/metadata_store.h"

namespace flashdir::cache {
namespace {

namespace flag = format::metadata_flag;
constexpr std::size_t kEntryImageBytes = 12;  // file number, page number (48 bits), flags, flags on the chip

}  // namespace

std::size_t MetadataStore::image_bytes() const {
  return 8 + 4 + 8 * std::size_t{file_refs_.number_limit()} + kEntryImageBytes * entries_.size();
}

Status MetadataStore::save_image(LittleEndianWriter& out) const {
  // Only the state a clean close leaves: nothing in flight, every change and the clean mark on
  // the chip, so that the image and the metadata pages say the same.
  if (!clean_mark_on_chip_ || !unfinished_.empty() || window_.size() != 0 || pending_drops_.size() != 0) {
    return Status::invalid_argument("the metadata store has changes not on the chip");
  }
  out.u64(sequence_);
  const std::vector<std::uint64_t> ids = file_refs_.file_ids();
  out.u32(static_cast<std::uint32_t>(ids.size()));
  for (std::uint64_t id : ids) out.u64(id);
  for (const Entry& e : entries_) {
    out.u32(e.file_ref);
    out.u32(e.page_low);
    out.u16(e.page_high);
    out.u8(e.flags);
    out.u8(e.chip_flags);
  }
  return Status::ok();
}

Result<std::unique_ptr<MetadataStore>> MetadataStore::restore_image(Ftl& ftl, const SlotLayout& layout,
                                                                    MetadataScheme scheme, LittleEndianReader& in) {
  if (layout.metadata_pages + layout.slot_count > ftl.logical_pages() || layout.entries_per_page == 0) {
    return Status::invalid_argument("slot layout does not fit the FTL");
  }
  std::unique_ptr<MetadataStore> store(new MetadataStore(ftl, layout, scheme));
  if (in.remaining() < 12) return Status::corruption("the metadata store's part is cut short");
  store->sequence_ = in.u64();
  const std::uint32_t numbers = in.u32();
  if (numbers == 0 || numbers > in.remaining() / 8) return Status::corruption("impossible count of file numbers");
  std::vector<std::uint64_t> ids(numbers);
  for (std::uint64_t& id : ids) id = in.u64();
  if (in.remaining() / kEntryImageBytes < store->entries_.size()) return Status::corruption("entries cut short");
  std::vector<std::uint32_t> holders(numbers, 0);
  for (Entry& e : store->entries_) {
    e.file_ref = in.u32();
    e.page_low = in.u32();
    e.page_high = in.u16();
    e.flags = in.u8();
    e.chip_flags = in.u8();
    const bool valid = (e.flags & flag::kValid) != 0;
    if (e.file_ref >= numbers || (e.file_ref == 0) == valid || (e.flags & (flag::kWriting | flag::kDirty)) != 0 ||
        e.flags != e.chip_flags) {
      return Status::corruption("an entry the clean close could not have left");
    }
    if (e.file_ref != 0) ++holders[e.file_ref];
  }
  if (!store->file_refs_.restore(ids, holders)) return Status::corruption("file numbers that do not add up");
  store->clean_mark_on_chip_ = true;
  return store;
}

}  // namespace flashdir::cache
