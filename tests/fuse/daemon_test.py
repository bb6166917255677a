"""The daemon's life around the operations: options refused before mounting, missing backing,
mount point or cache inside the backing, a failed start leaving nothing behind, cache
directories it does not trust, a second daemon on one cache, the default cache location, mkfs on
a live cache, remounting at once after an unmount, files changed behind the mount,
the backing directory removed, bounded descriptors, clean unmount by every route, a crash
reported in the log, the stats subcommand, and mount(8) with -t fuse.flashdir. kill -9 and what
survives it are in crash_test.py.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import harness


NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def flashdir(*args, env=None):
    return subprocess.run([harness.flashdir_binary(), *args], capture_output=True, text=True, check=False,
                          env=env)


def refusals(check, top):
    backing, mnt = f"{top}/b", f"{top}/m"
    cases = [
        (["-o", "mode=fast"], "mode=fast"),
        (["-o", "bogus"], "bogus"),
        (["-o", "threads=0"], "threads=0"),
        (["-o", "size=12Q"], "size=12Q"),
        (["-o", "ram_policy=lru"], "ram_policy=lru"),
        (["-o", "allow_other=1"], "allow_other=1"),
        (["-o", "cache="], "cache="),
        (["-o", "meta=lufuw,,mode=writearound"], "empty option"),
    ]
    for args, quoted in cases:
        result = flashdir(backing, mnt, *args, "-o", f"cache={top}/refused-cache")
        check.check(result.returncode == 2 and quoted in result.stderr,
                    f"option {args} refused with a message quoting it (rc {result.returncode}: {result.stderr.strip()})")
    check.check(not os.path.exists(f"{top}/refused-cache"), "a refused option creates no cache")
    result = flashdir(f"{top}/missing", mnt, "-o", f"cache={top}/c0")
    check.check(result.returncode == 1 and "missing" in result.stderr and not harness.is_mounted(mnt),
                f"missing backing refused: {result.stderr.strip()}")
    os.mkdir(f"{top}/locked", 0o700)
    os.chmod(f"{top}/locked", 0o000)
    # Root reads anything; the unreadable case is an unprivileged user's.
    result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", harness.flashdir_binary(),
                             f"{top}/locked", mnt, "-o", f"cache={top}/c1"], capture_output=True, text=True, check=False)
    check.check(result.returncode == 1 and "Permission denied" in result.stderr, f"unreadable backing refused: {result.stderr.strip()}")
    result = flashdir(backing, f"{top}/no-mountpoint", "-o", f"cache={top}/c2")
    check.check(result.returncode == 1 and "mount point" in result.stderr, "missing mount point refused")
    inside_backing(check, top)
    check.check(flashdir("--version").stdout.startswith("flashdir "), "--version")
    help_text = flashdir("--help").stdout
    check.check("seq_cutoff_read" in help_text and "nand_latency" in help_text, "--help lists the mount options")


def refused_or_stopped(mountpoint, cache):
    """The outcome of a mount that must be refused; one that came up anyway is taken down."""
    if harness.is_mounted(mountpoint):
        pid = harness.daemon_pid(cache)
        harness.unmount(mountpoint)
        if pid and not harness.wait_gone(pid):
            os.kill(pid, signal.SIGKILL)
        return False
    return True


def inside_backing(check, top):
    """A mount point inside the backing tree (or the backing directory itself) would show the
    mount inside itself and could not be unmounted (EBUSY); a cache inside it would be readable
    and writable through the mount. Both are refused before anything is made."""
    backing = f"{top}/b"
    os.mkdir(f"{backing}/sub")
    for mountpoint, words in ((f"{backing}/sub", "is inside the backing directory"), (backing, "is the backing directory")):
        result = flashdir(backing, mountpoint, "-o", f"cache={top}/c-inside")
        refused = refused_or_stopped(mountpoint, f"{top}/c-inside")
        check.check(result.returncode == 1 and words in result.stderr and refused,
                    f"mount point {mountpoint} refused: {result.stderr.strip()}")
    check.check(not os.path.exists(f"{top}/c-inside"), "a refused mount point creates no cache")
    result = flashdir(backing, f"{top}/m", "-o", f"cache={backing}/sub/cache")
    refused = refused_or_stopped(f"{top}/m", f"{backing}/sub/cache")
    check.check(result.returncode == 1 and "is inside the backing directory" in result.stderr and refused
                and not os.path.exists(f"{backing}/sub/cache"), f"a cache inside the backing refused: {result.stderr.strip()}")
    shutil.rmtree(f"{backing}/sub")


def failed_start_leaves_nothing(check, top):
    """A size mkfs refuses fails the mount, and the start leaves nothing behind that it made: no
    directory, no lock file; a directory that was there stays, as it was."""
    backing, mnt = f"{top}/b", f"{top}/m"
    os.mkdir(f"{top}/c-was-empty", 0o700)
    for size in ("1", "99999T"):
        for cache in (f"{top}/c-new/c", f"{top}/c-was-empty"):
            result = flashdir(backing, mnt, "-o", f"cache={cache},size={size}")
            refused = refused_or_stopped(mnt, cache)
            check.check(result.returncode == 1 and refused, f"size={size} fails: {result.stderr.strip()}")
        check.check(not os.path.exists(f"{top}/c-new"), f"size={size}: the cache directory it made is gone")
        check.check(os.listdir(f"{top}/c-was-empty") == [], f"size={size}: the directory that was there is left empty: "
                    f"{os.listdir(f'{top}/c-was-empty')}")
    os.rmdir(f"{top}/c-was-empty")


def untrusted_caches(check, top):
    """A cache directory trusts no one: another user's, one others may write, one below a
    directory another user owns, one holding a link where the daemon writes its log; and a
    world-writable XDG_CACHE_HOME is no place for a user's default cache."""
    backing, mnt = f"{top}/b", f"{top}/m"
    os.mkdir(f"{top}/c-nobody", 0o700)
    os.chown(f"{top}/c-nobody", NOBODY, NOBODY)
    os.mkdir(f"{top}/c-open")
    os.chmod(f"{top}/c-open", 0o777)
    os.mkdir(f"{top}/nobody-owned")
    os.chown(f"{top}/nobody-owned", NOBODY, NOBODY)
    cases = [(f"{top}/c-nobody", "is owned by user 65534, not by user 0"),
             (f"{top}/c-open", "is writable by group or others (mode 0777)"),
             (f"{top}/nobody-owned/cache", "nobody-owned is owned by user 65534, who could replace the cache directory")]
    for cache, why in cases:
        result = flashdir(backing, mnt, "-o", f"cache={cache}")
        refused = refused_or_stopped(mnt, cache)
        check.check(result.returncode == 1 and why in result.stderr and refused, f"{cache} refused: {result.stderr.strip()}")
    st = os.stat(f"{top}/c-nobody")
    check.check(st.st_uid == NOBODY and os.listdir(f"{top}/c-nobody") == [], "another user's cache is left as it was")
    check.check(os.stat(f"{top}/c-open").st_mode & 0o777 == 0o777 and os.listdir(f"{top}/c-open") == [],
                "a cache others may write is not chmodded and not used")
    check.check(os.listdir(f"{top}/nobody-owned") == [], "nothing is made below a directory another user owns")

    # A link planted where the daemon appends its log: refused, the file it names untouched.
    cache = f"{top}/c-planted"
    with harness.Mount(backing, mnt, cache):
        pass
    with open(f"{top}/victim1", "w") as f:
        f.write("root only\n")
    os.chmod(f"{top}/victim1", 0o600)
    os.unlink(f"{cache}/daemon.log")
    os.symlink(f"{top}/victim1", f"{cache}/daemon.log")
    result = flashdir(backing, mnt, "-o", f"cache={cache}")
    refused = refused_or_stopped(mnt, cache)
    with open(f"{top}/victim1") as f:
        victim = f.read()
    check.check(result.returncode == 1 and "daemon.log is a symbolic link" in result.stderr and refused,
                f"a planted daemon.log link refused: {result.stderr.strip()}")
    check.check(victim == "root only\n", f"the file the link names is untouched: {victim!r}")

    # XDG_CACHE_HOME open to everyone: another user can prepare the predictable default cache.
    os.mkdir(f"{top}/xdg-open")
    os.chmod(f"{top}/xdg-open", 0o777)
    os.mkdir(f"{top}/xdg-sticky")
    os.chmod(f"{top}/xdg-sticky", 0o1777)
    os.mkdir(f"{top}/xdg-sticky/flashdir", 0o755)
    os.chown(f"{top}/xdg-sticky/flashdir", 4321, 4321)  # prepared by another user
    for xdg, why in ((f"{top}/xdg-open", "xdg-open is writable by group or others"),
                     (f"{top}/xdg-sticky", "xdg-sticky/flashdir is owned by user 4321")):
        result = subprocess.run([*AS_NOBODY, harness.flashdir_binary(), backing, mnt], capture_output=True, text=True,
                                check=False, env=dict(os.environ, XDG_CACHE_HOME=xdg, HOME=f"{top}/no-home"))
        refused = refused_or_stopped(mnt, xdg)
        check.check(result.returncode == 1 and why in result.stderr and refused,
                    f"nobody's default cache under {xdg} refused: {result.stderr.strip()}")
    check.check(os.listdir(f"{top}/xdg-open") == [] and os.listdir(f"{top}/xdg-sticky/flashdir") == [],
                "nothing is made under a world-writable XDG_CACHE_HOME")


