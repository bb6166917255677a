"""Every ordinary operation on a flashdir mount gives the same result (values and errno) as on a
plain directory: the same script of operations runs against a plain directory and against the
mount (whose backing directory started equal), step by step, as root and as an unprivileged
user (nobody, through allow_other). Also the mount-only promises: O_DIRECT with unaligned
buffers, the hidden control directory, and no path outside the backing directory.
"""
import ctypes
import errno
import fcntl
import json
import mmap
import os
import stat
import struct
import subprocess
import sys

import harness

libc = ctypes.CDLL(None, use_errno=True)
RENAME_NOREPLACE, RENAME_EXCHANGE = harness.RENAME_NOREPLACE, harness.RENAME_EXCHANGE
AT_FDCWD = -100
UTIME_NOW, UTIME_OMIT = (1 << 30) - 1, (1 << 30) - 2
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_COLLAPSE_RANGE = 0x01, 0x02, 0x08
FALLOC_FL_ZERO_RANGE, FALLOC_FL_INSERT_RANGE = 0x10, 0x20
# POSIX ACLs as the kernel stores them in system.posix_acl_* (version 2; tag, permissions, id).
ACL_GRANTS_NOBODY = bytes.fromhex("02000000" "0100060000000000" "02000600feff0000" "0400000000000000"
                                  "1000060000000000" "2000000000000000")  # u::rw- u:nobody:rw- g::--- m::rw- o::---
ACL_DENIES_NOBODY = bytes.fromhex("02000000" "0100060000000000" "02000000feff0000" "0400040000000000"
                                  "1000040000000000" "2000040000000000")  # u::rw- u:nobody:--- g::r-- m::r-- o::r--
