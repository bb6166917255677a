#!/usr/bin/env bash
# APS's split along the replay and its service time, for two flashdir-sim binaries: the
# controller before issue 21 (the paper's tune unit x benefit ratio; build commit 2ad7b7b) at
# tune units 0 (one entry), 64K and 512K, and the current one, with tree and the static splits
# beside, at the smallest and largest RAM size of bench/reproduce/run.sh, seed 1. Writes
# results/aps-before-after/*.json, .dat and aps-before-after.png; doc/ram.md "The step"
# discusses a run.
#
#   bench/reproduce/aps_before_after.sh OLD_SIM NEW_SIM
#
# A workload whose two JSON files are there already is not simulated again (remove the
# directory to rerun everything); the tables and the plot are always made afresh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
old="$1"
new="$2"
traces="$here/../traces"
out="$here/results/aps-before-after"
mkdir -p "$out"
source "$here/workloads.sh"  # inputs: name -> flashdir-sim input arguments
# 1/32 and 1/4 of the touched footprint, as in run.sh.
declare -A rams=(
  [financial1]=896K,7168K [tpcc]=2528K,20224K [wsrch]=11616K,92928K [zipf-write]=1824K,14592K
  [uniform-read]=2048K,16384K
)
for name in "${!inputs[@]}"; do
  # shellcheck disable=SC2086
  [ -s "$out/$name-old.json" ] || "$old" ${inputs[$name]} --json --gc greedy --compare "ram=${rams[$name]}" \
    --compare ram-policy=aps --compare aps-tune-unit=0,64K,512K >"$out/$name-old.json" &
  # shellcheck disable=SC2086
  [ -s "$out/$name-new.json" ] || "$new" ${inputs[$name]} --json --gc greedy --compare "ram=${rams[$name]}" \
    --compare ram-policy=aps,tree,static:10,static:30,static:50,static:70,static:90 >"$out/$name-new.json" &
  wait
done
python3 - "$out" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
names = ["financial1", "tpcc", "wsrch", "zipf-write", "uniform-read"]
rows = ["| workload | RAM | old aps, tune 0 / 64K / 512K | new aps | tree | best static | split at the end, old 0 / 64K / 512K → new | split range over the 2nd half, old 0 / 64K / 512K → new |",
        "|---|---|---|---|---|---|---|---|"]
def service(c): return c["mean_service_us"] * c["requests"] / 1e6
def series(c): return [v for _, v in c["mapping_partition_series"]]
for name in names:
    old = {(c["settings"]["ram"], c["settings"]["aps-tune-unit"]): c for c in json.load(open(out / f"{name}-old.json"))["configurations"] if "stats" in c}
    new = {(c["settings"]["ram"], c["settings"]["ram-policy"]): c for c in json.load(open(out / f"{name}-new.json"))["configurations"] if "stats" in c}
    for ram in sorted({k[0] for k in new}, key=lambda s: int(s.rstrip("K"))):
        base = service(new[(ram, "static:50")])
        olds = [old[(ram, t)] for t in ("0", "64K", "512K")]
        best = min((p for (r, p) in new if r == ram and p.startswith("static")), key=lambda p: service(new[(ram, p)]))
        def half_range(c):
            v = series(c)[len(series(c)) // 2:]
            return f"{(max(v) - min(v)) * 100:.0f}"
        rows.append(f"| {name} | {ram} | " + " / ".join(f"{service(c) / base:.3f}" for c in olds)
                    + f" | **{service(new[(ram, 'aps')]) / base:.3f}** | {service(new[(ram, 'tree')]) / base:.3f} "
                    + f"| {service(new[(ram, best)]) / base:.3f} ({best}) | "
                    + " / ".join(f"{series(c)[-1] * 100:.0f}%" for c in olds) + f" → {series(new[(ram, 'aps')])[-1] * 100:.0f}% | "
                    + " / ".join(half_range(c) for c in olds) + f" → {half_range(new[(ram, 'aps')])} points |")
        label = "small" if ram == min((k[0] for k in new), key=lambda s: int(s.rstrip("K"))) else "large"
        with open(out / f"{name}-{label}.dat", "w") as f:
            f.write(f"# {name} {ram}: request, mapping share: old tune 0, old 64K, old 512K, new\n")
            cols = [series(c) for c in olds] + [series(new[(ram, "aps")])]
            for i, (request, _) in enumerate(new[(ram, "aps")]["mapping_partition_series"]):
                f.write(f"{request} " + " ".join(f"{c[i] if i < len(c) else c[-1]:.4f}" for c in cols) + "\n")
(out / "table.md").write_text("Service time normalised to static:50 at the same RAM (seed 1, greedy GC)\n\n" + "\n".join(rows) + "\n")
print("\n".join(rows))
PY
gnuplot -e "results='$out'" "$here/aps_before_after.gp"
echo "results in $out"
