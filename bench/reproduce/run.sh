#!/usr/bin/env bash
# Reproduces the papers' comparisons with flashdir-sim on the shared traces and two synthetic
# workloads, each point under three seeds, then renders the tables and plots. Results land in
# bench/reproduce/results/ (JSON per workload, comparison and seed; summary.md; .dat files and
# PNGs); bench/reproduce/README.md discusses a run of it.
#
#   bench/reproduce/run.sh [--quick] [--seeds 1,2,3] [--jobs N] [--resume]
#
# A seed is the run's --seed: it seeds the aging writes (for the traces, the only random part)
# and the synthetic workloads' generator. --quick runs one RAM size per workload (a smoke
# test); --jobs runs that many simulations side by side (default: the number of cores);
# --resume keeps the results of an interrupted run and runs only the points without a complete
# JSON document (the tables and plots are made afresh from all of them).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../scripts/setup.sh"
quick=0
seeds="1,2,3"
jobs=$(nproc)
resume=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --seeds) seeds="$2"; shift ;;
    --jobs) jobs="$2"; shift ;;
    --resume) resume=1 ;;
    *) echo "usage: $0 [--quick] [--seeds 1,2,3] [--jobs N] [--resume]" >&2; exit 2 ;;
  esac
  shift
done
ensure_packages
configure_release
ninja -C "$FLASHDIR_ROOT/build" sim/flashdir-sim >/dev/null
sim="$FLASHDIR_ROOT/build/sim/flashdir-sim"
traces="$FLASHDIR_ROOT/bench/traces"
out="$here/results"
mkdir -p "$out"
[ $resume -eq 1 ] || rm -f "$out"/*.json
rm -f "$out"/*.dat "$out"/*.png "$out"/*.log

source "$here/workloads.sh"  # inputs: name -> flashdir-sim input arguments
names=(financial1 tpcc wsrch zipf-write uniform-read)

# Touched footprint in MiB (from a summary-only run, seed 1), for scaling the RAM sizes.
touched_mib() {
  # shellcheck disable=SC2086
  "$sim" ${inputs[$1]} --json --no-prefill --age 0 --ram-policy static:100 --ram 64K 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); f=d["footprints"][0]; print(max(1, f["touched_pages"]*f["page_size_bytes"]//(1<<20)))'
}

# run OUTPUT ARGS...: one simulation in the background, at most $jobs at a time; its stderr
# goes to OUTPUT's .log. A failure is remembered and fails the run at the end.
failed=0
running=0
run() {
  local output="$1"
  shift
  if [ $resume -eq 1 ] && python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$output" 2>/dev/null; then
    return 0
  fi
  while [ "$running" -ge "$jobs" ]; do
    wait -n || failed=1
    running=$((running - 1))
  done
  "$sim" "$@" >"$output" 2>"${output%.json}.log" &
  running=$((running + 1))
}

start=$(date +%s)
IFS=, read -r -a seed_list <<<"$seeds"
for name in "${names[@]}"; do
  mib=$(touched_mib "$name")
  # RAM from 1/32 to 1/4 of the touched footprint, in the spirit of 8-64 MiB for the papers'
  # working sets (at least 256 KiB).
  sizes=()
  for div in 32 16 8 4; do
    kib=$(( mib * 1024 / div ))
    [ $kib -lt 256 ] && kib=256
    sizes+=("${kib}K")
  done
  [ $quick -eq 1 ] && sizes=("${sizes[2]}")
  ram_list=$(IFS=,; echo "${sizes[*]}")
  echo "== $name: touched ${mib} MiB, RAM sizes $ram_list, seeds $seeds"

  for seed in "${seed_list[@]}"; do
    # shellcheck disable=SC2206
    input=(${inputs[$name]} --json --seed "$seed")
    # 1. RAM policies (TreeFTL Figures 4-5, APS): tree, aps, static:50 (JTL-like) and a sweep of
    #    static splits to find the best one, at each RAM size. Greedy GC, as in FlashSim, the
    #    simulator of the TreeFTL, APS and DFTL papers: Dual Greedy's adaptation to the traffic
    #    would blur the RAM policies' differences (README.md).
    policies=ram-policy=tree,stack,aps,static:10,static:30,static:50,static:70,static:90
    run "$out/$name-ram-s$seed.json" "${input[@]}" --gc greedy --compare "ram=$ram_list" --compare $policies
    run "$out/$name-ram-dg-s$seed.json" "${input[@]}" --compare "ram=$ram_list" --compare $policies
    run "$out/$name-stack-mapping-s$seed.json" "${input[@]}" --ram-policy stack --compare "ram=$ram_list" \
      --compare mapping=cftl,dftl

    # 2. Mapping schemes with a small mapping cache and no write buffer (static:100), the CFTL
    #    paper's setting (4096 entries there), at two sizes, under greedy and Dual Greedy GC.
    run "$out/$name-mapping-s$seed.json" "${input[@]}" --ram-policy static:100 \
      --compare gc=greedy,dual-greedy --compare ram=32K,256K --compare mapping=cftl,dftl,page

    # 3. GC policies on the ideal page map (no translation traffic to blur them), two spare
    #    shares, one pass over the trace and three (Dual Greedy's hot threshold needs history).
    run "$out/$name-gc-s$seed.json" "${input[@]}" --mapping page --ram-policy static:100 --ram 64K \
      --compare gc=dual-greedy,greedy,cost-benefit --compare op=7,25 --compare repeat=1,3

    # 4. CFTL's copying conversions (doc/ftl.md): never, during GC where cheap (default), eager.
    run "$out/$name-consolidation-s$seed.json" "${input[@]}" --ram-policy static:100 --ram 32K \
      --compare consolidation=off,gc,eager
  done
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
if [ "$failed" -ne 0 ]; then
  echo "run.sh: a simulation failed; see the .log files in $out" >&2
  exit 1
fi
find "$out" -name '*.log' -empty -delete

python3 "$here/tabulate.py" "$out"
gnuplot -e "results='$out'" "$here/plots.gp"
echo "results in $out ($(( ($(date +%s) - start) / 60 )) min of simulation with $jobs jobs, seeds $seeds)"