def second_daemon_and_binding(check, top):
    backing, mnt, mnt2 = f"{top}/b", f"{top}/m", f"{top}/m2"
    os.mkdir(mnt2)
    with harness.Mount(backing, mnt, f"{top}/cache") as mount:
        result = flashdir(backing, mnt2, "-o", f"cache={top}/cache")
        check.check(result.returncode == 1 and "in use by another flashdir daemon" in result.stderr
                    and str(mount.pid) in result.stderr, f"second daemon refused: {result.stderr.strip()}")
        check.check(not harness.is_mounted(mnt2), "the second daemon mounted nothing")
        check.check(os.stat(f"{top}/cache").st_mode & 0o777 == 0o700, "the cache directory is 0700")
    os.mkdir(f"{top}/other")
    result = flashdir(f"{top}/other", mnt2, "-o", f"cache={top}/cache")
    check.check(result.returncode == 1 and "belongs to backing directory" in result.stderr,
                f"a cache is refused for another backing directory: {result.stderr.strip()}")
    os.mkdir(f"{top}/junk")
    open(f"{top}/junk/file", "w").close()
    result = flashdir(backing, mnt2, "-o", f"cache={top}/junk")
    check.check(result.returncode == 1 and "neither a flashdir cache nor empty" in result.stderr,
                "a non-empty directory is not taken as a cache")


