#!/usr/bin/env python3
"""flashdir over a FUSE store (slowstore, bench/slowstore): what it costs the store, counted in
calls, not timed, and a file the store forgets while it is open. A name the daemon has not seen (after a remount, every name) costs the store one lookup
of it and one stat, no more than a name it knows. A reader's open whose reads the cache serves, of a file whose access time a
read would not move (relatime), reads nothing from the store and opens nothing there: it stats
the file (tests/fuse/consistency_test.py
checks that a read that would move it still does), or under readmostly within the bound not even
that. Under consistency=strict, so that every
read reaches the daemon. An O_APPEND writer's append stats the file once (write-back: only the
first of an open). Exits 77
where /dev/fuse or root is missing."""
import mmap
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "..", "bench", "slowstore"))
import harness  # noqa: E402
from slowstore_mount import SlowstoreMount  # noqa: E402


def calls_of(store, action):
    before = store.counts()["calls"]
    action()
    after = store.counts()["calls"]
    return {kind: after.get(kind, 0) - before.get(kind, 0) for kind in after if after.get(kind, 0) != before.get(kind, 0)}


def settled(store):
    """Waits until no call has reached the store for 0.2 s (at most 10 s): the kernel sends a
    RELEASE after close(2) has returned, so the last close's may still be on its way."""
    deadline = time.monotonic() + 10
    last = store.counts()["calls"]
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = store.counts()["calls"]
        if now == last:
            return
        last = now


def warm_reader_reads_nothing_from_the_store(check, top):
    backing, slow, mnt = f"{top}/b", f"{top}/s", f"{top}/m"
    os.makedirs(slow)
    data = os.urandom(256 << 10)
    with open(f"{backing}/f", "wb") as f:
        f.write(data)
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0") as store:
        with harness.Mount(slow, mnt, f"{top}/c", "consistency=strict"):
            first = calls_of(store, lambda: check.check(harness.read_all(f"{mnt}/f") == data, "the first read reads it"))
            check.check(first.get("read", 0) >= 1, f"the first read reached the store ({first})")
            # The second open's first read marks the access time (relatime: it is not past the
            # modification time yet; the first one may have been answered by the store mount's
            # page cache, which the engine's own read had just filled, and moved nothing).
            harness.read_all(f"{mnt}/f")
            warm = calls_of(store, lambda: check.check(harness.read_all(f"{mnt}/f") == data, "a warm read reads it"))
            check.check(warm.get("read", 0) == 0,
                        f"a warm open's reads, all hits, read nothing from the store: its access time is past its "
                        f"modification already ({warm})")
            opened = {kind: warm.get(kind, 0) for kind in ("open", "flush", "release") if warm.get(kind, 0)}
            check.check(not opened, f"a warm reader's open opens no backing file: it stats it ({warm})")
            check.check(warm.get("getattr", 0) >= 1, f"... and stats it, close-to-open ({warm})")


def an_unknown_name_costs_one_lookup(check, top):
    top = f"{top}/lookup"  # the parts share `top`
    backing, slow, mnt = f"{top}/b", f"{top}/s", f"{top}/m"
    for directory in (slow, mnt, f"{backing}/d"):
        os.makedirs(directory)
    for name in ("x", "y"):
        with open(f"{backing}/d/{name}", "wb") as f:
            f.write(b"data")
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0") as store:
        with harness.Mount(slow, mnt, f"{top}/c"):
            os.stat(f"{mnt}/d/x")  # d is known from here on (cto keeps the kernel's entry of it)
            new = calls_of(store, lambda: os.stat(f"{mnt}/d/y"))
            # slowstore counts a lookup as a getattr; its kernel checks d's search permission with
            # one more (default_permissions, attribute timeout 0): three in all. A stat by name
            # followed by an open of the name made it five.
            check.check(set(new) == {"getattr"} and new["getattr"] <= 3,
                        f"a name the daemon has not seen costs the store a lookup and a stat ({new})")


def a_file_unlinked_while_open_is_forgotten_at_close(check, top):
    # slowstore (libfuse's high-level API, hard_remove) forgets a file unlinked while open: a
    # stat of the open descriptor answers ESTALE, as an NFS server does for a file another
    # client removed. The last close must take that for "no name left", as the link count of
    # 0 a local file system reports: the close succeeds, its pages (dirty in write-back) go,
    # and the unmount closes the cache cleanly.
    top = f"{top}/unlinked"
    backing, slow, mnt, cache = f"{top}/b", f"{top}/s", f"{top}/m", f"{top}/c"
    for directory in (backing, slow, mnt):
        os.makedirs(directory)
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0"):
        for mode in ("writeback", "writethrough"):
            with harness.Mount(slow, mnt, f"{cache}-{mode}", f"mode={mode}"):
                fd = os.open(f"{mnt}/f", os.O_CREAT | os.O_RDWR, 0o644)
                os.write(fd, b"x" * 8192)
                os.unlink(f"{mnt}/f")
                try:
                    os.close(fd)
                    closed = "ok"
                except OSError as error:
                    closed = error.strerror
                check.check(closed == "ok", f"{mode}: the close of a file unlinked while open succeeds ({closed})")
                stats = harness.stats(mnt)
                check.check(stats["cache"]["dirty_pages"] == 0, f"{mode}: no dirty page is left of it ({stats['cache']})")
            log = harness.read_log(f"{cache}-{mode}")
            check.check("Stale file handle" not in log, f"{mode}: the daemon logs no stale handle")
            check.check("cache closed cleanly" in log, f"{mode}: the unmount closes the cache cleanly")


