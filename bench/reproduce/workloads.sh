# The workloads bench/reproduce replays (sourced by run.sh and aps_before_after.sh, not run):
# name -> flashdir-sim input arguments. Synthetic workloads are sized like the traces' touched
# footprints; they name no seed, so the run's --seed generates them. Needs $traces set.
declare -A inputs=(
  [financial1]="$traces/financial1-head.ascii"
  [tpcc]="$traces/tpcc-small.trace"
  [wsrch]="$traces/wsrch-small.trace"
  [zipf-write]="--synthetic zipf:0.99,read=0.3,ws=64M,count=200000"
  [uniform-read]="--synthetic uniform,read=0.9,ws=64M,count=200000"
)
