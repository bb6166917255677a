#!/usr/bin/env python3
"""flashdir over a slow store against the slow store itself (issue 19's goals), in one run.

A tree shaped like a git checkout (tree.py: 5,000 files in nested directories, 500 of them of
64 KiB, committed, and one big file) is made on a local backing directory; slowstore mounts it
with 1 ms per call (an NFS round trip on a LAN), flashdir mounts the slowstore mount (its
defaults but identity=inode, as over NFS: slowstore keeps its backing's inode numbers; the cache
in the work directory). Each workload runs once on each mount first (the
cold pass, which also warms them), then in rounds on both, taking turns; then flashdir is
unmounted cleanly and mounted again on the same cache, and each workload runs once (the first
pass after the remount, compared also with a pass on flashdir alone just before it); then the
same around a kill -9 of the daemon. Workloads:

  git status      git --no-optional-locks status --porcelain (the index is the backing's)
  find + stat     find . -type f -printf '%s %T@ %m %i\\n'
  tar, metadata   tar cf /dev/null .      (GNU tar reads no file data into /dev/null)
  tar with data   tar cf - . | cat >/dev/null
  64 KiB files    cat of the 500 64 KiB files (xargs)
  4 KiB random    fio randread, 4 KiB, direct=1, 1 job, on the big file (warmed by a full
                  random pass that reads each block once)

For each it reports the time (or rate), the speed-up of flashdir over the slow store (median of
the rounds' ratios), and the calls that reached the slow store (from slowstore's counts): the
round trips each mount cost. Writes results.md beside this file.

With --store sshfs the slow store is sshfs over a localhost sshd behind a TCP delay proxy
(sshfs_store.py; --delay-us per round trip, 1 ms by default) instead of slowstore, and the
"calls" are the chunks the proxy carried towards sshd (sshfs counts no calls). Where that store
cannot be set up, the runner prints "skipped: why" and exits 0.

Needs root, /dev/fuse, git, fio, and the binaries: FLASHDIR (build/daemon/flashdir) and
SLOWSTORE (build/bench/slowstore/slowstore); bench/slowstore/run.sh builds them and runs this.
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
import tree  # noqa: E402
from slowstore_mount import (StoreSkipped, add_store_arguments, describe_store, is_mounted, mount_store,  # noqa: E402
                             prepare_runner, unmount)  # noqa: E402

MB = 1e6
GOALS = {"4 KiB random reads": 20.0}  # every other workload: 2x
DEFAULT_GOAL = 2.0


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


class Workloads:
    """Each workload runs in a mount's root and returns (seconds, figure): the figure is
    what the table shows, seconds for the metadata workloads, MB/s or IOPS for the others."""

    def __init__(self, blob_list, data_bytes, blob_bytes, fio_seconds):
        self.blob_list, self.data_bytes, self.blob_bytes = blob_list, data_bytes, blob_bytes
        self.fio_seconds = fio_seconds
        self.names = ["git status", "find + stat", "tar, metadata", "tar with data", "64 KiB files",
                      "4 KiB random reads"]

    @staticmethod
    def unit(name):
        return {"tar with data": "MB/s", "64 KiB files": "MB/s", "4 KiB random reads": "IOPS"}.get(name, "s")

    def run(self, name, mount, warm_up=False):
        if name == "4 KiB random reads":
            return self._fio(mount, warm_up)
        command = {
            "git status": "git --no-optional-locks status --porcelain",
            "find + stat": "find . -type f -printf '%s %T@ %m %i\\n' >/dev/null",
            "tar, metadata": "tar cf /dev/null .",
            "tar with data": "tar cf - . | cat >/dev/null",
            "64 KiB files": f"xargs -0 -a {self.blob_list} cat >/dev/null",
        }[name]
        started = time.monotonic()
        result = subprocess.run(command, shell=True, cwd=mount, capture_output=True, text=True, check=False)
        seconds = time.monotonic() - started
        if result.returncode != 0 or (name == "git status" and result.stdout):
            raise RuntimeError(f"{name} in {mount} failed ({result.returncode}): {result.stdout[:500]} {result.stderr[:500]}")
        if name == "tar with data":
            return seconds, self.data_bytes / seconds / MB
        if name == "64 KiB files":
            return seconds, self.blob_bytes / seconds / MB
        return seconds, seconds

    def _fio(self, mount, whole_file):
        """A timed run of 4 KiB random reads, or with `whole_file` one pass reading each block once."""
        timing = [] if whole_file else ["--time_based", f"--runtime={self.fio_seconds}", "--randrepeat=0"]
        started = time.monotonic()
        result = subprocess.run(
            ["fio", "--name=rand", f"--filename={mount}/{tree.BIG_NAME}", "--rw=randread", "--bs=4k", "--direct=1",
             "--ioengine=psync", "--numjobs=1", "--output-format=json", *timing],
            capture_output=True, text=True, check=True)
        seconds = time.monotonic() - started
        return seconds, json.loads(result.stdout)["jobs"][0]["read"]["iops"]


def speedup(unit, slow, fast):
    """How many times faster flashdir was: times compare inversely, rates directly."""
    return slow / fast if unit == "s" else fast / slow


def cache_counters(mount):
    with open(f"{mount}/.flashdir/stats.json") as f:
        cache = json.load(f)["cache"]
    return cache["read_hit_pages"], cache["read_miss_pages"]


class Run:
    def __init__(self, args, work):
        self.args, self.work = args, work
        self.backing, self.slow_mnt, self.fast_mnt = f"{work}/backing", f"{work}/slow", f"{work}/fast"
        self.cache = f"{work}/cache"
        self.samples = []  # dicts: phase, round, workload, target, seconds, figure, calls, hits, misses
        self.slow = None
        self.fast = None
        self.store = args.store  # the slow store's target name: slowstore or sshfs

    def mount_flashdir(self):
        options = self.args.flashdir_options
        # slowstore shows its backing's inode numbers (use_ino) and keeps them, as an NFS server
        # does: flashdir is told so, which lets it keep its metadata cache (doc/daemon.md
        # "Metadata cache"); over sshfs, which numbers inodes as it meets them, it keeps none.
        if self.store == "slowstore" and "identity=" not in options:
            options = ",".join(o for o in ("identity=inode", options) if o)
        self.fast = harness.Mount(self.slow_mnt, self.fast_mnt, self.cache, options, size=self.args.cache_size)

    def measure(self, phase, rnd, workloads, name, target):
        mount = self.slow_mnt if target == self.store else self.fast_mnt
        calls_before = self.slow.counts()
        hits_before = cache_counters(self.fast_mnt) if target == "flashdir" else (0, 0)
        seconds, figure = workloads.run(name, mount, warm_up=(phase == "cold"))
        calls_after = self.slow.counts()
        calls = calls_after["total_calls"] - calls_before["total_calls"]
        by_kind = {kind: n - calls_before["calls"].get(kind, 0) for kind, n in calls_after["calls"].items()}
        hits_after = cache_counters(self.fast_mnt) if target == "flashdir" else (0, 0)
        sample = {"phase": phase, "round": rnd, "workload": name, "target": target, "seconds": seconds,
                  "figure": figure, "calls": calls, "by_kind": {k: n for k, n in by_kind.items() if n},
                  "hits": hits_after[0] - hits_before[0],
                  "misses": hits_after[1] - hits_before[1]}
        self.samples.append(sample)
        print(f"run.py: {phase} {rnd}: {name} on {target}: {figure:,.3f} {workloads.unit(name)} "
              f"({seconds:.2f} s, {calls} {self.slow.calls_label}, {sample['hits']} hit / {sample['misses']} missed pages)",
              flush=True)

    def go(self, workloads):
        args = self.args
        self.slow = mount_store(args, self.backing, self.slow_mnt, args.slowstore_options)
        self.mount_flashdir()
        for name in workloads.names:
            for target in (self.store, "flashdir"):
                self.measure("cold", 0, workloads, name, target)
        for rnd in range(1, args.rounds + 1):
            for name in workloads.names:
                # Taking turns, each first in every other round: a slow moment of the machine
                # falls on both.
                targets = (self.store, "flashdir") if rnd % 2 else ("flashdir", self.store)
                for target in targets:
                    self.measure("warm", rnd, workloads, name, target)
        # One pass on flashdir alone right before the remount (and the kill), so that the pass
        # after it is compared with one made as long after the work before it: the metadata both
        # may keep holds for a bound counted from when the store was last asked.
        for name in workloads.names:
            self.measure("before remount", 0, workloads, name, "flashdir")
        self.fast.stop()
        self.mount_flashdir()
        for name in workloads.names:
            self.measure("remount", 0, workloads, name, "flashdir")
        if not args.no_kill:
            for name in workloads.names:
                self.measure("before kill", 0, workloads, name, "flashdir")
            # More than a second after the last fill: the engine has committed everything
            # (README: a kill -9 keeps what was cached more than a second before it).
            time.sleep(1.5)
            self.fast.kill9()
            self.mount_flashdir()
            for name in workloads.names:
                self.measure("kill -9", 0, workloads, name, "flashdir")

    def stop(self):
        for mount in (self.fast, self.slow):
            if mount is not None:
                try:
                    mount.stop()
                except Exception as error:  # the other mount must come down all the same
                    print(f"run.py: stopping a mount: {error}", file=sys.stderr)


def table(samples, workloads, args, load_before, started, calls_label):
    store = args.store
    def of(phase, name, target):
        return [s for s in samples if s["phase"] == phase and s["workload"] == name and s["target"] == target]

    def show(value, unit):
        return f"{value:,.2f} s" if unit == "s" else f"{value:,.1f} {unit}" if unit == "MB/s" else f"{value:,.0f} {unit}"

    lines = [f"| workload | {store}, warm | flashdir over it, warm | flashdir speed-up (goal) | "
             "after clean remount | after kill -9 |", "|---|---|---|---|---|---|"]
    calls = [f"| workload | {calls_label}: {store} itself, warm | through flashdir: cold | warm | "
             "after remount | after kill -9 | flashdir pages hit / missed, warm |", "|---|---|---|---|---|---|---|"]
    spreads = []
    for name in workloads.names:
        unit = workloads.unit(name)
        slow, fast = of("warm", name, store), of("warm", name, "flashdir")
        slow_median = statistics.median(s["figure"] for s in slow)
        fast_median = statistics.median(s["figure"] for s in fast)
        by_round = {s["round"]: s["figure"] for s in slow}
        ratios = [speedup(unit, by_round[s["round"]], s["figure"]) for s in fast]
        ratio = statistics.median(ratios)
        goal = GOALS.get(name, DEFAULT_GOAL)
        verdict = "met" if ratio >= goal else "not met"
        after = []
        for phase, before_phase in (("remount", "before remount"), ("kill -9", "before kill")):
            runs = of(phase, name, "flashdir")
            if runs:
                x = runs[0]["figure"]
                before = of(before_phase, name, "flashdir")[0]["figure"]
                after.append(f"{show(x, unit)} ({speedup(unit, slow_median, x):.2f}×; "
                             f"{speedup(unit, fast_median, x):.2f} of warm, "
                             f"{speedup(unit, before, x):.2f} of the pass before it)")
            else:
                after.append("not run")
        lines.append(f"| {name} | {show(slow_median, unit)} | {show(fast_median, unit)} | "
                     f"{ratio:.2f}× (≥ {goal:g}×: {verdict}) | {after[0]} | {after[1]} |")
        spreads.append(f"{name}: " + ", ".join(f"{r:.2f}" for r in ratios))

        def calls_of(phase, target):
            runs = of(phase, name, target)
            return f"{statistics.median(s['calls'] for s in runs):,.0f}" if runs else "not run"
        hits = statistics.median(s["hits"] for s in fast)
        misses = statistics.median(s["misses"] for s in fast)
        calls.append(f"| {name} | {calls_of('warm', store)} | {calls_of('cold', 'flashdir')} | "
                     f"{calls_of('warm', 'flashdir')} | {calls_of('remount', 'flashdir')} | "
                     f"{calls_of('kill -9', 'flashdir')} | {hits:,.0f} / {misses:,.0f} |")
    kinds = [f"| workload | {store} itself | through flashdir |", "|---|---|---|"]
    for name in workloads.names:
        def kinds_of(target):
            last = of("warm", name, target)[-1]["by_kind"]
            return ", ".join(f"{kind} {n:,}" for kind, n in sorted(last.items(), key=lambda item: -item[1]))
        kinds.append(f"| {name} | {kinds_of(store)} | {kinds_of('flashdir')} |")
    cold = [f"| workload | {store}, cold | flashdir over it, cold (fills its cache) |", "|---|---|---|"]
    for name in workloads.names:
        unit = workloads.unit(name)
        cold.append(f"| {name} | {show(of('cold', name, store)[0]['figure'], unit)} | "
                    f"{show(of('cold', name, 'flashdir')[0]['figure'], unit)} |")
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(started))
    return "\n".join([
        f"{describe_store(args, args.slowstore_options)}; flashdir -o "
        f"size={args.cache_size}{',identity=inode' if store == 'slowstore' and 'identity=' not in args.flashdir_options else ''}"
        f"{',' + args.flashdir_options if args.flashdir_options else ''}; "
        f"{args.files} files, big file {args.big}; {args.rounds} rounds, fio {args.fio_seconds} s per point; "
        f"{os.cpu_count()} CPUs, kernel {os.uname().release}; load average before {load_before}, after "
        f"{' '.join(open('/proc/loadavg').read().split()[:3])}; {when} UTC", "",
        f"Warm: medians of the rounds; speed-up: median of the rounds' ratios ({store} time / flashdir "
        f"time, or flashdir rate / {store} rate). After a remount: the first pass, with its speed-up "
        "over the slow store's warm median, its fraction of flashdir's warm median, and its fraction of "
        "a pass on flashdir alone right before the unmount or the kill (as long after the work before it: "
        "what flashdir and the kernel may keep of the tree holds for a bound counted from when the store "
        "was last asked).", "",
        *lines, "", "Speed-ups round by round: " + "; ".join(spreads) + ".", "",
        "Calls that reached the slow store per run of each workload (medians), and flashdir's cache pages:", "",
        *calls, "", ("The same calls by kind, in the last warm round (getattr answers LOOKUP too):" if store == "slowstore"
         else "What the proxy carried each way, in the last warm round (empty: nothing):"), "", *kinds, "",
        "The first pass on each mount:", "", *cold, ""])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", help="work directory (default: a new one in --dir)")
    parser.add_argument("--dir", default=os.environ.get("FLASHDIR_BENCH_DIR", "/dev/shm"),
                        help="where the backing, the mounts and the cache live (default /dev/shm)")
    add_store_arguments(parser)
    parser.add_argument("--slowstore-options", default="", help="more -o options for slowstore (attr_timeout=3, ...)")
    parser.add_argument("--flashdir-options", default="", help="more -o options for flashdir")
    parser.add_argument("--cache-size", default="1G")
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--blobs", type=int, default=500, help="how many of the files are of 64 KiB")
    parser.add_argument("--big", default="64M", help="the big file for the random reads")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fio-seconds", type=int, default=5)
    parser.add_argument("--no-kill", action="store_true", help="skip the pass after kill -9")
    parser.add_argument("--results", default=os.path.join(HERE, "results.md"), help="where the tables go")
    args = parser.parse_args()
    prepare_runner("run.py")
    work = args.work or tempfile.mkdtemp(prefix="slowstore-bench-", dir=args.dir)
    started, load_before = time.time(), " ".join(open("/proc/loadavg").read().split()[:3])
    run = Run(args, work)
    try:
        for d in (run.backing, run.slow_mnt, run.fast_mnt):
            os.makedirs(d, exist_ok=True)
        print(f"run.py: making the tree in {run.backing}", flush=True)
        blobs = tree.make(run.backing, args.files, args.blobs, parse_size(args.big))
        blob_list = f"{work}/blobs.list"
        with open(blob_list, "w") as f:
            f.write("\0".join(blobs))
        data_bytes = sum(os.lstat(os.path.join(d, n)).st_size for d, _, ns in os.walk(run.backing) for n in ns)
        workloads = Workloads(blob_list, data_bytes, len(blobs) * tree.BLOB_SIZE, args.fio_seconds)
        try:
            run.go(workloads)
        except StoreSkipped as why:
            print(f"run.py: {args.store}: skipped: {why}", flush=True)
            return
        text = table(run.samples, workloads, args, load_before, started, run.slow.calls_label)
        print(text)
        with open(args.results, "w") as f:
            f.write(text)
    finally:
        run.stop()
        for mount in (run.fast_mnt, run.slow_mnt):
            if is_mounted(mount):
                unmount(mount)
        # The flashdir daemon closes its cache after the unmount; harness.Mount.stop waited.
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
