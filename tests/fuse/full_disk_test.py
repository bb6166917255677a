"""A full cache disk (issue 18 §4). mkfs.flashdir and a first mount refuse a cache whose image does
not fit, saying how much is free. A mount whose cache disk fills stays up: it serves every file
from the backing (write-through and write-around lose nothing), keeps write-back data and answers
its writers with errors, says why in its stats, and caches again once there is room. Before, the
image was sparse and met ENOSPC, then RocksDB aborted the daemon and the mount answered ENOTCONN.
"""
import contextlib
import errno
import json
import os
import subprocess
import sys
import time

import harness

KIB, MIB = 1024, 1024 * 1024


@contextlib.contextmanager
def small_disk(path, size):
    """A tmpfs of `size` at `path` (made here): a cache disk that fills."""
    os.makedirs(path)
    with harness.tmpfs(path, size):
        yield path


def fill(disk):
    """Writes a file on `disk` until ENOSPC; returns its path."""
    filler = f"{disk}/filler"
    with open(filler, "ab", buffering=0) as f:
        for block in (bytes(MIB), bytes(4 * KIB)):
            with contextlib.suppress(OSError):
                while True:
                    f.write(block)
    return filler


def health(mnt):
    with open(f"{mnt}/.flashdir/stats.json") as f:
        stats = json.load(f)
    return stats["cache_health"], stats.get("cache", {})


def wait_for_state(mnt, state, seconds=20.0):
    deadline = time.monotonic() + seconds
    while True:
        now, _ = health(mnt)
        if now["state"] == state or time.monotonic() > deadline:
            return now
        time.sleep(0.1)


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def errno_of(action):
    try:
        action()
    except OSError as e:
        return e.errno
    return 0


def refuses_a_cache_that_does_not_fit(check, top):
    with small_disk(f"{top}/refuse", "24M") as disk:
        result = subprocess.run([os.environ["MKFS_FLASHDIR"], "--size", "1T", f"{disk}/c"],
                                capture_output=True, text=True, check=False)
        check.check(result.returncode != 0 and "free" in result.stderr,
                    f"mkfs: a 1 TiB cache on a 24 MiB disk is refused, saying what is free: {result.stderr.strip()}")
        check.check(os.listdir(disk) == [], f"mkfs: the refusal leaves nothing behind: {os.listdir(disk)}")
        backing, mnt = f"{top}/refuse-b", f"{top}/refuse-m"
        os.makedirs(backing)
        os.makedirs(mnt)
        result = subprocess.run([harness.flashdir_binary(), backing, mnt, "-o", f"cache={disk}/c2,size=64M"],
                                capture_output=True, text=True, check=False)
        mounted = harness.is_mounted(mnt)
        if mounted:
            harness.unmount(mnt)
        check.check(result.returncode != 0 and not mounted and "free" in result.stderr,
                    f"mount: a new 64 MiB cache on a 24 MiB disk is refused: {result.stderr.strip()}")


