"""A file-system exerciser in the manner of fsx: one file, a long seeded run of random
operations — buffered and O_DIRECT reads and writes, reads and writes through mmap, truncates
up and down, fallocate in every mode, copy_file_range inside the file, fsync, close and reopen —
each checked against a model of the file's bytes, in each write mode. After the unmount the
backing file must equal the model too.

The same run on a plain directory first checks the exerciser against the backing filesystem:
where that filesystem refuses an operation (collapse and insert range on tmpfs), the mount must
refuse it with the same errno and leave the bytes alone. Linux's FUSE client refuses collapse
and insert range itself (EOPNOTSUPP, doc/daemon.md "fallocate modes"), whatever the backing does.

Then write-through once more over a FUSE store (slowstore, $SLOWSTORE): over a remote store the
daemon stores a large write's pages in the cache behind it, while the next write goes to the
store (doc/cache.md "Writes").

FLASHDIR_FUSE_SEED picks the run, FLASHDIR_FSX_OPS its length (default 2500 per mode).
"""
import errno
import mmap
import os
import random
import sys

import harness

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "slowstore"))
from slowstore_mount import SlowstoreMount  # noqa: E402

PAGE = 4096
MAX_SIZE = 256 * 1024  # fsx's default file length
MODES = ("writethrough", "writeback", "writearound")

FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02
FALLOC_FL_COLLAPSE_RANGE = 0x08
FALLOC_FL_ZERO_RANGE = 0x10
FALLOC_FL_INSERT_RANGE = 0x20

# Refused by the kernel's FUSE client before a daemon sees them.
FUSE_REFUSES = {f"fallocate {FALLOC_FL_COLLAPSE_RANGE:#x}": errno.EOPNOTSUPP,
                f"fallocate {FALLOC_FL_INSERT_RANGE:#x}": errno.EOPNOTSUPP}

