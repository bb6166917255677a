#!/usr/bin/env python3
"""Hot restart through the mount (issue 18 §5), in one run:

1. usable fraction: for each write mode, a fresh cache (lufuw, 256 MiB, a 64 MiB
   device RAM) gets a file written through the mount (write-around: written, then read) and a
   file read; the daemon is killed (kill -9: the device RAM is lost) right away and, in a
   second round, 1.2 s later; the remount's usable pages over the pages cached before the kill.
   With them: the metadata pages written per cached page, the commits, and the re-read of the
   file after the restart against the same read from a cold cache. The two baseline metadata
   schemes get the 1.2 s round in write-through.
2. restart time against the cache's size: a fresh cache of each size (its image space reserved at creation, as for every cache) filled by
   reading a sparse file of its size; the mount time after a clean unmount, then after a kill -9
   (one new page cached 1.2 s before it, so that the restart is the one after a cut), each the
   median of --repeats mounts (3), with the engine's and the FTL's parts, and the slope; and the
   time of the first 4 KiB read of the filled file after the clean mount (a restart image
   reads the file's page table then, doc/cache.md "The restart image").
   With them (issue 20) the daemon's memory (/proc/PID/status: VmRSS, VmHWM, RssAnon, RssFile)
   on the empty mount, after the fill, after the clean remount and after the remount that
   follows the kill -9; the device RAM in force (ram=, by default the cache's size/16, 4 MiB to
   64 MiB) and what it holds (stats.json's ftl section); the engine's own count of its index
   (ram_index_bytes); the bytes of daemon memory per cached page (RSS after the fill minus the
   empty mount's, over the cached pages) and least-squares slopes of RSS against cached pages.
   Writes a table and a plot of RSS against the cache's size (gnuplot, memory.gp).

Needs root, /dev/fuse and a built flashdir (build/daemon/flashdir, or $FLASHDIR). Backing files
live in $FLASHDIR_BENCH_DIR (/dev/shm), caches in $FLASHDIR_BENCH_CACHE_DIR (/var/tmp): the
largest cache's image takes its size on that disk. Writes bench/restart/results.md, and with
part 2 memory.dat and memory.png beside it (--out's directory).

  bench/restart/run.py                          # sizes 256M,1G,4G,16G
  bench/restart/run.py --sizes 256M,1G --quick   # smaller files in part 1
  bench/restart/run.py --modes= --sizes 1G,4G     # part 2 only
  bench/restart/run.py --modes= --ram 4M          # part 2 with ram=4M on every mount
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tests", "fuse"))
import harness  # noqa: E402

MiB = 1 << 20
CHUNK = 1 * MiB


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def all_stats(mnt):
    with open(f"{mnt}/.flashdir/stats.json") as f:
        return json.load(f)


def cache_stats(mnt):
    return all_stats(mnt)["cache"]


MEMORY_FIELDS = ("VmRSS", "VmHWM", "RssAnon", "RssFile", "Threads")


def daemon_memory(pid):
    """The daemon's memory from /proc/PID/status, in bytes: resident (VmRSS), its peak (VmHWM),
    and the resident anonymous and file-backed parts; and its thread count (each FUSE worker
    thread has its own request buffer and, past a few, its own malloc arena)."""
    memory = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in MEMORY_FIELDS:
                number = int(value.split()[0])
                memory[name] = number if name == "Threads" else number * 1024  # "NNN kB"
    missing = [name for name in MEMORY_FIELDS if name not in memory]
    if missing:
        raise RuntimeError(f"/proc/{pid}/status has no {', '.join(missing)}")
    return memory


def memory_snapshot(mount):
    """What a point of the memory table needs from a running mount: the daemon's memory, the
    device RAM in force and what it holds, the engine's own count of its index, the pages cached."""
    stats = all_stats(mount.mountpoint)
    ftl, cache = stats["ftl"], stats["cache"]
    return {**daemon_memory(mount.pid), "cached": cache["cached_pages"], "ram_index_bytes": cache["ram_index_bytes"],
            "ram_budget_bytes": ftl["ram_budget_bytes"], "ram_mapping_bytes": ftl["ram_mapping_bytes"],
            "ram_buffer_bytes": ftl["ram_buffer_bytes"]}


