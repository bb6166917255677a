"""Opens that race a hard link: one data path per inode (doc/daemon.md "Passed through").

A file with two names passes through the cache; its opens through the engine switch to the
backing file when the second name appears. Here some processes open a file by its one name
(through the engine: reads fill the cache, writes patch cached pages) while others give it a
second name, write through that name (straight to the backing file) and remove the name again,
over and over. An open that chose the engine and was not yet known to the inode while another
open chose the backing file used to keep serving (and patching) cached pages the direct write
had made stale; the engine then took the backing file's new times for its own writes' and the
wrong bytes outlived the mount.

Every mode; then every file read through the mount must equal the backing file after the
unmount. FLASHDIR_RACE_SECONDS (default 4 per mode) and FLASHDIR_FUSE_SEED scale and replay it.
"""
import errno
import os
import random
import sys
import time

import harness

FILES = 3
FILE_SIZE = 64 * 1024
PAGE = 4096


def through_the_engine(root, rng, deadline):
    """Opens by the files' own names: reads fill the cache, writes patch a part of a page. One
    open is kept for a while and written through (its file's state then takes the backing
    file's new times for its own writes'), others come and go beside it."""
    def patch(fd, page):
        os.pwrite(fd, rng.randbytes(rng.randrange(1, PAGE // 2)), page * PAGE + rng.randrange(PAGE // 2))

    kept, kept_rounds = None, 0
    while time.monotonic() < deadline:
        if kept_rounds == 0:
            if kept is not None:
                os.close(kept)
            kept, kept_rounds = os.open(f"{root}/f{rng.randrange(FILES)}", os.O_RDWR), 20
        kept_rounds -= 1
        patch(kept, rng.randrange(FILE_SIZE // PAGE))
        fd = os.open(f"{root}/f{rng.randrange(FILES)}", os.O_RDWR)
        try:
            page = rng.randrange(FILE_SIZE // PAGE)
            os.pread(fd, PAGE, page * PAGE)
            for _ in range(2):
                patch(fd, page)
            os.pread(fd, PAGE, page * PAGE)
        finally:
            os.close(fd)
    os.close(kept)


def through_a_second_name(root, rng, deadline, index):
    """Gives a file a second name, writes through it (past the cache) and removes it."""
    while time.monotonic() < deadline:
        source, second = f"{root}/f{rng.randrange(FILES)}", f"{root}/link{index}"
        try:
            os.link(source, second)
        except OSError as e:
            # ENOENT: the kernel's link count of the source fell to 0 in its attribute cache, a
            # race of its own between a getattr and the unlink of the last round's second name
            # (doc/daemon.md "Hard links and the kernel's link count").
            if e.errno == errno.ENOENT:
                continue
            if e.errno != errno.EEXIST:
                raise
        fd = os.open(second, os.O_RDWR)
        try:
            offset = rng.randrange(FILE_SIZE - PAGE)
            os.pwrite(fd, rng.randbytes(rng.randrange(1, PAGE)), offset)
        finally:
            os.close(fd)
        os.unlink(second)


def race(check, top, mode, seed, seconds):
    backing, mnt, cache = f"{top}/backing-{mode}", f"{top}/mnt-{mode}", f"{top}/cache-{mode}"
    os.mkdir(backing)
    os.mkdir(mnt)
    rng = random.Random(seed)
    for index in range(FILES):
        with open(f"{backing}/f{index}", "wb") as f:
            f.write(rng.randbytes(FILE_SIZE))
    with harness.Mount(backing, mnt, cache, f"mode={mode}", size="16M"):
        deadline = time.monotonic() + seconds
        pids = []
        for index in range(4):
            pid = os.fork()
            if pid == 0:
                status = 1
                try:
                    worker_rng = random.Random(seed * 10 + index)
                    if index % 2 == 0:
                        through_the_engine(mnt, worker_rng, deadline)
                    else:
                        through_a_second_name(mnt, worker_rng, deadline, index)
                    status = 0
                except OSError as e:
                    print(f"worker {index}: {e}")
                finally:
                    os._exit(status)
            pids.append(pid)
        failed = [pid for pid in pids if os.waitpid(pid, 0)[1] != 0]
        check.check(not failed, f"{mode}: every worker ran without an error ({len(failed)} failed)")
        through_mount = {name: harness.read_all(f"{mnt}/{name}") for name in sorted(os.listdir(mnt))}
    differ = [name for name, data in through_mount.items() if data != harness.read_all(f"{backing}/{name}")]
    check.check(len(through_mount) == FILES and not differ,
                f"{mode}: the {len(through_mount)} files read through the mount equal the backing files after the "
                f"unmount (differ: {differ})")


def main():
    harness.require_fuse()
    check = harness.Checker("fuse data path race")
    seed = int(os.environ.get("FLASHDIR_FUSE_SEED", "7"))
    seconds = float(os.environ.get("FLASHDIR_RACE_SECONDS", "4"))
    print(f"seed {seed} (FLASHDIR_FUSE_SEED={seed} replays the choices, not the interleaving), {seconds} s per mode")
    with harness.scratch("data-path-race") as top:
        for mode in os.environ.get("FLASHDIR_RACE_MODES", "writethrough writeback writearound").split():
            race(check, top, mode, seed, seconds)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
