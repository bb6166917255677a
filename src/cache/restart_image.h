// A restart image: what a clean restart would rebuild from every metadata page (the metadata
// store's RAM entries, the slot table's per-file page tables), saved by a clean close so that
// the next open reads one file instead (doc/cache.md "The restart image"; its bytes in
// doc/format.md).
//
// It describes one state of one chip: it is kept under the cache's uuid and the generation of
// the FTL checkpoint the clean close wrote, and used only when the FTL opens clean at that
// generation (nothing on the chip changed since) and every byte verifies; otherwise the open
// reads the metadata pages as it always did. The open removes it before the cache changes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "flashdir/format.h"
#include "flashdir/status.h"

namespace flashdir::cache {

struct RestartImageKey {
  format::Uuid cache_uuid;
  std::uint64_t ftl_generation = 0;  // of the checkpoint the clean close wrote
};

// Writes `body` (Engine::restart_image_body) under `key` at `path`, replacing any: a temporary
// file beside it (restart_image_temporary), renamed over, removed if the write fails. Not
// synced: a copy a host crash leaves torn fails its checksum.
Status write_restart_image(const std::filesystem::path& path, const RestartImageKey& key,
                           const std::vector<std::uint8_t>& body);
// The body saved under `key` at `path`: not_found if there is no image, an error saying why
// otherwise (another cache's, another chip state's, torn or damaged).
Result<std::vector<std::uint8_t>> read_restart_image(const std::filesystem::path& path, const RestartImageKey& key);
// Where write_restart_image writes before the rename (a crash may leave it: the open removes it).
std::filesystem::path restart_image_temporary(const std::filesystem::path& path);

}  // namespace flashdir::cache