def default_cache(check, top):
    """flashdir B M just works, with a cache per backing directory: root's under
    /var/cache/flashdir, never under XDG_CACHE_HOME or HOME, which sudo may leave naming a
    user's directory."""
    backing, mnt = f"{top}/b", f"{top}/m"
    made_base = not os.path.exists("/var/cache/flashdir")
    env = dict(os.environ, XDG_CACHE_HOME=f"{top}/xdg", HOME=f"{top}/home")
    result = flashdir(backing, mnt, env=env)
    cache = ""
    try:
        check.check(result.returncode == 0 and harness.is_mounted(mnt), f"flashdir B M just works: {result.stderr.strip()}")
        if result.returncode == 0:
            stats = flashdir("stats", mnt, "--json")
            cache = json.loads(stats.stdout or "{}").get("mount", {}).get("cache", "")
        check.check(os.path.dirname(cache) == "/var/cache/flashdir" and os.path.basename(cache).startswith("b-"),
                    f"root's default cache is under /var/cache/flashdir: {cache!r}")
        check.check(not os.path.exists(f"{top}/xdg") and not os.path.exists(f"{top}/home"),
                    "root's default cache ignores XDG_CACHE_HOME and HOME")
        if cache:
            check.check(os.stat(cache).st_mode & 0o777 == 0o700, "default cache is 0700")
    finally:
        pid = harness.daemon_pid(cache) if cache else 0
        harness.unmount(mnt)
        if pid:
            harness.wait_gone(pid)
        if cache.startswith("/var/cache/flashdir/b-"):
            shutil.rmtree(cache, ignore_errors=True)
        if made_base:
            shutil.rmtree("/var/cache/flashdir", ignore_errors=True)
    # A user whose default location cannot be made is told which it was and what to give instead.
    result = subprocess.run([*AS_NOBODY, harness.flashdir_binary(), backing, mnt], capture_output=True, text=True,
                            check=False, env=dict(os.environ, HOME="/nonexistent", XDG_CACHE_HOME=""))
    if harness.is_mounted(mnt):
        harness.unmount(mnt)
    check.check(result.returncode == 1 and "default cache directory /nonexistent/.cache/flashdir/" in result.stderr
                and "-o cache=DIR" in result.stderr, f"an unusable default location is named: {result.stderr.strip()}")


