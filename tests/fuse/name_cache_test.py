#!/usr/bin/env python3
"""The daemon's metadata cache over a slow store (slowstore, which keeps the backing's inode
numbers, mounted with identity=inode as an NFS store would be): a restarted daemon answers the
names it knew without asking the store, after a clean unmount and after kill -9; changes made
through the mount just before a kill -9 are all seen after it (the tree through the mount is
the backing tree, name by name, mode, size and link count); a change behind the mount is seen
within the bound after a restart as before it; a directory's listing is served from the daemon's
cache while the directory is unchanged, also after a restart, and a change behind it is listed
once its attributes show it; past the bound, a name in a directory that has not changed costs one stat of
its object, and a change behind the mount is still seen; opening a file after a restart opens its
siblings in the background (a daemon that cannot open by handle), and a sibling replaced behind
the mount reads as the new file; after a restart an object is opened by the file handle its answer
kept, one store call where its name costs three, and is not opened ahead (but under readmostly,
where the open stands on the check made ahead); and over a store that
renumbers inodes (identity=path) there is no metadata cache. Counted in store calls and the
daemon's stats, never timed. Exits 77 where /dev/fuse or root is missing."""
import errno
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "..", "bench", "slowstore"))
import harness  # noqa: E402
from slowstore_mount import SlowstoreMount  # noqa: E402

DIRS, FILES = 6, 15


def make_tree(backing):
    for i in range(DIRS):
        os.makedirs(f"{backing}/d{i}/sub")
        for j in range(FILES):
            with open(f"{backing}/d{i}/f{j}", "w") as f:
                f.write("x" * j)
        os.symlink("f0", f"{backing}/d{i}/link")
    os.link(f"{backing}/d0/f1", f"{backing}/d1/hard")


def layout(top, part):
    """The directories of one part: a backing tree (make_tree), the slowstore and flashdir mount
    points, and flashdir's cache."""
    root = f"{top}/{part}"
    backing, slow, mnt, cache = f"{root}/b", f"{root}/s", f"{root}/m", f"{root}/c"
    for d in (slow, mnt):
        os.makedirs(d)
    make_tree(backing)
    return backing, slow, mnt, cache


def walk(top):
    """Every name below `top` with what lstat says of it (not times: the walk moves atimes)."""
    seen = {}
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            seen[os.path.relpath(path, top)] = (st.st_mode, st.st_size, st.st_nlink, st.st_ino)
    return seen


def calls_of(store, action):
    before = store.counts()["calls"]
    action()
    after = store.counts()["calls"]
    return {kind: after.get(kind, 0) - before.get(kind, 0) for kind in after if after.get(kind, 0) != before.get(kind, 0)}


def names(mnt):
    return harness.stats(mnt)["name_cache"]


# A fixed bound longer than any part: answers do not expire while a part runs (under cto's
# default the bound of a tree made a moment ago is 3 s).
OPTIONS = "identity=inode,actimeo=60"


def a_restart_knows_the_tree(check, top):
    backing, slow, mnt, cache = layout(top, "restart")
    entries = len(walk(backing))
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0") as store:
        with harness.Mount(slow, mnt, cache, OPTIONS):
            cold = calls_of(store, lambda: walk(mnt))
        for how in ("clean unmount", "kill -9"):
            with harness.Mount(slow, mnt, cache, OPTIONS) as mount:
                tree = {}
                restarted = calls_of(store, lambda: tree.update(walk(mnt)))
                check.check(tree == walk(backing), f"after a {how}, the tree through the mount is the backing's")
                figures = names(mnt)
                check.check(figures["loaded_at_start"] >= entries and figures["hits"] >= entries,
                            f"after a {how}, every name is answered by the daemon's cache ({figures})")
                # Listings and the directories' own opens still reach the store; the names do not.
                check.check(restarted.get("getattr", 0) * 2 < cold.get("getattr", 0),
                            f"after a {how}, the walk costs the store less than half the cold walk's lookups "
                            f"({restarted} against {cold})")
                if how == "kill -9":
                    continue
                time.sleep(1.5)  # the daemon stores new answers once a second
                mount.kill9()


