#!/usr/bin/env python3
"""slowstore (bench/slowstore) mounts, passes bytes and names through to its backing directory,
and delays every call: the calls it counts (and so delayed) match what was done through the
mount, repeated calls included, since the kernel keeps nothing between them. No time is
measured; bench/slowstore/run.sh shows the latency. Exits 77 where /dev/fuse or root is missing."""
import os
import stat
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "fuse"))
import harness  # noqa: E402
from slowstore_mount import SlowstoreMount  # noqa: E402

FILES = 20
STATS_EACH = 3


def passes_bytes_and_names(check, backing, mnt):
    data = os.urandom(3 * 131072 + 17)
    with open(f"{mnt}/written", "wb") as f:
        f.write(data)
    check.check(harness.read_all(f"{backing}/written") == data, "a file written through the mount is in the backing")
    check.check(harness.read_all(f"{mnt}/written") == data, "and reads back through the mount")
    with open(f"{mnt}/written", "r+b") as f:
        f.seek(5)
        f.write(b"patch")
    check.check(harness.read_all(f"{backing}/written")[5:10] == b"patch", "an overwrite in place reaches the backing")
    os.truncate(f"{mnt}/written", 100)
    check.check(os.stat(f"{backing}/written").st_size == 100, "truncate reaches the backing")
    os.makedirs(f"{mnt}/d/e")
    os.rename(f"{mnt}/written", f"{mnt}/d/e/moved")
    os.symlink("e/moved", f"{mnt}/d/link")
    os.link(f"{mnt}/d/e/moved", f"{mnt}/d/hard")
    check.check(os.readlink(f"{mnt}/d/link") == "e/moved", "readlink")
    check.check(harness.read_all(f"{mnt}/d/link") == data[:5] + b"patch" + data[10:100], "a symlink resolves")
    check.check(sorted(os.listdir(f"{mnt}/d")) == sorted(os.listdir(f"{backing}/d")) == ["e", "hard", "link"],
                "a listing is the backing's")
    mine, theirs = os.stat(f"{mnt}/d/hard"), os.stat(f"{backing}/d/hard")
    check.check((mine.st_ino, mine.st_nlink, mine.st_size) == (theirs.st_ino, theirs.st_nlink, theirs.st_size),
                "inode number, links and size are the backing's")
    os.chmod(f"{mnt}/d/hard", 0o600)
    check.check(stat.S_IMODE(os.stat(f"{backing}/d/hard").st_mode) == 0o600, "chmod reaches the backing")
    os.setxattr(f"{mnt}/d/hard", "user.flashdir", b"x")
    check.check(os.getxattr(f"{backing}/d/hard", "user.flashdir") == b"x", "an extended attribute reaches the backing")
    os.unlink(f"{mnt}/d/hard")
    os.unlink(f"{mnt}/d/link")
    os.unlink(f"{mnt}/d/e/moved")
    os.rmdir(f"{mnt}/d/e")
    os.rmdir(f"{mnt}/d")
    check.check(sorted(os.listdir(backing)) == sorted(["small"] + [f"f{i}" for i in range(FILES)]),
                "removals reach the backing")
    try:
        os.stat(f"{mnt}/missing")
        check.check(False, "a missing name is missing")
    except FileNotFoundError:
        pass


def counts_every_call(check, backing, mnt_top, binary):
    """Each repeated stat and open reaches the daemon: nothing is answered by the kernel's caches."""
    mnt = f"{mnt_top}/counted"
    os.mkdir(mnt)
    mount = SlowstoreMount(binary, backing, mnt, "latency_us=100,bandwidth_mbps=10000")
    try:
        for _ in range(STATS_EACH):
            for i in range(FILES):
                os.stat(f"{mnt}/f{i}")
        during = mount.counts()
        for _ in range(STATS_EACH):
            check.check(harness.read_all(f"{mnt}/small") == b"small file", "a small file reads back")
    finally:
        counts = mount.stop()
    check.check(counts is not None, "slowstore wrote its counts at unmount")
    if counts is None:
        return
    calls = counts["calls"]
    print(f"counts: {counts}", flush=True)
    # Each stat makes a LOOKUP (entry_timeout 0), which the high-level API answers with getattr;
    # the mount's root and the opens add a few more.
    check.check(calls.get("getattr", 0) >= STATS_EACH * (FILES + 1), f"every stat reached the daemon ({calls})")
    check.check(calls.get("open", 0) == STATS_EACH and calls.get("release", 0) == STATS_EACH,
                f"every open and close reached the daemon ({calls})")
    check.check(calls.get("read", 0) >= STATS_EACH, f"every open's read reached the daemon ({calls})")
    check.check(counts["bytes_read"] == STATS_EACH * len(b"small file"), f"every byte was carried ({counts})")
    check.check(counts["latency_us"] == 100, "the round trip asked for is the one applied")
    check.check(counts["total_calls"] == sum(calls.values()), "the total is the sum of the kinds")
    check.check(during["calls"].get("getattr", 0) >= STATS_EACH * FILES and "open" not in during["calls"],
                f"the counts asked for during the mount are the calls made until then ({during})")


def main():
    harness.require_fuse()
    binary = os.environ.get("SLOWSTORE")
    if not binary or not os.access(binary, os.X_OK):
        sys.exit("SLOWSTORE must name the slowstore binary")
    check = harness.Checker("slowstore")
    with harness.scratch("slowstore") as top:
        backing, mnt = f"{top}/b", f"{top}/m"
        os.mkdir(backing)
        os.mkdir(mnt)
        with open(f"{backing}/small", "wb") as f:
            f.write(b"small file")
        for i in range(FILES):
            open(f"{backing}/f{i}", "w").close()
        with SlowstoreMount(binary, backing, mnt, "latency_us=100"):
            passes_bytes_and_names(check, backing, mnt)
        check.check(not harness.is_mounted(mnt), "the mount is gone after stop")
        counts_every_call(check, backing, top, binary)
        check.check(not harness.is_mounted(f"{top}/counted"), "the counted mount is gone after stop")
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