def changed_behind(check, top):
    """Strict consistency: every change behind the mount is seen by the next call (the other
    models are consistency_test.py's)."""
    backing, mnt = f"{top}/b", f"{top}/m"
    with harness.Mount(backing, mnt, f"{top}/cache", "consistency=strict"):
        with open(f"{backing}/behind", "wb") as f:
            f.write(b"A" * 8192)
        with open(f"{mnt}/behind", "rb") as f:
            check.check(f.read() == b"A" * 8192, "first read through the mount")
        # Same size, same second: only the content (and ctime nanoseconds) differ.
        with open(f"{backing}/behind", "r+b") as f:
            f.write(b"B" * 8192)
        with open(f"{mnt}/behind", "rb") as f:
            check.check(f.read() == b"B" * 8192, "a same-size rewrite within the second is read fresh at the next open")
        with open(f"{backing}/behind", "ab") as f:
            f.write(b"C" * 100)
        with open(f"{mnt}/behind", "rb") as f:
            check.check(len(f.read()) == 8292, "growth behind the mount seen at the next open")
        os.rename(f"{backing}/behind", f"{backing}/moved")
        with open(f"{backing}/behind", "wb") as f:
            f.write(b"new file")
        with open(f"{mnt}/behind", "rb") as f:
            check.check(f.read() == b"new file", "a file replaced behind the mount is the new one at the next open")
        check.check(os.path.exists(f"{mnt}/moved"), "a name added behind the mount is found")


