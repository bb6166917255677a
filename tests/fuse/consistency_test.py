"""The consistency models (doc/daemon.md "Consistency"): when a change is seen through the mount.

Each model is mounted and tried the same way:
- a change made through the mount is seen at once, in every model;
- a file's data changed behind the mount (rewritten, grown, a same-size rewrite) is read fresh
  at its next open under strict and cto, even while the kernel still holds the file's old size;
  under readmostly an open within the bound asks the backing nothing, and the change is read
  once the bound has passed, never later;
- an unchanged file's pages, and an unchanged directory's listing, stay in the kernel between
  opens (no READ or READDIR reaches the daemon for a re-read) except under strict, where every
  open drops them; a listing changed through the mount is read fresh at the next opendir, one
  changed behind it as its names are (below);
- names, missing names and attributes changed behind the mount: strict sees them at the next
  call; close-to-open (here actimeo=1) within the bound and never later, and by default within
  3 s for a file that just changed; readmostly keeps its cached answers (no LOOKUP or GETATTR
  reaches the daemon) inside its bound;
- the attributes the daemon keeps from an open to answer the kernel's next getattr follow every
  change made through the mount;
- a log truncated behind the mount under a writer of the mount (logrotate's copytruncate) is
  read after the writer's close as the backing file holds it.
Requests are counted from the mount's stats, so nothing here depends on timing except the
bound itself, which is waited out with a margin.
"""
import json
import os
import sys
import time

import harness

BOUND = 1.0          # actimeo of the close-to-open mount
MARGIN = 0.6         # waited beyond a bound before a change must be seen
MODELS = (("strict", "consistency=strict"), ("cto", f"consistency=cto,actimeo={BOUND:g}"),
          ("readmostly", "consistency=readmostly"))


def stats(mnt):
    with open(f"{mnt}/.flashdir/stats.json") as f:
        return json.load(f)


def requests_made_by(mnt, action, ops):
    """The requests of each kind in `ops` that `action()` sent to the daemon: reading the stats
    file sends some of its own (lookups, getattrs, reads of the control files), measured first by
    two reads with nothing between them and taken off."""
    def counts():
        requests = stats(mnt)["requests"]
        return {op: requests.get(op, 0) for op in ops}
    first, second = counts(), counts()
    action()
    third = counts()
    return {op: (third[op] - second[op]) - (second[op] - first[op]) for op in ops}


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def through_the_mount(check, name, mnt):
    write(f"{mnt}/made", b"first")
    write(f"{mnt}/made", b"second, longer")
    check.check(harness.read_all(f"{mnt}/made") == b"second, longer", f"{name}: a write through the mount is read back")
    os.chmod(f"{mnt}/made", 0o600)
    check.check(os.stat(f"{mnt}/made").st_mode & 0o777 == 0o600, f"{name}: a chmod through the mount is seen")
    check.check(not os.path.exists(f"{mnt}/later"), f"{name}: a missing name is missing")
    os.rename(f"{mnt}/made", f"{mnt}/later")
    check.check(os.path.exists(f"{mnt}/later") and not os.path.exists(f"{mnt}/made"),
                f"{name}: a rename through the mount is seen, over a missing name the kernel remembered")
    os.unlink(f"{mnt}/later")
    check.check(not os.path.exists(f"{mnt}/later"), f"{name}: an unlink through the mount is seen")


