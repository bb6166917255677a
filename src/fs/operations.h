// The FUSE low-level operations, grouped by what they touch. Each one decodes its request,
// calls the inode table / backing / FileData, replies exactly once and holds no lock across
// the reply (STYLE.md, "a thin FUSE layer").
#pragma once

#include <limits>

#include "fs/fuse_api.h"
#include "fs/mount_context.h"

namespace flashdir::fs {

fuse_lowlevel_ops make_operations();

// Entries: names, attributes, links (operations_entries.cc).
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name);
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets);
void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi);
void op_readlink(fuse_req_t req, fuse_ino_t ino);
void op_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev);
void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode);
void op_symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name);
void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name);
void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name);
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name);
void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent, const char* new_name,
               unsigned int flags);
void op_statfs(fuse_req_t req, fuse_ino_t ino);

// Directories (operations_dirs.cc).
void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi);
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi);
void op_releasedir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);

// Regular files (operations_files.cc).
void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi);
void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi);
void op_write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t offset, fuse_file_info* fi);
void op_flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);
void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length, fuse_file_info* fi);
void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, fuse_file_info* fi_in, fuse_ino_t ino_out,
                        off_t off_out, fuse_file_info* fi_out, size_t len, int flags);
void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info* fi);
void op_flock(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, int op);

// Extended attributes (operations_xattr.cc).
void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size, int flags);
void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size);
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name);

// The hidden control directory MOUNT/.flashdir (control_files.cc). Each returns true if it
// answered the request (the inode was a control inode, or the name the control directory).
bool control_lookup(fuse_req_t req, fuse_ino_t parent, const char* name);
bool control_getattr(fuse_req_t req, fuse_ino_t ino);
bool control_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
bool control_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi);
bool control_write(fuse_req_t req, fuse_ino_t ino, size_t size);
bool control_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
bool control_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
bool control_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, bool plus);
// Everything else on a control inode (or creating a name inside the control directory) is
// refused with EPERM; true if it did so.
bool control_refuse(fuse_req_t req, fuse_ino_t ino);
// The same for an operation on `name` in `parent`, which also refuses the control directory's
// own name at the root: removing, renaming or replacing it would reach the backing entry it
// shadows.
bool control_refuse(fuse_req_t req, fuse_ino_t parent, const char* name);

// Looks `name` up in `parent` and records one kernel lookup (lookup, readdirplus, and each new
// object's entry): the errno if it fails, or a negative entry (ino 0) for a missing name the
// metadata cache answered.
SysResult<fuse_entry_param> look_up(MountContext& context, Inode& parent, const char* name);

// The attributes of a backing object for the kernel, from fstat of a descriptor (or the metadata
// cache, whose answer holds `seconds_left` longer), corrected for a file whose data path runs
// ahead of the backing file (correct_attributes below).
fuse_entry_param entry_for(MountContext& context, Inode& inode, const struct stat& st,
                           double seconds_left = std::numeric_limits<double>::infinity());
// Corrects attributes fstat'ed from a regular file's backing file with what its open files
// hold ahead of it (write-back): size, blocks, and the time of writes not written back yet.
void correct_attributes(Inode& inode, struct stat& st);

// Makes the backing file hold every byte written through `file` (write-back: its dirty pages
// go back) and forgets the time of those writes (operations_files.cc).
SysResult<bool> write_back(Inode& inode, OpenFile& file);
// The same through any file open on `inode` (true if none is).
SysResult<bool> write_back_open_file(Inode& inode);
// Gives every file open on `inode` the data path that bypasses the cache, each written back
// first, or none if one cannot be (the inode's data lock is taken alone): the file is getting a
// second name, or another open of it bypasses the cache.
SysResult<bool> pass_through_open_files(Inode& inode);

}  // namespace flashdir::fs
