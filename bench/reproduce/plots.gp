# Plots of bench/reproduce/run.sh (gnuplot -e "results='DIR'" plots.gp).
# service-N.png: service time of tree, stack, APS and the best static split, normalised to
#   static:50 (JTL-like), per workload, at the N-th RAM size (1/32 .. 1/4 of the touched
#   footprint), greedy GC, in the manner of the TreeFTL paper's Figures 4-5: the median over the
#   seeds, the error bar from the smallest to the largest. service-dg-N.png: the same under
#   Dual Greedy, the default GC.
# aps-share-small.png, aps-share-large.png: APS's mapping partition (share of the RAM) along
#   each replay at the smallest and the largest RAM size, one line per seed.
set terminal pngcairo size 900,480 font "DejaVu Sans,10"
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set bars front
set yrange [0:*]
set grid ytics
set ylabel "service time / static:50"
set key top left
labels = "1/32 1/16 1/8 1/4"
do for [gc in "greedy dual-greedy"] {
  prefix = gc eq "greedy" ? "service" : "service-dg"
  do for [i=0:3] {
    file = sprintf("%s/%s-%d.dat", results, prefix, i)
    if (system("test -f ".file." && echo yes") eq "yes") {
      set output sprintf("%s/%s-%d.png", results, prefix, i)
      set title sprintf("Service time / static:50 (%s GC), RAM = %s of the touched footprint; median and range over the seeds", gc, word(labels, i + 1))
      plot file using 2:3:4:xtic(1) title "tree", "" using 5:6:7 title "stack", "" using 8:9:10 title "aps", \
           "" using 11:12:13 title "best static"
    }
  }
}
set style data lines
set xlabel "requests replayed"
set ylabel "mapping share"
set yrange [0:1]
set key top right font ",8"
workloads = "financial1 tpcc wsrch zipf-write uniform-read"
do for [size in "small large"] {
  set output sprintf("%s/aps-share-%s.png", results, size)
  set title sprintf("APS: the mapping partition's share of the device RAM along the replay (%s RAM), each seed", size eq "small" ? "smallest" : "largest")
  files = system(sprintf("ls %s/aps-share-%s-*-s*.dat 2>/dev/null", results, size))
  plot for [f in files] f using 1:2 title system(sprintf("basename %s .dat | sed 's/aps-share-%s-//'", f, size))
}
