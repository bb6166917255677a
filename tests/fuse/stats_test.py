"""`flashdir stats` (doc/daemon.md "Statistics"): the summary in human units agrees with the JSON
after a known read workload, --all and --json give every counter, --reset zeroes the counters
(and only those) for every reader, --interval prints one line of rates per interval, and a path
that is not a mount or a bad interval is refused.

The mounts use strict consistency, so that a second read reaches the daemon instead of the
kernel's pages (a hit in the cache, not in the kernel).
"""
import json
import os
import re
import subprocess
import time

import harness

FILE_BYTES = 2 << 20  # under the default sequential cutoff: a read of it is admitted whole
PAGE = 4096


def flashdir(*args):
    return subprocess.run([harness.flashdir_binary(), *args], capture_output=True, text=True, check=False)


def stats(mnt):
    with open(f"{mnt}/.flashdir/stats.json") as f:
        return json.load(f)


def human(n):
    """A size as flashdir says it (format_size): 512 B, 1.5 KiB, 2 MiB."""
    units = ["B", "KiB", "MiB", "GiB"]
    unit = 0
    value = float(n)
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    if unit == 0:
        return f"{n} B"
    return f"{value:.0f} {units[unit]}" if value == int(value) else f"{value:.1f} {units[unit]}"


def make_file(backing):
    data = os.urandom(FILE_BYTES)
    with open(f"{backing}/data", "wb") as f:
        f.write(data)
    return data


def summary_agrees_with_json(check, top):
    data = make_file(f"{top}/b")
    with harness.Mount(f"{top}/b", f"{top}/m", f"{top}/c-summary", "consistency=strict"):
        for _ in range(2):  # the first read misses and fills, the second hits
            check.check(harness.read_all(f"{top}/m/data") == data, "the file reads back")
        result = flashdir("stats", f"{top}/m")
        figures = stats(f"{top}/m")
        out = result.stdout
        print(out)
        check.check(result.returncode == 0, f"stats exits 0: {result.stderr}")
        cache = figures["cache"]
        check.check(cache["read_hit_pages"] >= FILE_BYTES // PAGE and cache["hit_ratio"] >= 0.45,
                    f"the second read hit every page: {cache['read_hit_pages']} hits, ratio {cache['hit_ratio']}")
        shown = re.search(r"^  hit ratio\s+(\d+\.\d)% ", out, re.M)
        check.check(shown is not None and float(shown.group(1)) == round(100 * cache["hit_ratio"], 1),
                    f"the summary's hit ratio is the JSON's {cache['hit_ratio']:.4f}: {shown and shown.group(0)}")
        check.check(12 <= len(out.splitlines()) <= 25, f"the summary is short: {len(out.splitlines())} lines")
        hit_bytes = human(cache["read_hit_pages"] * PAGE)
        check.check(re.search(rf"^  from the cache\s+{re.escape(hit_bytes)}$", out, re.M) is not None,
                    f"the bytes from the cache are the hit pages': {hit_bytes}")
        check.check(re.search(r"^Read\s+4 MiB in \d+ requests$", out, re.M) is not None, "4 MiB were read in all")
        check.check(re.search(r"^Sequential cutoff\s+reads 16 MiB, writes 16 MiB", out, re.M) is not None,
                    "the active sequential cutoffs are shown")
        check.check(re.search(r"^Cache fill\s+2(\.\d)? MiB of \d+(\.\d)? MiB \(\d+\.\d%\)$", out, re.M) is not None,
                    "the fill is in MiB and %")
        for label in ("  dirty", "Bypassed the cache", "Write amplification", "Device FTL", "Restart", "Consistency", "Cache state"):
            check.check(re.search(rf"^{label}\s+\S", out, re.M) is not None, f"the summary has a line '{label}'")
        check.check("counters since the mount" in out, "the summary says the counters run since the mount")
        check.check(not re.search(r"_pages|_ns\b", out), "the summary shows no raw counter names")

        every = flashdir("stats", f"{top}/m", "--all")
        check.check(every.returncode == 0 and all(name in every.stdout for name in
                                                  ("read_hit_pages", "chip_page_programs", "chip_busy_ns", "lookup")),
                    "--all prints the raw counters")
        as_json = flashdir("stats", f"{top}/m", "--json")
        parsed = json.loads(as_json.stdout) if as_json.returncode == 0 else {}
        check.check({"mount", "data", "cache", "ftl"} <= parsed.keys()
                    and parsed["data"]["read_requests"] > 0 and parsed["data"]["pass_through_read_bytes"] == 0,
                    f"--json prints the JSON: {sorted(parsed)}")