def backing_removed(check, top):
    backing, mnt = f"{top}/gone", f"{top}/m"
    os.mkdir(backing)
    with open(f"{backing}/f", "wb") as f:
        f.write(b"data")
    with harness.Mount(backing, mnt, f"{top}/cache-gone", "consistency=strict") as mount:
        fd = os.open(f"{mnt}/f", os.O_RDONLY)
        shutil.rmtree(backing)
        errors = []
        for call in (lambda: os.stat(f"{mnt}/f"), lambda: os.listdir(mnt), lambda: os.open(f"{mnt}/new", os.O_CREAT | os.O_WRONLY)):
            try:
                call()
                errors.append("ok")
            except OSError as e:
                errors.append(e.errno)
        check.check(all(e in (5,) for e in errors[:2]), f"stat and readdir of a removed backing give EIO: {errors}")
        check.check(errors[2] != "ok", "creating in a removed backing fails")
        check.check(os.pread(fd, 4, 0) == b"data", "a file open before the removal still reads")
        os.close(fd)
        try:
            os.kill(mount.pid, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        check.check(alive, "the daemon survives the removal of its backing directory")


def bounded_fds(check, top):
    backing, mnt = f"{top}/many", f"{top}/m"
    os.mkdir(backing)
    count = int(os.environ.get("FLASHDIR_FUSE_FILES", "1500"))
    for i in range(count):
        open(f"{backing}/f{i}", "w").close()
    # 256 descriptors: the inode table may keep 128; the kernel will know every file.
    with harness.Mount(backing, mnt, f"{top}/cache-many", prefix=("prlimit", "--nofile=256:256")) as mount:
        held = [os.open(f"{mnt}/f{i}", os.O_RDONLY) for i in range(50)]
        names = os.listdir(mnt)
        sizes = [os.stat(f"{mnt}/{n}").st_size for n in names]
        again = [os.stat(f"{mnt}/{n}").st_size for n in names]
        # listxattr of an open file asks by inode, without a lookup: evicted inodes come back by
        # handle. (An fstat may be answered from what the open said, kept_attributes.h.)
        held_names = [os.listxattr(fd) for fd in held]
        held_sizes = [os.fstat(fd).st_size for fd in held]
        for fd in held:
            os.close(fd)
        check.check(held_sizes == [0] * 50 and held_names == [[]] * 50,
                    "fstat and listxattr of files whose descriptors were evicted")
        with open(f"{mnt}/.flashdir/stats.json") as f:
            inodes = json.load(f)["inodes"]
        check.check(len(sizes) == count and len(again) == count, f"{count} files stat'ed twice with 256 descriptors")
        check.check(inodes["open_path_fds"] <= inodes["max_path_fds"] <= 128,
                    f"descriptors bounded: {inodes}")
        check.check(inodes["reopens_by_handle"] > 0, f"evicted inodes reopened by handle: {inodes}")
        fds = len(os.listdir(f"/proc/{mount.pid}/fd"))
        check.check(fds < 256, f"the daemon holds {fds} descriptors")


def clean_unmounts(check, top):
    backing, mnt = f"{top}/b", f"{top}/m"
    for route in ("fusermount3", "umount", "SIGTERM", "SIGINT"):
        mount = harness.Mount(backing, mnt, f"{top}/cache")
        held = []
        try:
            with open(f"{mnt}/route-{route}", "w") as f:
                f.write(route)
            log_before = len(harness.read_log(f"{top}/cache"))
            if route == "fusermount3":
                subprocess.run(["fusermount3", "-u", mnt], check=False)
            elif route == "umount":
                subprocess.run(["umount", mnt], check=False)
            else:
                # A file and a directory still open: the kernel never releases them, the daemon does.
                held = [os.open(f"{mnt}/route-{route}", os.O_RDONLY), os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)]
                os.kill(mount.pid, getattr(signal, route))
            gone = harness.wait_gone(mount.pid)
            check.check(gone and not harness.is_mounted(mnt), f"{route}: daemon gone, nothing mounted")
            log = harness.read_log(f"{top}/cache")[log_before:]
            check.check("cache closed cleanly" in log, f"{route}: the log says the cache closed cleanly")
            if held:
                check.check("freed 1 open files and 1 directory streams" in log,
                            f"{route}: the handles left open are freed: {log.strip()[-300:]!r}")
            check.check(open(f"{backing}/route-{route}").read() == route, f"{route}: data in the backing file")
        finally:
            for fd in held:
                try:
                    os.close(fd)
                except OSError:  # the flush of a handle whose daemon has gone: ENOTCONN
                    pass
            mount.stop()


def crash_report(check, top):
    """A daemon that crashes says so in its log, and the harness shows that log."""
    backing, mnt = f"{top}/b", f"{top}/m"
    mount = harness.Mount(backing, mnt, f"{top}/cache-crash")
    try:
        # SIGILL: a sanitizer build leaves it to the daemon's own handler (SIGSEGV is its own).
        os.kill(mount.pid, signal.SIGILL)
        harness.wait_gone(mount.pid)
        check.check(harness.is_mounted(mnt), "the crashed daemon's mount is still up (dead)")
    finally:
        try:
            mount.stop()
            died = False
        except harness.DaemonDied:
            died = True
    check.check(died, "stop() reports the daemon that died with its mount up")
    log = harness.read_log(f"{top}/cache-crash")
    check.check("fatal signal SIGILL; backtrace:" in log and "flashdir" in log.split("backtrace:")[-1],
                f"the log names the signal and a backtrace: {log[-600:]!r}")