class Exerciser:
    def __init__(self, path, seed, log):
        self.path = path
        self.rng = random.Random(seed)
        self.model = bytearray()
        self.log = log  # every operation, for the report of a failure
        self.refused = {}  # operation name -> errno, where the filesystem refuses it
        self.fd = self.direct_fd = -1
        self.open()

    def open(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        self.direct_fd = os.open(self.path, os.O_RDWR | os.O_DIRECT)

    def close(self):
        os.close(self.fd)
        os.close(self.direct_fd)

    def range(self, max_length=64 * 1024, within=False, align=1):
        size = len(self.model)
        limit = max(size, 1) if within else MAX_SIZE
        offset = self.rng.randrange(limit) // align * align
        length = max(align, self.rng.randrange(1, max_length + 1) // align * align)
        return offset, min(length, max(align, MAX_SIZE - offset))

    def data(self, length):
        return self.rng.randbytes(length)

    def put(self, offset, data):
        end = offset + len(data)
        if len(self.model) < end:
            self.model.extend(bytes(end - len(self.model)))
        self.model[offset:end] = data

    def expect(self, what, got, offset):
        want = bytes(self.model[offset:offset + len(got)])
        if got != want:
            first = next(i for i in range(len(got)) if i >= len(want) or got[i] != want[i])
            raise AssertionError(f"{what}: byte {offset + first} is {got[first]:#04x}, the model has "
                                 f"{want[first] if first < len(want) else 'nothing (past its end)'}")

    # ---- operations: each logs itself, applies itself to the file and to the model ----

    def read(self):
        offset, length = self.range(within=True)
        self.log.append(f"read {offset} {length}")
        got = os.pread(self.fd, length, offset)
        if len(got) != max(0, min(length, len(self.model) - offset)):
            raise AssertionError(f"read {offset}+{length} returned {len(got)} bytes, the model has {len(self.model)}")
        self.expect("read", got, offset)

    def write(self):
        offset, length = self.range()
        data = self.data(length)
        self.log.append(f"write {offset} {length}")
        if os.pwrite(self.fd, data, offset) != length:
            raise AssertionError("short write")
        self.put(offset, data)

    def direct_read(self):
        offset, length = self.range(within=True, align=PAGE)
        self.log.append(f"direct_read {offset} {length}")
        buffer = mmap.mmap(-1, length)  # page-aligned memory
        got = buffer[:os.preadv(self.direct_fd, [buffer], offset)]
        if len(got) != max(0, min(length, len(self.model) - offset)):
            raise AssertionError(f"direct read {offset}+{length} returned {len(got)} bytes, the model has {len(self.model)}")
        self.expect("direct read", got, offset)

    def direct_write(self):
        offset, length = self.range(align=PAGE)
        data = self.data(length)
        self.log.append(f"direct_write {offset} {length}")
        buffer = mmap.mmap(-1, length)
        buffer[:] = data
        if os.pwritev(self.direct_fd, [buffer], offset) != length:
            raise AssertionError("short direct write")
        self.put(offset, data)

    def map_read(self):
        if not self.model:
            return
        offset, length = self.range(within=True)
        length = min(length, len(self.model) - offset)
        self.log.append(f"map_read {offset} {length}")
        with mmap.mmap(self.fd, len(self.model), prot=mmap.PROT_READ) as mapped:
            self.expect("mmap read", mapped[offset:offset + length], offset)

    def map_write(self):
        offset, length = self.range()
        data = self.data(length)
        self.log.append(f"map_write {offset} {length}")
        end = offset + length
        if end > len(self.model):  # as fsx does: grow the file first, then write through the map
            os.ftruncate(self.fd, end)
            self.model.extend(bytes(end - len(self.model)))
        with mmap.mmap(self.fd, len(self.model)) as mapped:
            mapped[offset:end] = data
            mapped.flush()
        self.put(offset, data)

    def truncate(self):
        size = self.rng.randrange(MAX_SIZE + 1)
        self.log.append(f"truncate {size}")
        os.ftruncate(self.fd, size)
        if size < len(self.model):
            del self.model[size:]
        else:
            self.model.extend(bytes(size - len(self.model)))

    def allocate(self):
        mode = self.rng.choice([0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                FALLOC_FL_ZERO_RANGE, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
                                FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE])
        tail_moves = mode in (FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE)
        offset, length = self.range(within=tail_moves, align=PAGE if tail_moves else 1)
        self.log.append(f"fallocate mode {mode:#x} {offset} {length}")
        name = f"fallocate {mode:#x}"
        try:
            harness.fallocate(self.fd, mode, offset, length)
        except OSError as e:
            # Refused: the same refusal each time for an operation the filesystem lacks, and
            # the ranges collapse and insert need (inside the file, aligned).
            if tail_moves and e.errno == errno.EINVAL:
                return
            if self.refused.setdefault(name, e.errno) != e.errno:
                raise AssertionError(f"{name} refused with {errno.errorcode[e.errno]}, earlier with "
                                     f"{errno.errorcode[self.refused[name]]}")
            return
        size, end = len(self.model), offset + length
        if mode == FALLOC_FL_COLLAPSE_RANGE:
            del self.model[offset:end]
        elif mode == FALLOC_FL_INSERT_RANGE:
            self.model[offset:offset] = bytes(length)
        else:
            if mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE):
                self.model[offset:min(end, size)] = bytes(max(0, min(end, size) - offset))
            if not mode & FALLOC_FL_KEEP_SIZE and end > size:
                self.model.extend(bytes(end - size))

    def copy_range(self):
        if not self.model:
            return
        source, length = self.range(within=True)
        length = min(length, len(self.model) - source)
        target = self.rng.randrange(MAX_SIZE - length + 1)
        if source < target + length and target < source + length:
            return  # copy_file_range refuses overlapping ranges of one file
        self.log.append(f"copy_file_range {source} {length} -> {target}")
        copied = os.copy_file_range(self.fd, self.fd, length, source, target)
        if copied != length:
            raise AssertionError(f"copy_file_range copied {copied} of {length} bytes")
        self.put(target, bytes(self.model[source:source + length]))

    def sync(self):
        self.log.append("fsync")
        os.fsync(self.fd)

    def reopen(self):
        self.log.append("close and reopen")
        self.close()
        self.open()

    OPERATIONS = ((read, 20), (write, 20), (direct_read, 6), (direct_write, 6), (map_read, 6), (map_write, 6),
                  (truncate, 5), (allocate, 10), (copy_range, 6), (sync, 3), (reopen, 3))

    def run(self, count):
        operations, weights = zip(*self.OPERATIONS)
        for step in range(count):
            self.rng.choices(operations, weights)[0](self)
            size = os.fstat(self.fd).st_size
            if size != len(self.model):
                raise AssertionError(f"after step {step} the file has {size} bytes, the model {len(self.model)}")
            if step % 100 == 99:
                self.expect("whole file", os.pread(self.fd, MAX_SIZE + PAGE, 0), 0)
        self.close()


def exercise(check, where, path, seed, count):
    """Runs the exerciser; returns what the filesystem refused, or None on a failure."""
    log = []
    exerciser = Exerciser(path, seed, log)
    try:
        exerciser.run(count)
    except (AssertionError, OSError) as e:
        check.check(False, f"{where}: {e} after {len(log)} operations (FLASHDIR_FUSE_SEED={seed}); the last ones: "
                           + "; ".join(log[-6:]))
        exerciser.close()
        return None
    check.check(True, f"{where}: {count} operations")
    return exerciser


def main():
    harness.require_fuse()
    check = harness.Checker("fuse fsx")
    seed = int(os.environ.get("FLASHDIR_FUSE_SEED", "7"))
    count = int(os.environ.get("FLASHDIR_FSX_OPS", "2500"))
    print(f"seed {seed} (FLASHDIR_FUSE_SEED={seed} replays), {count} operations per run")
    with harness.scratch("fsx") as top:
        os.mkdir(f"{top}/plain")
        plain = exercise(check, "plain directory", f"{top}/plain/file", seed, count)
        for mode in MODES:
            backing, mnt = f"{top}/backing-{mode}", f"{top}/mnt-{mode}"
            os.mkdir(backing)
            os.mkdir(mnt)
            with harness.Mount(backing, mnt, f"{top}/cache-{mode}", f"mode={mode}", size="16M"):
                done = exercise(check, mode, f"{mnt}/file", seed, count)
            if done is None:
                continue
            if plain is not None:
                expected = dict(plain.refused, **FUSE_REFUSES)
                check.check(done.refused == expected,
                            f"{mode}: refuses what the backing filesystem and FUSE refuse ({done.refused}, not {expected})")
            with open(f"{backing}/file", "rb") as f:
                check.check(f.read() == bytes(done.model), f"{mode}: after the unmount the backing file is the model")
        over_a_fuse_store(check, top, seed, count)
    return check.finish()


def over_a_fuse_store(check, top, seed, count):
    where = "writethrough over a FUSE store"
    backing, store, mnt = f"{top}/backing-store", f"{top}/store", f"{top}/mnt-store"
    for directory in (backing, store, mnt):
        os.mkdir(directory)
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, store, "latency_us=0"):
        with harness.Mount(store, mnt, f"{top}/cache-store", "mode=writethrough", size="16M"):
            done = exercise(check, where, f"{mnt}/file", seed, count)
            mount = harness.stats(mnt)["mount"]
        check.check(mount["store_writes_behind"], f"{where}: the daemon stores writes behind ({mount})")
    if done is not None:
        with open(f"{backing}/file", "rb") as f:
            check.check(f.read() == bytes(done.model), f"{where}: after the unmount the store's file is the model")


if __name__ == "__main__":
    sys.exit(main())