ACL_DEFAULT = bytes.fromhex("02000000" "0100070000000000" "0400050000000000" "2000000000000000")  # u::rwx g::r-x o::---


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def utimensat(path, atime, mtime):
    times = (Timespec * 2)(Timespec(*atime), Timespec(*mtime))
    if libc.utimensat(AT_FDCWD, path.encode(), times, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def shape(st):
    """What must match between the two trees (not inode numbers or ctimes)."""
    kind = stat.S_IFMT(st.st_mode)
    return {"type": kind, "mode": oct(stat.S_IMODE(st.st_mode)), "nlink": st.st_nlink, "uid": st.st_uid,
            "gid": st.st_gid, "size": st.st_size if kind == stat.S_IFREG else None}


def read_all(path):
    with open(path, "rb") as f:
        return f.read().hex()


def write_file(path, data, mode=0o644, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
    fd = os.open(path, flags, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


# Each step: (name, function of the tree root). Steps run in order and build on each other.
def root_steps():
    def append(r):
        write_file(f"{r}/app", b"one\n")
        fd = os.open(f"{r}/app", os.O_WRONLY | os.O_APPEND)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, b"two\n")
        os.close(fd)
        fd = os.open(f"{r}/app2", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.write(fd, b"a")
        os.pwrite(fd, b"b", 0)  # ignored offset: appends
        os.close(fd)
        return [read_all(f"{r}/app"), read_all(f"{r}/app2")]

    def append_toggled(r):
        # fcntl(F_SETFL) turns O_APPEND off and on on an open descriptor: each write goes where
        # the descriptor says at that moment, not where it said at open.
        write_file(f"{r}/tog", b"0123456789")
        fd = os.open(f"{r}/tog", os.O_RDWR | os.O_APPEND)
        os.write(fd, b"A")
        fcntl.fcntl(fd, fcntl.F_SETFL, 0)
        os.lseek(fd, 1, os.SEEK_SET)
        os.write(fd, b"x")
        os.pwrite(fd, b"y", 3)
        fcntl.fcntl(fd, fcntl.F_SETFL, os.O_APPEND)
        os.pwrite(fd, b"B", 0)
        os.close(fd)
        return read_all(f"{r}/tog")

    def read_only_truncate(r):
        # open(O_RDONLY | O_TRUNC) truncates on Linux: a descriptor opened before sees it.
        write_file(f"{r}/rot", bytes(range(256)) * 32)
        fd = os.open(f"{r}/rot", os.O_RDWR)
        os.pread(fd, 8192, 0)
        os.close(os.open(f"{r}/rot", os.O_RDONLY | os.O_TRUNC))
        size = os.fstat(fd).st_size
        os.pwrite(fd, b"q", 10)
        seen = os.pread(fd, 64, 0)
        os.close(fd)
        return [size, seen, read_all(f"{r}/rot")]

    def truncate_open(r):
        write_file(f"{r}/t", b"x" * 10000)
        fd = os.open(f"{r}/t", os.O_RDWR | os.O_TRUNC)
        size_after_open = os.fstat(fd).st_size
        os.write(fd, b"abc")
        os.close(fd)
        os.truncate(f"{r}/t", 5)
        shrunk = read_all(f"{r}/t")
        os.truncate(f"{r}/t", 1 << 20)  # sparse growth
        with open(f"{r}/t", "rb") as f:
            f.seek(1 << 19)
            middle = f.read(16).hex()
        return [size_after_open, shrunk, middle, os.stat(f"{r}/t").st_size]

    def sparse(r):
        fd = os.open(f"{r}/sparse", os.O_RDWR | os.O_CREAT, 0o644)
        os.pwrite(fd, b"end", 10 << 20)
        data = os.lseek(fd, 0, os.SEEK_DATA)
        hole = os.lseek(fd, 0, os.SEEK_HOLE)
        head = os.pread(fd, 8, 4096).hex()
        os.close(fd)
        return [data, hole, head, os.stat(f"{r}/sparse").st_size]

    def fallocate(r):
        fd = os.open(f"{r}/falloc", os.O_RDWR | os.O_CREAT, 0o644)
        os.posix_fallocate(fd, 0, 65536)
        size = os.fstat(fd).st_size
        os.close(fd)
        return size

    def fallocate_modes(r):
        # Each mode the kernel hands to a FUSE daemon, on a file with data: the same bytes,
        # size and holes as on the plain directory.
        write_file(f"{r}/modes", bytes(range(256)) * 256)
        fd = os.open(f"{r}/modes", os.O_RDWR)
        out = []
        for mode, offset, length in ((FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 8192),
                                     (FALLOC_FL_ZERO_RANGE, 20000, 5000),
                                     (FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 60000, 20000),
                                     (FALLOC_FL_KEEP_SIZE, 65536, 65536), (0, 70000, 10000)):
            harness.fallocate(fd, mode, offset, length)
            out.append([mode, os.fstat(fd).st_size, os.pread(fd, 1 << 20, 0).hex(), os.lseek(fd, 0, os.SEEK_HOLE)])
        os.close(fd)
        return out

    def copy_range(r):
        write_file(f"{r}/src", bytes(range(256)) * 64)
        src = os.open(f"{r}/src", os.O_RDONLY)
        dst = os.open(f"{r}/dst", os.O_WRONLY | os.O_CREAT, 0o644)
        n = os.copy_file_range(src, dst, 5000, 100, 7)
        os.close(src)
        os.close(dst)
        return [n, read_all(f"{r}/dst")]

    def copy_range_mtime(r):
        # A copy into an open file moves its mtime at once, as a write does (write-back: the
        # bytes are not in the backing file yet).
        write_file(f"{r}/cd", b"d" * 100)
        os.utime(f"{r}/cd", (1000, 1000))
        src = os.open(f"{r}/src", os.O_RDONLY)
        dst = os.open(f"{r}/cd", os.O_WRONLY)
        os.copy_file_range(src, dst, 10, 0, 0)
        moved_while_open = os.fstat(dst).st_mtime > 1000
        os.close(src)
        os.close(dst)
        return [moved_while_open, os.stat(f"{r}/cd").st_mtime > 1000, read_all(f"{r}/cd")]

    def mmap_shared(r):
        write_file(f"{r}/mm", b"\0" * 8192)
        fd = os.open(f"{r}/mm", os.O_RDWR)
        m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        m[100:105] = b"hello"
        m[5000:5003] = b"abc"
        m.flush()
        m.close()
        os.close(fd)
        return read_all(f"{r}/mm")[190:220] + read_all(f"{r}/mm")[10000:10006]

    def chmod_chown(r):
        write_file(f"{r}/owned", b"o")
        os.chmod(f"{r}/owned", 0o4755)
        os.chown(f"{r}/owned", 1000, 1000)  # a chown drops setuid
        return shape(os.stat(f"{r}/owned"))

    def setgid_dir(r):
        os.mkdir(f"{r}/sgid", 0o775)
        os.chown(f"{r}/sgid", 0, 4242)
        os.chmod(f"{r}/sgid", 0o2775)
        os.mkdir(f"{r}/sgid/sub", 0o755)
        write_file(f"{r}/sgid/file", b"g")
        return [shape(os.stat(f"{r}/sgid/sub")), shape(os.stat(f"{r}/sgid/file"))]

    def times(r):
        write_file(f"{r}/times", b"t")
        utimensat(f"{r}/times", (1000, 5), (2000, 7))
        st1 = os.stat(f"{r}/times")
        utimensat(f"{r}/times", (0, UTIME_OMIT), (3000, 9))
        st2 = os.stat(f"{r}/times")
        utimensat(f"{r}/times", (0, UTIME_NOW), (0, UTIME_OMIT))
        st3 = os.stat(f"{r}/times")
        return [st1.st_atime_ns, st1.st_mtime_ns, st2.st_atime_ns, st2.st_mtime_ns, st3.st_mtime_ns,
                st3.st_atime_ns > 10**18]

    def links(r):
        write_file(f"{r}/h1", b"h")
        os.link(f"{r}/h1", f"{r}/h2")
        same = os.stat(f"{r}/h1").st_ino == os.stat(f"{r}/h2").st_ino
        n2 = os.stat(f"{r}/h1").st_nlink
        os.unlink(f"{r}/h2")
        return [same, n2, os.stat(f"{r}/h1").st_nlink]

    def symlinks(r):
        os.symlink("h1", f"{r}/sl")
        os.symlink("loop", f"{r}/loop")
        os.symlink("/etc/passwd", f"{r}/abs")
        return [os.readlink(f"{r}/sl"), shape(os.lstat(f"{r}/sl")), read_all(f"{r}/sl"), os.readlink(f"{r}/abs")]

    def eloop(r):
        return os.open(f"{r}/loop", os.O_RDONLY)

    def nofollow(r):
        return os.open(f"{r}/sl", os.O_RDONLY | os.O_NOFOLLOW)

    def nodes(r):
        os.mkfifo(f"{r}/fifo", 0o640)
        os.mknod(f"{r}/chr", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        st = os.stat(f"{r}/chr")
        return [shape(os.stat(f"{r}/fifo")), shape(st), st.st_rdev]

    def xattrs(r):
        os.setxattr(f"{r}/h1", "user.colour", b"blue")
        value = os.getxattr(f"{r}/h1", "user.colour")
        names = sorted(os.listxattr(f"{r}/h1"))
        os.removexattr(f"{r}/h1", "user.colour")
        return [value.hex(), names, sorted(os.listxattr(f"{r}/h1"))]

    def xattr_missing(r):
        return os.getxattr(f"{r}/h1", "user.none")

    def xattr_create_twice(r):
        os.setxattr(f"{r}/h1", "user.once", b"1", os.XATTR_CREATE)
        return os.setxattr(f"{r}/h1", "user.once", b"2", os.XATTR_CREATE)

    def rename_file_over_file(r):
        write_file(f"{r}/ra", b"a")
        write_file(f"{r}/rb", b"b")
        os.rename(f"{r}/ra", f"{r}/rb")
        return [os.path.exists(f"{r}/ra"), read_all(f"{r}/rb")]

    def rename_dirs(r):
        os.mkdir(f"{r}/da")
        os.mkdir(f"{r}/db")
        os.rename(f"{r}/da", f"{r}/db")  # over an empty directory
        os.mkdir(f"{r}/dc")
        write_file(f"{r}/db/inside", b"i")
        return os.rename(f"{r}/dc", f"{r}/db")  # over a non-empty one: ENOTEMPTY

    def rename_dir_over_file(r):
        return os.rename(f"{r}/dc", f"{r}/rb")

    def rename_noreplace(r):
        write_file(f"{r}/n1", b"1")
        write_file(f"{r}/n2", b"2")
        return harness.renameat2(f"{r}/n1", f"{r}/n2", RENAME_NOREPLACE)

    def rename_exchange(r):
        harness.renameat2(f"{r}/n1", f"{r}/n2", RENAME_EXCHANGE)
        return [read_all(f"{r}/n1"), read_all(f"{r}/n2")]

    def unlink_open_file(r):
        write_file(f"{r}/gone", b"still here")
        fd = os.open(f"{r}/gone", os.O_RDWR)
        os.unlink(f"{r}/gone")
        os.pwrite(fd, b"S", 0)
        data = os.pread(fd, 64, 0)
        nlink = os.fstat(fd).st_nlink
        os.close(fd)
        return [data.hex(), nlink, os.path.exists(f"{r}/gone")]

    def errors_dirs(r):
        out = []
        for f in (lambda: os.mkdir(f"{r}/db"), lambda: os.rmdir(f"{r}/db"), lambda: os.rmdir(f"{r}/h1"),
                  lambda: os.unlink(f"{r}/db"), lambda: os.open(f"{r}/db", os.O_WRONLY),
                  lambda: os.open(f"{r}/h1/x", os.O_RDONLY), lambda: os.open(f"{r}/nope", os.O_RDONLY),
                  lambda: os.open(f"{r}/h1", os.O_CREAT | os.O_EXCL | os.O_WRONLY),
                  lambda: os.stat(f"{r}/" + "n" * 256), lambda: os.link(f"{r}/db", f"{r}/dblink")):
            out.append(outcome(f))
        return out

    def open_file_attributes(r):
        # What stat says of a file while its newest bytes may be only in the cache (write-back),
        # and times set on the open file before close (cp -p) surviving the close.
        path = f"{r}/grow"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_SYNC, 0o644)
        os.write(fd, b"x" * 10000)
        st = os.fstat(fd)
        os.pwrite(fd, b"y", 50000)
        end = os.lseek(fd, 0, os.SEEK_END)
        by_path = os.stat(path)
        appended = os.open(path, os.O_WRONLY | os.O_APPEND)
        os.write(appended, b"z" * 3)
        os.close(appended)
        os.utime(fd, ns=(5 * 10**9, 7 * 10**9))
        os.close(fd)
        final = os.stat(path)
        return [st.st_size, st.st_blocks * 512 >= 10000, end, by_path.st_size, by_path.st_blocks * 512 >= 12288,
                final.st_size, final.st_mtime_ns, read_all(path)[-10:]]

    def write_only_partial_pages(r):
        write_file(f"{r}/wo", bytes(range(256)) * 40)
        fd = os.open(f"{r}/wo", os.O_WRONLY)
        os.pwrite(fd, b"abc", 5000)
        os.pwrite(fd, b"tail", 10238)
        size = os.fstat(fd).st_size
        os.close(fd)
        return [size, read_all(f"{r}/wo")]

    def listing(r):
        return sorted(os.listdir(r))

    def big_file(r):
        data = os.urandom(3 << 20)
        write_file(f"{r}/big", data)
        with open(f"{r}/big", "rb") as f:
            f.seek(12345)
            piece = f.read(700000)
        return [piece == data[12345:12345 + 700000], os.stat(f"{r}/big").st_size]

    def link_while_open(r):
        # A file open (and cached) under one name gains a second: the opens of both names see
        # each other's writes (a file with two names bypasses the cache, the open one too).
        write_file(f"{r}/hl-a", bytes(range(256)) * 32)
        read_all(f"{r}/hl-a")
        fa = os.open(f"{r}/hl-a", os.O_RDWR)
        os.pread(fa, 8192, 0)
        os.link(f"{r}/hl-a", f"{r}/hl-b")
        fb = os.open(f"{r}/hl-b", os.O_RDWR)
        os.pwrite(fb, b"via-b", 10)
        seen_by_a = os.pread(fa, 5, 10)
        os.pwrite(fa, b"via-a", 30)
        seen_by_b = os.pread(fb, 5, 30)
        os.close(fa)
        os.close(fb)
        return [seen_by_a, seen_by_b, read_all(f"{r}/hl-b")]

    def link_unlink_while_open(r):
        # ... and keeps its one data path when the first name goes and the second is opened.
        write_file(f"{r}/hu-a", b"A" * 8192)
        fd = os.open(f"{r}/hu-a", os.O_RDWR)
        os.pread(fd, 8192, 0)
        os.link(f"{r}/hu-a", f"{r}/hu-b")
        os.unlink(f"{r}/hu-a")
        os.pwrite(fd, b"old-fd", 0)
        fd2 = os.open(f"{r}/hu-b", os.O_RDWR)
        seen_by_new = os.pread(fd2, 6, 0)
        os.pwrite(fd2, b"new-fd", 100)
        seen_by_old = os.pread(fd, 6, 100)
        os.close(fd)
        os.close(fd2)
        return [seen_by_new, seen_by_old, read_all(f"{r}/hu-b")]

    def acls(r):
        # Access ACLs (checked for nobody below) and a default ACL, under which the umask does
        # not apply: the ACL masks the new object's mode instead.
        write_file(f"{r}/acl-granted", b"granted", 0o600)
        os.setxattr(f"{r}/acl-granted", "system.posix_acl_access", ACL_GRANTS_NOBODY)
        write_file(f"{r}/acl-denied", b"denied", 0o644)
        os.setxattr(f"{r}/acl-denied", "system.posix_acl_access", ACL_DENIES_NOBODY)
        os.mkdir(f"{r}/acl-dir", 0o777)
        os.setxattr(f"{r}/acl-dir", "system.posix_acl_default", ACL_DEFAULT)
        old = os.umask(0o077)
        try:
            write_file(f"{r}/acl-dir/f", b"x", 0o666)
            os.mkdir(f"{r}/acl-dir/sub", 0o777)
            os.mkdir(f"{r}/masked", 0o777)  # no default ACL: the umask applies
        finally:
            os.umask(old)
        modes = [oct(os.stat(f"{r}/{name}").st_mode & 0o7777) for name in ("acl-granted", "acl-denied", "acl-dir/f",
                                                                              "acl-dir/sub", "masked")]
        return [modes, os.getxattr(f"{r}/acl-dir/sub", "system.posix_acl_default").hex()]

    def shared_dirs(r):
        # Prepared for the unprivileged steps.
        os.mkdir(f"{r}/pub", 0o777)
        os.chmod(f"{r}/pub", 0o1777)
        write_file(f"{r}/pub/roots", b"r", 0o644)
        write_file(f"{r}/secret", b"s", 0o600)
        os.mkdir(f"{r}/grp", 0o2777)
        os.chmod(f"{r}/grp", 0o2777)
        os.chown(f"{r}/grp", 0, 4242)
        write_file(f"{r}/pub/nobodys-target", b"t", 0o666)
        return listing(r)

    return [(f.__name__, f) for f in (append, append_toggled, read_only_truncate, truncate_open, sparse, fallocate,
                                       fallocate_modes, copy_range, copy_range_mtime, mmap_shared, chmod_chown,
                                       setgid_dir, times, links, symlinks, eloop, nofollow, nodes, xattrs, xattr_missing,
                                       xattr_create_twice, rename_file_over_file, rename_dirs, rename_dir_over_file,
                                       rename_noreplace, rename_exchange, unlink_open_file, errors_dirs, big_file,
                                       open_file_attributes, write_only_partial_pages, link_while_open,
                                       link_unlink_while_open, acls, listing, shared_dirs)]


def nobody_steps():
    def create_owned(r):
        write_file(f"{r}/pub/mine", b"m", 0o640)
        os.mkdir(f"{r}/pub/mydir", 0o750)
        os.symlink("mine", f"{r}/pub/mylink")
        os.mkfifo(f"{r}/pub/myfifo", 0o600)
        return [shape(os.lstat(f"{r}/pub/{n}")) for n in ("mine", "mydir", "mylink", "myfifo")]

    def setgid_inherit(r):
        write_file(f"{r}/grp/f", b"g", 0o2755)  # not in group 4242: the setgid bit is dropped
        os.mkdir(f"{r}/grp/d", 0o755)
        return [shape(os.stat(f"{r}/grp/f")), shape(os.stat(f"{r}/grp/d"))]

    def sticky_unlink(r):
        return os.unlink(f"{r}/pub/roots")  # EPERM: sticky directory, someone else's file

    def sticky_rename(r):
        return os.rename(f"{r}/pub/roots", f"{r}/pub/stolen")

    def eacces_read(r):
        return os.open(f"{r}/secret", os.O_RDONLY)

    def acl_granted(r):
        # Mode 0600 of root's, an ACL entry grants nobody: readable and writable.
        return [read_all(f"{r}/acl-granted"), os.access(f"{r}/acl-granted", os.R_OK | os.W_OK)]

    def acl_denied(r):
        # Mode 0644, an ACL entry denies nobody: unreadable (the kernel saw only the mode bits).
        return read_all(f"{r}/acl-denied")

    def eacces_create(r):
        return os.open(f"{r}/newfile", os.O_CREAT | os.O_WRONLY, 0o644)

    def chmod_foreign(r):
        return os.chmod(f"{r}/pub/roots", 0o777)

    def chown_own(r):
        return os.chown(f"{r}/pub/mine", 0, -1)

    def chmod_own_setgid(r):
        os.chmod(f"{r}/pub/mine", 0o2755)  # not in the file's group? it is: nogroup
        return shape(os.stat(f"{r}/pub/mine"))

    def utime_foreign_explicit(r):
        return os.utime(f"{r}/pub/nobodys-target", (1, 1))

    def utime_foreign_now(r):
        os.utime(f"{r}/pub/nobodys-target", None)  # writable: allowed
        return True

    def write_setuid_file(r):
        write_file(f"{r}/pub/sx", b"x", 0o644)
        os.chmod(f"{r}/pub/sx", 0o6755)
        with open(f"{r}/pub/sx", "ab") as f:
            f.write(b"more")
        return shape(os.stat(f"{r}/pub/sx"))

    def rename_own(r):
        os.rename(f"{r}/pub/mine", f"{r}/pub/mine2")
        return os.path.exists(f"{r}/pub/mine2")

    def link_foreign(r):
        return os.link(f"{r}/secret", f"{r}/pub/hardlink-secret")

    return [(f.__name__, f) for f in (create_owned, setgid_inherit, sticky_unlink, sticky_rename, eacces_read,
                                       acl_granted, acl_denied, eacces_create, chmod_foreign, chown_own, chmod_own_setgid,
                                       utime_foreign_explicit, utime_foreign_now, write_setuid_file, rename_own,
                                       link_foreign)]


def outcome(function):
    """A step's result as comparable JSON: its value, or the errno name it failed with."""
    try:
        value = function()
        if isinstance(value, int) and not isinstance(value, bool) and value > 2 and function.__name__ in ("eloop", "nofollow"):
            return "opened"
        return json.loads(json.dumps(value, default=str))
    except OSError as e:
        return f"errno {errno.errorcode.get(e.errno, e.errno)}"


def run_steps(steps, plain, mounted):
    return [(name, outcome(lambda: f(plain)), outcome(lambda: f(mounted))) for name, f in steps]


def run_as_nobody(steps, plain, mounted):
    return harness.as_user(lambda: run_steps(steps, plain, mounted)) or []


def control_dir_private(check, mountpoint):
    """On a mount other users may use, .flashdir is the mounting user's and root's: its stats name
    the backing and cache paths and count everyone's requests."""
    modes = [oct(stat.S_IMODE(os.stat(f"{mountpoint}/.flashdir{name}").st_mode))
             for name in ("", "/stats", "/stats.json", "/reset")]
    check.check(modes == ["0o500", "0o400", "0o400", "0o200"], f".flashdir is 0500, its stats 0400, reset 0200: {modes}")
    steps = [("read stats", lambda r: read_all(f"{r}/.flashdir/stats")),
             ("read stats.json", lambda r: read_all(f"{r}/.flashdir/stats.json")),
             ("list .flashdir", lambda r: os.listdir(f"{r}/.flashdir"))]
    for name, _, got in run_as_nobody(steps, mountpoint, mountpoint):
        check.check(got == "errno EACCES", f"nobody cannot {name} on an allow_other mount: {got}")
    result = subprocess.run([harness.flashdir_binary(), "stats", mountpoint, "--json"], capture_output=True, text=True,
                            check=False)
    check.check(result.returncode == 0 and json.loads(result.stdout or "{}").get("requests"),
                f"flashdir stats still works for root: {result.stderr.strip()}")


def control_dir_unchangeable(check, backing, mountpoint):
    """No change through the mount reaches the .flashdir the control directory shadows: rmdir
    went through to the backing's, and renames to and from it too."""
    os.mkdir(f"{backing}/.flashdir")
    os.mkdir(f"{mountpoint}/ctl-dir")
    write_file(f"{mountpoint}/ctl-file", b"x")
    m = mountpoint
    changes = [("rmdir", lambda: os.rmdir(f"{m}/.flashdir")),
               ("rename it away", lambda: os.rename(f"{m}/.flashdir", f"{m}/ctl-moved")),
               ("rename a directory over it", lambda: os.rename(f"{m}/ctl-dir", f"{m}/.flashdir")),
               ("exchange a file with it", lambda: harness.renameat2(f"{m}/ctl-file", f"{m}/.flashdir", RENAME_EXCHANGE)),
               ("mkdir inside", lambda: os.mkdir(f"{m}/.flashdir/sub")),
               ("chmod", lambda: os.chmod(f"{m}/.flashdir", 0o777)),
               ("chown", lambda: os.chown(f"{m}/.flashdir", harness.NOBODY_UID, -1)),
               ("utime", lambda: os.utime(f"{m}/.flashdir", (1, 1))),
               ("setxattr", lambda: os.setxattr(f"{m}/.flashdir", "user.flashdir", b"1"))]
    for name, change in changes:
        got = outcome(change)
        check.check(got in ("errno EPERM", "errno EACCES"), f".flashdir refuses: {name} ({got})")
    # unlink of a directory: the kernel says EISDIR before the daemon is asked.
    check.check(outcome(lambda: os.unlink(f"{m}/.flashdir")).startswith("errno "), ".flashdir refuses: unlink")
    check.check(os.path.isdir(f"{backing}/.flashdir") and os.path.isdir(f"{backing}/ctl-dir")
                and os.path.isfile(f"{backing}/ctl-file") and not os.path.exists(f"{backing}/ctl-moved"),
                f"the backing's .flashdir and the other names are as they were: {sorted(os.listdir(backing))}")
    check.check(os.path.isfile(f"{m}/.flashdir/stats"), "the control directory is still there")


def mount_only(check, top, plain, backing, mountpoint, mount):
    """The mount's own promises: O_DIRECT with unaligned buffers, fallocate modes the kernel
    refuses, the hidden control directory, capabilities, and no path outside the backing."""
    # O_DIRECT works with unaligned buffers and offsets (the plain directory may refuse).
    fd = os.open(f"{mountpoint}/direct", os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
    os.pwrite(fd, b"unaligned", 3)
    check.check(os.pread(fd, 20, 0) == b"\0\0\0unaligned", "O_DIRECT unaligned write and read back")
    os.close(fd)
    check.check(read_all(f"{backing}/direct") == (b"\0\0\0unaligned").hex(), "O_DIRECT data in the backing file")

    # Collapse and insert range: Linux's FUSE client refuses them (EOPNOTSUPP) before the
    # daemon sees them, whatever the backing file system does (doc/daemon.md).
    write_file(f"{mountpoint}/shift", b"s" * 16384)
    fd = os.open(f"{mountpoint}/shift", os.O_RDWR)
    for mode in (FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE):
        check.check(outcome(lambda: harness.fallocate(fd, mode, 4096, 4096)) == f"errno {errno.errorcode[errno.EOPNOTSUPP]}",
                    f"fallocate mode {mode:#x} is refused with EOPNOTSUPP")
    check.check(os.pread(fd, 1 << 20, 0) == b"s" * 16384, "a refused collapse or insert changes nothing")
    os.close(fd)

    # The control directory: found by name, not listed, read-only.
    check.check(".flashdir" not in os.listdir(mountpoint), ".flashdir is not listed")
    check.check(os.path.isdir(f"{mountpoint}/.flashdir"), ".flashdir is found by name")
    with open(f"{mountpoint}/.flashdir/stats.json") as f:
        stats = json.load(f)
    check.check(stats["requests"]["lookup"] > 0, "stats.json counts lookups")
    check.check(all(isinstance(value, (int, float)) for value in stats["cache"].values()),
                f"stats.json gives the cache's figures as numbers and booleans: {stats['cache']}")
    device = stats["ftl"]
    # Host pages may still sit in the device's write buffer: programs can be fewer.
    check.check(device["host_write_pages"] > 0 and device["chip_page_programs"] > 0
                and abs(device["write_amplification"] * device["host_write_pages"] - device["chip_page_programs"]) < 1e-6,
                f"stats.json shows the simulated SSD's work: {device}")
    check.check(device["erase_count_min"] <= device["erase_count_mean"] <= device["erase_count_max"]
                and device["ram_budget_bytes"] > 0, f"stats.json shows wear and device RAM: {device}")
    check.check(outcome(lambda: os.open(f"{mountpoint}/.flashdir/stats", os.O_WRONLY)) == "errno EACCES",
                "the stats file cannot be opened for writing")
    check.check(outcome(lambda: os.mkdir(f"{mountpoint}/.flashdir/x")) == "errno EPERM",
                "nothing can be created in .flashdir")
    control_dir_private(check, mountpoint)
    control_dir_unchangeable(check, backing, mountpoint)

    # The kernel's getxattr(security.capability) before each write is answered from memory.
    before = stats["data"]["capability_xattr_from_memory"]
    fd = os.open(f"{mountpoint}/capwrites", os.O_WRONLY | os.O_CREAT, 0o644)
    for i in range(50):
        os.pwrite(fd, b"w", i)
    os.close(fd)
    with open(f"{mountpoint}/.flashdir/stats.json") as f:
        after = json.load(f)["data"]["capability_xattr_from_memory"]
    check.check(after - before >= 45, f"security.capability answered from memory: {after - before} of 50 writes")
    # A capability set behind the mount is seen: the next write through the mount drops
    # it, as a write on the plain directory does.
    capability = struct.pack("<5I", 0x02000001, 1 << 10, 0, 0, 0)  # v2, effective, cap_net_bind_service
    for tree in (plain, mountpoint):
        write_file(f"{tree}/capped", b"c")  # the mount now knows "no capability"
    for tree in (plain, backing):
        os.setxattr(f"{tree}/capped", "security.capability", capability)
    for tree in (plain, mountpoint):
        with open(f"{tree}/capped", "ab") as f:
            f.write(b"more")
    check.check(outcome(lambda: os.getxattr(f"{plain}/capped", "security.capability")) == "errno ENODATA",
                "a write drops a file capability on the plain directory")
    check.check(outcome(lambda: os.getxattr(f"{backing}/capped", "security.capability")) == "errno ENODATA",
                "a write through the mount drops a capability set behind the mount")

    # Nothing resolves outside the backing directory: ".." of the root is the root, and
    # an absolute symlink is returned as a link, not followed by the daemon.
    check.check(sorted(os.listdir(f"{mountpoint}/..")) == sorted(os.listdir(top)), ".. of the mount is its parent")
    check.check(os.readlink(f"{mountpoint}/abs") == "/etc/passwd", "absolute symlink passes through")
    check.check(mount.pid > 0, "the daemon's pid is recorded in the lock file")


def changes_behind(check, mode, backing, mountpoint):
    """The backing file changes behind the mount while the mount has it open and cached; the
    mount's next change must not take that change for its own (it did: the stale cached pages
    were served after the next open, and after a remount)."""
    m, b = mountpoint, backing
    write_file(f"{m}/behind", bytes(range(256)) * 64)
    fd = os.open(f"{m}/behind", os.O_RDWR)
    os.pread(fd, 16384, 0)  # cached
    with open(f"{b}/behind", "r+b") as f:
        f.seek(8192)
        f.write(b"BEHIND")
    os.pwrite(fd, b"mount", 0)
    os.close(fd)
    check.check(read_all(f"{m}/behind") == read_all(f"{b}/behind") and bytes.fromhex(read_all(f"{b}/behind"))[8192:8198] == b"BEHIND",
                f"{mode}: a write through the mount after a change behind it: the next open reads the backing file, which kept the change")
    # An append after the file grew behind the mount goes after what it grew by, and the
    # page it shares with that growth is not patched from a stale cached copy.
    write_file(f"{m}/grown", b"0123456789")
    read_all(f"{m}/grown")
    fd = os.open(f"{m}/grown", os.O_WRONLY | os.O_APPEND)
    with open(f"{b}/grown", "ab") as f:
        f.write(b"behind")
    os.write(fd, b"APP")
    os.close(fd)
    check.check(read_all(f"{m}/grown") == b"0123456789behindAPP".hex() == read_all(f"{b}/grown"),
                f"{mode}: an append after the file grew behind the mount: {read_all(f'{m}/grown')!r}")
    # A second name made behind the mount while the file is open and cached: the first open
    # of that name takes the file's opens off the cache, so each sees the other's writes.
    write_file(f"{m}/linked", b"L" * 8192)
    fa = os.open(f"{m}/linked", os.O_RDWR)
    os.pread(fa, 8192, 0)
    os.link(f"{b}/linked", f"{b}/linked2")
    fb = os.open(f"{m}/linked2", os.O_RDWR)
    os.pwrite(fb, b"second", 0)
    seen = os.pread(fa, 6, 0)
    os.close(fb)
    os.close(fa)
    check.check(seen == b"second" and read_all(f"{b}/linked")[:12] == b"second".hex(),
                f"{mode}: a file linked behind the mount while open: the first name's open read {seen!r}")


def compare(check, mode, top, then=None):
    """The operation scripts on a plain directory and on a mount in write mode `mode`; then
    `then(check, top, plain, backing, mountpoint, mount)` on the same mount."""
    plain, backing, mountpoint = f"{top}/plain-{mode}", f"{top}/backing-{mode}", f"{top}/mnt-{mode}"
    for d in (plain, backing, mountpoint):
        os.mkdir(d, 0o755)
    with harness.Mount(backing, mountpoint, f"{top}/cache-{mode}", f"allow_other,mode={mode}") as mount:
        for who, results in (("root", run_steps(root_steps(), plain, mountpoint)),
                             ("nobody", run_as_nobody(nobody_steps(), plain, mountpoint))):
            check.check(len(results) > 0, f"{mode} {who}: no results")
            for name, want, got in results:
                check.check(want == got, f"{mode} {who} {name}: plain directory {want!r}, mount {got!r}")
        changes_behind(check, mode, backing, mountpoint)
        if then is not None:
            then(check, top, plain, backing, mountpoint, mount)
    check.check(not harness.is_mounted(mountpoint), f"{mode}: unmounted at the end")
    # The backing directory holds what the plain one does (write-back wrote everything back).
    for name in ("app", "tog", "rot", "t", "mm", "dst", "cd", "modes", "grow", "wo", "hl-b", "hu-b", "pub/mine2"):
        check.check(read_all(f"{backing}/{name}") == read_all(f"{plain}/{name}"),
                    f"{mode}: after the unmount the backing file {name} equals the plain one")


def main():
    harness.require_fuse()
    check = harness.Checker("fuse ops")
    os.umask(0o022)
    with harness.scratch("ops") as top:
        compare(check, "writethrough", top, mount_only)
        # Write-back too: sizes, appends, holes and times of files whose newest bytes are still
        # in the cache.
        compare(check, "writeback", top)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
