"""Defaults that follow the backing's kind (doc/daemon.md "Sequential cutoff").

Over a local directory the sequential cutoff is 16 MiB. Over a FUSE store
(tests/fuse/renumbering_passthrough.cc, as sshfs would be) it is 0: a file read once, whole, is
admitted whole, and a second read hits every page. The stats name
the backing's type and the cutoffs that run. Strict consistency, so that the second read reaches
the daemon instead of the kernel's pages.
"""
import json
import os
import sys

import harness

PAGE = 4096
FILE_BYTES = 24 << 20  # past the local default cutoff (16 MiB)


def stats(mnt):
    with open(f"{mnt}/.flashdir/stats.json") as f:
        return json.load(f)


def read_twice(check, name, backing, mnt, cache, remote):
    data = os.urandom(FILE_BYTES)
    with open(f"{backing}/big", "wb") as f:
        f.write(data)
    with harness.Mount(backing, mnt, cache, "consistency=strict"):
        mount = stats(mnt)["mount"]
        check.check(mount["backing_remote"] == remote and (mount["backing_type"] == "fuse") == remote,
                    f"{name}: the backing is {'a remote (FUSE)' if remote else 'a local'} file system: {mount}")
        check.check(mount["seq_cutoff_read_bytes"] == (0 if remote else 16 << 20)
                    and mount["seq_cutoff_write_bytes"] == (0 if remote else 16 << 20), f"{name}: the default cutoffs: {mount}")
        check.check(mount["store_writes_behind"] == remote, f"{name}: write-through stores writes behind: {mount}")
        check.check(harness.read_all(f"{mnt}/big") == data, f"{name}: first read")
        before = stats(mnt)["cache"]["read_hit_pages"]
        check.check(harness.read_all(f"{mnt}/big") == data, f"{name}: second read")
        hits = stats(mnt)["cache"]["read_hit_pages"] - before
        pages = FILE_BYTES // PAGE
        if remote:
            check.check(hits == pages, f"{name}: the whole file was admitted: {hits} of {pages} pages hit")


def local_backing(check, top):
    read_twice(check, "local", f"{top}/b", f"{top}/m", f"{top}/c-local", remote=False)


def fuse_backing(check, top):
    slow, point = f"{top}/slow", f"{top}/fuse"
    os.makedirs(slow)
    os.makedirs(point)
    with harness.FuseBacking(slow, point):
        read_twice(check, "fuse", point, f"{top}/m", f"{top}/c-fuse", remote=True)


def main():
    if not os.environ.get("RENUMBERING_PASSTHROUGH"):
        sys.exit("RENUMBERING_PASSTHROUGH must name tests/fuse/renumbering-passthrough")
    return harness.run_parts("backing-kind", [local_backing, fuse_backing])


if __name__ == "__main__":
    sys.exit(main())
