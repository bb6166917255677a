"""Errors through the mount are the backing file system's own, errno included (issue 10).

A backing directory on a 2 MiB tmpfs, mounted in each write mode: filling a file gets ENOSPC
exactly where a plain write to the tmpfs gets it (at write(2) in write-through and
write-around; in write-back at the latest at fsync(2) or close(2)), the bytes written before it
read back right, and once the file is removed the mount keeps working. fallocate modes the
tmpfs refuses give its EOPNOTSUPP. And an error the engine's status codes alone would turn
into EIO: a daemon run with RLIMIT_FSIZE (SIGXFSZ ignored) gets EFBIG from the backing file,
and the caller gets EFBIG.

Every tmpfs is unmounted and every daemon stopped in every outcome.
"""
import ctypes
import errno
import os
import sys
import time

import harness

MODES = ("writethrough", "writearound", "writeback")
CHUNK = 4096                # aligned pieces: a tmpfs page fits whole or not at all
TMPFS_SIZE = 2 << 20
OVERSHOOT = 256 << 10       # write-back writes this much past what the tmpfs took
CACHE_SIZE = "16M"
FSIZE_LIMIT = 64 << 20      # above the 16 MiB cache's own image: only the backing file meets it
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE = 0x01, 0x02, 0x10

libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]