def mkfs_on_live_cache(check, top):
    """mkfs.flashdir --force on the cache a daemon serves is refused by the daemon's lock; the
    mount keeps working, unmounts cleanly, and the cache opens again (a format under the daemon
    left it unusable for good)."""
    backing, mnt, cache = f"{top}/b", f"{top}/m", f"{top}/cache-live"
    payload = os.urandom(256 * 1024)
    with harness.Mount(backing, mnt, cache) as mount:
        with open(f"{mnt}/live", "wb") as f:
            f.write(payload)
        result = subprocess.run([os.environ["MKFS_FLASHDIR"], cache, "--size", "16M", "--force"], capture_output=True,
                                text=True, check=False)
        check.check(result.returncode != 0 and f"in use by another flashdir daemon (pid {mount.pid}" in result.stderr,
                    f"mkfs --force on a live cache refused: {result.stderr.strip()}")
        with open(f"{mnt}/live", "rb") as f:
            check.check(f.read() == payload, "the mount keeps working after the refused mkfs")
        with open(f"{mnt}/live2", "wb") as f:
            f.write(payload)
    check.check("cache closed cleanly" in harness.read_log(cache), "the daemon closed the cache cleanly")
    with harness.Mount(backing, mnt, cache):
        with open(f"{mnt}/.flashdir/stats.json") as f:
            restart = json.load(f)["cache"]
        check.check(restart["restart_clean_shutdown"] is True, f"the cache opens again, clean: {restart}")
        with open(f"{mnt}/live2", "rb") as f:
            check.check(f.read() == payload, "files read back after the remount")


def remount_at_once(check, top):
    """Unmount with fusermount3 -u and mount again at once, several times, with 12 MiB cached:
    the new daemon waits for the old one to finish closing the cache instead of failing."""
    backing, mnt, cache = f"{top}/b-remount", f"{top}/m", f"{top}/cache-remount"
    os.mkdir(backing)
    pids = []
    try:
        for turn in range(4):
            result = flashdir(backing, mnt, "-o", f"cache={cache},size=64M")
            check.check(result.returncode == 0 and harness.is_mounted(mnt),
                        f"turn {turn}: mounting again right after the unmount works: {result.stderr.strip()}")
            if result.returncode != 0:
                break
            pids.append(harness.daemon_pid(cache))
            with open(f"{mnt}/f{turn}", "wb") as f:
                f.write(os.urandom(12 << 20))
            subprocess.run(["fusermount3", "-u", mnt], check=False)
    finally:
        harness.unmount(mnt)
        for pid in pids:
            if pid and not harness.wait_gone(pid, 60):
                os.kill(pid, signal.SIGKILL)
    check.check(harness.read_log(cache).count("cache closed cleanly") == len(pids) == 4,
                f"each of the {len(pids)} daemons closed the cache cleanly")


def stats_command(check, top):
    backing, mnt = f"{top}/b", f"{top}/m"
    with harness.Mount(backing, mnt, f"{top}/cache"):
        os.listdir(mnt)
        summary = flashdir("stats", mnt)
        table = flashdir("stats", mnt, "--all")
        data = flashdir("stats", mnt, "--json")
        check.check(summary.returncode == 0 and "hit ratio" in summary.stdout, "stats summary")
        check.check(table.returncode == 0 and "requests" in table.stdout and "lookup" in table.stdout, "stats --all table")
        parsed = json.loads(data.stdout) if data.returncode == 0 else {}
        check.check(parsed.get("mount", {}).get("backing") == os.path.realpath(backing), "stats --json names the backing")
    result = flashdir("stats", top)
    check.check(result.returncode == 1 and "not a flashdir mount" in result.stderr, "stats of a plain directory refused")


