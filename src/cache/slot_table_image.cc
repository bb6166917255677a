// The slot table's part of a restart image (slot_table.h, cache/restart_image.h): each file's
// page table saved as a part of its own, and read back the first time the file is looked up.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cache/slot_table.h"

namespace flashdir::cache {
namespace {

constexpr std::size_t kFileIndexBytes = 8 + ImagePart::kEncodedBytes;  // file id, where its table lies

}  // namespace

Result<std::vector<std::uint8_t>> SlotTable::save_image(RestartImageWriter& parts) const {
  if (dirty_count_ != 0) return Status::invalid_argument("the slot table holds dirty pages");
  // A file the flusher's queue still lists may have no page left: it has no table to save.
  std::vector<std::pair<std::uint64_t, ImagePart>> tables;
  std::vector<std::uint8_t> bytes;
  for (std::uint64_t file_id : file_ids()) {
    const FileSlots* file = file_slots(file_id);
    if (file == nullptr || file->pages.empty()) continue;
    bytes.assign(file->pages.image_bytes(), 0);
    LittleEndianWriter out(bytes);
    file->pages.save_image(out);
    auto part = parts.append(bytes);
    if (!part.is_ok()) return part.status();
    tables.emplace_back(file_id, *part);
  }
  std::vector<std::uint8_t> index(8 + tables.size() * kFileIndexBytes);
  LittleEndianWriter out(index);
  out.u32(used());
  out.u32(static_cast<std::uint32_t>(tables.size()));
  for (const auto& [file_id, part] : tables) {
    out.u64(file_id);
    part.save(out);
  }
  return index;
}

Status SlotTable::restore_image(std::shared_ptr<const RestartImage> image, LittleEndianReader& index) {
  assert(used_ == 0 && files_.empty() && image_ == nullptr);
  if (index.remaining() < 8) return Status::corruption("the slot table's part is cut short");
  const std::uint32_t used = index.u32();
  const std::uint32_t files = index.u32();
  if (used > capacity() || files > index.remaining() / kFileIndexBytes || files > used) {
    return Status::corruption("the slot table's part has impossible counts");
  }
  auto tables = std::make_unique<ImageTables>();
  tables->image = std::move(image);
  tables->files.reserve(files);
  for (std::uint32_t f = 0; f < files; ++f) {
    const std::uint64_t file_id = index.u64();
    if (file_id == 0 || !tables->files.try_emplace(file_id, ImagePart::load(index)).second) {
      return Status::corruption("the slot table's part lists a file twice, or file 0");
    }
  }
  tables->chunks_left = static_cast<std::size_t>((std::uint64_t{capacity()} + kFlagChunkSlots - 1) / kFlagChunkSlots);
  tables->flags_set.assign(tables->chunks_left, false);
  used_ = used;
  image_ = std::move(tables);
  drop_image_if_done();
  return Status::ok();
}

std::vector<std::uint64_t> SlotTable::file_ids() const {
  std::vector<std::uint64_t> ids;
  ids.reserve(files_.size() + (image_ != nullptr ? image_->files.size() : 0));
  for (const auto& [file_id, file] : files_) ids.push_back(file_id);
  if (image_ != nullptr) {
    for (const auto& [file_id, part] : image_->files) ids.push_back(file_id);
  }
  return ids;
}

void SlotTable::set_flags_of(SlotIndex slot) const {
  const std::size_t chunk = slot / kFlagChunkSlots;
  if (image_->flags_set[chunk]) return;
  // The table was never made const: the flags it sets are its own, only not read yet.
  auto& self = const_cast<SlotTable&>(*this);
  self.image_->flags_set[chunk] = true;
  --self.image_->chunks_left;
  const SlotIndex first = static_cast<SlotIndex>(chunk * kFlagChunkSlots);
  const auto end = static_cast<SlotIndex>(std::min<std::uint64_t>(capacity(), std::uint64_t{first} + kFlagChunkSlots));
  // Occupied where the store holds an entry; nothing else survives a clean close.
  for (SlotIndex s = first; s < end; ++s) self.flags_[s] = store_.file_id_of(s) != 0 ? kOccupied : 0;
  self.drop_image_if_done();
}

void SlotTable::load_table_of(std::uint64_t file_id) const {
  const auto it = image_->files.find(file_id);
  if (it == image_->files.end()) return;
  const ImagePart part = it->second;
  auto& self = const_cast<SlotTable&>(*this);
  self.image_->files.erase(it);
  self.load_table(file_id, part);
  self.drop_image_if_done();
}

void SlotTable::load_table(std::uint64_t file_id, const ImagePart& part) {
  auto pages = read_table(file_id, part);
  if (!pages.is_ok()) {
    ++image_tables_damaged_;
    // One damaged table suggests more (a torn image): every table still in the image is
    // rebuilt with it, so that the whole cache is scanned once, not once per file.
    std::vector<std::uint64_t> rebuilt{file_id};
    if (image_ != nullptr) {  // gone if the check set the last chunk's flags and no table was left
      for (const auto& [other, other_part] : image_->files) rebuilt.push_back(other);
      image_->files.clear();
    }
    spdlog::warn("the restart image's page table of file {} is not usable ({}): it and the {} tables not read yet are "
                 "rebuilt from the entries",
                 file_id, pages.status().message(), rebuilt.size() - 1);
    rebuild_tables(std::move(rebuilt));
    return;
  }
  if (pages->empty()) return;
  page_table_bytes_ += pages->ram_bytes();
  files_.try_emplace(file_id, FileSlots{std::move(pages).value()});
}

Result<FilePages> SlotTable::read_table(std::uint64_t file_id, const ImagePart& part) {
  auto bytes = image_->image->read(part);
  if (!bytes.is_ok()) return bytes.status();
  LittleEndianReader in(*bytes);
  // Every slot the table names must be occupied by a page of this file, and named once; and
  // its entry must be the image's own: where a chunk of entries was read from the chip
  // instead, the entries are the authority and the table is rebuilt from them.
  std::vector<SlotIndex> taken;
  auto take = [&](SlotIndex slot) {
    if (slot >= capacity() || flag(slot) != kOccupied || store_.file_id_of(slot) != file_id ||
        store_.read_from_chip(slot)) {
      return false;
    }
    flag(slot) = kLeaving;  // a mark: seen once
    taken.push_back(slot);
    return true;
  };
  auto pages = FilePages::restore_image(in, take);
  for (SlotIndex slot : taken) flags_[slot] = kOccupied;
  if (pages.is_ok() && in.remaining() != 0) return Status::corruption("a file's page table is followed by other bytes");
  return pages;
}

void SlotTable::rebuild_tables(std::vector<std::uint64_t> file_ids) {
  absl::flat_hash_map<std::uint64_t, std::vector<SlotIndex>> slots;
  for (std::uint64_t file_id : file_ids) slots[file_id];
  for (SlotIndex slot = 0; slot < capacity(); ++slot) {
    if (!occupied(slot)) continue;
    const auto it = slots.find(store_.file_id_of(slot));
    if (it != slots.end()) it->second.push_back(slot);
  }
  for (auto& [file_id, found] : slots) {
    if (found.empty()) continue;
    FilePages pages;
    pages.reserve(static_cast<std::uint32_t>(found.size()), page_of());
    for (SlotIndex slot : found) pages.add_unique(slot, store_.page_no_of(slot));
    page_table_bytes_ += pages.ram_bytes();
    files_.try_emplace(file_id, FileSlots{std::move(pages)});
  }
}

void SlotTable::drop_image_if_done() {
  if (image_ != nullptr && image_->chunks_left == 0 && image_->files.empty()) image_.reset();
}

}  // namespace flashdir::cache