def changes_before_a_kill_are_seen_after_it(check, top):
    for mode in ("writethrough", "writeback"):
        backing, slow, mnt, cache = layout(top, f"changes-{mode}")
        options = f"{OPTIONS},mode={mode}"
        with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0"):
            with harness.Mount(slow, mnt, cache, options) as mount:
                walk(mnt)
                time.sleep(1.5)  # stored
                os.rename(f"{mnt}/d0/f2", f"{mnt}/d0/f2-renamed")
                os.rename(f"{mnt}/d0/f3", f"{mnt}/d1/f3")  # over an existing name
                os.unlink(f"{mnt}/d2/f4")
                os.unlink(f"{mnt}/d1/hard")  # d0/f1's link count drops
                os.rmdir(f"{mnt}/d3/sub")
                os.rename(f"{mnt}/d4/sub", f"{mnt}/d4/sub-renamed")
                os.chmod(f"{mnt}/d5/f5", 0o600)
                os.truncate(f"{mnt}/d5/f6", 100)
                with open(f"{mnt}/d5/f7", "a") as f:
                    f.write("appended")
                with open(f"{mnt}/d5/new", "w") as f:
                    f.write("new")
                os.mkdir(f"{mnt}/d5/newdir")
                os.symlink("f0", f"{mnt}/d5/newlink")
                os.link(f"{mnt}/d5/f8", f"{mnt}/d5/f8-link")
                expected = walk(backing)
                mount.kill9()
            with harness.Mount(slow, mnt, cache, options):
                check.check(walk(mnt) == expected,
                            f"{mode}: every change made through the mount before a kill -9 is seen after it")


def cached_then_replaced(slow, backing, mnt, cache, options, files, replaced, prefix=()):
    """A daemon walks the tree and reads `files` (cached), and is unmounted; then `replaced` is
    replaced behind the mount. What the backing now holds of `files`."""
    with harness.Mount(slow, mnt, cache, options, prefix=prefix):
        walk(mnt)
        for path in files:
            harness.read_all(f"{mnt}/{path}")
    os.unlink(f"{backing}/{replaced}")
    with open(f"{backing}/{replaced}", "w") as f:
        f.write("replaced behind the mount")
    return {path: harness.read_all(f"{backing}/{path}") for path in files}


def opened_ahead(mnt):
    """The name cache's figures once every sibling queued to be opened ahead was (or failed)."""
    deadline = time.monotonic() + 20
    figures = names(mnt)
    while (figures["siblings_opened_ahead"] + figures["siblings_failed"] < figures["siblings_queued"] and
           time.monotonic() < deadline):
        time.sleep(0.05)
        figures = names(mnt)
    return figures


# The daemon as root would be without CAP_DAC_READ_SEARCH: it cannot open by file handle, as a
# daemon run by a user cannot.
WITHOUT_HANDLES = ("setpriv", "--inh-caps=-dac_read_search", "--bounding-set=-dac_read_search")


def a_restart_opens_the_siblings_of_a_read_file(check, top):
    """After a restart of a daemon that cannot open by handle, opening one file of a directory
    opens the other names the cache answered there in the background (name_opener.h); one
    replaced behind the mount while the daemon was down is not taken for the file it replaced."""
    backing, slow, mnt, cache = layout(top, "siblings")
    files = [f"d2/f{j}" for j in range(FILES)]
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0"):
        expected = cached_then_replaced(slow, backing, mnt, cache, OPTIONS, files, "d2/f5", prefix=WITHOUT_HANDLES)
        with harness.Mount(slow, mnt, cache, OPTIONS, prefix=WITHOUT_HANDLES) as mount:
            check.check("open_by_handle_at is not available" in mount.startup_log + harness.read_log(cache),
                        "the daemon without CAP_DAC_READ_SEARCH says it does not open by handle")
            walk(mnt)  # every name answered by the daemon's cache: inodes known by name only
            harness.read_all(f"{mnt}/d2/f0")
            figures = opened_ahead(mnt)
            # f1 to f14 but f5, and the directory's other names (sub, link), are opened ahead;
            # f5, replaced while the daemon was down, fails its check.
            check.check(figures["siblings_queued"] >= FILES - 1 and figures["siblings_opened_ahead"] >= FILES - 2 and
                        figures["siblings_failed"] >= 1 and
                        figures["siblings_opened_ahead"] + figures["siblings_failed"] == figures["siblings_queued"],
                        f"opening the first file opened its siblings, but the one replaced ({figures})")
            contents = {path: harness.read_all(f"{mnt}/{path}") for path in files}
            check.check(contents == expected, "after a restart, every file of the directory reads as the backing's")