def load_average():
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def read_all(path):
    """Reads `path` in 1 MiB pieces; returns the seconds it took."""
    started = time.monotonic()
    with open(path, "rb", buffering=0) as f:
        while f.read(CHUNK):
            pass
    return time.monotonic() - started


def write_all(path, data):
    with open(path, "r+b", buffering=0) as f:
        for at in range(0, len(data), CHUNK):
            f.write(data[at:at + CHUNK])
        os.fsync(f.fileno())


def timed_mount(backing, mnt, cache, options, size):
    started = time.monotonic()
    mount = harness.Mount(backing, mnt, cache, options, size=size)
    return mount, time.monotonic() - started


def usable_round(backing_top, cache_top, mode, meta, wait, read_bytes, write_bytes):
    backing, mnt, cache = f"{backing_top}/b-{mode}", f"{cache_top}/m", f"{cache_top}/c-{mode}-{meta}-{wait}"
    os.makedirs(backing, exist_ok=True)
    os.makedirs(mnt, exist_ok=True)
    data = os.urandom(read_bytes)
    written = os.urandom(write_bytes)
    with open(f"{backing}/read", "wb") as f:
        f.write(data)
    with open(f"{backing}/written", "wb") as f:
        f.write(b"\0" * write_bytes)
    # 64 MiB of device RAM (the largest default): the most a kill can find in its write buffer.
    options = f"mode={mode},seq_cutoff_read=0,seq_cutoff_write=0,meta={meta},ram=64M"
    mount = harness.Mount(backing, mnt, cache, options, size="256M")
    try:
        write_all(f"{mnt}/written", written)
        if mode == "writearound":
            read_all(f"{mnt}/written")
        read_all(f"{mnt}/read")
        before = cache_stats(mnt)
        time.sleep(wait)
        mount.kill9()
    except BaseException:
        mount.stop()
        raise
    mount, seconds = timed_mount(backing, mnt, cache, options, "256M")
    try:
        after = cache_stats(mnt)
        warm = read_all(f"{mnt}/read")
        warm_hits = cache_stats(mnt)["read_hit_pages"] - after["read_hit_pages"]
    finally:
        mount.stop()
    cold_cache = f"{cache}-cold"
    mount = harness.Mount(backing, mnt, cold_cache, options, size="256M")
    try:
        cold = read_all(f"{mnt}/read")
    finally:
        mount.stop()
    for path in (cache, cold_cache):
        shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(backing, ignore_errors=True)
    cached = before["cached_pages"]
    return {
        "mode": mode, "meta": meta, "wait": wait, "cached": cached, "usable": after["restart_usable_slots"],
        "dropped": after["restart_dropped_slots"], "kept": after["restart_usable_slots"] / cached if cached else 0,
        "commits": before["commits"], "metadata_writes": before["metadata_writes"],
        "metadata_per_cached": before["metadata_writes"] / cached if cached else 0,
        "metadata_per_data_write": before["metadata_writes_per_data_write"],
        "mount_s": seconds, "restart_s": after["restart_seconds"],
        "warm_s": warm, "warm_hits": warm_hits, "cold_s": cold, "pages": read_bytes // 4096,
    }


def ftl_open_seconds(mount):
    """The FTL's part of the open, from the daemon's "cache open:" line (FTL 0.123 s (...))."""
    for line in mount.startup_log.splitlines():
        if "cache open:" in line and "FTL " in line:
            return float(line.split("FTL ", 1)[1].split(" s", 1)[0])
    return float("nan")


