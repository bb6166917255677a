"""A file is its identity, not its path (doc/daemon.md "File identity"), through a real mount:
two files that meet at one path never share cached bytes, whoever renames what, through the
mount or behind it, in every write mode; a restart writes dirty pages back only into the file
they were written to (the others are kept in the cache's lost+found); a cache never opens over
another backing directory; and over a backing that renumbers inodes (as sshfs does) a remount
keeps every cached file.
"""
import json
import os
import subprocess
import sys

import harness

MODES = ("writethrough", "writeback", "writearound")
PAGE = 4096


def stats(mnt):
    with open(f"{mnt}/.flashdir/stats.json") as f:
        return json.load(f)


def read_all(path):
    with open(path, "rb") as f:
        return f.read()


def write_file(path, data, mode=0o644):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def fresh_tree(top, name):
    """top/name/{b,m,c}: a backing with a world-writable, non-sticky pub/, a mount point, a cache."""
    root = f"{top}/{name}"
    backing, mnt = f"{root}/b", f"{root}/m"
    os.makedirs(f"{backing}/pub")
    os.makedirs(mnt)
    os.chmod(root, 0o755)
    os.chmod(backing, 0o755)
    os.chmod(f"{backing}/pub", 0o777)
    return backing, mnt, f"{root}/c"