def a_restart_opens_objects_by_their_handles(check, top):
    """After a restart, an object known by name only is opened by the file handle its answer
    kept: its check is the one store call, where opening its name costs the store the name's
    lookup and the directory's search-permission check besides. A file replaced behind the mount
    while the daemon was down is still not taken for the file it replaced."""
    backing, slow, mnt, cache = layout(top, "handles")
    files = [f"d{i}/f{j}" for i in range(DIRS) for j in range(FILES)]
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0") as store:
        expected = cached_then_replaced(slow, backing, mnt, cache, OPTIONS, files, "d3/f7")
        with harness.Mount(slow, mnt, cache, OPTIONS):
            walk(mnt)  # every name answered by the daemon's cache: inodes known by name only
            contents = {}

            def read_every_file():
                contents.update({path: harness.read_all(f"{mnt}/{path}") for path in files})

            calls = calls_of(store, read_every_file)
            by_handle = harness.stats(mnt)["inodes"]["named_opened_by_handle"]
            check.check(contents == expected, "after a restart, every file reads as the backing's")
            # Each file opened by name: a lookup, the search-permission check and the check's
            # stat; by handle, the stat, which is also its open's. None is opened ahead: that
            # would cost its open a stat of its own.
            check.check(names(mnt)["siblings_queued"] == 0, "objects with a handle are not opened ahead")
            check.check(by_handle >= len(files) - 1 and sum(calls.values()) <= 1.5 * len(files),
                        f"after a restart, {by_handle} objects were opened by handle, and reading "
                        f"{len(files)} files cost the store {calls}")


def under_readmostly_objects_with_handles_are_checked_ahead(check, top):
    """Under readmostly an open stands on the stat an earlier check kept (kept_open_answer), so
    after a restart the objects with a handle are opened ahead too: once the first file of each
    directory is read and the opener is done, reading every other file costs the store nothing,
    and a file replaced behind the mount while the daemon was down still reads as the new one."""
    backing, slow, mnt, cache = layout(top, "ahead")
    options = "identity=inode,consistency=readmostly,actimeo=60"
    files = [f"d{i}/f{j}" for i in range(DIRS) for j in range(FILES)]
    first = [f"d{i}/f0" for i in range(DIRS)] + ["d3/f7"]
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0") as store:
        expected = cached_then_replaced(slow, backing, mnt, cache, options, files, "d3/f7")
        with harness.Mount(slow, mnt, cache, options):
            walk(mnt)  # every name answered by the daemon's cache: inodes known by name only
            contents = {path: harness.read_all(f"{mnt}/{path}") for path in first}
            figures = opened_ahead(mnt)
            check.check(figures["siblings_queued"] >= len(files) - len(first),
                        f"reading one file of each directory queued the others, handles and all ({figures})")
            # d0/f1 has a second name (d1/hard): the cache serves no file with two links, and its
            # reads go to the store.
            rest = [path for path in files if path not in first and path != "d0/f1"]
            opens = harness.stats(mnt)["data"]["opens_from_memory"]
            calls = calls_of(store, lambda: contents.update({path: harness.read_all(f"{mnt}/{path}") for path in rest}))
            opens = harness.stats(mnt)["data"]["opens_from_memory"] - opens
            contents["d0/f1"] = harness.read_all(f"{mnt}/d0/f1")
            check.check(contents == expected, "after a restart, every file reads as the backing's")
            check.check(opens == len(rest) and sum(calls.values()) == 0,
                        f"the {len(rest)} files checked ahead were opened on those checks ({opens} opens from "
                        f"memory) and cost the store nothing ({calls})")