def a_long_miss_reads_the_store_in_large_requests(check, top):
    # With backing_reads=direct a miss longer than 128 KiB reads the store through a descriptor
    # opened with O_DIRECT, which its kernel client sends as requests of its largest size
    # (slowstore's: 512 KiB) without asking for the file's attributes first; read buffered (the
    # default) it goes out as 128 KiB pieces, each with a GETATTR where attributes time out at
    # once (34 reads and 40 getattrs for 4 MiB). slowstore opens its backing file with the
    # caller's O_DIRECT: where the directory under it cannot take that (a tmpfs before Linux
    # 6.6), the daemon reads buffered again, and the bytes must still be right.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else top
    with harness.scratch("long-miss", shm) as under:
        backing, slow, mnt = f"{under}/b", f"{under}/s", f"{under}/m"
        for directory in (backing, slow, mnt):
            os.makedirs(directory)
        data = os.urandom(4 << 20)
        with open(f"{backing}/f", "wb") as f:
            f.write(data)
        try:
            os.close(os.open(f"{backing}/f", os.O_RDONLY | os.O_DIRECT))
            direct = True
        except OSError:
            direct = False
        with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0") as store:
            with harness.Mount(slow, mnt, f"{under}/c", "backing_reads=direct"):
                def read_direct():
                    fd = os.open(f"{mnt}/f", os.O_RDONLY | os.O_DIRECT)
                    buffer = mmap.mmap(-1, 1 << 20)
                    got = bytearray()
                    try:
                        while n := os.preadv(fd, [buffer], len(got)):
                            got += buffer[:n]
                    finally:
                        os.close(fd)
                    check.check(got == data, "a file read through long misses reads right")
                calls = calls_of(store, read_direct)
        if not direct:
            print(f"  (the store's directory takes no O_DIRECT: read buffered, {calls})")
            return
        check.check(calls.get("read", 0) <= 12, f"4 MiB missed cost the store at most 12 reads ({calls})")
        check.check(calls.get("getattr", 0) <= 16, f"... and no GETATTR per read ({calls})")


def a_whole_second_store_keeps_the_kernel_caches(check, top):
    """A store that reports whole seconds (SFTP, sshfs: slowstore's whole_seconds) shows a file or
    directory read in the second of its last change with its access time equal to its
    modification time, which relatime moves at a read. The daemon's own read of that version
    settled it (file_version.h ReadMark): the next open keeps the kernel's pages, the next
    opendir its listing, as on a store with finer times."""
    top = f"{top}/seconds"
    backing, slow, mnt = f"{top}/b", f"{top}/s", f"{top}/m"
    for directory in (slow, mnt, f"{backing}/d"):
        os.makedirs(directory)
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0,whole_seconds"):
        with harness.Mount(slow, mnt, f"{top}/c", "consistency=cto,actimeo=60"):
            # Changed and read within one second, so that the store's seconds cannot tell them apart.
            time.sleep(1 - time.time() % 1 + 0.01)
            started = time.time()
            data = os.urandom(64 << 10)
            with open(f"{backing}/f", "wb") as f:
                f.write(data)
            for name in ("x", "y"):
                with open(f"{backing}/d/{name}", "wb") as f:
                    f.write(b"1")
            check.check(harness.read_all(f"{mnt}/f") == data, "a file read through the mount")
            check.check(sorted(os.listdir(f"{mnt}/d")) == ["x", "y"], "a directory listed through the mount")
            st = os.stat(f"{slow}/f")
            if int(time.time()) != int(started):
                print("  (a second went by during the set-up: the store's times tell the read apart)")
            check.check(st.st_atime_ns % 10**9 == 0 and st.st_mtime_ns % 10**9 == 0, f"the store reports whole seconds ({st})")
            reads = harness.stats(mnt)["data"]["read_bytes"]
            check.check(harness.read_all(f"{mnt}/f") == data, "the file read again")
            again = harness.stats(mnt)["data"]["read_bytes"] - reads
            check.check(again == 0, f"the re-read is served by the kernel's pages ({again} bytes read by the daemon)")
            listed = harness.stats(mnt)["requests"].get("readdir", 0)
            check.check(sorted(os.listdir(f"{mnt}/d")) == ["x", "y"], "the directory listed again")
            relisted = harness.stats(mnt)["requests"].get("readdir", 0) - listed
            check.check(relisted == 0, f"the re-listing is served by the kernel's cache ({relisted} READDIRs)")
            # A change still drops them (a new size: a same-size rewrite within the second is
            # invisible to a store's whole seconds, doc/daemon.md "Consistency").
            with open(f"{backing}/f", "ab") as f:
                f.write(b"more")
            check.check(harness.read_all(f"{mnt}/f") == data + b"more", "a change behind is read at the next open")


