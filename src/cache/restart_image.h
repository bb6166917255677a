// A restart image: what a clean restart would rebuild from every metadata page (the metadata
// store's RAM entries, the slot table's per-file page tables), saved by a clean close so that
// the next open need not read them (doc/cache.md "The restart image"; its bytes in
// doc/format.md).
//
// It describes one state of one chip: it is kept under the cache's uuid and the generation of
// the FTL checkpoint the clean close wrote, and used only when the FTL opens clean at that
// generation (nothing on the chip changed since); otherwise the open reads the metadata pages
// as it always did. The open removes it before the cache changes, keeping it open.
//
// So that a restart costs the same at any cache size, the image is an index read and checked
// at open (as many bytes as the cache has files and chunks of slots) and parts, each with its
// own checksum, read when the engine first needs one: a chunk of metadata entries, one file's
// page table. A part that fails its checksum costs only itself: the engine rebuilds it from
// the chip (cache/meta/metadata_store.h, cache/slot_table.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "flashdir/endian.h"
#include "flashdir/file_io.h"
#include "flashdir/format.h"
#include "flashdir/status.h"

namespace flashdir::cache {

struct RestartImageKey {
  format::Uuid cache_uuid;
  std::uint64_t ftl_generation = 0;  // of the checkpoint the clean close wrote
};

// Where a part lies in the image file, and the XXH3-64 of its bytes.
struct ImagePart {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t checksum = 0;

  static constexpr std::size_t kEncodedBytes = 24;
  void save(LittleEndianWriter& out) const;
  static ImagePart load(LittleEndianReader& in);  // kEncodedBytes must remain
};

// Writes an image: parts first, as the engine produces them, then the index and the header.
// Into a temporary file beside `path` (restart_image_temporary), renamed over `path` by
// finish(); removed if finish() is never reached or fails (a full disk, say). Not synced: a
// copy a host crash leaves torn fails its checksums.
class RestartImageWriter {
 public:
  static Result<std::unique_ptr<RestartImageWriter>> create(const std::filesystem::path& path);
  ~RestartImageWriter();
  RestartImageWriter(const RestartImageWriter&) = delete;
  RestartImageWriter& operator=(const RestartImageWriter&) = delete;

  Result<ImagePart> append(ConstByteSpan bytes);
  Status finish(const RestartImageKey& key, ConstByteSpan index);

 private:
  RestartImageWriter(std::filesystem::path path, UniqueFd fd);

  std::filesystem::path path_;
  std::filesystem::path temporary_;
  UniqueFd fd_;
  std::uint64_t end_ = 0;
  bool finished_ = false;
};

// An image opened for a restart: the index read and checked, the parts read on demand through
// the descriptor it keeps (which outlives the image's name: the open unlinks it at once).
class RestartImage {
 public:
  // The image saved under `key` at `path`: not_found if there is none, an error saying why it
  // cannot be used otherwise (another cache's, another chip state's, torn or damaged index).
  static Result<std::shared_ptr<const RestartImage>> open(const std::filesystem::path& path,
                                                          const RestartImageKey& key);

  ConstByteSpan index() const { return index_; }
  // A part's bytes, or why they cannot be used (a read error, a checksum that fails).
  Result<std::vector<std::uint8_t>> read(const ImagePart& part) const;

 private:
  RestartImage(UniqueFd fd, std::uint64_t parts_end, std::vector<std::uint8_t> index);

  UniqueFd fd_;
  std::uint64_t parts_end_;  // where the index starts: no part reaches past it
  std::vector<std::uint8_t> index_;
};

// Where RestartImageWriter writes before the rename (a crash may leave it: the open removes it).
std::filesystem::path restart_image_temporary(const std::filesystem::path& path);

}  // namespace flashdir::cache