def a_file_renamed_while_down_is_not_read_under_its_old_name(check, top):
    """A handle follows its object through a rename on a local file system (over slowstore, which
    keeps paths, it does not), so after a restart the answer from before it, still within its
    bound, opens the renamed file by its handle; the rename moved its change time, so the check
    fails and the file is not read under the name it no longer has."""
    backing, mnt, cache = f"{top}/renamed/b", f"{top}/renamed/m", f"{top}/renamed/c"
    os.makedirs(f"{backing}/d")
    os.makedirs(mnt)
    for name in ("moved", "kept"):
        with open(f"{backing}/d/{name}", "w") as f:
            f.write(name)
    with harness.Mount(backing, mnt, cache, OPTIONS):
        for name in ("moved", "kept"):
            harness.read_all(f"{mnt}/d/{name}")
    os.rename(f"{backing}/d/moved", f"{backing}/d/moved-elsewhere")
    with harness.Mount(backing, mnt, cache, OPTIONS):
        try:
            harness.read_all(f"{mnt}/d/moved")
            outcome = "read"
        except OSError as error:
            outcome = errno.errorcode.get(error.errno, str(error.errno))
        check.check(outcome in ("ESTALE", "ENOENT"),
                    f"a file renamed behind the mount while the daemon was down is not read under its old name ({outcome})")
        check.check(harness.read_all(f"{mnt}/d/kept") == b"kept" and harness.read_all(f"{mnt}/d/moved-elsewhere") == b"moved",
                    "... and the directory reads as the backing's")
        check.check(harness.stats(mnt)["inodes"]["named_opened_by_handle"] >= 1, "the kept file was opened by its handle")


def listings(mnt):
    """Every directory's listing below `mnt`, sorted."""
    return {os.path.relpath(root, mnt): sorted(dirs + files) for root, dirs, files in os.walk(mnt)}


def listings_are_kept_for_the_directory_version(check, top):
    """A directory read whole is listed again from the daemon's cache while its version (times,
    size) is the one it was read at, also after a restart: the store sees no readdir. A name made
    or removed behind the mount changes the version and is listed within the bound; here at the
    next opendir, since a directory the daemon has just listed has its attributes asked for again
    (the kernel drops its copy of the access time), and the backing's answer shows the change."""
    backing, slow, mnt, cache = layout(top, "listings")
    time.sleep(2.2)  # kept only for directories unchanged for 2 s (directory_listing.h)
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0") as store:
        with harness.Mount(slow, mnt, cache, OPTIONS):
            expected = listings(backing)
            check.check(listings(mnt) == expected, "the listings through the mount are the backing's")
            recorded = names(mnt)["listings_recorded"]
            check.check(recorded >= 2 * DIRS + 1, f"each directory read whole is recorded ({recorded})")
        for how in ("clean unmount", "kill -9"):
            with harness.Mount(slow, mnt, cache, OPTIONS) as mount:
                seen = {}
                calls = calls_of(store, lambda: seen.update(listings(mnt)))
                check.check(seen == expected, f"after a {how}, the listings are the backing's")
                check.check(calls.get("readdir", 0) == 0 and calls.get("opendir", 0) == 0,
                            f"after a {how}, no directory is read from the store ({calls})")
                check.check(names(mnt)["listings_loaded_at_start"] >= 2 * DIRS + 1,
                            f"after a {how}, the listings come from the store ({names(mnt)})")
                if how == "kill -9":
                    continue
                time.sleep(1.5)  # the daemon stores new listings once a second
                mount.kill9()
        with harness.Mount(slow, mnt, cache, OPTIONS):
            listings(mnt)
            with open(f"{backing}/d0/made-behind", "w") as f:
                f.write("m")
            os.unlink(f"{backing}/d1/f3")
            os.mkdir(f"{backing}/d2/sub/deeper")
            check.check(listings(mnt) == listings(backing),
                        "names made and removed behind the mount are listed at the next opendir after a listing")


def a_change_behind_is_seen_within_the_bound(check, top):
    backing, slow, mnt, cache = layout(top, "behind")
    bound = 1.0
    options = f"identity=inode,actimeo={bound:g}"
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0"):
        with harness.Mount(slow, mnt, cache, options):
            walk(mnt)
        os.chmod(f"{backing}/d0/f1", 0o600)
        os.unlink(f"{backing}/d0/f2")
        with open(f"{backing}/d0/made", "w") as f:
            f.write("m")
        time.sleep(bound + 0.2)
        with harness.Mount(slow, mnt, cache, options):
            check.check(os.stat(f"{mnt}/d0/f1").st_mode & 0o777 == 0o600, "a mode changed behind the mount is seen")
            check.check(not os.path.exists(f"{mnt}/d0/f2"), "a name removed behind the mount is gone")
            check.check(os.path.exists(f"{mnt}/d0/made"), "a name made behind the mount is there")


