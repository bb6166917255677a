#include "lost_found_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "catalog_check.h"
#include "flashdir/cache/lost_found.h"

namespace flashdir {

void report_lost_found(const CacheDirPaths& paths, CheckReport& report) {
  std::error_code error;
  std::vector<std::string> saved;
  std::vector<std::string> catalogs;
  for (const auto& entry : std::filesystem::directory_iterator(paths.dir / kLostFoundDirName, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".txt") continue;
    (name.starts_with(kReplacedCatalogPrefix) ? catalogs : saved).push_back(name);
  }
  std::sort(saved.begin(), saved.end());
  std::sort(catalogs.begin(), catalogs.end());
  const auto joined = [](const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
  };
  const std::string where = (paths.dir / kLostFoundDirName).string();
  if (!saved.empty()) {
    report.notes.push_back(fmt::format(
        "{} holds dirty pages a restart or fsck -y could not prove belong to the file at their path: {}; each .txt "
        "says whose they were: copy what is wanted back into the backing directory, then delete them",
        where, joined(saved)));
  }
  if (!catalogs.empty()) {
    report.notes.push_back(fmt::format(
        "{} holds catalogs fsck -y replaced: {}; each .txt says why. Nothing uses them: delete them once nothing in "
        "them is wanted",
        where, joined(catalogs)));
  }
}

Status save_in_lost_found(const CacheDirPaths& paths, Ftl& ftl, const cache::SlotLayout& layout,
                          const std::map<std::uint64_t, std::vector<cache::RecoveredSlot>>& by_file,
                          const std::function<std::string(std::uint64_t)>& reason, std::vector<std::string>& saved,
                          std::vector<std::string>& lost) {
  if (by_file.empty()) return Status::ok();
  const auto lost_found = cache::lost_found_directory(paths.dir / kLostFoundDirName);
  std::vector<std::uint8_t> page(layout.page_size_bytes);
  for (const auto& [file_id, slots] : by_file) {
    auto file = lost_found->create(CatalogFile{file_id, {}, {}}, reason(file_id));
    if (!file.is_ok()) return file.status().with_context("saving dirty pages in lost+found");
    std::uint64_t written = 0;
    for (const cache::RecoveredSlot& slot : slots) {
      Status read = ftl.read(layout.data_lpn(slot.slot), 1, page);
      if (read.code() == StatusCode::corruption) {
        lost.push_back(fmt::format("LOST: dirty page {} of file {} (slot {}) no longer reads: {}", slot.entry.page_no,
                                   file_id, slot.slot, read.message()));
        continue;
      }
      FLASHDIR_TRY(read);
      FLASHDIR_TRY((*file)->write_page(slot.entry.page_no, page));
      ++written;
    }
    FLASHDIR_TRY((*file)->finish());
    saved.push_back(fmt::format("saved {} dirty pages of file {} as CACHE/{}/{}", written, file_id, kLostFoundDirName,
                                (*file)->name()));
  }
  return Status::ok();
}

}  // namespace flashdir