def first_read(mnt):
    """Seconds to read the first page of the filled file just after a mount: what the restart
    left to do on first use (a restart image reads the file's page table then)."""
    started = time.monotonic()
    with open(f"{mnt}/fill", "rb") as f:
        f.read(4096)
    return time.monotonic() - started


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def size_round(backing_top, cache_top, size_text, repeats, ram_text=""):
    """Fills a fresh cache of `size_text`, then times `repeats` mounts after a clean unmount and
    `repeats` after a kill -9 (one new page cached 1.2 s before each): medians and ranges."""
    size = parse_size(size_text)
    backing, mnt, cache = f"{backing_top}/b-size", f"{cache_top}/m", f"{cache_top}/c-{size_text}"
    os.makedirs(backing, exist_ok=True)
    os.makedirs(mnt, exist_ok=True)
    with open(f"{backing}/fill", "wb") as f:
        f.truncate(size)  # sparse: reading it costs the backing nothing
    options = "seq_cutoff_read=0,meta=lufuw" + (f",ram={ram_text}" if ram_text else "")
    mount = harness.Mount(backing, mnt, cache, options, size=size_text)
    try:
        empty = memory_snapshot(mount)
        fill_s = read_all(f"{mnt}/fill")
        filled = memory_snapshot(mount)
        cached = filled["cached"]
    finally:
        mount.stop()
    clean_runs, cut_runs, after_clean, after_cut, cut = [], [], None, None, None
    for _ in range(repeats):
        mount, seconds = timed_mount(backing, mnt, cache, options, size_text)
        try:
            clean = cache_stats(mnt)
            after_clean = after_clean or memory_snapshot(mount)
            clean_runs.append((seconds, clean["restart_seconds"], ftl_open_seconds(mount), first_read(mnt)))
        finally:
            mount.stop()
    mount = harness.Mount(backing, mnt, cache, options, size=size_text)
    for i in range(repeats):
        try:
            with open(f"{backing}/touch{i}", "wb") as f:
                f.write(os.urandom(4096))
            read_all(f"{mnt}/touch{i}")  # a change since the clean mark: the next open is after a cut
            time.sleep(1.2)
            mount.kill9()
        except BaseException:
            mount.stop()
            raise
        mount, seconds = timed_mount(backing, mnt, cache, options, size_text)
        try:
            cut = cache_stats(mnt)
            after_cut = after_cut or memory_snapshot(mount)
            cut_runs.append((seconds, cut["restart_seconds"], ftl_open_seconds(mount)))
        except BaseException:
            mount.stop()
            raise
    mount.stop()
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(backing, ignore_errors=True)
    return {
        "size": size_text, "bytes": size, "cached": cached, "fill_s": fill_s, "repeats": repeats,
        "clean_mount_s": median(r[0] for r in clean_runs), "clean_restart_s": median(r[1] for r in clean_runs),
        "clean_ftl_s": median(r[2] for r in clean_runs), "clean_first_read_s": median(r[3] for r in clean_runs),
        "clean_runs": clean_runs,
        "cut_mount_s": median(r[0] for r in cut_runs), "cut_restart_s": median(r[1] for r in cut_runs),
        "cut_ftl_s": median(r[2] for r in cut_runs), "cut_runs": cut_runs,
        "clean_usable": clean["restart_usable_slots"],
        "cut_usable": cut["restart_usable_slots"], "cut_clean": cut["restart_clean_shutdown"],
        "memory": {"empty": empty, "filled": filled, "clean": after_clean, "cut": after_cut},
    }


def least_squares(xs, ys):
    """The least-squares slope of ys against xs (nan for fewer than two distinct xs)."""
    if len(xs) < 2:
        return float("nan")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else float("nan")


def slope(points, key):
    """Least-squares seconds per GiB of `key` over the sizes."""
    return least_squares([p["bytes"] / (1 << 30) for p in points], [p[key] for p in points])