def data_behind(check, name, backing, mnt):
    """Close-to-open: each change behind the mount is read at the next open."""
    write(f"{backing}/data", b"A" * 8192)
    check.check(harness.read_all(f"{mnt}/data") == b"A" * 8192, f"{name}: first read")
    check.check(os.stat(f"{mnt}/data").st_size == 8192, f"{name}: the kernel knows the size")
    with open(f"{backing}/data", "r+b") as f:
        f.write(b"B" * 8192)
    check.check(harness.read_all(f"{mnt}/data") == b"B" * 8192, f"{name}: a same-size rewrite behind is read at the next open")
    with open(f"{backing}/data", "ab") as f:
        f.write(b"C" * 5000)
    check.check(harness.read_all(f"{mnt}/data") == b"B" * 8192 + b"C" * 5000,
                f"{name}: growth behind is read whole at the next open, though the kernel's size was still valid")
    write(f"{backing}/data", b"short")
    check.check(harness.read_all(f"{mnt}/data") == b"short", f"{name}: a truncation behind is seen at the next open")
    write(f"{backing}/first", b"before")
    check.check(os.stat(f"{mnt}/first").st_size == 6, f"{name}: a file looked up, never opened")
    write(f"{backing}/first", b"grown behind the mount")
    fd = os.open(f"{mnt}/first", os.O_RDONLY)
    try:
        grown = os.read(fd, 100)  # one read(2): the kernel stops it at the size it believes
    finally:
        os.close(fd)
    check.check(grown == b"grown behind the mount",
                f"{name}: a change behind between a lookup and the first open is read whole: {grown!r}")


def page_cache_kept(check, name, backing, mnt, keeps):
    write(f"{backing}/kept", os.urandom(256 << 10))
    expected = harness.read_all(f"{backing}/kept")
    check.check(harness.read_all(f"{mnt}/kept") == expected, f"{name}: first read of an unchanged file")
    before = stats(mnt)["data"]["read_bytes"]
    check.check(harness.read_all(f"{mnt}/kept") == expected, f"{name}: re-read of an unchanged file")
    reads = stats(mnt)["data"]["read_bytes"] - before
    if keeps:
        check.check(reads == 0, f"{name}: the re-read is served by the kernel's pages ({reads} bytes read by the daemon)")
    else:
        check.check(reads == len(expected), f"{name}: every open drops the kernel's pages ({reads} bytes read by the daemon)")


def listings(check, name, backing, mnt, keeps, bound):
    """bound: as names_behind's: listings follow the directory's attributes."""
    os.makedirs(f"{backing}/dir")
    write(f"{backing}/dir/one", b"1")
    check.check(sorted(os.listdir(f"{mnt}/dir")) == ["one"], f"{name}: a listing")
    made = requests_made_by(mnt, lambda: os.listdir(f"{mnt}/dir"), ("readdir",))["readdir"]
    if keeps:
        check.check(made == 0, f"{name}: an unchanged directory is listed from the kernel's cache ({made} READDIRs)")
    else:
        check.check(made > 0, f"{name}: every listing reads the directory ({made} READDIRs)")
    write(f"{mnt}/dir/two", b"2")
    check.check(sorted(os.listdir(f"{mnt}/dir")) == ["one", "two"], f"{name}: a name made through the mount is listed")
    os.unlink(f"{mnt}/dir/one")
    check.check(sorted(os.listdir(f"{mnt}/dir")) == ["two"], f"{name}: a name removed through the mount is not listed")
    if bound is None:
        # A directory the mount has not changed (a change through the mount drops the kernel's
        # attributes of it, and the next stat of it may find the change behind it sooner).
        os.makedirs(f"{backing}/quiet")
        write(f"{backing}/quiet/one", b"1")
        # Listed twice: after a READDIR the kernel asks for the directory's attributes again (it
        # drops its copy of the access time), and that answer comes from the backing.
        for _ in range(2):
            check.check(os.listdir(f"{mnt}/quiet") == ["one"], f"{name}: a quiet directory listed")
        write(f"{backing}/quiet/two", b"2")
        seen = {}
        made = requests_made_by(mnt, lambda: seen.update(names=os.listdir(f"{mnt}/quiet")), ("readdir", "getattr"))
        check.check(seen["names"] == ["one"] and made == {"readdir": 0, "getattr": 0},
                    f"{name}: inside the bound the listing is as before, from the kernel's cache: {seen}, {made}")
        return
    write(f"{backing}/dir/three", b"3")
    if bound:
        time.sleep(bound + MARGIN)
    check.check(sorted(os.listdir(f"{mnt}/dir")) == ["three", "two"],
                f"{name}: a name made behind is listed " + ("within the bound" if bound else "at the next opendir"))