def a_readmostly_warm_open_asks_the_store_nothing(check, top):
    """Under readmostly an open within the model's bound stands on the stat an earlier open
    kept (kept_attributes.h kept_open_answer): a warm re-read with its stats costs the store no
    call at all, where close-to-open costs it the open's stat."""
    top = f"{top}/readmostly"
    backing, slow = f"{top}/b", f"{top}/s"
    for directory in (backing, slow):
        os.makedirs(directory)
    data = os.urandom(64 << 10)
    with open(f"{backing}/f", "wb") as f:
        f.write(data)
    now = time.time()
    os.utime(f"{backing}/f", (now, now - 100))  # a read leaves the access time (relatime)
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0") as store:
        for model, expected in (("readmostly", 0), ("cto", 1)):
            mnt = f"{top}/m-{model}"
            os.makedirs(mnt)
            with harness.Mount(slow, mnt, f"{top}/c-{model}", f"consistency={model},actimeo=60"):
                # The first read fills the cache; the RELEASE of the engine's backing descriptor
                # for its misses reaches the store after the close returns.
                check.check(harness.read_all(f"{mnt}/f") == data, f"{model}: the file read through the mount")
                settled(store)

                def warm_reread():
                    check.check(harness.read_all(f"{mnt}/f") == data, f"{model}: the file read again")
                    check.check(os.stat(f"{mnt}/f").st_size == len(data), f"{model}: and stat'ed")

                opens = harness.stats(mnt)["data"]["opens_from_memory"]
                warm = calls_of(store, warm_reread)
                opens = harness.stats(mnt)["data"]["opens_from_memory"] - opens
                check.check(sum(warm.values()) == expected,
                            f"{model}: a warm re-read costs the store {expected} call(s) ({warm})")
                check.check(opens == (1 if model == "readmostly" else 0),
                            f"{model}: {opens} open(s) stood on the stat an earlier open kept")


def appends_stat_once_and_write_back_ones_not_at_all(check, top):
    """An O_APPEND writer (a log): each append stat'ed the store's file for its end and, in
    write-through, once more for its write's check. Now an append costs the store one stat for
    its end and its write in write-through (and the getxattr of security.capability that the
    store's kernel client sends before each write), and nothing at all in write-back until the
    close, after the first of the open."""
    top = f"{top}/appends"
    backing, slow = f"{top}/b", f"{top}/s"
    for directory in (backing, slow):
        os.makedirs(directory)
    record = b"0123456789abcdef"
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0") as store:
        for mode in ("writethrough", "writeback"):
            mnt = f"{top}/m-{mode}"
            os.makedirs(mnt)
            with harness.Mount(slow, mnt, f"{top}/c-{mode}", f"mode={mode}"):
                fd = os.open(f"{mnt}/log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                try:
                    os.write(fd, record)  # the first of the run stats the file
                    settled(store)

                    def append_ten():
                        for _ in range(10):
                            os.write(fd, record)

                    appended = calls_of(store, append_ten)
                finally:
                    os.close(fd)
            with open(f"{backing}/log", "rb") as f:
                check.check(f.read() == record * 11, f"{mode}: the log holds the 11 records")
            os.unlink(f"{backing}/log")
            expected = {"getattr": 10, "write": 10, "getxattr": 10} if mode == "writethrough" else {}
            check.check(appended == expected, f"{mode}: 10 appends cost the store {expected} ({appended})")


def main():
    harness.require_fuse()
    binary = os.environ.get("SLOWSTORE")
    if not binary or not os.access(binary, os.X_OK):
        sys.exit("SLOWSTORE must name the slowstore binary")
    sys.exit(harness.run_parts("slow_backing_calls", [an_unknown_name_costs_one_lookup, warm_reader_reads_nothing_from_the_store,
                                                           a_file_unlinked_while_open_is_forgotten_at_close,
                                                           a_long_miss_reads_the_store_in_large_requests,
                                                           a_whole_second_store_keeps_the_kernel_caches,
                                                           a_readmostly_warm_open_asks_the_store_nothing,
                                                           appends_stat_once_and_write_back_ones_not_at_all]))


if __name__ == "__main__":
    main()