def chip_stats(check, top, latency):
    """The ftl section counts what the chip did for a write and a read through the mount; with
    nand_latency=emulate the daemon slept at least the chip's simulated busy time meanwhile."""
    backing, mnt = f"{top}/b-{latency}", f"{top}/m"
    os.makedirs(backing)
    start = time.monotonic()
    with harness.Mount(backing, mnt, f"{top}/cache-{latency}", f"nand_latency={latency}"):
        payload = os.urandom(1 << 20)
        with open(f"{mnt}/chip", "wb") as f:
            # In writes of 16 pages: the FTL buffers a write of at most half a block in the device
            # RAM (a larger one it programs at once).
            for at in range(0, len(payload), 64 << 10):
                f.write(payload[at:at + (64 << 10)])
        with open(f"{mnt}/chip", "rb") as f:
            check.check(f.read() == payload, f"{latency}: the file reads back")
        with open(f"{mnt}/.flashdir/stats.json") as f:
            ftl = json.load(f).get("ftl", {})
    elapsed_ns = (time.monotonic() - start) * 1e9
    # The 1 MiB file is 256 pages for the FTL (plus metadata); most still sit in the device RAM's
    # write buffer, so the chip has programmed fewer and write amplification is below 1 so far.
    check.check(ftl.get("host_write_pages", 0) >= 256 and ftl.get("host_read_pages", 0) > 0,
                f"{latency}: the FTL saw the cache's writes and reads ({ftl})")
    check.check(ftl.get("chip_page_programs", -1) >= 0 and ftl.get("ram_buffer_bytes", 0) > 0,
                f"{latency}: chip programs and the buffered bytes are reported")
    check.check(ftl.get("erase_count_min", 1) <= ftl.get("erase_count_mean", 0) <= ftl.get("erase_count_max", -1),
                f"{latency}: erase counts min <= mean <= max")
    check.check(ftl.get("ram_budget_bytes", 0) > 0 and ftl.get("chip_busy_ns", 0) > 0,
                f"{latency}: the device RAM budget and the chip's busy time are reported")
    if latency == "emulate":
        check.check(elapsed_ns >= ftl["chip_busy_ns"], f"emulate: the mount lasted at least the chip's busy time "
                                                        f"({elapsed_ns:.0f} ns >= {ftl['chip_busy_ns']} ns)")


def chip_stats_account(check, top):
    chip_stats(check, top, "account")


def chip_stats_emulate(check, top):
    chip_stats(check, top, "emulate")


def mount_helper(check, top):
    """mount -t fuse.flashdir BACKING MNT -o cache=DIR, as an fstab line runs it: mount(8) hands
    it to mount.fuse3, which runs `flashdir BACKING MNT -o ...` from its PATH. mount(8) resets
    PATH, so the test calls the helper the way mount(8) does, with the build directory on PATH."""
    helper = shutil.which("mount.fuse3") or "/sbin/mount.fuse3"
    if not os.path.exists(helper):
        print("mount helper: mount.fuse3 missing, not tested")
        return
    backing, mnt = f"{top}/b", f"{top}/m"
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(harness.flashdir_binary())) + ":" + os.environ["PATH"])
    result = subprocess.run([helper, backing, mnt, "-t", "fuse.flashdir", "-o", f"rw,cache={top}/cache,noatime"],
                            capture_output=True, text=True, env=env, check=False)
    try:
        check.check(result.returncode == 0 and harness.is_mounted(mnt), f"mount -t fuse.flashdir: {result.stderr.strip()}")
        with open("/proc/self/mounts") as mounts:
            line = next((l for l in mounts if l.split()[1] == mnt), "")
        check.check("fuse.flashdir" in line and "noatime" in line, f"mounted as fuse.flashdir with noatime: {line.strip()}")
    finally:
        pid = harness.daemon_pid(f"{top}/cache")
        harness.unmount(mnt)
        if pid:
            harness.wait_gone(pid)


