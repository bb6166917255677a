#!/usr/bin/env python3
"""Writes over the slow store: flashdir in write-through and in write-back against slowstore
itself (issue 19's write goals), in one run, with libfuse's passthrough_hp over the store beside
them (when PASSTHROUGH_HP names it; run.sh builds it) for what a FUSE layer that caches nothing
costs.

slowstore mounts an empty local directory with 1 ms per call; flashdir mounts the slowstore
mount three times in turn, `mode=writethrough`, `mode=writeback` and `mode=writeback,
writeback_delay=1` (its other defaults, the cache in the work directory). Workloads, timed so
that the final fsync and the close (write-back's drain into the store) count; with the delay the
close returns before the store has the data, so that target is also timed until the store holds
all of it (the cache has no dirty page left):

  4 KiB random writes   fio randwrite, bs=4k, psync, 1 job, over a 64 MiB file made sparse
                        beforehand, time_based for --seconds, end_fsync=1: bytes written /
                        fio's wall time (its start to its exit), in IOPS
  sequential write      a new 256 MiB file: open, 256 write(2) calls of 1 MiB, fsync, close,
                        as fio's `--rw=write --bs=1M --end_fsync=1` makes them: MB/s over the
                        time from the open to the close's return
  appends               a log: a new file opened O_APPEND, 2,000 write(2) calls of 100 bytes,
                        fsync, close: writes a second over the time from the open to the
                        close's return

The sequential write is timed here rather than as fio's wall time: fio takes 0.28 s to start
on this machine (a 1 MiB job on tmpfs), which weighed 8% on the store's 3.4 s and 40% on a
write that the cache takes in 0.4 s. The random writes run for 10 s, where it is 3%.

Each round runs every workload on each target, taking turns; the file is removed between runs.
Reports medians and flashdir's rate over the store's (goals: write-through >= 0.9x, write-back
>= 0.9x), the calls that reached the store, each round's ratios, and how many of the machine's
CPUs were busy during each run (/proc/stat): a store whose own processes keep them all busy
leaves a layer in front of it nothing to run on. Writes writes.md beside this file, or --results.

With --store sshfs the store is sshfs over a localhost sshd behind a TCP delay proxy
(sshfs_store.py, --delay-us per round trip) instead of slowstore; its "calls" are the chunks
the proxy carried towards sshd. Where it cannot be set up: "skipped: why", exit 0.

Needs root, /dev/fuse, fio, FLASHDIR and SLOWSTORE (bench/slowstore/run.sh --writes builds them).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tests", "fuse"))
import harness  # noqa: E402
from slowstore_mount import (PassthroughHpMount, StoreSkipped, add_store_arguments, describe_store,  # noqa: E402
                             is_mounted, mount_store, prepare_runner, unmount)  # noqa: E402

MB = 1e6
RANDOM_FILE_BYTES = 64 << 20
SEQUENTIAL_BYTES = 256 << 20
FLASHDIR_TARGETS = ("writethrough", "writeback", "writeback-delay")
MOUNT_OPTIONS = {"writethrough": "mode=writethrough", "writeback": "mode=writeback",
                 "writeback-delay": "mode=writeback,writeback_delay=1"}
# Each workload's unit, and the bytes written that make one.
WORKLOADS = {"4 KiB random writes": ("IOPS", 4096), "sequential write": ("MB/s", MB), "appends": ("writes/s", 100)}
APPEND_BYTES = WORKLOADS["appends"][1]
APPENDS = 2000
GOAL = 0.9


def cpu_seconds():
    """(busy, all) CPU seconds of the whole machine so far, from /proc/stat: where the store
    and its own processes (ssh, sshd, a proxy) already keep the CPUs busy, a layer in front
    of it can only take longer."""
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    idle = fields[3] + fields[4]  # idle, iowait
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(fields) - idle) / tick, sum(fields) / tick


def dirty_pages(mount):
    with open(f"{mount}/.flashdir/stats.json") as f:
        return json.load(f)["cache"]["dirty_pages"]


def random_writes(path, seconds):
    """fio's random writes into `path`, made sparse first; returns (started, wall seconds, bytes)."""
    with open(path, "wb") as f:
        f.truncate(RANDOM_FILE_BYTES)
    started = time.monotonic()
    result = subprocess.run(["fio", "--name=w", f"--filename={path}", "--ioengine=psync", "--numjobs=1",
                             "--end_fsync=1", "--fallocate=none", "--output-format=json", "--rw=randwrite",
                             "--bs=4k", f"--size={RANDOM_FILE_BYTES}", "--time_based", f"--runtime={seconds}",
                             "--randrepeat=0"], capture_output=True, text=True, check=True)
    return started, time.monotonic() - started, json.loads(result.stdout)["jobs"][0]["write"]["io_bytes"]


