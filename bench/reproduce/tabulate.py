#!/usr/bin/env python3
"""Turns the JSON of bench/reproduce/run.sh into results/summary.md and gnuplot .dat files.

Every point ran under several seeds (NAME-COMPARISON-sSEED.json). Tables show the median over
the seeds and, in brackets, the smallest and largest value; plots show the median with the
range as an error bar. A ratio (a policy's service time over static:50's) is taken seed by seed,
on the same device and requests, and then summarised.

Service time is the sum of per-request service times of the measured replay (chip time plus RAM
time), as the TreeFTL paper's Figures 4-5 measure it; RAM policies are normalised to static:50
(the JTL-like split) at the same RAM size.
"""
import json
import re
import statistics
import sys
from pathlib import Path

WORKLOADS = ["financial1", "tpcc", "wsrch", "zipf-write", "uniform-read"]
STATIC = ["static:10", "static:30", "static:50", "static:70", "static:90"]


def load(path):
    with open(path) as f:
        return json.load(f)


def seed_files(out, name, suffix):
    """{seed: report} for NAME-SUFFIX-sSEED.json."""
    found = {}
    for path in out.glob(f"{name}-{suffix}-s*.json"):
        m = re.fullmatch(rf"{re.escape(name)}-{re.escape(suffix)}-s(\d+)\.json", path.name)
        if m:
            found[int(m.group(1))] = load(path)
    return dict(sorted(found.items()))


def configs(report):
    """(settings dict, configuration) for every configuration that ran."""
    for c in report["configurations"]:
        if "stats" in c:
            yield c["settings"], c


def service_s(c):
    return c["mean_service_us"] * c["requests"] / 1e6


class Spread:
    """Values of one quantity over the seeds."""

    def __init__(self, values):
        self.values = [v for v in values if v is not None]

    @property
    def median(self):
        return statistics.median(self.values) if self.values else 0.0

    @property
    def low(self):
        return min(self.values) if self.values else 0.0

    @property
    def high(self):
        return max(self.values) if self.values else 0.0

    def text(self, fmt="{:.3f}", scale=1.0, suffix=""):
        if not self.values:
            return "-"
        m, lo, hi = (fmt.format(v * scale) for v in (self.median, self.low, self.high))
        if len(self.values) == 1 or lo == hi:
            return m + suffix
        return f"{m}{suffix} ({lo}–{hi})"


ADAPTIVE = ["tree", "stack", "aps"]


def ram_policies(out, name, suffix, gc, lines, dat_rows):
    """The RAM policies against static:50 at each RAM size, under `gc` (NAME-SUFFIX-sSEED.json)."""
    reports = seed_files(out, name, suffix)
    if not reports:
        return
    by = {}  # (seed, ram, policy) -> configuration
    for seed, report in reports.items():
        for settings, c in configs(report):
            by[(seed, settings["ram"], settings["ram-policy"])] = c
    seeds = list(reports)
    sizes = sorted({k[1] for k in by}, key=lambda s: int(s.rstrip("K")))
    lines.append(f"\n#### {name}: RAM policies, {gc} GC, seeds {', '.join(map(str, seeds))} "
                 "(median (min–max) over the seeds)\n")
    lines.append("| RAM | static:50 s | tree/static:50 | stack/static:50 | aps/static:50 | best static / static:50 | "
                 "mapping share tree / stack / aps (mean used) | aps split at the end | "
                 "buffer write hits tree / stack / aps |")
    lines.append("|---|---:|---:|---:|---:|---|---|---|---|")
    for i, size in enumerate(sizes):
        def get(seed, policy):
            return by[(seed, size, policy)]

        base = {s: service_s(get(s, "static:50")) for s in seeds}
        norm = {p: Spread([service_s(get(s, p)) / base[s] for s in seeds]) for p in ADAPTIVE + STATIC}
        # The best static split: the one with the lowest median ratio.
        best = min(STATIC, key=lambda p: norm[p].median)
        share = {p: Spread([get(s, p)["mean_mapping_share"] for s in seeds]) for p in ADAPTIVE}
        hits = {p: Spread([get(s, p)["buffer_write_hit_ratio"] for s in seeds]) for p in ADAPTIVE}
        end = Spread([(get(s, "aps")["mapping_partition_series"] or [[0, None]])[-1][1] for s in seeds])
        lines.append(
            f"| {size} | {Spread(base.values()).text('{:.2f}')} | "
            + " | ".join(norm[p].text() for p in ADAPTIVE)
            + f" | {best}: {norm[best].text()} | "
            + " / ".join(share[p].text('{:.1f}', 100, '%') for p in ADAPTIVE)
            + f" | {end.text('{:.0f}', 100, '%')} | "
            + " / ".join(hits[p].text('{:.1f}', 100, '%') for p in ADAPTIVE) + " |")
        dat_rows.setdefault((suffix, i), []).append((name, *(norm[p] for p in ADAPTIVE), norm[best]))
    if suffix != "ram":
        return
    # APS's mapping partition over time, per seed, at the smallest and the largest RAM size.
    for label, size in (("small", sizes[0]), ("large", sizes[-1])):
        for seed in seeds:
            with open(out / f"aps-share-{label}-{name}-s{seed}.dat", "w") as f:
                f.write(f"# {name}, RAM {size}, seed {seed}: requests replayed, APS mapping share\n")
                for request, share in get_series(by, seed, size):
                    f.write(f"{request} {share}\n")


