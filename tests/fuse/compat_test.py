"""Differences from a plain directory that file-system suites found (xfstests, fsx), each run in
each write mode on the mount and on a plain directory beside the backing one:

- O_DIRECT (xfstests generic/091, fsx -Z): a shared mmap of a file open with O_DIRECT, the
  bytes seen through an O_DIRECT descriptor, a buffered one and a map of the same file
  (also past a write-back file's backing end), and unaligned O_DIRECT reads and writes (which
  the mount serves and ext4 refuses: checked against a model there). An O_DIRECT O_APPEND
  write larger than one FUSE request keeps its order.
- access times (xfstests generic/120): on a backing directory that updates them (relatime,
  with an access time older than the modification), appends and partial writes leave the
  access time alone and reads change it, as on the plain directory (copy_file_range's too);
  also a read the cache answers without the backing file, and none with O_NOATIME. (The cache's own reads of the
  backing file, a write-back write's partial pages among them, changed it.)
- atime mount options (libfuse 3.14 refused relatime, norelatime, strictatime, lazytime and
  nolazytime): each mounts, and /proc/self/mountinfo shows the atime flag mount(8) would give
  (each word sets or clears its own flag; strictatime wins over noatime, relatime otherwise),
  and reads through the mount change the access time unless it is noatime; appends never do.
  strictatime needs a daemon run as root and says so.

Every daemon is stopped and every mount undone in every outcome.
"""
import mmap
import os
import subprocess
import sys

import harness

MODES = ("writethrough", "writeback", "writearound")
PAGE = 4096


