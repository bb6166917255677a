"""Backing round trips (doc/daemon.md "Backing round trips"): a reader's open whose reads the
cache serves opens the backing file once, for the caller; the engine's own descriptor (O_NOATIME)
is opened at the first miss. Seen in the daemon's /proc fd table while the file is open.
"""
import os
import sys
import time

import harness

O_NOATIME = 0o1000000


def engine_descriptors(pid, backing_file):
    """The daemon's descriptors of `backing_file` opened O_NOATIME: the engine's own."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != backing_file:
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                flags = next(int(line.split()[1], 8) for line in f if line.startswith("flags:"))
        except (OSError, StopIteration):
            continue
        count += 1 if flags & O_NOATIME else 0
    return count


def reader_opens_backing_at_first_miss(check, top):
    data = os.urandom(65536)
    with harness.Mount(f"{top}/b", f"{top}/m", f"{top}/c", "consistency=strict") as mount:
        with open(f"{top}/m/warm", "wb") as f:
            f.write(data)
        check.check(harness.read_all(f"{top}/m/warm") == data, "the written file reads back")
        fd = os.open(f"{top}/m/warm", os.O_RDONLY)
        try:
            check.check(os.read(fd, 65536) == data, "a warm read is served")
            check.check(engine_descriptors(mount.pid, f"{top}/b/warm") == 0,
                        "a warm open whose reads hit opens no engine descriptor")
        finally:
            os.close(fd)
        with open(f"{top}/b/cold", "wb") as f:  # behind the mount: not cached
            f.write(data)
        fd = os.open(f"{top}/m/cold", os.O_RDONLY)
        try:
            check.check(engine_descriptors(mount.pid, f"{top}/b/cold") == 0, "none before the first read")
            check.check(os.read(fd, 65536) == data, "a cold read is served from the backing file")
            check.check(engine_descriptors(mount.pid, f"{top}/b/cold") == 1, "the first miss opened one")
        finally:
            os.close(fd)
        # The kernel sends the RELEASE after close(2) has returned: its descriptor goes a moment later.
        deadline = time.monotonic() + 10
        while engine_descriptors(mount.pid, f"{top}/b/cold") != 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        check.check(engine_descriptors(mount.pid, f"{top}/b/cold") == 0, "the reader's release closed it")
        fd = os.open(f"{top}/m/cold", os.O_WRONLY)
        try:
            check.check(engine_descriptors(mount.pid, f"{top}/b/cold") == 1, "a writer's is opened at its open")
            os.pwrite(fd, b"x" * 4096, 0)
            os.pwrite(fd, b"y" * 4096, 4096)
        finally:
            os.close(fd)
        with open(f"{top}/b/cold", "rb") as f:
            check.check(f.read(8192) == b"x" * 4096 + b"y" * 4096, "write-through writes are in the backing file")
        check.check(harness.read_all(f"{top}/m/cold") == b"x" * 4096 + b"y" * 4096 + data[8192:],
                    "and read back through the mount")


if __name__ == "__main__":
    sys.exit(harness.run_parts("round_trips", [reader_opens_backing_at_first_miss]))