def get_series(by, seed, size):
    return by[(seed, size, "aps")]["mapping_partition_series"]


def simple_table(out, name, suffix, title, columns, lines):
    """One row per configuration; each column a number per seed, shown as median (min–max)."""
    reports = seed_files(out, name, suffix)
    if not reports:
        return
    rows = {}  # label -> [configuration per seed]
    for report in reports.values():
        for settings, c in configs(report):
            label = " ".join(f"{k}={v}" for k, v in settings.items())
            rows.setdefault(label, []).append(c)
    lines.append(f"\n#### {name}: {title}, seeds {', '.join(map(str, reports))} (median (min–max))\n")
    lines.append("| " + " | ".join(["configuration"] + [c[0] for c in columns]) + " |")
    lines.append("|---" * (len(columns) + 1) + "|")
    for label, cs in rows.items():
        cells = [Spread([fn(c) for c in cs]).text(fmt, scale, suffix) for _, fn, fmt, scale, suffix in columns]
        lines.append("| " + " | ".join([label] + cells) + " |")


def col(title, fn, fmt="{:.0f}", scale=1.0, suffix=""):
    return (title, fn, fmt, scale, suffix)


def stat(key):
    return lambda c: c["stats"][key]


def main():
    out = Path(sys.argv[1])
    lines = ["# Results of bench/reproduce/run.sh\n",
             "Every figure is the median over the seeds, with the smallest and largest value in brackets "
             "where they differ.\n"]
    dat_rows = {}
    for name in WORKLOADS:
        ram_policies(out, name, "ram", "greedy", lines, dat_rows)
        ram_policies(out, name, "ram-dg", "Dual Greedy (the default)", lines, dat_rows)
        simple_table(out, name, "stack-mapping", "mapping schemes under stack (Dual Greedy), by RAM", [
            col("mean service us", lambda c: c["mean_service_us"], "{:.1f}"),
            col("chip programs", stat("chip_page_programs")),
            col("translation reads host", lambda c: c["translation_page_reads_host"]),
            col("translation reads GC", lambda c: c["translation_page_reads_gc"]),
            col("mapping hit", lambda c: c["mapping_hit_ratio"] or 0, "{:.1f}", 100, "%"),
            col("peak mapping KiB", stat("ram_peak_mapping_bytes"), "{:.0f}", 1 / 1024),
            col("CBMT hit", lambda c: c["cbmt_hit_ratio"] or 0, "{:.1f}", 100, "%"),
            col("to block", stat("conversions_to_block")),
        ], lines)
        simple_table(out, name, "mapping", "mapping schemes (mapping cache only: RAM static:100), by GC policy", [
            col("mean service us", lambda c: c["mean_service_us"], "{:.1f}"),
            col("chip reads", stat("chip_page_reads")),
            col("translation reads", stat("translation_page_reads")),
            col("translation writes", stat("translation_page_writes")),
            col("mapping hit", lambda c: c["mapping_hit_ratio"] or 0, "{:.1f}", 100, "%"),
            col("CBMT hit", lambda c: c["cbmt_hit_ratio"] or 0, "{:.1f}", 100, "%"),
            col("to block", stat("conversions_to_block")),
            col("erases", stat("chip_block_erases")),
            col("WAF", lambda c: c["write_amplification"] or 0, "{:.3f}"),
        ], lines)
        simple_table(out, name, "consolidation", "CFTL conversions (RAM static:100, 32K)", [
            col("mean service us", lambda c: c["mean_service_us"], "{:.1f}"),
            col("erases", stat("chip_block_erases")),
            col("translation reads", stat("translation_page_reads")),
            col("CBMT hit", lambda c: c["cbmt_hit_ratio"] or 0, "{:.1f}", 100, "%"),
            col("to block", stat("conversions_to_block")),
            col("to page", stat("conversions_to_page")),
            col("consolidation copies", stat("consolidation_copies")),
        ], lines)
        simple_table(out, name, "gc", "GC policies (page map, RAM static:100)", [
            col("erases", stat("chip_block_erases")),
            col("GC copies", stat("gc_data_copies")),
            col("WAF", lambda c: c["write_amplification"] or 0, "{:.3f}"),
            col("hot writes", lambda c: c["stats"]["hot_write_pages"] / max(1, c["stats"]["write_pages"]), "{:.0f}", 100, "%"),
            col("mean service us", lambda c: c["mean_service_us"], "{:.1f}"),
            col("sim req/s", lambda c: c["speed"]["replay_requests_per_second"], "{:.0f}", 1e-3, "K"),
        ], lines)
    for (suffix, i), rows in dat_rows.items():
        prefix = "service" if suffix == "ram" else "service-dg"
        with open(out / f"{prefix}-{i}.dat", "w") as f:
            f.write("# workload, then median min max of tree, stack, aps, best static (service time / static:50)\n")
            for name, *spreads in rows:
                f.write(name + "".join(f" {s.median:.4f} {s.low:.4f} {s.high:.4f}" for s in spreads) + "\n")
    (out / "summary.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