def cross_user(check, top, mode, flags, behind):
    """root keeps pub/v (0600) open; nobody puts his own file at pub/v; each reads only his own."""
    where = f"{mode} flags={flags} {'behind the mount' if behind else 'through the mount'}"
    backing, mnt, cache = fresh_tree(top, f"cross-{mode}-{flags}-{int(behind)}")
    # Behind the mount, under strict consistency: the kernel then looks every name up again, so
    # that the daemon meets the exchanged files (under close-to-open the kernel keeps pub/v naming
    # root's file until actimeo runs out; consistency_test.py tests that bound).
    consistency = ",consistency=strict" if behind else ""
    with harness.Mount(backing, mnt, cache, f"mode={mode},allow_other{consistency}"):
        victim_old = b"VICTIM-OLD-BYTES" * (PAGE // 16) * 2
        write_file(f"{mnt}/pub/v", victim_old, 0o600)
        fd = os.open(f"{mnt}/pub/v", os.O_RDWR)
        check.check(os.pread(fd, len(victim_old), 0) == victim_old, f"{where}: root reads its file")
        nobody_old = b"nobody's-own-file" + b"." * (2 * PAGE - 17)
        root = backing if behind else mnt

        def put_own_file():
            write_file(f"{mnt}/pub/a", nobody_old, 0o644)
            harness.renameat2(f"{root}/pub/a", f"{root}/pub/v", flags)
            return True
        check.check(harness.as_user(put_own_file) is True, f"{where}: nobody puts his own file at pub/v")
        seen = harness.as_user(lambda: read_all(f"{mnt}/pub/v").decode("latin-1"))
        check.check(seen == nobody_old.decode("latin-1"),
                    f"{where}: nobody reads his own file, none of root's cached bytes: {str(seen)[:40]!r}")

        secret = (b"VICTIM-NEW-SECRET" * 241)[:PAGE]  # a whole page: the cache takes it in every mode
        os.pwrite(fd, secret, 0)
        seen = harness.as_user(lambda: read_all(f"{mnt}/pub/v").decode("latin-1"))
        check.check(isinstance(seen, str) and "VICTIM" not in seen and seen.encode("latin-1") == nobody_old,
                    f"{where}: nobody reads his own file at pub/v, none of root's bytes: {str(seen)[:40]!r}")

        def overwrite_own_file():
            with open(f"{mnt}/pub/v", "r+b") as f:
                f.write(b"NOBODY-WRITES")
            return True
        check.check(harness.as_user(overwrite_own_file) is True, f"{where}: nobody writes his file")
        mine = os.pread(fd, len(victim_old), 0)
        check.check(mine == secret + victim_old[len(secret):],
                    f"{where}: root's descriptor reads back exactly its own file: {mine[:32]!r}")
        os.close(fd)
        nobody_now = read_all(f"{mnt}/pub/v")
        check.check(nobody_now == b"NOBODY-WRITES" + nobody_old[13:], f"{where}: pub/v holds nobody's bytes")
        if flags == harness.RENAME_EXCHANGE:
            check.check(read_all(f"{mnt}/pub/a") == secret + victim_old[len(secret):],
                        f"{where}: root's file, now pub/a, holds its own bytes")
    check.check(read_all(f"{backing}/pub/v") == b"NOBODY-WRITES" + nobody_old[13:],
                f"{where}: after the unmount pub/v holds nobody's bytes only")
    if flags == harness.RENAME_EXCHANGE:
        check.check(read_all(f"{backing}/pub/a") == secret + victim_old[len(secret):],
                    f"{where}: after the unmount root's file holds its own bytes")


def rename_over_written_file(check, top, flags):
    """Write-back without a second user: the written file is renamed over (or exchanged) while open."""
    where = f"writeback flags={flags}"
    backing, mnt, cache = fresh_tree(top, f"wb-rename-{flags}")
    with harness.Mount(backing, mnt, cache, "mode=writeback"):
        write_file(f"{mnt}/f1", b"one" * 3000)
        write_file(f"{mnt}/f2", b"two" * 3000)
        fd = os.open(f"{mnt}/f2", os.O_RDWR)
        acknowledged = b"ACKNOWLEDGED-WRITE" * 300
        os.pwrite(fd, acknowledged, 0)
        harness.renameat2(f"{mnt}/f1", f"{mnt}/f2", flags)
        check.check(os.pread(fd, len(acknowledged), 0) == acknowledged,
                    f"{where}: the descriptor reads back its acknowledged write")
        os.close(fd)
        if flags == harness.RENAME_EXCHANGE:
            check.check(read_all(f"{mnt}/f1")[:len(acknowledged)] == acknowledged,
                        f"{where}: the written file keeps its new contents under its new name")
            check.check(read_all(f"{mnt}/f2") == b"one" * 3000, f"{where}: the other file is untouched")
        else:
            check.check(read_all(f"{mnt}/f2") == b"one" * 3000, f"{where}: f2 is the renamed file")
    log = harness.read_log(cache)
    check.check("not found" not in log and "[error]" not in log, f"{where}: the daemon logged no error: {log[-400:]}")


def recovery_into_replaced_file(check, top):
    """nobody's fsync'd write-back pages, a kill -9, then nobody moves root's file to his path."""
    backing, mnt, cache = fresh_tree(top, "recovery")
    write_file(f"{backing}/pub/victim", b"ROOT-ONLY-DATA" * 600, 0o600)
    write_file(f"{backing}/pub/x", b"x" * 3 * PAGE, 0o666)
    os.chown(f"{backing}/pub/x", harness.NOBODY_UID, harness.NOBODY_GID)
    mount = harness.Mount(backing, mnt, cache, "mode=writeback,allow_other")
    # nobody writes and fsyncs, and keeps the file open: the kill comes before any close writes
    # the page back.
    writer = subprocess.Popen(
        ["setpriv", f"--reuid={harness.NOBODY_UID}", f"--regid={harness.NOBODY_GID}", "--clear-groups", sys.executable,
         "-c", f"import os,sys,time\nfd=os.open('{mnt}/pub/x',os.O_RDWR)\nos.pwrite(fd,b'NOBODY-DIRTY-PAGE'*100,0)\n"
               "os.fsync(fd)\nprint('ready',flush=True)\ntime.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        check.check(writer.stdout.readline().strip() == "ready", "recovery: nobody's write and fsync")
        mount.kill9()
    finally:
        writer.kill()
        writer.wait()
        mount.stop()
    check.check(read_all(f"{backing}/pub/x") == b"x" * 3 * PAGE, "recovery: the dirty page never reached the backing")
    harness.as_user(lambda: os.rename(f"{backing}/pub/victim", f"{backing}/pub/x") or True)
    with harness.Mount(backing, mnt, cache, "mode=writeback,allow_other") as again:
        check.check("saved in" in again.startup_log, f"recovery: the daemon said what it saved: {again.startup_log}")
        figures = stats(mnt)["cache"]
        check.check(figures.get("restart_saved_dirty_slots") == 1 and figures["restart_written_back_slots"] == 0,
                    f"recovery: the dirty page is saved, not written back: {figures}")
        check.check(read_all(f"{mnt}/pub/x") == b"ROOT-ONLY-DATA" * 600, "recovery: root's file reads as it was")
    check.check(read_all(f"{backing}/pub/x") == b"ROOT-ONLY-DATA" * 600, "recovery: root's file is untouched")
    lost = f"{cache}/lost+found"
    saved = [name for name in os.listdir(lost) if not name.endswith(".txt")] if os.path.isdir(lost) else []
    check.check(len(saved) == 1 and "uid65534" in saved[0] and "pub%2Fx" in saved[0],
                f"recovery: lost+found holds one file named after nobody's file: {saved}")
    if saved:
        check.check(read_all(f"{lost}/{saved[0]}").startswith(b"NOBODY-DIRTY-PAGE" * 100),
                    "recovery: lost+found keeps nobody's bytes")
        check.check(os.stat(f"{lost}/{saved[0]}").st_mode & 0o777 == 0o600 and os.stat(lost).st_mode & 0o777 == 0o700,
                    "recovery: lost+found is private")


def another_backing(check, top):
    """A write-back cache with dirty pages is refused over any backing directory but its own."""
    backing, mnt, cache = fresh_tree(top, "binding")
    other = f"{top}/binding/other"
    os.makedirs(other)
    write_file(f"{backing}/f", b"old" * 2000)
    write_file(f"{other}/f", b"OTHER-TREE" * 600)
    mount = harness.Mount(backing, mnt, cache, "mode=writeback")
    try:
        fd = os.open(f"{mnt}/f", os.O_RDWR)
        os.pwrite(fd, b"DIRTY" * 100, 0)
        os.fsync(fd)
        mount.kill9()
    finally:
        mount.stop()
    result = subprocess.run([harness.flashdir_binary(), other, mnt, "-o", f"cache={cache},mode=writeback"],
                            capture_output=True, text=True, check=False)
    check.check(result.returncode != 0 and "belongs to backing directory" in result.stderr,
                f"binding: the cache is refused over another directory: {result.stderr.strip()}")
    if harness.is_mounted(mnt):
        harness.unmount(mnt)
    check.check(read_all(f"{other}/f") == b"OTHER-TREE" * 600, "binding: the other tree's file is untouched")
    with harness.Mount(backing, mnt, cache, "mode=writeback"):
        check.check(read_all(f"{mnt}/f")[:500] == b"DIRTY" * 100, "binding: over its own backing the page went back")
    check.check(read_all(f"{backing}/f")[:500] == b"DIRTY" * 100, "binding: the backing file holds it")


def renumbering_backing(check, top):
    """Over a FUSE backing that numbers inodes in lookup order, a remount keeps every cached file."""
    root = f"{top}/renumbering"
    slow, point, mnt, cache = f"{root}/slow", f"{root}/fuse", f"{root}/m", f"{root}/c"
    for d in (slow, point, mnt):
        os.makedirs(d)
    files = {f"f{i}": bytes([65 + i]) * 16 * PAGE for i in range(4)}
    for name, data in files.items():
        write_file(f"{slow}/{name}", data)
    names = sorted(files)
    with harness.FuseBacking(slow, point):
        with harness.Mount(point, mnt, cache):
            check.check(stats(mnt)["identity"]["rule"] == "path", "renumbering: a FUSE backing is known by path")
            for name in names:
                check.check(read_all(f"{mnt}/{name}") == files[name], f"renumbering: {name} reads right")
    # A new session of the backing numbers the files in the opposite order.
    with harness.FuseBacking(slow, point):
        with harness.Mount(point, mnt, cache):
            numbers = {name: os.stat(f"{point}/{name}").st_ino for name in reversed(names)}
            for name in reversed(names):
                check.check(read_all(f"{mnt}/{name}") == files[name], f"renumbering: {name} reads right after the remount")
            figures = stats(mnt)["cache"]
            check.check(figures["read_miss_pages"] == 0 and figures["read_hit_pages"] == 16 * len(names),
                        f"renumbering: every page is a hit after the remount ({numbers}): {figures}")
            # A change behind the mount is still seen as one.
            write_file(f"{slow}/f0", b"Z" * 16 * PAGE)
            os.utime(f"{slow}/f0", (1, 1))
            check.check(read_all(f"{mnt}/f0") == b"Z" * 16 * PAGE, "renumbering: a change behind the mount is seen")


def main():
    harness.require_fuse()
    if not os.environ.get("RENUMBERING_PASSTHROUGH"):
        sys.exit("RENUMBERING_PASSTHROUGH must name tests/fuse/renumbering-passthrough")
    check = harness.Checker("fuse identity")
    with harness.scratch("identity") as top:
        for mode in MODES:
            for flags in (0, harness.RENAME_EXCHANGE):
                for behind in (False, True):
                    cross_user(check, top, mode, flags, behind)
        for flags in (0, harness.RENAME_EXCHANGE):
            rename_over_written_file(check, top, flags)
        recovery_into_replaced_file(check, top)
        another_backing(check, top)
        renumbering_backing(check, top)
    return check.finish()


if __name__ == "__main__":
    sys.exit(main())
