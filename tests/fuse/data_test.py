"""Data through the mount: fio with verify=crc32c (random and sequential, reads and writes,
several jobs) in each write mode, concurrent readers and writers of one file, and a cache
filled several times over. The caches are the smallest mkfs makes, so fio evicts as well.

FLASHDIR_FUSE_FIO_SIZE (default 8M per job) and FLASHDIR_FUSE_SEED scale and replay the run.
"""
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import threading

import harness

# Each write mode once; the last also runs the loop with a fixed thread count and clone_fd.
MODES = (("writethrough", ""), ("writeback", ""), ("writearound", ",threads=4,clone_fd"))
PAGE = 4096
CACHE_SIZE = "16M"  # the smallest cache: fio and full_cache overflow it


def fio(check, mnt, mode, size):
    # Each job writes its own file with a verify header per block, then reads it back; the
    # random jobs use both buffered and O_DIRECT I/O.
    jobs = [
        ("seq-write", ["--rw=write", "--bs=1M", "--direct=0"]),
        ("rand-write", ["--rw=randwrite", "--bs=4k", "--direct=0"]),
        ("rand-rw-direct", ["--rw=randrw", "--bs=8k", "--direct=1", "--verify_backlog=64"]),
        ("seq-read", ["--rw=read", "--bs=1M", "--direct=0"]),  # same block size as seq-write
    ]
    for name, args in jobs:
        command = ["fio", f"--name={name}-{mode}", f"--directory={mnt}", f"--size={size}", "--numjobs=2",
                   "--verify=crc32c", "--verify_fatal=1", "--verify_state_save=0", "--do_verify=1", "--ioengine=psync", "--group_reporting",
                   "--output-format=terse", "--randseed=" + os.environ.get("FLASHDIR_FUSE_SEED", "7"), *args]
        if name == "seq-read":
            # Reads of files the write jobs laid out (same names): verify what is there.
            command = [c for c in command if not c.startswith("--name")] + [f"--name=seq-write-{mode}", "--verify_only"]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        check.check(result.returncode == 0 and "verify" not in result.stderr.lower(),
                    f"fio {name} in {mode}: rc {result.returncode} {result.stderr.strip()[:300]}\n  replay: {' '.join(command)}")


def concurrent_one_file(check, mnt, seed):
    """Writers rewrite whole pages of one file with self-describing patterns while readers read
    it: every page a reader sees is one complete version some writer wrote (or the initial)."""
    rng = random.Random(seed)
    pages, writers, readers, rounds = 64, 3, 3, int(os.environ.get("FLASHDIR_FUSE_ROUNDS", "300"))
    path = f"{mnt}/shared"

    def pattern(page, version):
        return (f"{page:08d}:{version:08d}|".encode() * (PAGE // 18 + 1))[:PAGE]

    with open(path, "wb") as f:
        for page in range(pages):
            f.write(pattern(page, 0))
    problems = []

    def writer(index):
        local = random.Random(rng.random() + index)
        fd = os.open(path, os.O_WRONLY)
        for round_number in range(rounds):
            page = local.randrange(pages)
            os.pwrite(fd, pattern(page, index * rounds + round_number + 1), page * PAGE)
        os.close(fd)

    def reader(index):
        local = random.Random(rng.random() - index)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        import mmap
        buffer = mmap.mmap(-1, PAGE)
        for _ in range(rounds):
            page = local.randrange(pages)
            n = os.preadv(fd, [buffer], page * PAGE)
            data = bytes(buffer[:n])
            header = data[:18]
            if n != PAGE or data != (header * (PAGE // 18 + 1))[:PAGE] or not header.startswith(f"{page:08d}:".encode()):
                problems.append(f"page {page}: torn or foreign data {header!r}")
        os.close(fd)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    threads += [threading.Thread(target=reader, args=(i,)) for i in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check.check(not problems, f"concurrent readers and writers of one file (seed {seed}): {problems[:3]}")
    check.check(os.path.getsize(path) == pages * PAGE, "the shared file keeps its size")


def full_cache(check, mnt, backing, mode):
    """Writes three times what the cache holds, then reads it all back twice: every byte is
    right through the mount and in the backing file, and the cache stays within its capacity."""
    with open(f"{mnt}/.flashdir/stats.json") as f:
        capacity = json.load(f)["cache"]["capacity_pages"] * PAGE
    file_size = 4 << 20
    digests = []
    for index in range(3 * capacity // file_size + 1):
        data = random.randbytes(file_size)
        with open(f"{mnt}/full-{index}", "wb") as f:
            f.write(data)
        digests.append(hashlib.sha256(data).hexdigest())
    for _ in range(2):
        for index, digest in enumerate(digests):
            with open(f"{mnt}/full-{index}", "rb") as f:
                check.check(hashlib.sha256(f.read()).hexdigest() == digest, f"{mode}: full-{index} through the full cache")
    for index, digest in enumerate(digests):
        with open(f"{backing}/full-{index}", "rb") as f:
            check.check(hashlib.sha256(f.read()).hexdigest() == digest, f"{mode}: full-{index} in the backing file")
    with open(f"{mnt}/.flashdir/stats.json") as f:
        cache = json.load(f)["cache"]
    check.check(cache["cached_pages"] <= cache["capacity_pages"], f"{mode}: the cache stays within its capacity: {cache}")
    check.check(cache["evicted_pages"] > 0, f"{mode}: a cache filled three times over evicts: {cache}")


def main():
    harness.require_fuse()
    if shutil.which("fio") is None:
        print("skipped: fio missing")
        return harness.SKIP
    check = harness.Checker("fuse data")
    seed = int(os.environ.get("FLASHDIR_FUSE_SEED", "7"))
    size = os.environ.get("FLASHDIR_FUSE_FIO_SIZE", "8M")
    print(f"seed {seed} (FLASHDIR_FUSE_SEED={seed} replays), fio size {size} per job")
    with harness.scratch("data") as top:
        for mode, loop_options in MODES:
            backing, mnt = f"{top}/backing-{mode}", f"{top}/mnt-{mode}"
            os.mkdir(backing)
            os.mkdir(mnt)
            with harness.Mount(backing, mnt, f"{top}/cache-{mode}", f"mode={mode}{loop_options}", size=CACHE_SIZE):
                fio(check, mnt, mode, size)
                concurrent_one_file(check, mnt, seed)
                full_cache(check, mnt, backing, mode)
            check.check(not harness.is_mounted(mnt), f"{mode}: unmounted")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