def piece(offset):
    """The CHUNK bytes written at `offset`: they name it, so a misplaced piece shows."""
    return (f"<{offset:010d}>".encode() * (CHUNK // 12 + 1))[:CHUNK]


def expected(length):
    return b"".join(piece(offset) for offset in range(0, length, CHUNK))[:length]


def fallocate_errno(path, mode):
    """0, or the errno of fallocate(mode) of the first 64 KiB of `path`."""
    fd = os.open(path, os.O_RDWR)
    try:
        return 0 if libc.fallocate(fd, mode, 0, 64 << 10) == 0 else ctypes.get_errno()
    finally:
        os.close(fd)


class Fill:
    """Writes CHUNK pieces to a new file until a write fails or `stop_after` bytes are written,
    then fsyncs and closes it; records where the first error came and which errno it was."""

    def __init__(self, path, stop_after):
        self.written, self.errno, self.failed_at = 0, 0, ""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            while self.written < stop_after:
                n = os.write(fd, piece(self.written))
                if n != CHUNK:
                    self.fail("write", 0)
                    return
                self.written += n
            os.fsync(fd)
        except OSError as e:
            self.fail("write" if self.written < stop_after else "fsync", e.errno)
        finally:
            try:
                os.close(fd)
            except OSError as e:
                self.fail("close", e.errno)

    def fail(self, where, error):
        if not self.failed_at:
            self.failed_at, self.errno = where, error

    def __repr__(self):
        return f"{self.written} bytes written, then {self.failed_at or 'no error'} {errno.errorcode.get(self.errno, self.errno)}"


def read_all(path):
    with open(path, "rb") as f:
        return f.read()


def small_file(check, mnt, backing, mode):
    """A 64 KiB file through the mount writes, closes and reads back right, also in the backing."""
    small = Fill(f"{mnt}/small", 64 << 10)
    check.check(small.failed_at == "" and small.written == 64 << 10, f"{mode}: a small file: {small}")
    check.check(read_all(f"{mnt}/small") == expected(64 << 10), f"{mode}: the small file reads back through the mount")
    check.check(read_all(f"{backing}/small") == expected(64 << 10), f"{mode}: the small file is in the backing file")


def fallocate_like_tmpfs(check, mnt, backing, mode):
    """fallocate through the mount answers what the tmpfs answers (EOPNOTSUPP for ZERO_RANGE),
    asked of a file of its own on the tmpfs so that nothing changes behind the mount."""
    with open(f"{backing}/probe", "wb") as f:
        f.write(expected(64 << 10))
    for name, falloc_mode in (("ZERO_RANGE", FALLOC_FL_ZERO_RANGE),
                              ("PUNCH_HOLE|KEEP_SIZE", FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)):
        plain = fallocate_errno(f"{backing}/probe", falloc_mode)
        through_mount = fallocate_errno(f"{mnt}/small", falloc_mode)
        check.check(through_mount == plain,
                    f"{mode}: fallocate {name}: {errno.errorcode.get(through_mount, through_mount)} through the mount, "
                    f"{errno.errorcode.get(plain, plain)} on the tmpfs")
    os.unlink(f"{backing}/probe")
    check.check(read_all(f"{mnt}/small") == b"\0" * (64 << 10),
                f"{mode}: after the refused ZERO_RANGE and the hole punched, the small file (all of it punched) reads as zeros")


def fill_through_mount(check, mnt, backing, reference, mode):
    """Fills the tmpfs through the mount: ENOSPC where a plain fill got it (at the latest at
    close with write-back), and what was written before reads back right."""
    defers = mode == "writeback"
    fill = Fill(f"{mnt}/big", reference.written + OVERSHOOT if defers else 2 * TMPFS_SIZE)
    print(f"{mode}: {fill}", flush=True)
    check.check(fill.errno == errno.ENOSPC, f"{mode}: filling the tmpfs gives ENOSPC like a plain write: {fill}")
    through = read_all(f"{mnt}/big")
    on_tmpfs = read_all(f"{backing}/big")
    want = expected(fill.written)
    if not defers:
        check.check(fill.failed_at == "write" and fill.written == reference.written,
                    f"{mode}: ENOSPC at the same write as on the plain tmpfs ({reference}): {fill}")
        check.check(through == want, f"{mode}: every byte written before ENOSPC reads back ({len(through)} bytes)")
        check.check(on_tmpfs == want, f"{mode}: and is in the backing file ({len(on_tmpfs)} bytes)")
        return
    # Write-back: every write was taken into the cache; what the tmpfs could not take fails at
    # fsync or close. The pages go back in no particular order: as many as a plain fill stored
    # read back right, the others as holes, none as anything else.
    check.check(fill.failed_at in ("write", "fsync", "close"), f"{mode}: ENOSPC reaches close at the latest: {fill}")
    for where, data in (("through the mount", through), ("in the backing file", on_tmpfs)):
        pieces = [data[offset:offset + CHUNK] for offset in range(0, len(data), CHUNK)]
        right = sum(1 for index, got in enumerate(pieces) if got == want[index * CHUNK:(index + 1) * CHUNK])
        holes = sum(1 for got in pieces if got == b"\0" * CHUNK)
        check.check(len(data) <= fill.written and right + holes == len(pieces) and right * CHUNK >= reference.written,
                    f"{mode}: {where}, {right} pages read as written and {holes} as holes of {len(pieces)}; "
                    f"a plain fill stored {reference.written // CHUNK}")


def free_blocks_after_removal(path, want, seconds=5.0):
    """The tmpfs's free blocks once they are `want`, or after `seconds`: a removed file's blocks
    come back when its last descriptor closes, and the kernel sends the daemon RELEASE after
    close(2) returns, without waiting for it."""
    deadline = time.monotonic() + seconds
    while os.statvfs(path).f_bfree != want and time.monotonic() < deadline:
        time.sleep(0.02)
    return os.statvfs(path).f_bfree


def full_tmpfs(check, top, reference, mode):
    """One write mode over a 2 MiB tmpfs: a small file and fallocate first, then a fill to
    ENOSPC, then the full file removed and the mount used again."""
    backing, mnt = f"{top}/tmpfs-{mode}", f"{top}/mnt-{mode}"
    os.mkdir(backing)
    os.mkdir(mnt)
    with harness.tmpfs(backing, TMPFS_SIZE), harness.Mount(backing, mnt, f"{top}/cache-{mode}", f"mode={mode}", size=CACHE_SIZE):
        small_file(check, mnt, backing, mode)
        fallocate_like_tmpfs(check, mnt, backing, mode)
        os.unlink(f"{mnt}/small")
        empty_blocks = os.statvfs(backing).f_blocks
        check.check(free_blocks_after_removal(backing, empty_blocks) == empty_blocks, f"{mode}: the tmpfs is empty again")
        fill_through_mount(check, mnt, backing, reference, mode)
        # The full file goes: its blocks come back, and the mount keeps working.
        os.unlink(f"{mnt}/big")
        freed = free_blocks_after_removal(backing, empty_blocks) == empty_blocks
        # In write-back the last release failed to write the pages back (ENOSPC): the engine kept
        # the file for the flusher, and the unlink must let its descriptor go.
        check.check(freed, f"{mode}: removing the full file frees the tmpfs ({os.statvfs(backing).f_bfree} of {empty_blocks} blocks)")
        small_file(check, mnt, backing, mode)
    check.check(not harness.is_mounted(mnt), f"{mode}: unmounted")


def file_too_large(check, top, mode):
    """A daemon limited by RLIMIT_FSIZE: the backing file's EFBIG reaches the caller as EFBIG
    (the engine's io_error code alone would have said EIO)."""
    backing, mnt = f"{top}/fsize-backing-{mode}", f"{top}/fsize-mnt-{mode}"
    os.mkdir(backing)
    os.mkdir(mnt)
    # `trap "" XFSZ` ignores SIGXFSZ, which exec and the daemon's fork keep; prlimit sets the limit.
    prefix = ("prlimit", f"--fsize={FSIZE_LIMIT}", "--", "sh", "-c", 'trap "" XFSZ; exec "$@"', "sh")
    with harness.Mount(backing, mnt, f"{top}/fsize-cache-{mode}", f"mode={mode}", size=CACHE_SIZE, prefix=prefix):
        fd = os.open(f"{mnt}/large", os.O_WRONLY | os.O_CREAT, 0o644)
        failed_at, error = "", 0
        try:
            check.check(os.pwrite(fd, piece(0), FSIZE_LIMIT - CHUNK) == CHUNK, f"{mode}: a write below the limit")
            os.pwrite(fd, piece(0), FSIZE_LIMIT)
            os.fsync(fd)
        except OSError as e:
            failed_at, error = "write or fsync", e.errno
        finally:
            try:
                os.close(fd)
            except OSError as e:
                if not failed_at:
                    failed_at, error = "close", e.errno
        check.check(error == errno.EFBIG, f"{mode}: a write past the daemon's RLIMIT_FSIZE: "
                                          f"{errno.errorcode.get(error, error)} at {failed_at or 'nothing'}, want EFBIG")
        if mode != "writeback":
            check.check(failed_at != "close", f"{mode}: EFBIG at the write itself")
        # Reported once; the file is not stuck: a truncate below the limit, a write and a close
        # succeed (write-back drops the pages that can never go back).
        try:
            with open(f"{mnt}/large", "r+b") as f:
                f.truncate(CHUNK)
                f.write(piece(0))
            with open(f"{mnt}/large", "rb") as f:
                check.check(f.read() == piece(0), f"{mode}: after EFBIG the file takes a truncate and a write")
        except OSError as e:
            check.check(False, f"{mode}: after EFBIG the file is stuck: {e}")
        os.unlink(f"{mnt}/large")
    check.check(not harness.is_mounted(mnt), f"{mode}: unmounted")


def main():
    harness.require_fuse()
    check = harness.Checker("fuse errno")
    with harness.scratch("errno") as top:
        plain = f"{top}/plain"
        os.mkdir(plain)
        with harness.tmpfs(plain, TMPFS_SIZE):
            reference = Fill(f"{plain}/big", 2 * TMPFS_SIZE)
        print(f"plain tmpfs: {reference}", flush=True)
        if reference.errno != errno.ENOSPC or reference.failed_at != "write":
            print(f"FAIL: a plain {TMPFS_SIZE}-byte tmpfs should fill with ENOSPC at a write: {reference}")
            return 1
        for mode in MODES:
            full_tmpfs(check, top, reference, mode)
            file_too_large(check, top, mode)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
