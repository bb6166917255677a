#!/usr/bin/env python3
"""The fio matrix of issue 20: flashdir against passthrough_hp and the backing directory over a
fast local backing, and against slowstore over the slow store, in one run.

Two parts, one after the other:

  fast   a backing directory on tmpfs (--dir, /dev/shm). Targets: flashdir mode=writethrough
         and mode=writeback, each in two cache states (below); libfuse's passthrough_hp (its
         defaults); the backing directory itself (no FUSE).
  slow   slowstore (1 ms a call, bench/slowstore) over a tmpfs directory. Targets: flashdir over
         the slowstore mount, the same four; slowstore itself.

Every target has a directory of its own holding one file (--file-size: 256M fast, 128M slow),
so that no target's writes change another's file behind its back (a flashdir mount would drop
its cached copy at the next open). The flashdir mounts: seq_cutoff_read=0 and
seq_cutoff_write=0 (every stream is cached: the matrix measures the cache, not the cutoff that
would send long sequential streams past it over a local disk), their other defaults.

Cache states (flashdir only; passthrough_hp, slowstore and the backing have no cache and are
measured once per point, both flashdir rows compared with that figure):

  warm   hit-dominated: a cache twice the file, the file read whole once (which fills it); then
         a second whole read must hit every page and miss none, or the runner stops.
  miss   miss-dominated: a cache an eighth of the file, the file read whole once (the cache is
         full: from then on every miss evicts); a second whole read must miss three pages in
         four (it keeps about an eighth). A file larger than the cache rather than a fresh cache at every point: the miss
         share then depends neither on the point's length nor on the jobs (several jobs on a
         fresh cache hit what another just read), and the point measures a cache that is full,
         as a miss-dominated cache in use is (a miss costs the backing read, an eviction and a
         chip write).

Workloads (fio, psync, direct=1 so that every read and write reaches the daemon instead of the
mount's page cache; all jobs on the one file, the random ones each over all of it, the
sequential ones each streaming through a part of its own (--offset_increment: jobs following
one another through the same bytes would hit what the first had just read); time_based for
--seconds; --randrepeat=0):

  randread   4 KiB random reads
  read       1 MiB sequential reads
  randwrite  4 KiB random writes, end_fsync=1
  write      1 MiB sequential writes, end_fsync=1
  randrw     4 KiB random reads and writes, 70/30, end_fsync=1

with 1, 2, 4 and 8 jobs (fast) and 1 and 4 (slow). Each point is timed from fio's start to its
exit, so that the final fsync and the close count (a write-back close waits until the backing
has the data): the figure is the bytes fio read and wrote over that wall time, in IOPS for
4 KiB and MiB/s for 1 MiB.

Checks, so that no figure comes from a run that did not happen or went wrong: fio exits 0 and
reports no error; on flashdir the mount's .flashdir/stats.json shows the point's bytes going
through the mount, a warm point's reads hitting (at least 90% of the pages it read) and a miss
point's missing (at least half), the cache still caching, and after a write-back point no dirty
page left; passthrough_hp and slowstore still run, their mounts still there, and slowstore
counted calls. Every mount comes down in every outcome (fusermount3 -u, then -uz), and the
runner checks that none is left.

In each round the targets of a point run back to back (in reverse order in even rounds); a
figure is the median of the rounds, a ratio the median of the rounds' ratios. Writes a Markdown
table per part to --results (bench/fio/results.md), the ratios to *.dat beside it and the plots
(gnuplot, plot.gp) to fast.png, fast-backing.png and slow.png.

Needs root, /dev/fuse, fio, gnuplot, and the binaries: FLASHDIR, SLOWSTORE and PASSTHROUGH_HP
(bench/fio/run.sh builds them and runs this).
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
sys.path.insert(0, os.path.join(TOP, "bench", "slowstore"))
import harness  # noqa: E402
from slowstore_mount import PassthroughHpMount, SlowstoreMount, is_mounted, prepare_runner, unmount  # noqa: E402

KIB, MIB = 1 << 10, 1 << 20
# name: (what the table calls it, fio's arguments, block size in bytes, whether it writes)
WORKLOADS = {
    "randread": ("4 KiB random read", ["--rw=randread", "--bs=4k"], 4 * KIB, False),
    "read": ("1 MiB sequential read", ["--rw=read", "--bs=1M"], MIB, False),
    "randwrite": ("4 KiB random write", ["--rw=randwrite", "--bs=4k", "--end_fsync=1"], 4 * KIB, True),
    "write": ("1 MiB sequential write", ["--rw=write", "--bs=1M", "--end_fsync=1"], MIB, True),
    "randrw": ("4 KiB random 70/30 read/write", ["--rw=randrw", "--rwmixread=70", "--bs=4k", "--end_fsync=1"],
               4 * KIB, True),
}
MODES = ("writethrough", "writeback")
STATES = ("warm", "miss")
WARM_HIT_SHARE_MIN = 0.9   # of the pages a warm point read
MISS_SHARE_MIN = 0.5       # of the pages a miss point read
MISS_CACHE_FRACTION = 8    # the miss state's cache: the file's size over this
MISS_SHARE_WARM_UP_MIN = 0.75  # of a whole read after the first (a cache an eighth of the file keeps about 1/8)
FILE_NAME = "data"


class StateLost(Exception):
    """A point found its cache out of its state (a warm cache missing, a miss cache hitting): the
    point's figure is not counted, the table says so, and the runner fails at the end."""