def per_page(r, state):
    """Bytes of daemon memory per cached page: the RSS at `state` over the empty mount's, divided
    by the pages cached."""
    m = r["memory"]
    pages = m[state]["cached"]
    return (m[state]["VmRSS"] - m["empty"]["VmRSS"]) / pages if pages else float("nan")


def memory_slope(sizes, state, field="VmRSS"):
    """Least-squares bytes of `field` at `state` per cached page, over the sizes."""
    return least_squares([r["memory"][state]["cached"] for r in sizes], [r["memory"][state][field] for r in sizes])


def memory_report(sizes, args):
    mb = lambda n: f"{n / 1e6:.1f}"  # noqa: E731
    lines = ["", "## Daemon memory against the cache's size (the same caches)", "",
             f"Device RAM: {('ram=' + args.ram) if args.ram else 'the default (size/16, 4 MiB to 64 MiB)'}. "
             "Memory in MB (10^6 bytes) from /proc/PID/status; per page: (RSS - the empty mount's RSS) / cached pages.", "",
             "| size | device RAM MiB (mapping + buffer after the fill) | empty: RSS (anon + file) | filled: RSS (anon + file) "
             "| filled: HWM | threads empty, filled | engine index MB (B/page) | B/page filled "
             "| clean remount: RSS (B/page), HWM | kill -9 remount: RSS (B/page), HWM |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sizes:
        m = r["memory"]
        e, f, c, k = m["empty"], m["filled"], m["clean"], m["cut"]
        lines.append(
            f"| {r['size']} | {f['ram_budget_bytes'] / MiB:.0f} ({(f['ram_mapping_bytes'] + f['ram_buffer_bytes']) / MiB:.1f}) "
            f"| {mb(e['VmRSS'])} ({mb(e['RssAnon'])} + {mb(e['RssFile'])}) "
            f"| {mb(f['VmRSS'])} ({mb(f['RssAnon'])} + {mb(f['RssFile'])}) | {mb(f['VmHWM'])} "
            f"| {e['Threads']}, {f['Threads']} "
            f"| {mb(f['ram_index_bytes'])} ({f['ram_index_bytes'] / f['cached'] if f['cached'] else float('nan'):.1f}) "
            f"| {per_page(r, 'filled'):.1f} | {mb(c['VmRSS'])} ({per_page(r, 'clean'):.1f}), {mb(c['VmHWM'])} "
            f"| {mb(k['VmRSS'])} ({per_page(r, 'cut'):.1f}), {mb(k['VmHWM'])} |")
    lines += ["", "Least-squares slopes over the sizes, bytes per cached page: RSS after the fill "
              f"{memory_slope(sizes, 'filled'):.1f} (anonymous {memory_slope(sizes, 'filled', 'RssAnon'):.1f}), "
              f"after the clean remount {memory_slope(sizes, 'clean'):.1f}, after the kill -9 remount "
              f"{memory_slope(sizes, 'cut'):.1f}; the peak (VmHWM) of the clean remount {memory_slope(sizes, 'clean', 'VmHWM'):.1f}, "
              f"of the kill -9 remount {memory_slope(sizes, 'cut', 'VmHWM'):.1f}; "
              f"the engine's own index {memory_slope(sizes, 'filled', 'ram_index_bytes'):.1f}. "
              f"Empty mount's RSS per byte of cache: "
              f"{least_squares([r['bytes'] for r in sizes], [r['memory']['empty']['VmRSS'] for r in sizes]):.5f}.", ""]
    return lines


def write_memory_plot(sizes, out):
    """memory.dat beside `out` (size GiB, then in MB: the RSS of the empty mount, RSS and peak after
    the fill, RSS and peak after the clean remount, and after the kill -9 remount; then the size as
    written) and memory.png from it with gnuplot, if gnuplot is there."""
    directory = os.path.dirname(os.path.abspath(out))
    data, png = os.path.join(directory, "memory.dat"), os.path.join(directory, "memory.png")
    with open(data, "w") as f:
        f.write("# size_gib\tempty_rss_mb\tfilled_rss_mb\tfilled_hwm_mb\tclean_rss_mb\tclean_hwm_mb\tcut_rss_mb"
                "\tcut_hwm_mb\tsize\n")
        for r in sizes:
            m = r["memory"]
            f.write("\t".join([f"{r['bytes'] / (1 << 30):g}"] + [f"{v / 1e6:.2f}" for v in (
                m["empty"]["VmRSS"], m["filled"]["VmRSS"], m["filled"]["VmHWM"], m["clean"]["VmRSS"],
                m["clean"]["VmHWM"], m["cut"]["VmRSS"], m["cut"]["VmHWM"])] + [r["size"]]) + "\n")
    if not shutil.which("gnuplot"):
        print(f"run.py: wrote {data}; no gnuplot for the plot (apt-get install gnuplot-nox)", file=sys.stderr)
        return
    subprocess.run(["gnuplot", "-e", f"data='{data}'; output='{png}'", os.path.join(HERE, "memory.gp")], check=True)
    print(f"run.py: wrote {data} and {png}", file=sys.stderr)


def write_report(usable, sizes, args):
    """The tables into args.out and on stdout, and the memory plot beside them."""
    text = report(usable, sizes, args)
    with open(args.out, "w") as f:
        f.write(text)
    print(text)
    if sizes:
        write_memory_plot(sizes, args.out)


def report(usable, sizes, args):
    when = getattr(args, "run_date", "") or time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
    lines = [f"# Hot restart (bench/restart/run.py, {when})", "",
             f"Load average (1, 5, 15 min) before: {args.load_before}; after: {load_average()}.", "",
             f"## Usable after kill -9 (256 MiB cache, {args.read_mib} MiB read, "
             f"{args.write_mib} MiB written through the mount)", "",
             "| mode | metadata | kill after | cached pages | usable | kept | commits | metadata pages / cached page "
             "| metadata / data write | mount s | restart s | re-read s (hits) | cold read s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in usable:
        lines.append(f"| {r['mode']} | {r['meta']} | {r['wait']:.1f} s | {r['cached']:,} | {r['usable']:,} | {100 * r['kept']:.1f}% "
                     f"| {r['commits']} | {r['metadata_per_cached']:.4f} | {r['metadata_per_data_write']:.3f} "
                     f"| {r['mount_s']:.2f} | {r['restart_s']:.3f} | {r['warm_s']:.2f} ({r['warm_hits']:,}) "
                     f"| {r['cold_s']:.2f} |")
    repeats = sizes[0].get("repeats", 1) if sizes else 1
    lines += ["", "## Restart time against the cache's size (filled full)", "",
              f"Each figure is the median of {repeats} mounts (the range of the mount times beside it): the whole "
              "mount, and in parentheses the engine's restart and the FTL's open (after a kill -9: its roll-forward).",
              "",
              "| size | cached pages | fill s | mount after clean unmount s [range] (engine s, FTL s) "
              "| first 4 KiB read after it s | mount after kill -9 s [range] (engine s, FTL s) | usable after the cut |",
              "|---|---|---|---|---|---|---|"]

    def spread(r, key):
        runs = r.get(f"{key}_runs") or [(r[f"{key}_mount_s"],)]
        return f"{min(x[0] for x in runs):.2f}–{max(x[0] for x in runs):.2f}"

    for r in sizes:
        lines.append(f"| {r['size']} | {r['cached']:,} | {r['fill_s']:.1f} | {r['clean_mount_s']:.2f} "
                     f"[{spread(r, 'clean')}] ({r['clean_restart_s']:.3f}, {r.get('clean_ftl_s', float('nan')):.3f}) "
                     f"| {r.get('clean_first_read_s', float('nan')):.3f} "
                     f"| {r['cut_mount_s']:.2f} [{spread(r, 'cut')}] ({r['cut_restart_s']:.3f}, "
                     f"{r.get('cut_ftl_s', float('nan')):.3f}) "
                     f"| {r['cut_usable']:,}{' (clean mark!)' if r['cut_clean'] else ''} |")
    lines += ["", f"Slope of the medians (least squares, seconds per GiB): mount after a clean unmount "
              f"{slope(sizes, 'clean_mount_s'):.4f} (engine {slope(sizes, 'clean_restart_s'):.4f}, FTL {slope(sizes, 'clean_ftl_s'):.4f}); after a kill -9 "
              f"{slope(sizes, 'cut_mount_s'):.3f} (engine {slope(sizes, 'cut_restart_s'):.3f}).", ""]
    if sizes:
        lines += memory_report(sizes, args)
    return "\n".join(lines)


def rerender(args):
    usable, sizes = [], []
    with open(args.from_json) as f:
        for line in f:
            if line.startswith("{"):
                r = json.loads(line)
                (sizes if "size" in r else usable).append(r)
    args.read_mib, args.write_mib = (64, 16) if args.quick else (160, 48)
    args.load_before = args.load_before or "(not recorded)"
    global load_average
    load_average = lambda: args.load_after or "(not recorded)"  # noqa: E731
    write_report(usable, sizes, args)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="256M,1G,4G,16G")
    parser.add_argument("--modes", default="writethrough,writeback,writearound")
    parser.add_argument("--quick", action="store_true", help="64 MiB read, 16 MiB written in part 1")
    parser.add_argument("--repeats", type=int, default=3, help="part 2: mounts timed per size and kind (medians)")
    parser.add_argument("--ram", default="", help="part 2: ram= for every mount (default: the cache's own)")
    parser.add_argument("--out", default=os.path.join(HERE, "results.md"))
    parser.add_argument("--from-json", metavar="FILE",
                        help="mount nothing: write the report (and the memory plot) from the JSON lines a run "
                             "printed, with --run-date, --load-before and --load-after as they were")
    parser.add_argument("--load-before", default="")
    parser.add_argument("--load-after", default="")
    parser.add_argument("--run-date", default="", help="with --from-json: when the run was (UTC)")
    args = parser.parse_args()
    if args.from_json:
        rerender(args)
        return
    os.environ.setdefault("FLASHDIR", os.path.join(TOP, "build", "daemon", "flashdir"))
    harness.require_fuse()
    args.read_mib, args.write_mib = (64, 16) if args.quick else (160, 48)
    args.load_before = load_average()
    backing_top = tempfile.mkdtemp(prefix="flashdir-restart-", dir=os.environ.get("FLASHDIR_BENCH_DIR", "/dev/shm"))
    cache_top = tempfile.mkdtemp(prefix="flashdir-restart-", dir=os.environ.get("FLASHDIR_BENCH_CACHE_DIR", "/var/tmp"))
    usable, sizes = [], []
    try:
        rounds = [(mode, "lufuw", wait) for mode in filter(None, args.modes.split(",")) for wait in (0.0, 1.2)]
        if args.modes:
            # The baselines keep their own figures (doc/cache.md "Metadata").
            rounds += [("writethrough", meta, 1.2) for meta in ("write-update", "update-write-update")]
        for mode, meta, wait in rounds:
            r = usable_round(backing_top, cache_top, mode, meta, wait, args.read_mib * MiB, args.write_mib * MiB)
            print(json.dumps(r), flush=True)
            usable.append(r)
        for size in filter(None, args.sizes.split(",")):
            r = size_round(backing_top, cache_top, size, args.repeats, args.ram)
            print(json.dumps(r), flush=True)
            sizes.append(r)
    finally:
        shutil.rmtree(backing_top, ignore_errors=True)
        shutil.rmtree(cache_top, ignore_errors=True)
    write_report(usable, sizes, args)


if __name__ == "__main__":
    main()
