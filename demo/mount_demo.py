#!/usr/bin/env python3
"""The mount demo (scripts/demo.sh): flashdir in front of a slow store, cold, warm, killed with
writes in flight, restarted warm.

A sample tree (200 files of 64 KiB, 4 of 8 MiB) lies behind slowstore (bench/slowstore), a
passthrough that makes every call wait 1 ms, as an NFS server on a LAN would. For each way the
cache keeps its metadata (lufuw, flashdir's default, and write-update, Flashcache's): a fresh
cache is mounted over the slow store; the tree is read cold, then warm; files are written and
fsync'd through the mount while the power goes, twice: the daemon is killed (kill -9: its device
RAM and everything in memory gone), then the simulated chip loses power during a program, which
tears that page (mount option power_cut_control), and the daemon is killed; after each, the
cache is mounted again and the tree read again. The kernel's page cache is
dropped before each read, so that every read reaches flashdir. Every byte read is compared with
the backing files, every fsync'd file with what was written, after every restart.

Writes a table and a PNG plot (gnuplot) to OUT (default /tmp/flashdir-demo). Needs root,
/dev/fuse and the binaries in FLASHDIR_BUILD_ROOT (build/): daemon/flashdir and
bench/slowstore/slowstore.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
BUILD = os.environ.get("FLASHDIR_BUILD_ROOT", os.path.join(TOP, "build"))
os.environ.setdefault("FLASHDIR", os.path.join(BUILD, "daemon", "flashdir"))
sys.path.insert(0, os.path.join(TOP, "tests", "fuse"))
sys.path.insert(0, os.path.join(TOP, "bench", "slowstore"))
import harness  # noqa: E402
from slowstore_mount import SlowstoreMount  # noqa: E402

SMALL_FILES, SMALL_BYTES = 200, 64 << 10
BIG_FILES, BIG_BYTES = 4, 8 << 20
WRITE_BYTES = 256 << 10
SCHEMES = ("lufuw", "write-update")


def make_tree(backing):
    """The sample tree: deterministic bytes, so that a wrong one is found."""
    sizes = {}
    for i in range(SMALL_FILES):
        sizes[f"small/{i:03d}"] = SMALL_BYTES
    for i in range(BIG_FILES):
        sizes[f"big/{i}"] = BIG_BYTES
    for name, size in sizes.items():
        os.makedirs(os.path.dirname(f"{backing}/{name}"), exist_ok=True)
        with open(f"{backing}/{name}", "wb") as f:
            f.write(os.urandom(size))
    return sorted(sizes)


def drop_kernel_caches():
    subprocess.run(["sync"], check=False)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")


def read_tree(root, names, backing):
    """Reads every file under `root` (page cache dropped first); returns (seconds, files whose
    bytes differ from the backing's)."""
    drop_kernel_caches()
    started = time.monotonic()
    contents = {name: harness.read_all(f"{root}/{name}") for name in names}
    seconds = time.monotonic() - started
    wrong = [name for name in names if contents[name] != harness.read_all(f"{backing}/{name}")]
    return seconds, wrong


def write_until_cut(mount, mnt, chip):
    """Writes and fsyncs files through the mount while the power goes 1.5 s in: the daemon is
    killed (kill -9), or with `chip` its chip loses power during a program (power_cut_control),
    then the daemon is killed. Returns the files whose fsync returned, with their bytes."""
    acknowledged = {}
    os.makedirs(f"{mnt}/written", exist_ok=True)

    def writer():
        i = 0
        while True:
            data = os.urandom(WRITE_BYTES)
            name = f"written/{i:04d}"
            try:
                with open(f"{mnt}/{name}", "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError:
                return  # the daemon is gone
            acknowledged[name] = data
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    time.sleep(1.5)
    if chip:
        with open(f"{mnt}/.flashdir/power_cut", "w"):
            pass
        # The next program may wait until the device RAM's write buffer fills.
        deadline = time.monotonic() + 20
        while (health := json.load(open(f"{mnt}/.flashdir/stats.json"))["cache_health"])["state"] != "stopped":
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        print(f"the chip: {health['reason'] or 'no program came to tear'}", flush=True)
    mount.kill9()
    thread.join()
    return acknowledged


def cache_stats(mnt):
    with open(f"{mnt}/.flashdir/stats.json") as f:
        return json.load(f)["cache"]


def cut_and_restart(scheme, slow, backing, mnt, cache, names, chip):
    """One power cut with writes in flight and the restart after it; the row's figures."""
    options = f"meta={scheme}" + (",power_cut_control" if chip else "")
    what = "the chip loses power during a program, tearing it, then kill -9" if chip else "kill -9 of the daemon"
    print(f"### {scheme}: writing and fsyncing 256 KiB files; {what}, 1.5 s in", flush=True)
    with harness.Mount(slow, mnt, cache, options, size="256M") as mount:
        written = write_until_cut(mount, mnt, chip)
    row = {"cut": "chip power cut" if chip else "kill -9", "acknowledged": len(written)}
    with harness.Mount(slow, mnt, cache, f"meta={scheme}", size="256M"):
        stats = cache_stats(mnt)
        row["usable"] = stats["restart_usable_slots"]
        row["dropped"] = stats["restart_dropped_slots"]
        row["usable_fraction"] = stats["restart_usable_fraction"]
        row["restart_s"] = stats["restart_seconds"]
        hits_before = stats["read_hit_pages"]
        row["after_s"], wrong = read_tree(mnt, names, backing)
        row["hits_after"] = cache_stats(mnt)["read_hit_pages"] - hits_before
        lost = [name for name, data in written.items() if harness.read_all(f"{mnt}/{name}") != data]
        lost += [name for name, data in written.items() if harness.read_all(f"{backing}/{name}") != data]
        for name in written:
            os.unlink(f"{mnt}/{name}")
    row["wrong"], row["lost"] = len(wrong), len(lost)
    print(f"restart: {row['usable']:,} pages usable, {row['dropped']:,} dropped ({100 * row['usable_fraction']:.1f}%), "
          f"in {row['restart_s'] * 1000:.0f} ms; the tree read again in {row['after_s']:.2f} s "
          f"({row['hits_after']:,} pages from the cache); {row['acknowledged']} fsync'd files, "
          f"{row['lost']} lost; {row['wrong']} files read wrong", flush=True)
    return row


def run_scheme(scheme, slow, backing, work, names):
    """A fresh cache read cold and warm, then each kind of cut: one row per cut."""
    mnt, cache = f"{work}/mnt", f"{work}/cache-{scheme}"
    os.makedirs(mnt, exist_ok=True)
    print(f"\n### {scheme}: a fresh 256 MiB cache over the slow store", flush=True)
    with harness.Mount(slow, mnt, cache, f"meta={scheme}", size="256M"):
        cold_s, wrong_cold = read_tree(mnt, names, backing)
        warm_s, wrong_warm = read_tree(mnt, names, backing)
        print(f"read cold {cold_s:.2f} s, warm {warm_s:.2f} s", flush=True)
        if scheme == SCHEMES[0]:
            subprocess.run([os.environ["FLASHDIR"], "stats", mnt], check=False)
    rows = []
    for chip in (False, True):
        row = cut_and_restart(scheme, slow, backing, mnt, cache, names, chip)
        row.update(scheme=scheme, cold_s=cold_s, warm_s=warm_s)
        row["wrong"] += len(wrong_cold) + len(wrong_warm)
        rows.append(row)
    return rows


def report(rows, slow_s, out):
    lines = ["| cache | first read s | warm read s | cut | usable after the cut | read after restart s "
             "(pages from the cache) | fsync'd files lost | files read wrong |",
             "|---|---|---|---|---|---|---|---|",
             f"| none (the slow store itself) | {slow_s:.2f} | {slow_s:.2f} | - | - | - | - | - |"]
    for r in rows:
        lines.append(f"| {r['scheme']} | {r['cold_s']:.2f} | {r['warm_s']:.2f} | {r['cut']} | "
                     f"{100 * r['usable_fraction']:.1f}% ({r['usable']:,} pages) | {r['after_s']:.2f} "
                     f"({r['hits_after']:,}) | {r['lost']} of {r['acknowledged']} | {r['wrong']} |")
    table = "\n".join(lines)
    with open(f"{out}/results.md", "w") as f:
        f.write(table + "\n")
    with open(f"{out}/reads.dat", "w") as f:
        schemes = [r for r in rows if r["cut"] == "kill -9"]
        f.write("phase slow-store-alone " + " ".join(r["scheme"] for r in schemes) + "\n")
        phases = [("first", lambda r: r["cold_s"]), ("warm", lambda r: r["warm_s"])]
        for cut in ("kill -9", "chip power cut"):
            after = {r["scheme"]: r["after_s"] for r in rows if r["cut"] == cut}
            phases.append((f"after-{cut.replace(' ', '-')}", lambda r, after=after: after[r["scheme"]]))
        for phase, value in phases:
            f.write(f"{phase} {slow_s:.3f} " + " ".join(f"{value(r):.3f}" for r in schemes) + "\n")
    plot = f"""set terminal pngcairo size 800,480
set output '{out}/reads.png'
set title 'Reading the sample tree through flashdir over a 1 ms store'
set ylabel 'seconds'
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set key outside right top
set yrange [0:*]
plot for [i=2:{1 + len(SCHEMES) + 1}] '{out}/reads.dat' using i:xtic(1) title columnheader(i)
"""
    subprocess.run(["gnuplot"], input=plot, text=True, check=False)
    return table


def main():
    out = os.environ.get("FLASHDIR_DEMO_OUT", "/tmp/flashdir-demo")
    os.makedirs(out, exist_ok=True)
    slowstore = os.path.join(BUILD, "bench", "slowstore", "slowstore")
    with harness.scratch("demo") as work:
        backing, slow = f"{work}/backing", f"{work}/slow"
        os.makedirs(backing)
        os.makedirs(slow)
        names = make_tree(backing)
        print(f"### the sample tree: {SMALL_FILES} files of 64 KiB and {BIG_FILES} of 8 MiB behind slowstore "
              "(1 ms a call)", flush=True)
        with SlowstoreMount(slowstore, backing, slow, "latency_us=1000"):
            slow_s, wrong = read_tree(slow, names, backing)
            print(f"the slow store alone reads it in {slow_s:.2f} s", flush=True)
            rows = [row for scheme in SCHEMES for row in run_scheme(scheme, slow, backing, work, names)]
    table = report(rows, slow_s, out)
    print("\n### side by side (also in " + out + "/results.md, plotted in " + out + "/reads.png)\n" + table)
    bad = sum(r["wrong"] + r["lost"] for r in rows) + len(wrong)
    print("\nevery byte read matched the backing files, and every fsync'd file survived" if bad == 0 else
          f"\n{bad} files read wrong or lost: see above")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
