"""The restart image (issue 18 §5, doc/cache.md "The restart image"): a clean unmount saves
what the next open would rebuild from every metadata page, and that open takes it instead, with
the same pages cached and the same bytes served; the file goes at the open. An image of another
state of the chip (saved before later changes and put back), one with a damaged index and
another cache's are refused and the metadata pages read as before; a damaged part is read from
the chip when first needed; a file changed behind the unmounted cache is read from the backing;
a kill -9 after an open from the image recovers from the metadata pages.

The mounts use strict consistency, so that every read reaches the daemon (a hit in the cache,
not in the kernel's pages).
"""
import os
import shutil
import struct
import subprocess
import sys
import time

import harness

PAGE = 4096
OPTIONS = "consistency=strict"


def cache_stats(mnt):
    return harness.stats(mnt)["cache"]


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


def content(seed, pages):
    return bytes((seed * 31 + i * 7) % 251 for i in range(pages * PAGE))


class Rig:
    """A backing directory with files a (64 pages) and b (8 pages), and a cache that has read them."""

    def __init__(self, check, top, name):
        self.check, self.name = check, name
        self.backing, self.mnt, self.cache = f"{top}/{name}/b", f"{top}/{name}/m", f"{top}/{name}/c"
        os.makedirs(self.backing)
        os.makedirs(self.mnt)
        self.files = {"a": content(1, 64), "b": content(2, 8)}
        for file, data in self.files.items():
            write_file(f"{self.backing}/{file}", data)
        with self.mount():
            self.read_all_right()
        self.image = f"{self.cache}/restart.img"

    def mount(self):
        return harness.Mount(self.backing, self.mnt, self.cache, OPTIONS)

    def read_all_right(self):
        for file, data in self.files.items():
            self.check.check(harness.read_all(f"{self.mnt}/{file}") == data, f"{self.name}: {file} reads right")

    def expect_restart(self, mount, from_image, why):
        stats = cache_stats(self.mnt)
        self.check.check(stats["restart_from_image"] == from_image,
                         f"{self.name}: the open {'took' if from_image else 'did not take'} the restart image ({why}): "
                         f"{stats['restart_from_image']}; {mount.startup_log.strip()[-600:]}")
        self.check.check(not os.path.exists(self.image), f"{self.name}: the open removed the restart image")
        return stats


def taken_and_removed(check, top):
    """A clean unmount saves an image; the next open takes it: the same pages cached, hits, the
    same bytes, and a file changed behind the unmounted cache read from the backing."""
    rig = Rig(check, top, "taken")
    check.check(os.path.getsize(rig.image) > 0, "taken: the clean unmount saved a restart image")
    changed = bytes(reversed(rig.files["b"]))
    write_file(f"{rig.backing}/b", changed)  # same size, other bytes, a later mtime
    rig.files["b"] = changed
    with rig.mount() as mount:
        stats = rig.expect_restart(mount, True, "a clean unmount saved it")
        check.check(stats["restart_usable_slots"] == 72, f"taken: 72 pages usable: {stats['restart_usable_slots']}")
        summary = subprocess.run([harness.flashdir_binary(), "stats", rig.mnt], capture_output=True, text=True,
                                 check=False).stdout
        check.check("from the restart image" in summary, f"taken: `flashdir stats` says so: {summary}")
        rig.read_all_right()
        after = cache_stats(rig.mnt)
        check.check(after["read_hit_pages"] - stats["read_hit_pages"] == 64,
                    f"taken: a's 64 pages are hits, b's are not: {after['read_hit_pages'] - stats['read_hit_pages']}")
    with rig.mount() as mount:
        rig.expect_restart(mount, True, "the second clean unmount saved another")
        rig.read_all_right()


def stale_copy_put_back(check, top):
    """An image saved before the cache changed, put back after: refused (another checkpoint)."""
    rig = Rig(check, top, "stale")
    shutil.copy2(rig.image, f"{rig.image}.old")
    rig.files["c"] = content(3, 16)
    write_file(f"{rig.backing}/c", rig.files["c"])
    with rig.mount():
        rig.read_all_right()  # c's pages: the chip changes
    os.replace(f"{rig.image}.old", rig.image)
    with rig.mount() as mount:
        rig.expect_restart(mount, False, "the image describes an older checkpoint")
        check.check("is not used" in mount.startup_log, f"stale: the mount says why: {mount.startup_log.strip()[-400:]}")
        rig.read_all_right()