def mount_compat_options(check, top):
    """The options mount(8), fstab and FUSE users pass: fsname= and subtype= name the mount's
    source and type, max_read= reaches the kernel, fstab-only and x-* words are accepted; the
    start prints no banner (it goes to the log)."""
    backing, mnt, cache = f"{top}/b", f"{top}/m", f"{top}/cache-compat"
    result = flashdir(backing, mnt, "-o", f"cache={cache},size=64M,fsname=slowstore,subtype=fdtest,max_read=65536,"
                      "defaults,_netdev,nofail,x-systemd.automount,x-systemd.device-timeout=5,x-app=1")
    pid = harness.daemon_pid(cache)
    try:
        check.check(result.returncode == 0 and harness.is_mounted(mnt), f"compat options mount: {result.stderr.strip()}")
        with open("/proc/self/mounts") as mounts:
            fields = next((l.split() for l in mounts if l.split()[1] == mnt), ["", "", "", ""])
        check.check(fields[0] == "slowstore" and fields[2] == "fuse.fdtest" and "max_read=65536" in fields[3],
                    f"fsname, subtype and max_read reach the mount: {fields}")
        check.check("mounted" not in result.stderr and "open_by_handle_at" not in result.stderr,
                    f"no banner on the terminal: {result.stderr.strip()}")
        with open(f"{cache}/daemon.log") as f:
            check.check("mounted" in f.read(), "the banner is in the log")
        check.check(harness.read_all(f"{mnt}/hello") == b"hello", "the mount serves its files")
    finally:
        harness.unmount(mnt)
        if pid:
            harness.wait_gone(pid)


def unprivileged_daemon(check, top):
    """A daemon run by an ordinary user: no credential switching, no reopen by handle (every
    inode keeps its descriptor), objects owned by that user, the mount private to it."""
    if os.stat("/dev/fuse").st_mode & 0o006 != 0o006:
        print("unprivileged daemon: /dev/fuse is not open to other users here, not tested")
        return
    home = f"{top}/nobody-home"
    os.mkdir(home)
    os.mkdir(f"{home}/b")
    os.mkdir(f"{home}/m")
    os.chown(home, 65534, 65534)
    os.chown(f"{home}/b", 65534, 65534)
    os.chown(f"{home}/m", 65534, 65534)
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    result = subprocess.run([*as_nobody, harness.flashdir_binary(), f"{home}/b", f"{home}/m", "-o", f"cache={home}/cache,size=64M"],
                            capture_output=True, text=True, check=False, env=dict(os.environ, HOME=home))
    pid = harness.daemon_pid(f"{home}/cache")
    try:
        check.check(result.returncode == 0 and harness.is_mounted(f"{home}/m"), f"a non-root daemon mounts: {result.stderr.strip()}")
        work = subprocess.run([*as_nobody, "sh", "-c", f"echo hi > {home}/m/f && mkdir {home}/m/d && cat {home}/m/f && "
                               f"cat {home}/m/.flashdir/stats.json"], capture_output=True, text=True, check=False)
        check.check(work.returncode == 0 and work.stdout.startswith("hi\n"), f"the user works in its mount: {work.stderr.strip()}")
        check.check(os.stat(f"{home}/b/f").st_uid == 65534, "its files belong to the user")
        stats = json.loads(work.stdout[3:]) if work.returncode == 0 else {}
        check.check(stats.get("inodes", {}).get("fd_evictions", 1) == 0, "no reopen by handle without CAP_DAC_READ_SEARCH")
        with open(f"{home}/cache/daemon.log") as f:
            check.check("open_by_handle_at is not available" in f.read(), "the log says inodes keep their descriptors")
    finally:
        subprocess.run([*as_nobody, "fusermount3", "-u", f"{home}/m"], check=False, stderr=subprocess.DEVNULL)
        harness.unmount(f"{home}/m")
        if pid:
            harness.wait_gone(pid)


def main():
    return harness.run_parts("daemon", (
        refusals, failed_start_leaves_nothing, untrusted_caches, second_daemon_and_binding, default_cache,
        mkfs_on_live_cache, remount_at_once, changed_behind, backing_removed, bounded_fds, clean_unmounts,
        crash_report, stats_command, mount_compat_options, chip_stats_account, chip_stats_emulate, mount_helper,
        unprivileged_daemon))


if __name__ == "__main__":
    sys.exit(main())
