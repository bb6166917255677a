"""A stress run in the manner of fsstress: several processes at once make random namespace and
data operations on one small tree through the mount — creates, writes, appends, truncates,
reads, mmap writes, hole punches, copy_file_range between files, fsync, renames over files and
directories, hard links, symlinks, unlinks of open files, mkdir, rmdir — in each write mode.

Nothing but the errors a racing tree gives (ENOENT, EEXIST, ENOTEMPTY, ...) may come back, and
the daemon must survive. Then the cache must agree with the backing directory: every file read
through the mount (cached pages included) equals the backing file after the unmount wrote
everything back. A second run is cut by kill -9 of the daemon; the restarted mount must serve
exactly what the backing files hold after it.

FLASHDIR_FUSE_SEED picks the run, FLASHDIR_STRESS_OPS the operations per process (default 1500).
"""
import errno
import mmap
import os
import random
import signal
import sys
import time

import harness

PROCESSES = 4
NAMES = [f"d{d}/f{f}" for d in range(3) for f in range(8)] + [f"f{f}" for f in range(8)]
DIRS = ["d0", "d1", "d2", "d0/s", "d1/s"]
MAX_SIZE = 512 * 1024
# What a tree that other processes change at the same time may answer.
RACING = {errno.ENOENT, errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR, errno.EINVAL, errno.ELOOP,
          errno.EXDEV}


class Worker:
    def __init__(self, root, seed, index):
        self.root = root
        self.rng = random.Random(seed)
        self.fds = {}  # name -> descriptor kept open (unlinks of open files, writes after renames)
        # A name only this worker uses (the others' renames can still move a file onto the tree's
        # names): its maps are not shortened under it by another process's truncate (SIGBUS).
        self.own = f"p{index}"
        self.names = NAMES + [self.own]

    def path(self, name):
        return f"{self.root}/{name}"

    def name(self):
        return self.rng.choice(self.names)

    def size(self):
        return self.rng.randrange(MAX_SIZE)

    def fd(self, name):
        if name not in self.fds:
            if len(self.fds) >= 6:
                os.close(self.fds.pop(self.rng.choice(list(self.fds))))
            self.fds[name] = os.open(self.path(name), os.O_RDWR | os.O_CREAT, 0o644)
        return self.fds[name]

    def write(self):
        offset, data = self.size(), self.rng.randbytes(self.rng.randrange(1, 64 * 1024))
        os.pwrite(self.fd(self.name()), data, offset)

    def append(self):
        with open(self.path(self.name()), "ab") as f:
            f.write(self.rng.randbytes(self.rng.randrange(1, 16 * 1024)))

    def read(self):
        with open(self.path(self.name()), "rb") as f:
            f.seek(self.size())
            f.read(self.rng.randrange(1, 128 * 1024))

    def truncate(self):
        os.truncate(self.path(self.name()), self.size())

    def map_write(self):
        fd = self.fd(self.own)
        size = os.fstat(fd).st_size
        if size == 0:
            return
        offset = self.rng.randrange(size)
        length = min(size - offset, self.rng.randrange(1, 32 * 1024))
        try:
            with mmap.mmap(fd, size) as mapped:
                mapped[offset:offset + length] = self.rng.randbytes(length)
                mapped.flush()
        except (ValueError, IndexError):
            pass  # the file shrank under the map: another process truncated it

    def punch(self):
        fd = self.fd(self.name())
        harness.fallocate(fd, 0x01 | 0x02, self.size(), self.rng.randrange(1, 64 * 1024))

    def copy(self):
        source, target = self.fd(self.name()), self.fd(self.name())
        if source != target:
            os.copy_file_range(source, target, self.rng.randrange(1, 64 * 1024), self.size(), self.size())

    def sync(self):
        if self.fds:
            os.fsync(self.rng.choice(list(self.fds.values())))

    def close_one(self):
        if self.fds:
            os.close(self.fds.pop(self.rng.choice(list(self.fds))))

    def rename(self):
        if self.rng.random() < 0.2:
            os.rename(self.path(self.rng.choice(DIRS)), self.path(self.rng.choice(DIRS)))
        else:
            os.rename(self.path(self.name()), self.path(self.name()))

    def link(self):
        os.link(self.path(self.name()), self.path(self.name()))

    def symlink(self):
        os.symlink(self.rng.choice(NAMES), self.path(self.name()))

    def unlink(self):
        os.unlink(self.path(self.name()))

    def mkdir(self):
        os.mkdir(self.path(self.rng.choice(DIRS)))

    def rmdir(self):
        os.rmdir(self.path(self.rng.choice(DIRS)))

    OPERATIONS = ((write, 20), (append, 8), (read, 15), (truncate, 5), (map_write, 4), (punch, 4), (copy, 4),
                  (sync, 4), (close_one, 5), (rename, 8), (link, 3), (symlink, 2), (unlink, 6), (mkdir, 4), (rmdir, 2))

    def run(self, count):
        """Returns the unexpected errors, as text."""
        operations, weights = zip(*self.OPERATIONS)
        unexpected = []
        for _ in range(count):
            operation = self.rng.choices(operations, weights)[0]
            try:
                operation(self)
            except OSError as e:
                if e.errno not in RACING:
                    unexpected.append(f"{operation.__name__}: {e}")
        for fd in self.fds.values():
            os.close(fd)
        return unexpected


