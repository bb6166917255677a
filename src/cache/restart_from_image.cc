// The engine's side of a restart image (cache/restart_image.h): the body a clean close leaves,
// and a clean open from one instead of from every metadata page.
#include <spdlog/spdlog.h>

#include <cassert>

#include "cache/engine_core.h"
#include "cache/meta/usability_rule.h"
#include "cache/restart_image.h"
#include "flashdir/endian.h"

namespace flashdir::cache {
namespace {

constexpr std::size_t kLayoutBytes = 24;  // metadata pages, slots, entries a page, page size, scheme

void save_layout(LittleEndianWriter& out, const SlotLayout& layout, MetadataScheme scheme) {
  out.u64(layout.metadata_pages);
  out.u32(layout.slot_count);
  out.u32(layout.entries_per_page);
  out.u32(layout.page_size_bytes);
  out.u8(static_cast<std::uint8_t>(meta::scheme_code(scheme)));
  out.zeros(3);
}

bool same_layout(LittleEndianReader& in, const SlotLayout& layout, MetadataScheme scheme) {
  if (in.remaining() < kLayoutBytes) return false;
  const bool same = in.u64() == layout.metadata_pages && in.u32() == layout.slot_count &&
                    in.u32() == layout.entries_per_page && in.u32() == layout.page_size_bytes &&
                    in.u8() == static_cast<std::uint8_t>(meta::scheme_code(scheme));
  if (same) in.skip(3);
  return same;
}

}  // namespace

Result<std::vector<std::uint8_t>> EngineCore::save_restart_image(RestartImageWriter& parts) {
  std::lock_guard cache(cache_mutex_);
  if (!closed_) return Status::invalid_argument("a restart image is taken after a clean close");
  auto store = store_->save_image(parts);
  if (!store.is_ok()) return store.status();
  auto slots = slots_->save_image(parts);
  if (!slots.is_ok()) return slots.status();
  std::vector<std::uint8_t> index(kLayoutBytes + store->size() + slots->size());
  LittleEndianWriter out(index);
  save_layout(out, layout_, store_->scheme());
  out.bytes(*store);
  out.bytes(*slots);
  return index;
}

Result<bool> EngineCore::restore_from_image(std::shared_ptr<const RestartImage> image, MetadataScheme scheme,
                                            std::uint64_t catalog_next) {
  auto refuse = [&](const std::string& why) {
    spdlog::warn("the restart image is not used ({}): every metadata page is read", why);
    slots_.reset();
    store_.reset();
    return false;
  };
  LittleEndianReader in(image->index());
  if (!same_layout(in, layout_, scheme)) return refuse("it was saved for another slot layout or metadata scheme");
  auto store = MetadataStore::restore_image(ftl_, layout_, scheme, image, in);
  if (!store.is_ok()) return refuse(store.status().message());
  store_ = std::move(store).value();
  slots_.emplace(*store_);
  if (Status s = slots_->restore_image(image, in); !s.is_ok()) return refuse(s.message());
  if (in.remaining() != 0) return refuse("its index holds bytes past its tables");
  // The catalog must still know every file the image names (it may have lost records since:
  // the metadata pages' path reports and repairs that). One lookup per file, not per page.
  for (std::uint64_t file_id : slots_->file_ids()) {
    if (file_id >= catalog_next) return refuse(fmt::format("it names file {}, past the catalog's ids", file_id));
    auto file = catalog_.find_by_id(file_id);
    if (file.status().code() == StatusCode::not_found) {
      return refuse(fmt::format("it names file {}, which the catalog does not know", file_id));
    }
    if (!file.is_ok()) return file.status();
  }
  restart_.clean_shutdown = true;
  restart_.from_restart_image = true;
  restart_.usable_slots = slots_->used();
  FLASHDIR_TRY(settle_unwritten_marks(0));
  return true;
}

}  // namespace flashdir::cache