def names_behind(check, name, backing, mnt, bound):
    """bound: 0 (seen at the next call), a number of seconds, or None (cached beyond this test)."""
    write(f"{backing}/named", b"old file")
    check.check(harness.read_all(f"{mnt}/named") == b"old file", f"{name}: a name read through the mount")
    check.check(not os.path.exists(f"{mnt}/fresh"), f"{name}: a missing name")
    write(f"{backing}/attrs", b"")
    check.check(os.stat(f"{mnt}/attrs").st_mode & 0o777 == 0o644, f"{name}: attributes read through the mount")
    os.chmod(f"{backing}/attrs", 0o640)
    os.rename(f"{backing}/named", f"{backing}/moved")
    write(f"{backing}/named", b"new file")
    write(f"{backing}/fresh", b"made behind")
    if bound is None:
        seen = {}
        def look():
            seen["fresh"] = os.path.exists(f"{mnt}/fresh")
            seen["mode"] = os.stat(f"{mnt}/attrs").st_mode & 0o777
        made = requests_made_by(mnt, look, ("lookup", "getattr"))
        check.check(not seen["fresh"] and seen["mode"] != 0o640, f"{name}: inside the bound the kernel answers as before: {seen}")
        check.check(made == {"lookup": 0, "getattr": 0}, f"{name}: cached names and attributes answer without the daemon: {made}")
        return
    if bound:
        time.sleep(bound + MARGIN)
    check.check(harness.read_all(f"{mnt}/named") == b"new file", f"{name}: a file replaced behind is the new one")
    check.check(os.path.exists(f"{mnt}/fresh"), f"{name}: a name made behind is found")
    check.check(os.stat(f"{mnt}/attrs").st_mode & 0o777 == 0o640, f"{name}: a chmod behind is seen")


def models(check, top):
    for name, options in MODELS:
        backing, mnt = f"{top}/{name}-b", f"{top}/{name}-m"
        os.makedirs(backing)
        os.makedirs(mnt)
        with harness.Mount(backing, mnt, f"{top}/{name}-c", options):
            through_the_mount(check, name, mnt)
            if name != "readmostly":  # readmostly_data_within_the_bound
                data_behind(check, name, backing, mnt)
            page_cache_kept(check, name, backing, mnt, keeps=name != "strict")
            bound = {"strict": 0, "cto": BOUND, "readmostly": None}[name]
            listings(check, name, backing, mnt, keeps=name != "strict", bound=bound)
            names_behind(check, name, backing, mnt, bound)


def readmostly_data_within_the_bound(check, top):
    """Under readmostly an open within the bound stands on the stat an earlier open kept
    (kept_attributes.h kept_open_answer): a file's data changed behind the mount is read once the
    bound has passed, never later; a change through the mount, or of any name, at once. Every
    change behind leaves the access time after the modification time, so that no read moves it
    (a read that does forgets what is kept)."""
    backing, mnt = f"{top}/rm-data-b", f"{top}/rm-data-m"
    os.makedirs(backing)
    os.makedirs(mnt)
    bound = 3

    def behind(data, mode="wb"):
        with open(f"{backing}/data", mode) as f:
            f.write(data)
        now = time.time()
        os.utime(f"{backing}/data", (now, now - 100))

    def opens_from_memory():
        return stats(mnt)["data"]["opens_from_memory"]

    def read_standing_on_memory(expected, what):
        before = opens_from_memory()
        check.check(harness.read_all(f"{mnt}/data") == expected, f"readmostly: {what}: read")
        return opens_from_memory() - before

    with harness.Mount(backing, mnt, f"{top}/rm-data-c", f"consistency=readmostly,actimeo={bound}"):
        behind(b"A" * 8192)
        check.check(read_standing_on_memory(b"A" * 8192, "first open") == 0, "readmostly: the first open stats the file")
        check.check(read_standing_on_memory(b"A" * 8192, "warm open") == 1,
                    "readmostly: an open within the bound stands on the stat the last one kept")
        behind(b"B" * 8192, "r+b")
        time.sleep(bound + MARGIN)
        check.check(read_standing_on_memory(b"B" * 8192, "a same-size rewrite behind, after the bound") == 0,
                    "readmostly: past the bound the open stats the file again")
        behind(b"C" * 5000, "ab")
        time.sleep(bound + MARGIN)
        read_standing_on_memory(b"B" * 8192 + b"C" * 5000, "growth behind, after the bound")
        write(f"{mnt}/data", b"through the mount")
        check.check(read_standing_on_memory(b"through the mount", "a write through the mount") == 0,
                    "readmostly: a writer's open forgets what was kept")
        # That read moved the access time (relatime: not after the write's modification time),
        # which forgets what its open kept; the next open's stat is kept.
        read_standing_on_memory(b"through the mount", "read again")
        check.check(read_standing_on_memory(b"through the mount", "warm again") == 1, "readmostly: kept again")
        write(f"{mnt}/other", b"x")
        os.rename(f"{mnt}/other", f"{mnt}/another")
        check.check(read_standing_on_memory(b"through the mount", "after a rename through the mount") == 0,
                    "readmostly: a change of names forgets what was kept")


