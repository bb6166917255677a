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
   (one page cached 1.2 s before it, so that the restart is the one after a cut), and the slope.

Needs root, /dev/fuse and a built flashdir (build/daemon/flashdir, or $FLASHDIR). Backing files
live in $FLASHDIR_BENCH_DIR (/dev/shm), caches in $FLASHDIR_BENCH_CACHE_DIR (/var/tmp): the
largest cache's image takes its size on that disk. Writes bench/restart/results.md.

  bench/restart/run.py                          # sizes 256M,1G,4G,16G
  bench/restart/run.py --sizes 256M,1G --quick   # smaller files in part 1
  bench/restart/run.py --modes= --sizes 1G,4G     # part 2 only
"""
import argparse
import json
import os
import shutil
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


def cache_stats(mnt):
    with open(f"{mnt}/.flashdir/stats.json") as f:
        return json.load(f)["cache"]


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


def size_round(backing_top, cache_top, size_text):
    size = parse_size(size_text)
    backing, mnt, cache = f"{backing_top}/b-size", f"{cache_top}/m", f"{cache_top}/c-{size_text}"
    os.makedirs(backing, exist_ok=True)
    os.makedirs(mnt, exist_ok=True)
    with open(f"{backing}/fill", "wb") as f:
        f.truncate(size)  # sparse: reading it costs the backing nothing
    with open(f"{backing}/touch", "wb") as f:
        f.write(os.urandom(4096))
    options = "seq_cutoff_read=0,meta=lufuw"
    mount = harness.Mount(backing, mnt, cache, options, size=size_text)
    try:
        fill_s = read_all(f"{mnt}/fill")
        cached = cache_stats(mnt)["cached_pages"]
    finally:
        mount.stop()
    mount, clean_s = timed_mount(backing, mnt, cache, options, size_text)
    try:
        clean = cache_stats(mnt)
        read_all(f"{mnt}/touch")
        time.sleep(1.2)
        mount.kill9()
    except BaseException:
        mount.stop()
        raise
    mount, cut_s = timed_mount(backing, mnt, cache, options, size_text)
    try:
        cut = cache_stats(mnt)
    finally:
        mount.stop()
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(backing, ignore_errors=True)
    return {
        "size": size_text, "bytes": size, "cached": cached, "fill_s": fill_s,
        "clean_mount_s": clean_s, "clean_restart_s": clean["restart_seconds"], "clean_usable": clean["restart_usable_slots"],
        "cut_mount_s": cut_s, "cut_restart_s": cut["restart_seconds"], "cut_usable": cut["restart_usable_slots"],
        "cut_clean": cut["restart_clean_shutdown"],
    }


def slope(points, key):
    """Least-squares seconds per GiB of `key` over the sizes."""
    xs = [p["bytes"] / (1 << 30) for p in points]
    ys = [p[key] for p in points]
    if len(xs) < 2:
        return float("nan")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else float("nan")


def report(usable, sizes, args):
    lines = [f"# Hot restart (bench/restart/run.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})", "",
             f"Load average before: {args.load_before}; after: {os.getloadavg()[0]:.1f}.", "",
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
    lines += ["", "## Restart time against the cache's size (filled full)", "",
              "| size | cached pages | fill s | mount after clean unmount s (engine restart s) "
              "| mount after kill -9 s (engine restart s) | usable after the cut |",
              "|---|---|---|---|---|---|"]
    for r in sizes:
        lines.append(f"| {r['size']} | {r['cached']:,} | {r['fill_s']:.1f} | {r['clean_mount_s']:.2f} "
                     f"({r['clean_restart_s']:.3f}) | {r['cut_mount_s']:.2f} ({r['cut_restart_s']:.3f}) "
                     f"| {r['cut_usable']:,}{' (clean mark!)' if r['cut_clean'] else ''} |")
    lines += ["", f"Slope (least squares, seconds per GiB): mount after a clean unmount "
              f"{slope(sizes, 'clean_mount_s'):.3f} (engine {slope(sizes, 'clean_restart_s'):.3f}); after a kill -9 "
              f"{slope(sizes, 'cut_mount_s'):.3f} (engine {slope(sizes, 'cut_restart_s'):.3f}).", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="256M,1G,4G,16G")
    parser.add_argument("--modes", default="writethrough,writeback,writearound")
    parser.add_argument("--quick", action="store_true", help="64 MiB read, 16 MiB written in part 1")
    parser.add_argument("--out", default=os.path.join(HERE, "results.md"))
    args = parser.parse_args()
    os.environ.setdefault("FLASHDIR", os.path.join(TOP, "build", "daemon", "flashdir"))
    harness.require_fuse()
    args.read_mib, args.write_mib = (64, 16) if args.quick else (160, 48)
    args.load_before = f"{os.getloadavg()[0]:.1f}"
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
            r = size_round(backing_top, cache_top, size)
            print(json.dumps(r), flush=True)
            sizes.append(r)
    finally:
        shutil.rmtree(backing_top, ignore_errors=True)
        shutil.rmtree(cache_top, ignore_errors=True)
    text = report(usable, sizes, args)
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