def contents(root):
    """path -> bytes of every regular file below root, symlinks not followed."""
    found = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            found[os.path.relpath(path, root)] = harness.read_all(path)
    return found


def difference(mine, theirs):
    """How two versions of a file differ, for a failure's message: sizes, and the 4 KiB pages
    whose bytes differ (a stale cached page differs in whole pages)."""
    if mine is None or theirs is None:
        return "only on one side"
    pages = sorted({offset // 4096 for offset in range(min(len(mine), len(theirs))) if mine[offset] != theirs[offset]})
    return f"{len(mine)} bytes against {len(theirs)}, pages differing: {pages[:8]}{' ...' if len(pages) > 8 else ''}"


def run_workers(root, seed, count):
    """Forks the workers; returns their pids and the pipes their reports come back on."""
    workers = []
    for index in range(PROCESSES):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            try:
                report = "\n".join(Worker(root, seed * 100 + index, index).run(count))
                os.write(write_end, report.encode()[:60000])
            finally:
                os._exit(0)
        os.close(write_end)
        workers.append((pid, read_end))
    return workers


def reports(workers):
    """The workers' unexpected errors. A worker may die of SIGBUS, as any program does that
    writes through a map of a file another process shortened: said, not counted."""
    unexpected = []
    for pid, read_end in workers:
        with os.fdopen(read_end, "rb") as report:
            text = report.read().decode()
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            print(f"a worker died of signal {os.WTERMSIG(status)}")
            if os.WTERMSIG(status) != signal.SIGBUS:
                unexpected.append(f"worker killed by signal {os.WTERMSIG(status)}")
        unexpected += [line for line in text.splitlines() if line]
    return unexpected


def agree(check, where, through_mount, backing):
    in_backing = contents(backing)
    differ = sorted(name for name in set(through_mount) | set(in_backing) if through_mount.get(name) != in_backing.get(name))
    details = "; ".join(f"{name}: {difference(through_mount.get(name), in_backing.get(name))}" for name in differ[:5])
    check.check(through_mount and not differ,
                f"{where}: {len(through_mount)} files read through the mount equal the backing files after the unmount "
                f"(differ: {details})")


def stress(check, top, mode, seed, count):
    backing, mnt, cache = f"{top}/backing-{mode}", f"{top}/mnt-{mode}", f"{top}/cache-{mode}"
    os.mkdir(backing)
    os.mkdir(mnt)
    with harness.Mount(backing, mnt, cache, f"mode={mode}", size="16M"):
        for directory in DIRS[:3]:
            os.mkdir(f"{mnt}/{directory}")
        unexpected = reports(run_workers(mnt, seed, count))
        check.check(not unexpected, f"{mode}: only the errors of a racing tree ({len(unexpected)} others: {unexpected[:3]})")
        through_mount = contents(mnt)
    agree(check, mode, through_mount, backing)

    # kill -9 in the middle of a second run: what the restarted mount serves is what the backing
    # files hold once it has written everything back — never a stale cached page.
    mount = harness.Mount(backing, mnt, cache, f"mode={mode}", size="16M")
    try:
        workers = run_workers(mnt, seed + 1, count)
        time.sleep(1 + seed % 3)
        mount.kill9()
        reports(workers)  # the workers saw the mount go (ENOTCONN): not errors here
    finally:
        mount.stop()
    with harness.Mount(backing, mnt, cache, f"mode={mode}", size="16M"):
        through_mount = contents(mnt)
    agree(check, f"{mode}, after kill -9", through_mount, backing)


def main():
    harness.require_fuse()
    check = harness.Checker("fuse fsstress")
    seed = int(os.environ.get("FLASHDIR_FUSE_SEED", "7"))
    count = int(os.environ.get("FLASHDIR_STRESS_OPS", "1500"))
    print(f"seed {seed} (FLASHDIR_FUSE_SEED={seed} replays the choices, not the interleaving), "
          f"{PROCESSES} processes x {count} operations per mode")
    with harness.scratch("fsstress") as top:
        for mode in ("writethrough", "writeback", "writearound"):
            stress(check, top, mode, seed, count)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