def flip_byte(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x10]))


def index_offset(image):
    """Where the image's index starts (doc/format.md "Restart image": header bytes 40-47)."""
    with open(image, "rb") as f:
        f.seek(40)
        return struct.unpack("<Q", f.read(8))[0]


def damaged_index(check, top):
    """One flipped byte in the image's index: refused by its checksum."""
    rig = Rig(check, top, "damaged")
    flip_byte(rig.image, index_offset(rig.image) + 30)
    with rig.mount() as mount:
        rig.expect_restart(mount, False, "its index's checksum fails")
        rig.read_all_right()


def damaged_part(check, top):
    """One flipped byte in the image's first part (the entries of slots 0 on): the image is
    taken, that part is read from the chip's metadata pages when first needed, and nothing is
    lost: the same bytes, the same hits."""
    rig = Rig(check, top, "part")
    flip_byte(rig.image, 72 + 12 * 3)  # the header is 72 bytes; entry 3 of the first chunk
    with rig.mount() as mount:
        stats = rig.expect_restart(mount, True, "only a part is damaged")
        rig.read_all_right()
        after = cache_stats(rig.mnt)
        # The chunk, and the first page table naming a slot of it (the tables are rebuilt from
        # the entries the chip gave back).
        check.check(after["restart_image_parts_damaged"] == 2,
                    f"part: the chunk and the tables rebuilt from the chip: {after['restart_image_parts_damaged']}")
        check.check(after["restart_image_slots_lost"] == 0, f"part: no page lost: {after['restart_image_slots_lost']}")
        check.check(after["read_hit_pages"] - stats["read_hit_pages"] == 72,
                    f"part: all 72 pages hit: {after['read_hit_pages'] - stats['read_hit_pages']}")
        with open(f"{rig.cache}/daemon.log", errors="replace") as f:
            check.check("read from the metadata pages" in f.read(), "part: the log says which part and why")
        summary = subprocess.run([harness.flashdir_binary(), "stats", rig.mnt], capture_output=True, text=True,
                                 check=False).stdout
        check.check("2 damaged parts rebuilt from the chip, 0 pages lost" in summary,
                    f"part: `flashdir stats` says so: {summary}")


def another_caches_image(check, top):
    """The image of another cache (same size, same files): refused by its uuid."""
    one, two = Rig(check, top, "one"), Rig(check, top, "two")
    shutil.copy2(two.image, one.image)
    with one.mount() as mount:
        one.expect_restart(mount, False, "another cache saved it")
        one.read_all_right()


def killed_after_image_restart(check, top):
    """kill -9 after an open from the image: the next open recovers from the metadata pages,
    keeping what was cached before and after."""
    rig = Rig(check, top, "killed")
    rig.files["d"] = content(4, 16)
    write_file(f"{rig.backing}/d", rig.files["d"])
    mount = rig.mount()
    try:
        rig.expect_restart(mount, True, "a clean unmount saved it")
        rig.read_all_right()
        time.sleep(1.5)  # a commit makes d's pages usable after a cut
    finally:
        mount.kill9()
    with rig.mount() as mount:
        stats = rig.expect_restart(mount, False, "the cache did not close cleanly")
        check.check(not stats["restart_clean_shutdown"], "killed: the open is the one after a cut")
        check.check(stats["restart_usable_slots"] == 88, f"killed: 88 pages usable: {stats['restart_usable_slots']}")
        rig.read_all_right()


def main():
    harness.require_fuse()
    check = harness.Checker("fuse restart image")
    with harness.scratch("restart-image") as top:
        taken_and_removed(check, top)
        stale_copy_put_back(check, top)
        damaged_index(check, top)
        damaged_part(check, top)
        another_caches_image(check, top)
        killed_after_image_restart(check, top)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
