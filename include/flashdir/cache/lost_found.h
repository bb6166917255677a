// Where write-back recovery keeps dirty pages it cannot prove belong to the file now found at
// their recorded place (another file took the name, the file is gone, or the backing is not
// the one they came from): never written elsewhere, never dropped silently. The daemon's is a
// directory, CACHE/lost+found, that an admin reads (doc/cache.md "Restart after a cut").
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "flashdir/catalog.h"
#include "flashdir/status.h"
#include "flashdir/types.h"

namespace flashdir::cache {

// One saved file: its pages go in at their offsets, then finish() makes it durable.
class LostFile {
 public:
  virtual ~LostFile() = default;
  virtual Status write_page(std::uint64_t page_no, ConstByteSpan bytes) = 0;
  virtual Status finish() = 0;
  // The name it is saved under (for the log and the stats).
  virtual const std::string& name() const = 0;
};

class LostFound {
 public:
  virtual ~LostFound() = default;
  // A new saved file for the dirty pages of `file`, kept for `reason`.
  virtual Result<std::unique_ptr<LostFile>> create(const CatalogFile& file, std::string_view reason) = 0;
};

// The directory `dir` (created 0700 at the first save, opened without following links): each
// saved file is `<file id>-uid<uid>-<path, '/' as %2F>`, mode 0600, its pages at their offsets,
// beside a `.txt` that says whose it was, why it is there and how many pages it holds.
std::unique_ptr<LostFound> lost_found_directory(const std::filesystem::path& dir);

}  // namespace flashdir::cache
