// The hidden control directory MOUNT/.flashdir: `stats` (a table), `stats.json`, `reset`
// (write-only: opening it for writing zeroes the counters), and with the mount option
// power_cut_control `power_cut` (write-only: opening it for writing makes the cache's chip lose
// power at its next program). It is found by name only (readdir
// of the root does not list it), cannot be changed, is private to the daemon's user (and root)
// on a mount other users may use, and shadows a backing entry of the same name at the root,
// which no change through the mount reaches (doc/daemon.md).
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "fs/operations.h"

namespace flashdir::fs {
namespace {

struct ControlEntry {
  fuse_ino_t ino;
  const char* name;
};
constexpr std::array<ControlEntry, 4> kControlFiles = {{{kStatsFileIno, "stats"},
                                                        {kStatsJsonFileIno, "stats.json"},
                                                        {kResetFileIno, "reset"},
                                                        {kPowerCutFileIno, "power_cut"}}};

bool write_only(fuse_ino_t ino) { return ino == kResetFileIno || ino == kPowerCutFileIno; }

struct stat control_attr(const MountContext& context, fuse_ino_t ino) {
  struct stat st {};
  st.st_ino = ino;
  st.st_uid = context.owner_uid;
  st.st_gid = context.owner_gid;
  // Owner only: the stats name the backing and cache paths and count every user's requests.
  // default_permissions makes the kernel refuse everyone else but root.
  if (ino == kControlDirIno) {
    st.st_mode = S_IFDIR | 0500;
    st.st_nlink = 2;
  } else if (write_only(ino)) {
    st.st_mode = S_IFREG | 0200;
    st.st_nlink = 1;
  } else {
    st.st_mode = S_IFREG | 0400;
    st.st_nlink = 1;
  }
  return st;
}

// The control files change with every request the mount serves: the kernel keeps nothing.
constexpr double kControlTimeoutSeconds = 0.0;

fuse_entry_param control_entry(const MountContext& context, fuse_ino_t ino) {
  fuse_entry_param entry{};
  entry.ino = ino;
  entry.attr = control_attr(context, ino);
  entry.attr_timeout = kControlTimeoutSeconds;
  entry.entry_timeout = kControlTimeoutSeconds;
  return entry;
}

}  // namespace

bool control_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  MountContext& context = context_of(req);
  if (parent == FUSE_ROOT_ID && std::strcmp(name, kControlDirName) == 0) {
    const auto entry = control_entry(context, kControlDirIno);
    fuse_reply_entry(req, &entry);
    return true;
  }
  if (parent != kControlDirIno) return false;
  for (const auto& file : kControlFiles) {
    if (file.ino == kPowerCutFileIno && !context.options.power_cut_control) continue;
    if (std::strcmp(name, file.name) == 0) {
      const auto entry = control_entry(context, file.ino);
      fuse_reply_entry(req, &entry);
      return true;
    }
  }
  fuse_reply_err(req, ENOENT);
  return true;
}

bool control_getattr(fuse_req_t req, fuse_ino_t ino) {
  if (!is_control_ino(ino)) return false;
  const struct stat st = control_attr(context_of(req), ino);
  fuse_reply_attr(req, &st, kControlTimeoutSeconds);
  return true;
}

bool control_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (!is_control_ino(ino)) return false;
  MountContext& context = context_of(req);
  if (write_only(ino)) {
    // The work happens at the open, so that `: > reset` does it as well as `echo 1 > reset`
    // (O_TRUNC is allowed: there is nothing to truncate). What is written is ignored.
    if ((fi->flags & O_ACCMODE) != O_WRONLY) {
      fuse_reply_err(req, EACCES);
      return true;
    }
    if (ino == kResetFileIno) {
      reset_counters(context);
    } else if (auto cut = context.data->cut_power(); !cut.is_ok()) {
      fuse_reply_err(req, cut.error());
      return true;
    }
    fi->fh = 0;
    fi->direct_io = 1;
    fuse_reply_open(req, fi);
    return true;
  }
  if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC) != 0) {
    fuse_reply_err(req, EACCES);
    return true;
  }
  const auto sections = collect_stats(context);
  // The text is taken once at open, so that reads in pieces see one consistent snapshot.
  fi->fh = context.stats_snapshots.add(
      std::make_unique<std::string>(ino == kStatsJsonFileIno ? render_json(sections) : render_table(sections)));
  fi->direct_io = 1;  // the file's size is 0 in its attributes; reads must reach the daemon
  if (fuse_reply_open(req, fi) != 0) context.stats_snapshots.take(fi->fh);
  return true;
}

bool control_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi) {
  if (!is_control_ino(ino)) return false;
  const std::string& text = OpenHandles<std::string>::of(fi->fh);
  const auto start = std::min(static_cast<size_t>(std::max<off_t>(offset, 0)), text.size());
  // Replied from a copy: once the kernel has the reply, the reader may close the file and its
  // RELEASE may free the snapshot on another worker while this one is still returning from
  // writev (AddressSanitizer checks the buffer after the system call and reports exactly that).
  const std::string piece = text.substr(start, std::min(size, text.size() - start));
  fuse_reply_buf(req, piece.data(), piece.size());
  return true;
}

bool control_write(fuse_req_t req, fuse_ino_t ino, size_t size) {
  if (!is_control_ino(ino)) return false;
  fuse_reply_write(req, size);  // only `reset` and `power_cut` open for writing; their open did the work
  return true;
}

bool control_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (!is_control_ino(ino)) return false;
  if (ino == kStatsFileIno || ino == kStatsJsonFileIno) context_of(req).stats_snapshots.take(fi->fh);
  fuse_reply_err(req, 0);
  return true;
}

bool control_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (!is_control_ino(ino)) return false;
  if (ino != kControlDirIno) {
    fuse_reply_err(req, ENOTDIR);
    return true;
  }
  fi->fh = 0;
  fuse_reply_open(req, fi);
  return true;
}

bool control_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, bool plus) {
  if (ino != kControlDirIno) return false;
  MountContext& context = context_of(req);
  std::string buffer(size, '\0');
  size_t used = 0;
  // Offsets: entry i (0-based) is followed by offset i + 1.
  for (size_t i = static_cast<size_t>(std::max<off_t>(offset, 0)); i < kControlFiles.size(); ++i) {
    const auto next = static_cast<off_t>(i + 1);
    size_t entry_size = 0;
    if (plus) {
      const auto entry = control_entry(context, kControlFiles[i].ino);
      entry_size = fuse_add_direntry_plus(req, buffer.data() + used, size - used, kControlFiles[i].name, &entry, next);
    } else {
      const struct stat st = control_attr(context, kControlFiles[i].ino);
      entry_size = fuse_add_direntry(req, buffer.data() + used, size - used, kControlFiles[i].name, &st, next);
    }
    if (entry_size > size - used) break;
    used += entry_size;
  }
  fuse_reply_buf(req, buffer.data(), used);
  return true;
}

bool control_refuse(fuse_req_t req, fuse_ino_t ino) {
  if (!is_control_ino(ino)) return false;
  context_of(req).counters.count_error();
  fuse_reply_err(req, EPERM);
  return true;
}

bool control_refuse(fuse_req_t req, fuse_ino_t parent, const char* name) {
  if (parent != FUSE_ROOT_ID || std::strcmp(name, kControlDirName) != 0) return control_refuse(req, parent);
  context_of(req).counters.count_error();
  fuse_reply_err(req, EPERM);
  return true;
}

}  // namespace flashdir::fs