def serves_while_full(check, top, mode, min_free):
    """Files cached, the cache disk filled (with min_free=0 the catalog itself meets ENOSPC), every
    file read and written through the mount, the disk emptied, caching again."""
    name = f"{mode}-{min_free}"
    backing, mnt = f"{top}/{name}-b", f"{top}/{name}-m"
    os.makedirs(backing)
    os.makedirs(mnt)
    files = {f"f{i}": os.urandom(256 * KIB) for i in range(8)}
    for file, data in files.items():
        write_file(f"{backing}/{file}", data)
    held_data = b"HELD-BY-THE-CACHE" * (MIB // 16)
    with small_disk(f"{top}/{name}-disk", "48M") as disk, \
            harness.Mount(backing, mnt, f"{disk}/c", f"mode={mode},min_free={min_free},consistency=strict", size="16M") as mount:
        for file, data in files.items():
            check.check(harness.read_all(f"{mnt}/{file}") == data, f"{name}: {file} reads right")
        held = None
        if mode == "writeback":
            # Written, not fsync'd, still open: only the cache holds these bytes. (No process may
            # start meanwhile: its exec closes a copy of the descriptor, and that close writes back.)
            held = os.open(f"{mnt}/held", os.O_RDWR | os.O_CREAT, 0o644)
            os.write(held, held_data)
        filler = fill(disk)
        if min_free == "0":
            # The catalog meets the full disk when new files are recorded (RocksDB may free a
            # little room first by deleting files it no longer needs: the filler takes that too).
            failures = 0
            for i in range(20):
                failures += errno_of(lambda: write_file(f"{mnt}/new-at-full-{i}", b"n" * 8192)) != 0
                if health(mnt)[0]["state"] == "stopped":
                    break
                fill(disk)
            check.check(failures == 0, f"{name}: new files are written while the catalog cannot record them")
        now = wait_for_state(mnt, "stopped")
        check.check(now["state"] == "stopped" and now["stops"] == 1,
                    f"{name}: the stats say the cache stopped, and why: {now}")
        check.check(harness.is_alive(mount.pid), f"{name}: the daemon is alive")
        for file, data in files.items():
            check.check(harness.read_all(f"{mnt}/{file}") == data, f"{name}: {file} reads right from the backing")
        fresh = os.urandom(300 * KIB)
        check.check(errno_of(lambda: write_file(f"{mnt}/fresh", fresh)) == 0, f"{name}: a new file is written")
        check.check(harness.read_all(f"{backing}/fresh") == fresh, f"{name}: the new file is in the backing")
        files["f0"] = os.urandom(256 * KIB)
        with open(f"{mnt}/f0", "r+b") as f:
            f.write(files["f0"])
        check.check(harness.read_all(f"{backing}/f0") == files["f0"], f"{name}: an overwrite of a cached file reaches the backing")
        if held is not None:
            check.check(now["files_held_unwritten"] == 1, f"{name}: the stats count the held file: {now}")
            check.check(errno_of(lambda: harness.read_all(f"{mnt}/held")) == errno.EIO,
                        f"{name}: the held file cannot be opened around the cache (EIO)")
            check.check(errno_of(lambda: os.pwrite(held, b"late", 0)) != 0, f"{name}: its writer gets an error")
            # The file, not its name: renamed, it still cannot be opened around the cache.
            os.rename(f"{mnt}/held", f"{mnt}/held-moved")
            check.check(errno_of(lambda: harness.read_all(f"{mnt}/held-moved")) == errno.EIO,
                        f"{name}: under another name the held file still answers EIO")
            check.check(errno_of(lambda: write_file(f"{mnt}/held", b"another file")) == 0
                        and harness.read_all(f"{mnt}/held") == b"another file",
                        f"{name}: another file made at the held file's old name is served")
            os.rename(f"{mnt}/held-moved", f"{mnt}/held")
        os.unlink(filler)
        if held is not None:
            check.check(errno_of(lambda: os.close(held)) != 0, f"{name}: the held file's close reports the error")
        now = wait_for_state(mnt, "caching")
        check.check(now["state"] == "caching" and now["resumes"] == 1, f"{name}: the cache runs again: {now}")
        for file, data in files.items():
            check.check(harness.read_all(f"{mnt}/{file}") == data, f"{name}: {file} reads right after the resume")
        check.check(harness.read_all(f"{mnt}/fresh") == fresh, f"{name}: the new file reads right after the resume")
        if held is not None:
            check.check(harness.read_all(f"{backing}/held") == held_data, f"{name}: the held file's data went back to it")
        _, before = health(mnt)
        harness.read_all(f"{mnt}/f1")
        _, after = health(mnt)
        check.check(after["read_hit_pages"] > before["read_hit_pages"], f"{name}: reads hit the cache again")


def main():
    harness.require_fuse()
    check = harness.Checker("fuse full disk")
    with harness.scratch("fulldisk") as top:
        refuses_a_cache_that_does_not_fit(check, top)
        for mode in ("writethrough", "writearound", "writeback"):
            serves_while_full(check, top, mode, "4M")
        serves_while_full(check, top, "writethrough", "0")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