def reset_zeroes_counters(check, top):
    data = make_file(f"{top}/b")
    with harness.Mount(f"{top}/b", f"{top}/m", f"{top}/c-reset", "consistency=strict,allow_other"):
        mnt = f"{top}/m"
        harness.read_all(f"{mnt}/data")
        harness.read_all(f"{mnt}/data")
        with open(f"{mnt}/written", "wb") as f:
            f.write(b"w" * 8192)
        before = stats(mnt)
        got = harness.as_user(lambda: os.close(os.open(f"{mnt}/.flashdir/reset", os.O_WRONLY)))
        check.check(got == "errno EACCES", f"another user cannot reset the counters: {got}")
        result = flashdir("stats", mnt, "--reset")
        check.check(result.returncode == 0 and "zeroed" in result.stdout, f"--reset: {result.stdout}{result.stderr}")
        after = stats(mnt)
        for section, row in (("data", "read_bytes"), ("data", "written_bytes"), ("data", "read_requests"),
                             ("cache", "read_hit_pages"), ("cache", "read_miss_pages"), ("cache", "admitted_pages"),
                             ("requests", "read"), ("ftl", "chip_page_reads")):
            check.check(before[section][row] > 0 and after[section][row] == 0,
                        f"{section}.{row} is zeroed: {before[section][row]} -> {after[section][row]}")
        check.check(after["cache"]["hit_ratio"] == 0, f"the hit ratio starts again: {after['cache']['hit_ratio']}")
        for section, row in (("cache", "cached_pages"), ("cache", "capacity_pages"), ("cache", "restart_usable_slots"),
                             ("ftl", "ram_budget_bytes"), ("ftl", "logical_pages")):
            check.check(after[section][row] == before[section][row],
                        f"the gauge {section}.{row} is not reset: {before[section][row]} -> {after[section][row]}")
        check.check(after["mount"]["counters_reset_at"] != "" and after["mount"]["counters_seconds"] < 30,
                    f"the stats say when the counters were reset: {after['mount']}")
        check.check(harness.read_all(f"{mnt}/data") == data, "a read after the reset")
        again = stats(mnt)
        check.check(again["cache"]["read_hit_pages"] == FILE_BYTES // PAGE and again["cache"]["hit_ratio"] == 1.0,
                    f"the counters count from zero: {again['cache']['read_hit_pages']} hits, "
                    f"ratio {again['cache']['hit_ratio']}")
        check.check("counters since the reset at" in flashdir("stats", mnt).stdout, "the summary says since the reset")
        shell = subprocess.run(["sh", "-c", f": > {mnt}/.flashdir/reset"], capture_output=True, text=True, check=False)
        check.check(shell.returncode == 0 and stats(mnt)["cache"]["read_hit_pages"] == 0,
                    f"': > .flashdir/reset' resets too: {shell.stderr}")


def interval_rates(check, top):
    data = make_file(f"{top}/b")
    with harness.Mount(f"{top}/b", f"{top}/m", f"{top}/c-interval", "consistency=strict"):
        mnt = f"{top}/m"
        harness.read_all(f"{mnt}/data")  # cached: the reads below hit
        started = time.monotonic()
        rates = subprocess.Popen([harness.flashdir_binary(), "stats", mnt, "--interval", "1", "--count", "2"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            reads = 0
            time.sleep(0.3)  # after the command's first snapshot
            while time.monotonic() - started < 1.6:  # and before its last
                check.check(harness.read_all(f"{mnt}/data") == data, "reads during the interval")
                reads += 1
                time.sleep(0.1)
            out, err = rates.communicate(timeout=20)
        finally:
            rates.kill()
            rates.wait()
        print(out)
        lines = out.splitlines()
        check.check(rates.returncode == 0 and len(lines) == 3 and lines[0].split()[:2] == ["time", "reads/s"],
                    f"--interval 1 --count 2 prints a header and two lines: {out!r} {err}")
        # time, reads/s, read MiB/s, hit %, cache MiB/s, backing MiB/s, writes/s, write MiB/s, dirty ("0 B"), fill
        values = [fields[:8] + [" ".join(fields[8:-1]), fields[-1]] for fields in (line.split() for line in lines[1:])]
        read_mib = sum(float(v[2]) for v in values if len(v) == 10)
        check.check(all(len(v) == 10 and re.fullmatch(r"\d\d:\d\d:\d\d", v[0]) for v in values),
                    f"each line has its time and nine figures: {values}")
        read = reads * FILE_BYTES / (1 << 20)
        check.check(abs(read_mib - read) <= 0.1 * read + 0.2,
                    f"the lines' read MiB/s add up to what was read ({reads} x 2 MiB): {read_mib}")
        check.check(any(v[3] == "100.0%" for v in values if len(v) == 10), f"the reads hit: {values}")


def refusals(check, top):
    result = flashdir("stats", f"{top}/b")
    check.check(result.returncode == 1 and "not a flashdir mount" in result.stderr,
                f"a directory that is not a mount: {result.returncode} {result.stderr.strip()}")
    result = flashdir("stats", f"{top}/b", "--reset")
    check.check(result.returncode == 1 and "not a flashdir mount" in result.stderr,
                f"--reset of a directory that is not a mount: {result.returncode} {result.stderr.strip()}")
    for args in (["--interval", "0"], ["--interval", "-1"], ["--count", "2"], ["--all", "--json"],
                 ["--interval", "1", "--reset"]):
        result = flashdir("stats", f"{top}/m", *args)
        check.check(result.returncode == 2 and result.stderr.startswith("flashdir: "),
                    f"stats {' '.join(args)} is refused: {result.returncode} {result.stderr.strip()}")


def main():
    return harness.run_parts("stats", [summary_agrees_with_json, reset_zeroes_counters, interval_rates, refusals])


if __name__ == "__main__":
    raise SystemExit(main())
