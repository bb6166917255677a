#include "flashdir/cache/lost_found.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cerrno>
#include <chrono>

#include "flashdir/file_io.h"

namespace flashdir::cache {
namespace {

constexpr std::size_t kMaxNameBytes = 200;  // room for ".txt" and a ".N" suffix below NAME_MAX

// The file's path as one name: '%' and '/' escaped, cut to fit.
std::string escaped(std::string_view path) {
  std::string name;
  for (char c : path) {
    if (c == '%') {
      name += "%25";
    } else if (c == '/') {
      name += "%2F";
    } else {
      name += c;
    }
  }
  return name;
}

class SavedFile final : public LostFile {
 public:
  SavedFile(UniqueFd dir, UniqueFd data, std::string name, std::string info)
      : dir_(std::move(dir)), data_(std::move(data)), name_(std::move(name)), info_(std::move(info)) {}

  Status write_page(std::uint64_t page_no, ConstByteSpan bytes) override {
    ++pages_;
    return pwrite_all(data_.get(), bytes, page_no * bytes.size(), name_);
  }

  Status finish() override {
    if (::fsync(data_.get()) != 0) return errno_status(fmt::format("syncing lost+found/{}", name_));
    const std::string text = fmt::format("{}pages saved: {}\n", info_, pages_);
    UniqueFd info(::openat(dir_.get(), (name_ + ".txt").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                           0600));
    if (!info.valid()) return errno_status(fmt::format("creating lost+found/{}.txt", name_));
    FLASHDIR_TRY(pwrite_all(info.get(), ConstByteSpan(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
                            0, name_ + ".txt"));
    if (::fsync(info.get()) != 0 || ::fsync(dir_.get()) != 0)
      return errno_status(fmt::format("syncing lost+found/{}.txt", name_));
    return Status::ok();
  }

  const std::string& name() const override { return name_; }

 private:
  UniqueFd dir_;
  UniqueFd data_;
  std::string name_;
  std::string info_;
  std::uint64_t pages_ = 0;
};

class LostFoundDirectory final : public LostFound {
 public:
  explicit LostFoundDirectory(std::filesystem::path dir) : dir_(std::move(dir)) {}

  Result<std::unique_ptr<LostFile>> create(const CatalogFile& file, std::string_view reason) override {
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) return errno_status(fmt::format("creating {}", dir_.string()));
    UniqueFd dir(::open(dir_.c_str(), O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir.valid()) return errno_status(fmt::format("opening {}", dir_.string()));
    // A file the catalog lost has neither path nor owner: its id alone names it.
    const bool known = !file.relative_path.empty();
    const std::string base =
        (known ? fmt::format("{}-uid{}-{}", file.file_id, file.attributes.uid, escaped(file.relative_path))
               : fmt::format("{}-record-lost", file.file_id))
            .substr(0, kMaxNameBytes);
    std::string name = base;
    UniqueFd data;
    for (int attempt = 1;; ++attempt) {
      data = UniqueFd(::openat(dir.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (data.valid() || errno != EEXIST || attempt > 1000) break;
      name = fmt::format("{}.{}", base, attempt);
    }
    if (!data.valid()) return errno_status(fmt::format("creating {}/{}", dir_.string(), name));
    const BackingAttributes& a = file.attributes;
    const std::string info = fmt::format(
        "dirty pages a flashdir restart could not write back\n"
        "file id: {}\n{}why: {}\nsaved: {:%Y-%m-%d %H:%M:%S} UTC\n"
        "each page is at its own offset in the file of the same name; holes are pages the cache did not hold\n",
        file.file_id,
        known ? fmt::format("path (below the backing directory): {}\nowner: uid {} gid {}\ninode: {}\nsize "
                            "recorded: {}\n",
                            file.relative_path, a.uid, a.gid, a.inode, a.size_bytes)
              : std::string("path and owner: unknown (the catalog lost its record of this file)\n"),
        reason, std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
    return std::unique_ptr<LostFile>(std::make_unique<SavedFile>(std::move(dir), std::move(data), name, info));
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace

std::unique_ptr<LostFound> lost_found_directory(const std::filesystem::path& dir) {
  return std::make_unique<LostFoundDirectory>(dir);
}

}  // namespace flashdir::cache