def sequential_write(path):
    """A new file of SEQUENTIAL_BYTES in 1 MiB writes, fsync, close; returns (started, seconds
    from the open to the close's return, bytes)."""
    block = os.urandom(1 << 20)
    started = time.monotonic()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        for _ in range(SEQUENTIAL_BYTES // len(block)):
            view = memoryview(block)
            while view:
                view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    return started, time.monotonic() - started, SEQUENTIAL_BYTES


def appends(path):
    """A log: APPENDS writes of APPEND_BYTES on an O_APPEND descriptor of a new file, fsync,
    close; returns (started, seconds from the open to the close's return, bytes)."""
    record = b"x" * (APPEND_BYTES - 1) + b"\n"
    started = time.monotonic()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
    try:
        for _ in range(APPENDS):
            if os.write(fd, record) != len(record):
                raise OSError(f"a short append to {path}")
        os.fsync(fd)
    finally:
        os.close(fd)
    return started, time.monotonic() - started, APPENDS * APPEND_BYTES


def run_workload(mount, workload, seconds, settle=False):
    """Runs the workload in `mount`; returns (wall seconds, figure, bytes written, seconds until
    the store held everything, CPUs busy meanwhile). With `settle` (a flashdir mount) the
    fourth is timed until the cache has no dirty page left; otherwise it is the wall time."""
    path = f"{mount}/written"
    busy_before, all_before = cpu_seconds()
    if workload == "4 KiB random writes":
        started, wall, written = random_writes(path, seconds)
    elif workload == "appends":
        started, wall, written = appends(path)
        if os.path.getsize(path) != written:
            raise SystemExit(f"writes.py: {path} holds {os.path.getsize(path)} bytes after {written} appended")
    else:
        started, wall, written = sequential_write(path)
    busy_after, all_after = cpu_seconds()
    cpus_busy = (busy_after - busy_before) / (all_after - all_before) * os.cpu_count()
    while settle and dirty_pages(mount) > 0:
        time.sleep(0.05)
    settled = time.monotonic() - started
    os.unlink(path)
    figure = written / WORKLOADS[workload][1] / wall
    return wall, figure, written, settled, cpus_busy


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=os.environ.get("FLASHDIR_BENCH_DIR", "/dev/shm"))
    add_store_arguments(parser)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=10, help="the random writes' time")
    parser.add_argument("--cache-size", default="1G")
    parser.add_argument("--results", default=os.path.join(HERE, "writes.md"))
    args = parser.parse_args()
    prepare_runner("writes.py")
    work = tempfile.mkdtemp(prefix="slowstore-writes-", dir=args.dir)
    backing, slow_mnt, fast_mnt = f"{work}/backing", f"{work}/slow", f"{work}/fast"
    for d in (backing, slow_mnt, fast_mnt):
        os.makedirs(d)
    started, load_before = time.time(), " ".join(open("/proc/loadavg").read().split()[:3])
    store_name = args.store  # the store's target name
    passthrough_hp = os.environ.get("PASSTHROUGH_HP", "")
    references = ("passthrough_hp",) if passthrough_hp else ()
    targets = (store_name, *references, *FLASHDIR_TARGETS)
    samples = []  # (round, workload, target, figure, calls, figure until the store held it, CPUs busy)
    slow = None
    try:
        try:
            slow = mount_store(args, backing, slow_mnt)
        except StoreSkipped as why:
            print(f"writes.py: {store_name}: skipped: {why}", flush=True)
            return
        for rnd in range(1, args.rounds + 1):
            order = targets if rnd % 2 else tuple(reversed(targets))
            for target in order:
                fast = None
                if target == "passthrough_hp":
                    fast = PassthroughHpMount(passthrough_hp, slow_mnt, fast_mnt)
                elif target != store_name:
                    fast = harness.Mount(slow_mnt, fast_mnt, f"{work}/cache-{target}", MOUNT_OPTIONS[target],
                                         size=args.cache_size)
                try:
                    for workload in WORKLOADS:
                        before = slow.counts()["total_calls"]
                        wall, figure, written, settled, cpus_busy = run_workload(
                            slow_mnt if fast is None else fast_mnt, workload, args.seconds,
                            settle=target in FLASHDIR_TARGETS)
                        calls = slow.counts()["total_calls"] - before
                        samples.append((rnd, workload, target, figure, calls, figure * wall / settled, cpus_busy))
                        print(f"writes.py: round {rnd}: {workload} on {target}: {figure:,.1f} "
                              f"({written / MB:,.0f} MB in {wall:.2f} s, in the store after {settled:.2f} s, "
                              f"{calls:,} {slow.calls_label}, {cpus_busy:.2f} of {os.cpu_count()} CPUs busy)",
                              flush=True)
                finally:
                    if fast is not None:
                        fast.stop()
    finally:
        if slow is not None:
            slow.stop()
        for mount in (fast_mnt, slow_mnt):
            if is_mounted(mount):
                unmount(mount)
        shutil.rmtree(work, ignore_errors=True)

    def of(workload, target):
        return [s for s in samples if s[1] == workload and s[2] == target]

    lines = [f"| workload | {store_name} |" + (" passthrough_hp over it (× store) |" if references else "") +
             " flashdir write-through (× store) | flashdir write-back, close included (× store) "
             "| write-back, writeback_delay=1: until the close (× store) | the same until the store holds it (× store) |",
             "|---|---|" + "---|" * (len(references) + 4)]
    for workload in WORKLOADS:
        unit = WORKLOADS[workload][0]
        store = {s[0]: s[3] for s in of(workload, store_name)}
        cells = [f"{statistics.median(store.values()):,.1f} {unit} ({statistics.median(s[4] for s in of(workload, store_name)):,.0f} calls)"]
        for target in references:
            runs = of(workload, target)
            cells.append(f"{statistics.median(s[3] for s in runs):,.1f} {unit}, "
                         f"{statistics.median(s[3] / store[s[0]] for s in runs):.2f}×")
        for target in ("writethrough", "writeback"):
            runs = of(workload, target)
            ratio = statistics.median(s[3] / store[s[0]] for s in runs)
            verdict = "met" if ratio >= GOAL else "not met"
            cells.append(f"{statistics.median(s[3] for s in runs):,.1f} {unit}, {ratio:.2f}× (≥ {GOAL}×: {verdict}; "
                         f"{statistics.median(s[4] for s in runs):,.0f} calls)")
        delayed = of(workload, "writeback-delay")
        for figure in (3, 5):
            ratio = statistics.median(s[figure] / store[s[0]] for s in delayed)
            cells.append(f"{statistics.median(s[figure] for s in delayed):,.1f} {unit}, {ratio:.2f}×")
        lines.append(f"| {workload} | " + " | ".join(cells) + " |")
    lines += ["", "Round by round, each target's figure over the store's in the same round; and the machine's "
              f"CPUs busy while the target ran the workload (medians, of {os.cpu_count()}):", "",
              "| workload | target | × store, rounds | CPUs busy |", "|---|---|---|---|"]
    for workload in WORKLOADS:
        store = {s[0]: s[3] for s in of(workload, store_name)}
        for target in targets:
            runs = of(workload, target)
            ratios = ", ".join(f"{s[3] / store[s[0]]:.2f}" for s in sorted(runs))
            lines.append(f"| {workload} | {target} | {ratios} | {statistics.median(s[6] for s in runs):.2f} |")
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(started))
    text = "\n".join([
        f"{describe_store(args)}; flashdir -o size={args.cache_size}; {args.rounds} rounds, "
        f"random writes {args.seconds} s; {os.cpu_count()} CPUs; load average before {load_before}, after "
        f"{' '.join(open('/proc/loadavg').read().split()[:3])}; {when} UTC", "",
        f"Medians of the rounds; × store: the median of the rounds' ratios; calls: {slow.calls_label} "
        "in one run (median).", "", *lines, ""])
    print(text)
    with open(args.results, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