def parse_size(text):
    units = {"K": KIB, "M": MIB, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def load_average():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def make_file(path, size):
    """The file every point of a target works on: a random MiB repeated (the bytes do not matter,
    but they are not zeros, which a file system could keep sparse)."""
    block = os.urandom(MIB)
    with open(path, "wb") as f:
        for _ in range(size // MIB):
            f.write(block)


def run_fio(directory, arguments, timeout_s):
    """Runs fio on the target's file; returns (wall seconds from start to exit, fio's aggregate
    job). Raises unless fio exits 0 with no error."""
    command = ["fio", "--name=matrix", f"--directory={directory}", f"--filename={FILE_NAME}", "--ioengine=psync",
               "--direct=1", "--invalidate=0", "--fallocate=none", "--group_reporting", "--output-format=json",
               *arguments]
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    wall_s = time.monotonic() - started
    if result.returncode != 0:
        raise RuntimeError(f"fio failed ({result.returncode}) in {directory}: {' '.join(command)}\n"
                           f"{result.stderr[-2000:]}{result.stdout[-2000:]}")
    job = json.loads(result.stdout[result.stdout.index("{"):])["jobs"][0]
    if job["error"]:
        raise RuntimeError(f"fio reported error {job['error']} in {directory}: {' '.join(command)}")
    return wall_s, job


class FlashdirTarget:
    """A flashdir mount of its own backing directory, in one mode and cache state."""

    def __init__(self, part, mode, state, backing_view, work, file_bytes):
        self.name = f"{mode}-{state}"
        self.mode, self.state = mode, state
        self.mountpoint = f"{work}/mnt-{part}-{self.name}"
        self.cache = f"{work}/cache-{part}-{self.name}"
        cache_bytes = 2 * file_bytes if state == "warm" else file_bytes // MISS_CACHE_FRACTION
        os.makedirs(self.mountpoint)
        self.mount = harness.Mount(f"{backing_view}/{self.name}", self.mountpoint, self.cache,
                                   f"mode={mode},seq_cutoff_read=0,seq_cutoff_write=0", size=f"{cache_bytes // MIB}M")
        self.directory = self.mountpoint

    def stats(self):
        with open(f"{self.mountpoint}/.flashdir/stats.json") as f:
            return json.load(f)

    def warm_up(self, file_bytes):
        """Reads the file whole (it fills the cache), then checks with a second whole read that the
        cache is in its state. Returns a line saying what the second read found."""
        read_whole = ["--rw=read", "--bs=1M", f"--size={file_bytes}"]
        run_fio(self.directory, read_whole, timeout_s=600)
        before = self.stats()["cache"]
        run_fio(self.directory, read_whole, timeout_s=600)
        after = self.stats()["cache"]
        hits = after["read_hit_pages"] - before["read_hit_pages"]
        misses = after["read_miss_pages"] - before["read_miss_pages"]
        pages = file_bytes // (4 * KIB)
        if self.state == "warm" and (misses != 0 or hits < pages):
            raise RuntimeError(f"{self.name}: the cache is not warm: a second whole read hit {hits} of {pages} "
                               f"pages and missed {misses}")
        if self.state == "miss" and misses < MISS_SHARE_WARM_UP_MIN * pages:
            raise RuntimeError(f"{self.name}: the cache is not miss-dominated: a second whole read missed "
                               f"{misses} of {pages} pages")
        return (f"{self.name}: a second whole read hit {hits:,} and missed {misses:,} of {pages:,} pages "
                f"({after['capacity_pages']:,} pages of cache)")

    def before(self):
        return self.stats()

    def check(self, before, job, workload, store_calls):
        """Checks what the point did to the mount; returns the share of the pages it read that hit
        (None for a point that reads nothing)."""
        after = self.stats()
        if after["cache_health"]["state"] != "caching":
            raise RuntimeError(f"{self.name}: the cache is {after['cache_health']['state']} after {workload}")
        read_bytes, written_bytes = job["read"]["io_bytes"], job["write"]["io_bytes"]
        moved_read = after["data"]["read_bytes"] - before["data"]["read_bytes"]
        moved_written = after["data"]["written_bytes"] - before["data"]["written_bytes"]
        if moved_read < read_bytes or moved_written < written_bytes:
            raise RuntimeError(f"{self.name}: fio read {read_bytes} and wrote {written_bytes} bytes in {workload}, "
                               f"the mount saw {moved_read} and {moved_written}")
        if self.mode == "writeback" and written_bytes and after["cache"]["dirty_pages"]:
            raise RuntimeError(f"{self.name}: {after['cache']['dirty_pages']} pages still dirty after {workload} "
                               "ended (its close should have written them back)")
        if not read_bytes:
            return None
        hits = after["cache"]["read_hit_pages"] - before["cache"]["read_hit_pages"]
        misses = after["cache"]["read_miss_pages"] - before["cache"]["read_miss_pages"]
        share = hits / (hits + misses) if hits + misses else 0.0
        if (self.state == "warm" and share < WARM_HIT_SHARE_MIN) or (self.state == "miss" and 1 - share < MISS_SHARE_MIN):
            counters = ("cached_pages", "evicted_pages", "stale_drops", "written_pages", "written_back_pages",
                        "admitted_pages", "corrupt_pages")
            raise StateLost(f"{self.name}: {workload} hit {hits} pages and missed {misses} on a {self.state} cache; "
                               + ", ".join(f"{c} {before['cache'][c]} -> {after['cache'][c]}" for c in counters))
        return share

    def stop(self):
        self.mount.stop()


class PlainTarget:
    """A target without a cache: the backing directory itself, or a daemon mount of its own
    directory (passthrough_hp, or a directory in the slowstore mount, `store` then)."""

    def __init__(self, name, directory, daemon=None, store=None):
        self.name, self.directory, self.daemon, self.store = name, directory, daemon, store

    def warm_up(self, file_bytes):
        run_fio(self.directory, ["--rw=read", "--bs=1M", f"--size={file_bytes}"], timeout_s=600)
        return None

    def before(self):
        return None

    def check(self, before, job, workload, store_calls):
        for daemon in (self.daemon, self.store):
            if daemon is not None and not daemon.running():
                raise RuntimeError(f"{self.name}: the daemon ended or its mount went away during {workload}")
        if self.store and not store_calls:
            raise RuntimeError(f"{self.name}: {workload} made no call to the store")
        return None

    def stop(self):
        if self.daemon is not None:
            self.daemon.stop()


class Part:
    """One backing (fast or slow), its targets, and the samples measured on them."""

    def __init__(self, name, args, work):
        self.name, self.args, self.work = name, args, work
        self.file_bytes = parse_size(args.file_size or ("256M" if name == "fast" else "128M"))
        self.jobs = [int(j) for j in (args.jobs or ("1,2,4,8" if name == "fast" else "1,4")).split(",")]
        if args.quick:
            self.jobs = [1, 4] if name == "fast" else [1]
        self.workloads = args.workloads.split(",")
        self.targets = []
        self.store = None
        self.samples = []   # dicts: round, workload, jobs, target, figure, hit_share, wall_s, calls_per_mib
        self.notes = []     # what the warm-ups found
        self.failures = []  # the points whose cache was out of its state (StateLost)

    def mount(self):
        local = f"{self.work}/backing-{self.name}"
        names = [f"{m}-{s}" for m in MODES for s in STATES]
        others = ["passthrough_hp", "backing"] if self.name == "fast" else ["slowstore"]
        for name in names + others:
            os.makedirs(f"{local}/{name}")
            make_file(f"{local}/{name}/{FILE_NAME}", self.file_bytes)
        view = local  # the backing directory flashdir mounts: the local one, or the slowstore mount of it
        if self.name == "slow":
            view = f"{self.work}/mnt-slowstore"
            os.makedirs(view)
            self.store = SlowstoreMount(os.environ["SLOWSTORE"], local, view, f"latency_us={self.args.latency_us}",
                                        pid_file=f"{self.work}/slowstore.pid")
        for mode in MODES:
            for state in STATES:
                self.targets.append(FlashdirTarget(self.name, mode, state, view, self.work, self.file_bytes))
        if self.name == "fast":
            mountpoint = f"{self.work}/mnt-fast-passthrough_hp"
            os.makedirs(mountpoint)
            daemon = PassthroughHpMount(os.environ["PASSTHROUGH_HP"], f"{local}/passthrough_hp", mountpoint,
                                        pid_file=f"{self.work}/passthrough_hp.pid")
            self.targets.append(PlainTarget("passthrough_hp", mountpoint, daemon=daemon))
            self.targets.append(PlainTarget("backing", f"{local}/backing"))
        else:
            self.targets.append(PlainTarget("slowstore", f"{view}/slowstore", store=self.store))
        for target in self.targets:
            note = target.warm_up(self.file_bytes)
            if note:
                self.notes.append(note)
                print(f"matrix.py: {self.name}: {note}", flush=True)

    def measure(self, rnd, workload, jobs, target):
        _, arguments, block_bytes, _ = WORKLOADS[workload]
        if block_bytes < MIB:  # random: every job over the whole file
            arguments = [*arguments, f"--size={self.file_bytes}"]
        else:  # sequential: each job streams through a part of its own
            arguments = [*arguments, f"--size={self.file_bytes // jobs}", f"--offset_increment={self.file_bytes // jobs}"]
        arguments = [*arguments, f"--numjobs={jobs}", "--time_based",
                     f"--runtime={self.args.seconds}", "--randrepeat=0"]
        # The slow part's points run one at a time over the one slowstore mount: the calls it
        # counts meanwhile are the point's.
        calls_before = self.store.counts()["total_calls"] if self.store else 0
        before = target.before()
        wall_s, job = run_fio(target.directory, arguments, timeout_s=self.args.seconds + 600)
        calls = self.store.counts()["total_calls"] - calls_before if self.store else None
        try:
            hit_share = target.check(before, job, workload, calls)
        except StateLost as why:
            self.failures.append(f"round {rnd}, {workload} x{jobs}: {why}")
            print(f"matrix.py: {self.name} round {rnd}: {workload} x{jobs} on {target.name}: not counted: {why}",
                  flush=True)
            return
        moved = job["read"]["io_bytes"] + job["write"]["io_bytes"]
        if moved <= 0:
            raise RuntimeError(f"{target.name}: {workload} x{jobs} moved no byte")
        figure = moved / wall_s / (block_bytes if block_bytes < MIB else MIB)
        self.samples.append({"round": rnd, "workload": workload, "jobs": jobs, "target": target.name,
                             "figure": figure, "hit_share": hit_share, "wall_s": wall_s,
                             "calls_per_mib": None if calls is None else calls / (moved / MIB)})
        hits = f", {hit_share:.0%} of the pages read hit" if hit_share is not None else ""
        store = f", {calls:,} store calls" if calls is not None else ""
        print(f"matrix.py: {self.name} round {rnd}: {workload} x{jobs} on {target.name}: {figure:,.1f} "
              f"{unit(workload)} ({wall_s:.2f} s{hits}{store})", flush=True)

    def run(self):
        self.load_before, self.started = load_average(), time.time()
        self.mount()
        for rnd in range(1, self.args.rounds + 1):
            order = self.targets if rnd % 2 else list(reversed(self.targets))
            for workload in self.workloads:
                for jobs in self.jobs:
                    for target in order:
                        self.measure(rnd, workload, jobs, target)
        self.elapsed_s = time.time() - self.started
        self.load_after = load_average()

    def stop(self):
        for target in self.targets:
            try:
                target.stop()
            except Exception as error:  # the other mounts must come down all the same
                print(f"matrix.py: stopping {target.name}: {error}", file=sys.stderr, flush=True)
        if self.store is not None:
            self.store.stop()


def unit(workload):
    return "IOPS" if WORKLOADS[workload][2] < MIB else "MiB/s"


def baselines(part):
    return ["passthrough_hp", "backing"] if part.name == "fast" else ["slowstore"]


def medians(part):
    """{(workload, jobs, target): median figure}, {(workload, jobs, flashdir target, other):
    median of the rounds' ratios, [the rounds' ratios]}, {(workload, jobs, target): median hit share},
    {(workload, jobs, target): median store calls per MiB moved (slow part)}."""
    figures, ratios, hits, calls = {}, {}, {}, {}
    for s in part.samples:
        figures.setdefault((s["workload"], s["jobs"], s["target"]), []).append(s)
    for (workload, jobs, target), runs in figures.items():
        shares = [r["hit_share"] for r in runs if r["hit_share"] is not None]
        if shares:
            hits[workload, jobs, target] = statistics.median(shares)
        if runs[0]["calls_per_mib"] is not None:
            calls[workload, jobs, target] = statistics.median(r["calls_per_mib"] for r in runs)
        for other in baselines(part) if target.startswith("write") else ():
            by_round = {r["round"]: r["figure"] for r in figures.get((workload, jobs, other), [])}
            each = [r["figure"] / by_round[r["round"]] for r in runs if by_round.get(r["round"])]
            if each:
                ratios[workload, jobs, target, other] = (statistics.median(each), each)
    return ({key: statistics.median(r["figure"] for r in runs) for key, runs in figures.items()}, ratios, hits,
            calls)


SHORT = {"writethrough": "wt", "writeback": "wb", "passthrough_hp": "passthrough_hp", "backing": "backing",
         "slowstore": "slowstore"}


def number(value, spec):
    """A figure, or "not counted" for a point whose cache was out of its state."""
    return "not counted" if value is None else format(value, spec)


def table(part):
    figure, ratios, hits, calls = medians(part)
    others = baselines(part)
    head = (["workload", "jobs", "cache", "flashdir wt", "flashdir wb", *others]
            + [f"{SHORT[m]} / {o}" for o in others for m in MODES] + ["pages read that hit, wt / wb"]
            + (["store calls per MiB, wt / wb / slowstore"] if calls else []))
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for workload in part.workloads:
        for jobs in part.jobs:
            for state in STATES:
                cells = [f"{WORKLOADS[workload][0]} ({unit(workload)})", str(jobs), state]
                cells += [number(figure.get((workload, jobs, t)), ",.0f")
                          for t in (*(f"{m}-{state}" for m in MODES), *others)]
                cells += [number(ratios.get((workload, jobs, f"{m}-{state}", o), (None,))[0], ".2f")
                          for o in others for m in MODES]
                shares = [hits.get((workload, jobs, f"{m}-{state}")) for m in MODES]
                cells.append(" / ".join("-" if s is None else f"{s:.0%}" for s in shares))
                if calls:
                    cells.append(" / ".join(number(calls.get((workload, jobs, t)), ",.0f")
                                            for t in (f"{MODES[0]}-{state}", f"{MODES[1]}-{state}", others[0])))
                lines.append("| " + " | ".join(cells) + " |")
    return lines


def spread(part):
    """The rounds' ratios of every point, when there were several rounds."""
    if part.args.rounds < 2:
        return []
    _, ratios, _, _ = medians(part)
    return ["Ratios round by round: " + "; ".join(
        f"{w} x{j} {t} / {o}: " + ", ".join(f"{r:.2f}" for r in each)
        for (w, j, t, o), (_, each) in ratios.items()) + ".", ""]


def plot_data(part, other, path):
    """The ratios of flashdir over `other` for plot.gp: one block per workload (two blank lines
    between blocks), a header line, then a line per job count."""
    _, ratios, _, _ = medians(part)
    blocks = []
    for workload in part.workloads:
        rows = ["jobs\t" + "\t".join(f"{SHORT[m]} {s}" for m in MODES for s in STATES)]
        for jobs in part.jobs:
            rows.append(f"{jobs}\t" + "\t".join(number(ratios.get((workload, jobs, f"{m}-{s}", other), ("NaN",))[0], "")
                                                 for m in MODES for s in STATES))
        blocks.append("\n".join(rows))
    with open(path, "w") as f:
        f.write("\n\n\n".join(blocks) + "\n")


def plot(part, other, stem, results_dir):
    data, png = f"{results_dir}/{stem}.dat", f"{results_dir}/{stem}.png"
    plot_data(part, other, data)
    titles = " ".join(part.workloads)
    what = ("fast local backing (tmpfs)" if part.name == "fast"
            else f"over the slow store ({part.args.latency_us} µs a call)")
    subprocess.run(["gnuplot", "-e", f"data='{data}'; output='{png}'; titles='{titles}'; "
                    f"heading='flashdir / {other}, {what}'", f"{HERE}/plot.gp"], check=True)
    return os.path.basename(png)


def report(parts, args, commit):
    lines = ["# fio matrix (bench/fio/run.sh)", ""]
    for part in parts:
        what = ("Fast local backing: the backing directories and the caches on tmpfs" if part.name == "fast" else
                f"Slow store: slowstore, {args.latency_us} µs a call, over tmpfs; flashdir over the slowstore mount")
        lines += [f"## {part.name}", "",
                  f"{what}; a file of {part.file_bytes // MIB} MiB per target; caches: warm {2 * part.file_bytes // MIB} "
                  f"MiB, miss {part.file_bytes // MISS_CACHE_FRACTION // MIB} MiB; {args.seconds} s per point, "
                  f"{args.rounds} round{'s' if args.rounds > 1 else ''}; flashdir at {commit}; {os.cpu_count()} CPUs, "
                  f"kernel {os.uname().release}; started {time.strftime('%Y-%m-%d %H:%M', time.gmtime(part.started))} "
                  f"UTC, the points took {part.elapsed_s:.0f} s; load average before {part.load_before}, after "
                  f"{part.load_after}.", "",
                  "Figures: bytes read and written over fio's wall time (start to exit: the final fsync and the "
                  "close included), IOPS for 4 KiB, MiB/s for 1 MiB; medians of the rounds; the columns without a "
                  "cache are measured once per point and both cache rows are compared with them. Ratios: "
                  "medians of the rounds' ratios (wt, wb: flashdir writethrough, writeback).", "",
                  *table(part), "", *spread(part),
                  "Warm-ups: " + "; ".join(part.notes) + ".", "",
                  *([f"Not counted ({len(part.failures)}), the cache out of its state: " + "; ".join(part.failures) + ".",
                     ""] if part.failures else [])]
        for other in baselines(part):
            stem = part.name if other in ("passthrough_hp", "slowstore") else f"{part.name}-{other}"
            lines += [f"![flashdir / {other}]({plot(part, other, stem, os.path.dirname(args.results))})", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", help="work directory (default: a new one in --dir)")
    parser.add_argument("--dir", default=os.environ.get("FLASHDIR_BENCH_DIR", "/dev/shm"))
    parser.add_argument("--part", choices=("fast", "slow", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seconds", type=int, default=3, help="fio's time per point")
    parser.add_argument("--jobs", help="job counts, comma-separated (default 1,2,4,8 fast, 1,4 slow)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated, of: " + ", ".join(WORKLOADS))
    parser.add_argument("--file-size", help="each target's file (default 256M fast, 128M slow; at least 128M: "
                                            "the miss cache, an eighth, must hold 16M)")
    parser.add_argument("--latency-us", type=int, default=1000, help="slowstore's wait per call")
    parser.add_argument("--quick", action="store_true", help="a smaller matrix: jobs 1 and 4 (slow: 1), 2 s per point")
    parser.add_argument("--results", default=os.path.join(HERE, "results.md"),
                        help="the tables; the plots and their data go beside it")
    args = parser.parse_args()
    if args.quick:
        args.seconds = min(args.seconds, 2)
    for workload in args.workloads.split(","):
        if workload not in WORKLOADS:
            parser.error(f"unknown workload {workload}")
    prepare_runner("matrix.py")
    if not os.access(os.environ.get("PASSTHROUGH_HP", ""), os.X_OK):
        sys.exit("matrix.py: PASSTHROUGH_HP must name the binary (bench/fio/run.sh sets it)")
    commit = subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            check=False).stdout.strip() or "unknown"
    work = args.work or tempfile.mkdtemp(prefix="fio-matrix-", dir=args.dir)
    parts = []
    try:
        for name in ("fast", "slow") if args.part == "both" else (args.part,):
            part = Part(name, args, work)
            parts.append(part)
            try:
                part.run()
            finally:
                part.stop()
    finally:
        # The last mounted first: flashdir's mounts over slowstore's before it.
        for line in reversed(open("/proc/mounts").readlines()):
            point = line.split()[1]
            if point.startswith(work + "/"):
                print(f"matrix.py: {point} still mounted: unmounting it", file=sys.stderr, flush=True)
                unmount(point)
        left = [line.split()[1] for line in open("/proc/mounts") if line.split()[1].startswith(work + "/")]
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    if left:
        sys.exit(f"matrix.py: still mounted: {', '.join(left)}")
    text = report(parts, args, commit)
    with open(args.results, "w") as f:
        f.write(text)
    print(text)
    failures = sum(len(part.failures) for part in parts)
    if failures:
        sys.exit(f"matrix.py: {failures} points found their cache out of its state (not counted; results.md lists them)")


if __name__ == "__main__":
    main()
