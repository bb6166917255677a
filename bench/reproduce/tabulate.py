#!/usr/bin/env python3
"""Turns the JSON of bench/reproduce/run.sh into results/summary.md and gnuplot .dat files.

Service time is the sum of per-request service times of the measured replay (chip time plus RAM
time), as the TreeFTL paper's Figures 4-5 measure it; RAM policies are normalised to static:50
(the JTL-like split) at the same RAM size.
"""
import json
import sys
from pathlib import Path

WORKLOADS = ["financial1", "tpcc", "wsrch", "zipf-write", "uniform-read"]
STATIC = ["static:10", "static:30", "static:50", "static:70", "static:90"]


def load(path):
    with open(path) as f:
        return json.load(f)


def configs(report):
    """(settings dict, configuration) for every configuration that ran."""
    for c in report["configurations"]:
        if "stats" in c:
            yield c["settings"], c


def service_s(c):
    return c["mean_service_us"] * c["requests"] / 1e6


def ram_policies(out, name, lines, dat_rows):
    report = load(out / f"{name}-ram.json")
    by = {}
    for settings, c in configs(report):
        by[(settings["ram"], settings["ram-policy"])] = c
    sizes = sorted({k[0] for k in by}, key=lambda s: int(s.rstrip("K")))
    lines.append(f"\n#### {name}: RAM policies, greedy GC (service time in s, normalised to static:50)\n")
    lines.append("| RAM | tree | aps | static:50 | best static | tree/static:50 | aps/static:50 | best/static:50 | mapping share tree / aps | buffer write hits tree / aps |")
    lines.append("|---|---:|---:|---:|---|---:|---:|---:|---|---|")
    for i, size in enumerate(sizes):
        base = service_s(by[(size, "static:50")])
        best = min(STATIC, key=lambda p: service_s(by[(size, p)]))
        tree, aps = by[(size, "tree")], by[(size, "aps")]
        lines.append(
            f"| {size} | {service_s(tree):.2f} | {service_s(aps):.2f} | {base:.2f} | {best} ({service_s(by[(size, best)]):.2f}) "
            f"| {service_s(tree) / base:.3f} | {service_s(aps) / base:.3f} | {service_s(by[(size, best)]) / base:.3f} "
            f"| {tree['mean_mapping_share'] * 100:.1f}% / {aps['mean_mapping_share'] * 100:.1f}% "
            f"| {tree['buffer_write_hit_ratio'] * 100:.1f}% / {aps['buffer_write_hit_ratio'] * 100:.1f}% |")
        dat_rows.setdefault(i, []).append(
            (name, service_s(tree) / base, service_s(aps) / base, service_s(by[(size, best)]) / base))
    # APS's mapping partition over time at the smallest RAM size, where both sides are full.
    aps = by[(sizes[0], "aps")]
    with open(out / f"aps-share-{name}.dat", "w") as f:
        for request, share in aps["mapping_partition_series"]:
            f.write(f"{request} {share}\n")
    return sizes


def simple_table(out, name, suffix, key, title, columns, lines):
    report = load(out / f"{name}-{suffix}.json")
    rows = list(configs(report))
    lines.append(f"\n#### {name}: {title}\n")
    lines.append("| " + " | ".join(["configuration"] + [c[0] for c in columns]) + " |")
    lines.append("|---" * (len(columns) + 1) + "|")
    for settings, c in rows:
        label = " ".join(f"{k}={v}" for k, v in settings.items())
        lines.append("| " + " | ".join([label] + [c_fn(c) for _, c_fn in columns]) + " |")


def main():
    out = Path(sys.argv[1])
    lines = ["# Results of bench/reproduce/run.sh\n"]
    dat_rows = {}
    sizes_by_workload = {}
    for name in WORKLOADS:
        if not (out / f"{name}-ram.json").exists():
            continue
        sizes_by_workload[name] = ram_policies(out, name, lines, dat_rows)
        simple_table(out, name, "mapping", "mapping", "mapping schemes (mapping cache only: RAM static:100), by GC policy", [
            ("mean service us", lambda c: f"{c['mean_service_us']:.1f}"),
            ("chip reads", lambda c: str(c["stats"]["chip_page_reads"])),
            ("translation reads", lambda c: str(c["stats"]["translation_page_reads"])),
            ("translation writes", lambda c: str(c["stats"]["translation_page_writes"])),
            ("mapping hit", lambda c: f"{(c['mapping_hit_ratio'] or 0) * 100:.1f}%"),
            ("CBMT hit", lambda c: f"{(c['cbmt_hit_ratio'] or 0) * 100:.1f}%"),
            ("to block", lambda c: str(c["stats"]["conversions_to_block"])),
            ("erases", lambda c: str(c["stats"]["chip_block_erases"])),
            ("WAF", lambda c: f"{c['write_amplification'] or 0:.3f}"),
        ], lines)
        simple_table(out, name, "consolidation", "consolidation", "CFTL conversions (RAM static:100, 32K)", [
            ("mean service us", lambda c: f"{c['mean_service_us']:.1f}"),
            ("erases", lambda c: str(c["stats"]["chip_block_erases"])),
            ("translation reads", lambda c: str(c["stats"]["translation_page_reads"])),
            ("CBMT hit", lambda c: f"{(c['cbmt_hit_ratio'] or 0) * 100:.1f}%"),
            ("to block / to page", lambda c: f"{c['stats']['conversions_to_block']} / {c['stats']['conversions_to_page']}"),
            ("consolidation copies", lambda c: str(c["stats"]["consolidation_copies"])),
        ], lines)
        simple_table(out, name, "gc", "gc", "GC policies (page map, RAM static:100)", [
            ("erases", lambda c: str(c["stats"]["chip_block_erases"])),
            ("GC copies", lambda c: str(c["stats"]["gc_data_copies"])),
            ("WAF", lambda c: f"{c['write_amplification'] or 0:.3f}"),
            ("hot writes", lambda c: f"{c['stats']['hot_write_pages'] / max(1, c['stats']['write_pages']) * 100:.0f}%"),
            ("mean service us", lambda c: f"{c['mean_service_us']:.1f}"),
            ("sim req/s", lambda c: f"{c['speed']['replay_requests_per_second'] / 1e3:.0f}K"),
        ], lines)
    for i, rows in dat_rows.items():
        with open(out / f"service-{i}.dat", "w") as f:
            f.write("# workload tree aps best-static (service time / static:50)\n")
            for name, tree, aps, best in rows:
                f.write(f"{name} {tree:.4f} {aps:.4f} {best:.4f}\n")
    (out / "summary.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
