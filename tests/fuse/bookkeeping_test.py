"""Damaged bookkeeping is detected, never served (issue 18): a catalog that lost its write-ahead
log never lets the metadata pages name a new file's pages, and another cache's catalog put in
place of a cache's own is refused.
"""
import contextlib
import glob
import os
import shutil
import subprocess
import sys

import harness

PAGE = 4096


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


def catalog_log_deleted(check, top):
    """30 files cached, a clean unmount, the catalog's log deleted, 30 new files cached, a remount,
    and each new file extended: the extension reads zeros, never an old file's bytes (the old
    daemon gave the new files the old ids, and metadata pages the restart had not rewritten
    named their pages)."""
    backing, mnt, cache = f"{top}/wal/b", f"{top}/wal/m", f"{top}/wal/c"
    os.makedirs(backing)
    os.makedirs(mnt)
    old = {f"old{i:02}": bytes([(i * 7 + j) % 251 + 1 for j in range(64)]) * (16 * PAGE // 64) for i in range(30)}
    for name, data in old.items():
        write_file(f"{backing}/{name}", data)
    with harness.Mount(backing, mnt, cache):
        for name, data in old.items():
            check.check(harness.read_all(f"{mnt}/{name}") == data, f"wal: {name} reads right")
    logs = glob.glob(f"{cache}/catalog/*.log")
    check.check(len(logs) > 0, f"wal: the catalog has a write-ahead log to delete: {os.listdir(f'{cache}/catalog')}")
    for log in logs:
        os.unlink(log)
    new = {f"new{i:02}": bytes([200 - i]) * PAGE for i in range(30)}
    with harness.Mount(backing, mnt, cache) as mount:
        for name, data in new.items():
            write_file(f"{mnt}/{name}", data)
            check.check(harness.read_all(f"{mnt}/{name}") == data, f"wal: {name} reads right")
        check.check("lost" in mount.startup_log, f"wal: the mount says the catalog lost records: {mount.startup_log}")
    with harness.Mount(backing, mnt, cache):
        wrong = 0
        for name, data in new.items():
            os.truncate(f"{mnt}/{name}", 16 * PAGE)
            extended = harness.read_all(f"{mnt}/{name}")
            check.check(extended[:PAGE] == data, f"wal: {name} still reads right")
            wrong += sum(1 for p in range(1, 16) if extended[p * PAGE:(p + 1) * PAGE] != bytes(PAGE))
        check.check(wrong == 0, f"wal: the extended files read zeros ({wrong} of {15 * len(new)} pages hold other bytes)")


def catalog_log_deleted_after_kill(check, top):
    """Write-back: an fsync'd page, kill -9, the catalog's log deleted: the page is kept in
    lost+found and the mount says so (before, it was dropped without a word)."""
    backing, mnt, cache = f"{top}/wal9/b", f"{top}/wal9/m", f"{top}/wal9/c"
    os.makedirs(backing)
    os.makedirs(mnt)
    write_file(f"{backing}/journal", b"o" * 4 * PAGE)
    mount = harness.Mount(backing, mnt, cache, "mode=writeback")
    try:
        fd = os.open(f"{mnt}/journal", os.O_RDWR)
        os.pwrite(fd, b"FSYNCED-RECORD!!" * (PAGE // 16), PAGE)
        os.fsync(fd)
        mount.kill9()
        with contextlib.suppress(OSError):  # the daemon is gone: ENOTCONN
            os.close(fd)
    finally:
        mount.stop()
    for log in glob.glob(f"{cache}/catalog/*.log"):
        os.unlink(log)
    with harness.Mount(backing, mnt, cache, "mode=writeback") as again:
        check.check("saved in" in again.startup_log and "lost" in again.startup_log,
                    f"wal9: the mount says the catalog lost records and where the page went: {again.startup_log}")
        check.check(harness.read_all(f"{mnt}/journal") == b"o" * 4 * PAGE, "wal9: the file reads as its backing file holds it")
    saved = [n for n in os.listdir(f"{cache}/lost+found") if not n.endswith(".txt")] \
        if os.path.isdir(f"{cache}/lost+found") else []
    check.check(len(saved) == 1 and saved[0].endswith("-record-lost"), f"wal9: lost+found keeps the page: {saved}")
    if saved:
        kept = harness.read_all(f"{cache}/lost+found/{saved[0]}")
        check.check(kept[PAGE:2 * PAGE] == b"FSYNCED-RECORD!!" * (PAGE // 16), "wal9: with its bytes at their offset")


def another_caches_catalog(check, top):
    """Another cache's catalog put in a cache's place: refused, the cache served from neither."""
    backing, mnt = f"{top}/swap/b", f"{top}/swap/m"
    os.makedirs(backing)
    os.makedirs(mnt)
    write_file(f"{backing}/f", b"f" * PAGE)
    for cache in (f"{top}/swap/c1", f"{top}/swap/c2"):
        with harness.Mount(backing, mnt, cache):
            check.check(harness.read_all(f"{mnt}/f") == b"f" * PAGE, "swap: f reads right")
    shutil.rmtree(f"{top}/swap/c1/catalog")
    shutil.copytree(f"{top}/swap/c2/catalog", f"{top}/swap/c1/catalog")
    result = subprocess.run([harness.flashdir_binary(), backing, mnt, "-o", f"cache={top}/swap/c1"],
                            capture_output=True, text=True, check=False)
    if harness.is_mounted(mnt):
        harness.unmount(mnt)
    check.check(result.returncode == 1 and "belongs to another cache" in result.stderr,
                f"swap: a cache with another cache's catalog is refused: {result.stderr.strip()}")


def main():
    harness.require_fuse()
    check = harness.Checker("fuse bookkeeping")
    with harness.scratch("bookkeeping") as top:
        catalog_log_deleted(check, top)
        catalog_log_deleted_after_kill(check, top)
        another_caches_catalog(check, top)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