def default_bound_of_a_fresh_file(check, top):
    """Default close-to-open: the bound of a file that just changed is the least, 3 s (a tenth of
    its age, at least 3 s): a chmod behind the mount is seen within it."""
    backing, mnt = f"{top}/age-b", f"{top}/age-m"
    os.makedirs(backing)
    os.makedirs(mnt)
    with harness.Mount(backing, mnt, f"{top}/age-c"):
        write(f"{backing}/fresh", b"x")
        check.check(os.stat(f"{mnt}/fresh").st_mode & 0o777 == 0o644, "age: attributes read")
        os.chmod(f"{backing}/fresh", 0o600)
        time.sleep(3 + MARGIN)
        check.check(os.stat(f"{mnt}/fresh").st_mode & 0o777 == 0o600, "age: a fresh file's change behind is seen within 3 s")
        mount = stats(mnt)["mount"]
        check.check(mount["kernel_cache_min_seconds"] == 3 and mount["kernel_cache_max_seconds"] == 60,
                    f"age: the stats show the bounds: {mount}")


def relatime_reads_mark_access(check, top):
    """A read served from the kernel's pages reaches no daemon: an open whose read would move the
    access time (relatime: atime not after mtime) keeps no pages, so its read marks the time.
    The pages are cached by a read through an O_NOATIME descriptor, which leaves the time as it was."""
    backing, mnt = f"{top}/atime-b", f"{top}/atime-m"
    os.makedirs(backing)
    os.makedirs(mnt)
    with harness.Mount(backing, mnt, f"{top}/atime-c"):
        write(f"{backing}/f", b"x" * 4096)
        old = os.stat(f"{backing}/f").st_mtime - 10
        os.utime(f"{backing}/f", (old - 10, old))  # atime before mtime: a relatime read moves it
        fd = os.open(f"{mnt}/f", os.O_RDONLY | os.O_NOATIME)
        check.check(os.read(fd, 4096) == b"x" * 4096, "relatime: read through O_NOATIME")
        os.close(fd)
        check.check(os.stat(f"{backing}/f").st_atime < os.stat(f"{backing}/f").st_mtime, "relatime: O_NOATIME moved nothing")
        harness.read_all(f"{mnt}/f")
        st = os.stat(f"{backing}/f")
        check.check(st.st_atime > st.st_mtime, "relatime: the next read marks the access, though the file is unchanged")