def pattern(tag, length):
    return (tag.encode() * (length // len(tag) + 1))[:length]


def aligned(data):
    """A page-aligned buffer holding `data` (O_DIRECT on a plain directory needs one)."""
    buffer = mmap.mmap(-1, max(PAGE, (len(data) + PAGE - 1) // PAGE * PAGE))
    buffer[:len(data)] = data
    return buffer


def direct_read(fd, length, offset):
    buffer = aligned(bytes(length))
    n = os.preadv(fd, [buffer], offset)
    return bytes(buffer[:n])


def direct_io(root):
    """O_DIRECT beside buffered I/O and maps of one file; returns what a plain directory must
    give too."""
    seen = []
    fd = os.open(f"{root}/direct", os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
    buffered = os.open(f"{root}/direct", os.O_RDWR)
    try:
        seen.append(os.pwritev(fd, [aligned(pattern("generic/091 ", 2 * PAGE))], 0))
        # xfs_io -d -c "pwrite 0 8k" -c "mmap -r 0 4k" -c "mread 0 8": a shared map of the
        # O_DIRECT descriptor.
        try:
            with mmap.mmap(fd, PAGE, mmap.MAP_SHARED, mmap.PROT_READ) as shared:
                seen.append(("map of the O_DIRECT descriptor", shared[:8]))
        except OSError as e:
            seen.append(("map of the O_DIRECT descriptor", os.strerror(e.errno)))
        with mmap.mmap(buffered, 2 * PAGE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE) as shared:
            # A store into the map, not yet written back, is read by O_DIRECT...
            shared[100:111] = b"map written"
            seen.append(("O_DIRECT read after a store into a map", direct_read(fd, PAGE, 0)[96:115]))
            # ...and an O_DIRECT write is seen through the map and by buffered reads.
            os.pwritev(fd, [aligned(pattern("direct ", PAGE))], PAGE)
            seen.append(("map after an O_DIRECT write", shared[PAGE:PAGE + 14]))
            seen.append(("buffered read after an O_DIRECT write", os.pread(buffered, 14, PAGE)))
        # A partial last page written through the buffered descriptor (in write-back, past the
        # backing file's end): O_DIRECT reads stop at the size, a map shows it, and an O_DIRECT
        # write past it extends the file with zeros between.
        os.pwrite(buffered, b"tail", 3 * PAGE + 100)
        whole = direct_read(fd, 8 * PAGE, 0)
        seen.append(("O_DIRECT read of the whole file", len(whole), whole[3 * PAGE + 96:]))
        with mmap.mmap(buffered, 3 * PAGE + 104, mmap.MAP_SHARED, mmap.PROT_READ) as shared:
            seen.append(("map of the partial page", shared[3 * PAGE + 96:]))
        os.pwritev(fd, [aligned(pattern("extended ", PAGE))], 5 * PAGE)
        seen.append(("size after an extending O_DIRECT write", os.fstat(buffered).st_size))
        seen.append(("buffered read across the gap", os.pread(buffered, PAGE, 3 * PAGE + 100)[:8],
                     os.pread(buffered, 8, 5 * PAGE)))
    finally:
        os.close(fd)
        os.close(buffered)
    # One O_DIRECT O_APPEND write of 8 MiB: eight FUSE requests (max_write is 1 MiB).
    with open(f"{root}/log", "wb") as f:
        f.write(pattern("head ", PAGE))
    big = b"".join(i.to_bytes(4, "little") * (PAGE // 4) for i in range(2048))
    fd = os.open(f"{root}/log", os.O_WRONLY | os.O_APPEND | os.O_DIRECT)
    try:
        seen.append(("O_DIRECT append", os.pwritev(fd, [aligned(big)], 0)))
    finally:
        os.close(fd)
    with open(f"{root}/log", "rb") as f:
        seen.append(("appended bytes in order", f.read() == pattern("head ", PAGE) + big))
    return seen


def unaligned_direct(check, mnt, mode):
    """O_DIRECT at any offset, length and buffer address works through the mount, as it always
    has (ext4 refuses it with EINVAL)."""
    fd = os.open(f"{mnt}/unaligned", os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
    try:
        model = bytearray(pattern("0123456789", 10000))
        check.check(os.pwrite(fd, bytes(model), 0) == len(model), f"{mode}: unaligned O_DIRECT write of 10000 bytes")
        os.pwrite(fd, b"hello", 4093)
        model[4093:4098] = b"hello"
        check.check(os.pread(fd, 11, 4090) == bytes(model[4090:4101]), f"{mode}: unaligned O_DIRECT read")
        check.check(os.pread(fd, 20000, 3) == bytes(model[3:]), f"{mode}: unaligned O_DIRECT read to the end")
    finally:
        os.close(fd)


OLD_NS = 1_000_000_000 * 10**9  # 2001: older than any modification the steps make


def aged(path):
    """`path` holding 10,000 bytes, accessed long ago and modified after: the next read of it
    moves its access time under relatime."""
    with open(path, "wb") as f:
        f.write(pattern("aged ", 10000))
    os.utime(path, ns=(OLD_NS, OLD_NS + 5 * 10**9))


def accessed(path):
    return os.stat(path).st_atime_ns != OLD_NS


def append_to(path):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"appended")  # within the last page: write-back fills the rest of it
    finally:
        os.close(fd)


def atime_steps(root, age):
    """Whether each step moved the access time of its file under `root`; `age(name)` makes
    the file (behind the mount, for a mount)."""
    seen = []
    age("append")
    append_to(f"{root}/append")
    seen.append(("append", accessed(f"{root}/append")))
    age("partial")
    fd = os.open(f"{root}/partial", os.O_RDWR)
    try:
        os.pwrite(fd, b"partial", 5000)
    finally:
        os.close(fd)
    seen.append(("write of part of a page", accessed(f"{root}/partial")))
    for name, flags in (("read", os.O_RDONLY), ("noatime", os.O_RDONLY | os.O_NOATIME)):
        age(name)
        fd = os.open(f"{root}/{name}", flags)
        try:
            os.read(fd, 1)
        finally:
            os.close(fd)
        seen.append((f"read of one byte, flags {flags:#o}", accessed(f"{root}/{name}")))
    age("copied")
    source = os.open(f"{root}/copied", os.O_RDONLY)
    target = os.open(f"{root}/copy", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.copy_file_range(source, target, 10000)
    finally:
        os.close(source)
        os.close(target)
    seen.append(("copy_file_range from it", accessed(f"{root}/copied")))
    # A read the cache answers: the file stays open (so it is not validated again), its pages
    # cached, while its times are set back.
    age("hit")
    keep = os.open(f"{root}/hit", os.O_RDONLY)
    try:
        os.read(keep, 10000)
        age("hit")
        fd = os.open(f"{root}/hit", os.O_RDONLY)
        try:
            os.read(fd, 1)
        finally:
            os.close(fd)
    finally:
        os.close(keep)
    seen.append(("read of a cached page", accessed(f"{root}/hit")))
    return seen


def atime_reads(check, plain, backing, mnt, mode):
    want = atime_steps(plain, lambda name: aged(f"{plain}/{name}"))
    got = atime_steps(mnt, lambda name: aged(f"{backing}/{name}"))
    for (step, expected), (_, actual) in zip(want, got):
        check.check(expected == actual, f"{mode}: {step}: access time moved on a plain directory: {expected}, "
                                        f"through the mount: {actual}")


# -o words and the atime flag mountinfo shows for them, as mount(8) gives them on tmpfs ("" is
# strictatime: neither relatime nor noatime).
ATIME_OPTIONS = (("atime", "relatime"), ("noatime", "noatime"), ("relatime", "relatime"), ("norelatime", "relatime"),
                 ("strictatime", ""), ("lazytime", "relatime"), ("nolazytime", "relatime"),
                 ("noatime,relatime", "noatime"), ("strictatime,noatime", ""))


def atime_flag(mountpoint):
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[4] == os.path.realpath(mountpoint):
                return next((word for word in fields[5].split(",") if word in ("relatime", "noatime")), "")
    return None


def atime_options(check, top, mode):
    backing, mnt = f"{top}/backing-{mode}", f"{top}/mnt-{mode}"
    # What a read does on the backing file system itself (a noatime one moves nothing).
    aged(f"{backing}/opt-plain")
    with open(f"{backing}/opt-plain", "rb") as f:
        f.read(1)
    backing_moves = accessed(f"{backing}/opt-plain")
    for words, flag in ATIME_OPTIONS:
        aged(f"{backing}/opt-read")
        aged(f"{backing}/opt-append")
        try:
            with harness.Mount(backing, mnt, f"{top}/cache-{mode}", f"mode={mode},{words}"):
                check.check(atime_flag(mnt) == flag, f"{mode}, -o {words}: mountinfo shows {atime_flag(mnt)!r}, mount(8) gives {flag!r}")
                with open(f"{mnt}/opt-read", "rb") as f:
                    f.read(1)
                check.check(accessed(f"{mnt}/opt-read") == (backing_moves and flag != "noatime"),
                            f"{mode}, -o {words}: a read moved the access time: {accessed(f'{mnt}/opt-read')}")
                append_to(f"{mnt}/opt-append")
                check.check(not accessed(f"{mnt}/opt-append"), f"{mode}, -o {words}: an append moved the access time")
        except RuntimeError as e:
            check.check(False, f"{mode}, -o {words}: {e}")


def strictatime_needs_root(check, top):
    home = f"{top}/nobody"
    os.makedirs(f"{home}/b")
    os.mkdir(f"{home}/m")
    for path in (home, f"{home}/b", f"{home}/m"):
        os.chown(path, 65534, 65534)
    result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", harness.flashdir_binary(),
                             f"{home}/b", f"{home}/m", "-o", f"cache={home}/cache,size=64M,strictatime"],
                            capture_output=True, text=True, check=False, env=dict(os.environ, HOME=home))
    check.check(result.returncode != 0 and "'strictatime' needs a daemon run as root" in result.stderr,
                f"strictatime refused to a daemon not run as root: rc {result.returncode}, {result.stderr.strip()}")
    check.check(not harness.is_mounted(f"{home}/m") and not os.path.exists(f"{home}/cache"),
                "the refused strictatime mount left no mount and no cache")


def contents(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        return os.strerror(e.errno)


def run_mode(check, top, mode):
    plain, backing, mnt = f"{top}/plain-{mode}", f"{top}/backing-{mode}", f"{top}/mnt-{mode}"
    for path in (plain, backing, mnt):
        os.mkdir(path)
    want = direct_io(plain)
    with harness.Mount(backing, mnt, f"{top}/cache-{mode}", f"mode={mode}"):
        got = direct_io(mnt)
        unaligned_direct(check, mnt, mode)
        atime_reads(check, plain, backing, mnt, mode)
    for index, (expected, actual) in enumerate(zip(want, got)):
        check.check(expected == actual, f"{mode}: step {index}: a plain directory gives {expected!r}, the mount {actual!r}")
    check.check(len(want) == len(got), f"{mode}: the mount stopped after {len(got)} of {len(want)} steps")
    for name in ("direct", "log"):
        check.check(contents(f"{plain}/{name}") == contents(f"{backing}/{name}"),
                    f"{mode}: after the unmount the backing {name} equals the plain one")


def main():
    harness.require_fuse()
    check = harness.Checker("fuse compat")
    with harness.scratch("compat") as top:
        for mode in MODES:
            print(f"-- {mode}", flush=True)
            run_mode(check, top, mode)
            atime_options(check, top, mode)
            check.check(not harness.is_mounted(f"{top}/mnt-{mode}"), f"{mode}: unmounted")
        strictatime_needs_root(check, top)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