def a_name_in_an_unchanged_directory_costs_one_stat(check, top):
    """Past the bound, a name in a directory that still has the version it had when the name was
    looked up is answered by one stat of its object, not by a lookup of the name: a walk of the
    names costs the store one call each, also after a restart (the object opened by the handle
    its answer kept), and attributes changed behind the mount are seen. A name
    made, removed or replaced behind the mount moves its directory's version, so it is looked up
    again, and a name that was missing and is made behind the mount is found."""
    backing, slow, mnt, cache = layout(top, "unchanged")
    bound = 1.0
    options = f"identity=inode,actimeo={bound:g}"
    missing = ["d2/made", "d4/sub/made"]

    def stat_all():
        seen = {}
        for path in sorted(walk(backing)) + missing:
            try:
                st = os.lstat(f"{mnt}/{path}")
                seen[path] = (st.st_mode, st.st_size, st.st_nlink, st.st_ino)
            except FileNotFoundError:
                pass
        return seen

    time.sleep(2.2)  # a directory's version stands for its names once unchanged for 2 s (directory_listing.h)

    def walk_past_the_bound(when):
        time.sleep(bound + 0.2)
        before = names(mnt)["names_vouched"]
        seen = {}
        calls = calls_of(store, lambda: seen.update(stat_all()))
        vouched = names(mnt)["names_vouched"] - before
        looked_up = len(walk(backing)) + len(missing)
        check.check(seen == walk(backing), f"past the bound{when}, the names are the backing's")
        check.check(vouched >= looked_up and sum(calls.values()) <= 1.25 * looked_up,
                    f"past the bound{when}, {looked_up} names cost {calls} and {vouched} were answered by their directory")

    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0") as store:
        with harness.Mount(slow, mnt, cache, options):
            check.check(stat_all() == walk(backing), "the names through the mount are the backing's")
            walk_past_the_bound("")
        # The answers keep their directories' versions and their objects' handles in the store.
        with harness.Mount(slow, mnt, cache, options):
            walk_past_the_bound(" after a restart")
            os.chmod(f"{backing}/d0/f1", 0o600)
            with open(f"{backing}/d0/f2", "a") as f:
                f.write("grown")
            os.unlink(f"{backing}/d1/f3")
            with open(f"{backing}/d3/new", "w") as f:
                f.write("replacement")
            os.rename(f"{backing}/d3/new", f"{backing}/d3/f4")
            with open(f"{backing}/d2/made", "w") as f:
                f.write("m")
            os.mkdir(f"{backing}/d4/sub/made")
            time.sleep(bound + 0.2)
            check.check(stat_all() == walk(backing),
                        "past the bound, a mode and a size changed, a name removed, replaced or made behind the mount are seen")


def none_over_a_renumbering_store(check, top):
    backing, slow, mnt, cache = layout(top, "path")
    with SlowstoreMount(os.environ["SLOWSTORE"], backing, slow, "latency_us=0"):
        with harness.Mount(slow, mnt, cache):
            stats = harness.stats(mnt)
            check.check(stats["identity"]["rule"] == "path" and "name_cache" not in stats,
                        "over a FUSE store known by path, the daemon keeps no metadata cache")
            check.check(walk(mnt) == walk(backing), "... and serves the tree")


def main():
    harness.require_fuse()
    binary = os.environ.get("SLOWSTORE")
    if not binary or not os.access(binary, os.X_OK):
        sys.exit("SLOWSTORE must name the slowstore binary")
    sys.exit(harness.run_parts("name_cache", [a_restart_knows_the_tree, changes_before_a_kill_are_seen_after_it,
                                              a_restart_opens_the_siblings_of_a_read_file,
                                              a_restart_opens_objects_by_their_handles,
                                              under_readmostly_objects_with_handles_are_checked_ahead,
                                              a_file_renamed_while_down_is_not_read_under_its_old_name,
                                              listings_are_kept_for_the_directory_version,
                                              a_change_behind_is_seen_within_the_bound,
                                              a_name_in_an_unchanged_directory_costs_one_stat,
                                              none_over_a_renumbering_store]))


if __name__ == "__main__":
    main()
