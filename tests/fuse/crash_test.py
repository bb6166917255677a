"""kill -9 of the daemon, and what survives it: a remount after a kill in the middle of writes,
the pages committed before a kill (usable at once), and write-back under kill -9 checked against
a model of what each writer's fsync made durable; a clean stop (SIGTERM) writes everything back.
"""
import json
import os
import random
import signal
import subprocess
import sys
import time

import harness


def kill9_and_remount(check, top):
    backing, mnt = f"{top}/b", f"{top}/m"
    mount = harness.Mount(backing, mnt, f"{top}/cache")
    try:
        writer = subprocess.Popen([sys.executable, "-c", f"""
import os
i = 0
while True:
    with open('{mnt}/k9-%d' % (i % 20), 'wb') as f:
        f.write(os.urandom(65536))
        f.flush()
        os.fsync(f.fileno())
    i += 1
"""], stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        mount.kill9()
        writer.wait(timeout=10)
        check.check(not harness.is_mounted(mnt), "kill -9: the dead mount is cleared")
    finally:
        mount.stop()
    with harness.Mount(backing, mnt, f"{top}/cache") as again:
        check.check(again.pid > 0, "remount after kill -9 (the lock died with the daemon)")
        names = [n for n in os.listdir(mnt) if n.startswith("k9-")]
        check.check(names == [n for n in os.listdir(backing) if n.startswith("k9-")] and len(names) > 0,
                    "after kill -9 the mount shows the backing files")
        ok = all(open(f"{mnt}/{n}", "rb").read() == open(f"{backing}/{n}", "rb").read() for n in names)
        check.check(ok, "after kill -9 every file reads as its backing file")


def chip_power_cut(check, top):
    """power_cut_control: the chip loses power at its next program, tearing that page; the mount
    goes on from the backing, and the next mount recovers the chip and serves every file right."""
    backing, mnt, cache = f"{top}/b", f"{top}/m", f"{top}/cache-cut"
    with harness.Mount(backing, mnt, cache) as plain:
        check.check(not os.path.exists(f"{mnt}/.flashdir/power_cut"), "without power_cut_control no power_cut file")
    files = {f"cut-{i}": os.urandom(65536) for i in range(8)}
    with harness.Mount(backing, mnt, cache, "power_cut_control"):
        for name, data in list(files.items())[:4]:
            with open(f"{mnt}/{name}", "wb") as f:
                f.write(data)
        with open(f"{mnt}/.flashdir/power_cut", "w"):
            pass
        for name, data in list(files.items())[4:]:  # the first of these programs tears a page
            with open(f"{mnt}/{name}", "wb") as f:
                f.write(data)
        health = json.load(open(f"{mnt}/.flashdir/stats.json"))["cache_health"]
        check.check(all(harness.read_all(f"{mnt}/{n}") == d for n, d in files.items()),
                    "after the cut the mount serves every file (from the backing)")
        check.check(health["state"] == "stopped" and "torn" in health["reason"],
                    f"the cache stopped at the cut, which tore a page ({health})")
    with harness.Mount(backing, mnt, cache) as again:
        restart = json.load(open(f"{mnt}/.flashdir/stats.json"))["cache"]
        check.check(not restart["restart_clean_shutdown"], "the mount after the cut restarts as after a power cut")
        check.check(all(harness.read_all(f"{mnt}/{n}") == d for n, d in files.items()),
                    "after the chip's power cut every file reads right")


def kill9_after_commit(check, top):
    """Half a second after a write the engine commits (the device RAM's pages programmed, the metadata's
    window published): a kill -9 after a commit keeps every cached page, and the remount serves
    the whole file from the cache. (The reads also commit by amount, every 8 MiB of fills: the
    test waits until no cached page is left unprotected.)"""
    backing, mnt, cache = f"{top}/b", f"{top}/m", f"{top}/cache-commit"
    data = os.urandom(8 << 20)
    with open(f"{backing}/committed", "wb") as f:
        f.write(data)
    mount = harness.Mount(backing, mnt, cache, "seq_cutoff_read=0")
    try:
        with open(f"{mnt}/committed", "rb") as f:
            check.check(f.read() == data, "commit: the file reads right through the mount")
        def stats():
            with open(f"{mnt}/.flashdir/stats.json") as f:
                return json.load(f)["cache"]
        # Protected by a commit, or by the metadata the fills wrote themselves on the way (a
        # run under load once ended with no commit counted and nothing left unprotected).
        cache_stats = {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            cache_stats = stats()
            if cache_stats["unprotected_pages"] == 0 and cache_stats["cached_pages"] >= len(data) // 4096:
                break
            time.sleep(0.2)
        check.check(cache_stats.get("unprotected_pages") == 0 and cache_stats.get("cached_pages", 0) >= len(data) // 4096,
                    f"commit: every fill protected within 30 s of the reads: {cache_stats.get('commits')} commits, "
                    f"{cache_stats.get('cached_pages')} pages cached, {cache_stats.get('unprotected_pages')} unprotected")
        cached = cache_stats.get("cached_pages", 0)
        mount.kill9()
    finally:
        mount.stop()
    with harness.Mount(backing, mnt, cache, "seq_cutoff_read=0"):
        with open(f"{mnt}/committed", "rb") as f:
            check.check(f.read() == data, "commit: after kill -9 the file reads right")
        with open(f"{mnt}/.flashdir/stats.json") as f:
            after = json.load(f)["cache"]
        check.check(after["restart_clean_shutdown"] is False and after["restart_dropped_slots"] == 0 and
                    after["restart_usable_slots"] == cached and cached >= len(data) // 4096,
                    f"commit: kill -9 kept every cached page ({after['restart_usable_slots']} of {cached}, "
                    f"{after['restart_dropped_slots']} dropped)")
        check.check(after["read_miss_pages"] == 0, f"commit: the remount served the file from the cache "
                    f"({after['read_miss_pages']} pages missed)")


def wb_record(name, index, version):
    """One 4 KiB page (the cache's page) that names itself: a torn or foreign page shows."""
    return (f"{name}:{index:06d}:{version:08d}|".encode() * 256)[:4096]


def write_back_writer(mnt, seed, files, pages, log_path):
    """Random page rewrites of `files` files, appends to wb-log and fsyncs, forever (until the
    mount dies). Each step is logged (and the log line written) before it is made."""
    rng = random.Random(seed)
    fds = [os.open(f"{mnt}/wb-{i}", os.O_RDWR) for i in range(files)]
    log = os.open(f"{mnt}/wb-log", os.O_WRONLY | os.O_APPEND)
    version = records = 0
    with open(log_path, "w", buffering=1) as out:
        while True:
            choice = rng.random()
            if choice < 0.05:
                i = rng.randrange(files + 1)
                out.write(f"fsync {i}\n")
                os.fsync(fds[i] if i < files else log)
                out.write(f"synced {i}\n")
            elif choice < 0.2:
                out.write(f"append {records}\n")
                os.write(log, wb_record("log", records, 0))
                records += 1
            else:
                i, page = rng.randrange(files), rng.randrange(pages)
                version += 1
                out.write(f"write {i} {page} {version}\n")
                os.pwrite(fds[i], wb_record(f"f{i}", page, version), page * 4096)


def write_back_oracle(lines, files, pages):
    """From the writer's log: per file page, the versions it may hold after a power cut (the
    last one a completed fsync covered, or any later one; 0 is the initial contents), and the
    log file's records an fsync covered and the records written at all."""
    written = [[[0] for _ in range(pages)] for _ in range(files)]  # versions in order, per page
    durable = [[0] * pages for _ in range(files)]  # index into written of the oldest allowed
    pending_sync = {}
    records = synced_records = 0
    for line in lines:
        word, *args = line.split()
        if word == "write":
            i, page, version = map(int, args)
            written[i][page].append(version)
        elif word == "append":
            records = int(args[0]) + 1
        elif word == "fsync":
            i = int(args[0])
            # Everything written before the fsync started is covered once it returns.
            pending_sync[i] = records if i == files else [len(written[i][p]) - 1 for p in range(pages)]
        elif word == "synced":
            i = int(args[0])
            if i == files:
                synced_records = pending_sync[i]
            else:
                durable[i] = pending_sync[i]
    allowed = [[set(written[i][p][durable[i][p]:]) for p in range(pages)] for i in range(files)]
    return allowed, synced_records, records


def check_write_back_files(check, where, root, allowed, synced_records, records, files, pages):
    bad = []
    for i in range(files):
        with open(f"{root}/wb-{i}", "rb") as f:
            data = f.read()
        if len(data) != pages * 4096:
            bad.append(f"wb-{i} has {len(data)} bytes")
            continue
        for page in range(pages):
            got = data[page * 4096:(page + 1) * 4096]
            versions = [v for v in allowed[i][page] if wb_record(f"f{i}", page, v) == got]
            if not versions:
                bad.append(f"wb-{i} page {page}: {got[:24]!r}, allowed versions {sorted(allowed[i][page])[:5]}")
    check.check(not bad, f"{where}: every page holds its last fsync'd version or a later one: {bad[:3]}")
    with open(f"{root}/wb-log", "rb") as f:
        log = f.read()
    expected = b"".join(wb_record("log", r, 0) for r in range(records))
    wrong = [r for r in range(len(log) // 4096) if log[r * 4096:(r + 1) * 4096] != expected[r * 4096:(r + 1) * 4096]]
    check.check(synced_records * 4096 <= len(log) <= records * 4096 and log == expected[:len(log)],
                f"{where}: the appended log keeps its {synced_records} fsync'd records and no garbage "
                f"({len(log)} bytes, {records} records written; wrong records {wrong[:5]} of {len(wrong)}, "
                f"the first holds {log[wrong[0] * 4096:wrong[0] * 4096 + 24] if wrong else b''!r})")


def kill9_write_back(check, top):
    """mode=writeback, kill -9 in the middle of random page writes, appends and fsyncs: after the
    remount every fsync'd byte is in the backing file (the restart wrote it back) and through
    the mount; a page never fsync'd holds an old or a new version, never anything else."""
    seed = int(os.environ.get("FLASHDIR_FUSE_SEED", "7"))
    files, pages = 6, 64
    backing, mnt, cache = f"{top}/b-wb", f"{top}/m", f"{top}/cache-wb"
    os.mkdir(backing)
    with harness.Mount(backing, mnt, cache, "mode=writeback"):
        for i in range(files):
            with open(f"{mnt}/wb-{i}", "wb") as f:
                f.write(b"".join(wb_record(f"f{i}", p, 0) for p in range(pages)))
        open(f"{mnt}/wb-log", "wb").close()
    mount = harness.Mount(backing, mnt, cache, "mode=writeback")
    try:
        writer = os.fork()
        if writer == 0:
            try:
                write_back_writer(mnt, seed, files, pages, f"{top}/wb-steps")
            finally:
                os._exit(0)  # the mount died under it (ENOTCONN)
        time.sleep(0.4 + (seed % 5) / 10)
        with open(f"{mnt}/.flashdir/stats.json") as f:
            dirty = json.load(f)["cache"]["dirty_pages"]
        mount.kill9()
        os.waitpid(writer, 0)
    finally:
        mount.stop()
    with open(f"{top}/wb-steps") as f:
        lines = f.read().splitlines()
    check.check(dirty > 0 and sum(1 for l in lines if l.startswith("synced")) > 0,
                f"write-back kill -9 (seed {seed}): dirty pages ({dirty}) and fsyncs ({len(lines)} steps) before the kill")
    allowed, synced_records, records = write_back_oracle(lines, files, pages)
    with harness.Mount(backing, mnt, cache, "mode=writeback") as again:
        # The restart wrote the dirty pages back before the mount came up.
        check_write_back_files(check, f"write-back kill -9 (seed {seed}), backing file", backing, allowed,
                               synced_records, records, files, pages)
        check_write_back_files(check, f"write-back kill -9 (seed {seed}), through the mount", mnt, allowed,
                               synced_records, records, files, pages)
        with open(f"{mnt}/.flashdir/stats.json") as f:
            cache_stats = json.load(f)["cache"]
        check.check(cache_stats["restart_clean_shutdown"] is False and cache_stats["restart_dirty_slots"] > 0,
                    f"write-back kill -9: the remount recovered dirty pages ({cache_stats['restart_dirty_slots']})")
        check.check(again.pid > 0, "write-back: remount after kill -9")


def write_back_clean_stop(check, top):
    """A clean stop in write-back (SIGTERM with a file still open, its dirty pages never closed
    or synced) writes everything back: the backing directory has it once the daemon is gone."""
    backing, mnt, cache = f"{top}/b-wb-clean", f"{top}/m", f"{top}/cache-wb-clean"
    os.mkdir(backing)
    payload = os.urandom(300 * 1024 + 123)
    mount = harness.Mount(backing, mnt, cache, "mode=writeback")
    fd = -1
    try:
        fd = os.open(f"{mnt}/open-at-stop", os.O_RDWR | os.O_CREAT, 0o644)
        os.write(fd, payload)
        with open(f"{mnt}/.flashdir/stats.json") as f:
            dirty = json.load(f)["cache"]["dirty_pages"]
        check.check(dirty >= len(payload) // 4096 and os.path.getsize(f"{backing}/open-at-stop") == 0,
                    f"write-back: the data waits in the cache ({dirty} dirty pages, backing file empty)")
        check.check(os.fstat(fd).st_size == len(payload), "write-back: fstat gives the engine's size")
        os.kill(mount.pid, signal.SIGTERM)
        check.check(harness.wait_gone(mount.pid) and not harness.is_mounted(mnt), "write-back: SIGTERM stops the daemon")
    finally:
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:  # the flush of a handle whose daemon has gone: ENOTCONN
                pass
        mount.stop()
    with open(f"{backing}/open-at-stop", "rb") as f:
        check.check(f.read() == payload, "write-back: after a clean stop the backing file holds every byte")
    check.check("cache closed cleanly" in harness.read_log(cache), "write-back: the log says the cache closed cleanly")


def main():
    return harness.run_parts("crash", (kill9_and_remount, chip_power_cut, kill9_after_commit, kill9_write_back, write_back_clean_stop))


if __name__ == "__main__":
    sys.exit(main())