def kept_attributes(check, top):
    """The kernel asks the daemon again for a file's attributes after reading pages from it (it
    drops its copy of the access time); outside strict the daemon answers from the open's stat
    of the file (kept_attributes.h), and never with what a change through the mount, or of a name
    of the file, made untrue."""
    # A bound longer than the part: what is kept does not expire while it runs.
    for name, options in (("strict", "consistency=strict"), ("cto", "consistency=cto,actimeo=60")):
        backing, mnt = f"{top}/kept-{name}-b", f"{top}/kept-{name}-m"
        os.makedirs(backing)
        os.makedirs(mnt)

        def opened_and_read(file):
            """`file` made behind the mount, opened through it and read whole: its descriptor."""
            write(f"{backing}/{file}", b"k" * 10000)
            now = time.time()
            os.utime(f"{backing}/{file}", (now, now - 100))  # a read leaves the access time (relatime)
            fd = os.open(f"{mnt}/{file}", os.O_RDONLY)
            check.check(os.read(fd, 20000) == b"k" * 10000, f"kept {name}: {file} read")
            return fd

        with harness.Mount(backing, mnt, f"{top}/kept-{name}-c", options):
            before = stats(mnt)["data"]["getattr_from_memory"]
            fd = opened_and_read("f")
            try:
                st, want = os.fstat(fd), os.stat(f"{backing}/f")
                check.check((st.st_size, st.st_mode, st.st_nlink, st.st_mtime_ns, st.st_atime_ns) ==
                            (want.st_size, want.st_mode, want.st_nlink, want.st_mtime_ns, want.st_atime_ns),
                            f"kept {name}: fstat after the read is the backing file's")
                answered = stats(mnt)["data"]["getattr_from_memory"] - before
                check.check((answered > 0) == (name != "strict"),
                            f"kept {name}: {answered} getattrs answered from the open's stat")
                os.unlink(f"{mnt}/f")
                check.check(os.fstat(fd).st_nlink == 0, f"kept {name}: an open file whose name went has no link left")
            finally:
                os.close(fd)
            fd = opened_and_read("g")
            try:
                os.chmod(f"{mnt}/g", 0o600)
                check.check(os.fstat(fd).st_mode & 0o777 == 0o600, f"kept {name}: a chmod through the mount is seen")
                os.link(f"{mnt}/g", f"{mnt}/h")
                check.check(os.fstat(fd).st_nlink == 2, f"kept {name}: a link made through the mount is counted")
            finally:
                os.close(fd)


def a_log_truncated_behind_its_writer(check, top):
    """logrotate's copytruncate behind the mount while a writer of the mount appends to the log:
    after the writer's close the mount serves exactly what the backing file holds. An append that
    took the engine's end of the file without asking the backing (write-through, which now stats
    before every write that reaches the end) left the cut lines cached where the backing file
    has zeros, and its own new size hid the truncate from the close's stat."""
    line = b"a line of the log, long enough to fill pages soon\n"
    for mode in ("writethrough", "writeback"):
        backing, mnt = f"{top}/log-{mode}-b", f"{top}/log-{mode}-m"
        os.makedirs(backing)
        os.makedirs(mnt)
        with harness.Mount(backing, mnt, f"{top}/log-{mode}-c", f"mode={mode}"):
            fd = os.open(f"{mnt}/log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                for _ in range(400):
                    os.write(fd, line)
                check.check(harness.read_all(f"{mnt}/log") == line * 400, f"log {mode}: read by another open")
                os.fsync(fd)
                os.truncate(f"{backing}/log", 0)  # copied away, then truncated: behind the mount
                os.write(fd, b"after the rotation\n")
            finally:
                os.close(fd)
            with open(f"{backing}/log", "rb") as f:
                on_backing = f.read()
            # Write-through appends at the backing file's end; write-back's dirty pages (not yet
            # back at the fsync, which only made them durable in the cache) win over the truncate,
            # as one writer's over another's (doc/cache.md "Files, staleness and the catalog").
            expected = b"after the rotation\n" if mode == "writethrough" else line * 400 + b"after the rotation\n"
            check.check(on_backing == expected, f"log {mode}: the backing file holds {len(on_backing)} bytes")
            check.check(harness.read_all(f"{mnt}/log") == on_backing,
                        f"log {mode}: the mount serves what the backing file holds")


def main():
    return harness.run_parts("consistency", [models, readmostly_data_within_the_bound, default_bound_of_a_fresh_file,
                                             relatime_reads_mark_access, kept_attributes,
                                             a_log_truncated_behind_its_writer])


if __name__ == "__main__":
    sys.exit(main())
