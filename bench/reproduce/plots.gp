# Plots of bench/reproduce/run.sh (gnuplot -e "results='DIR'" plots.gp).
# service-N.png: service time of tree, APS and the best static split, normalised to static:50
#   (JTL-like), per workload, at the N-th RAM size (1/32 .. 1/4 of the touched footprint), in
#   the manner of the TreeFTL paper's Figures 4-5.
# aps-share.png: APS's mapping partition (share of the RAM) along each replay, at the smallest RAM size.
set terminal pngcairo size 900,480 font "DejaVu Sans,10"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:*]
set grid ytics
set ylabel "service time / static:50"
set key top left
labels = "1/32 1/16 1/8 1/4"
do for [i=0:3] {
  file = sprintf("%s/service-%d.dat", results, i)
  if (system("test -f ".file." && echo yes") eq "yes") {
    set output sprintf("%s/service-%d.png", results, i)
    set title sprintf("Service time / static:50 (greedy GC), RAM = %s of the touched footprint", word(labels, i + 1))
    plot file using 2:xtic(1) title "tree", "" using 3 title "aps", "" using 4 title "best static"
  }
}
set style data lines
set output sprintf("%s/aps-share.png", results)
set title "APS: the mapping partition's share of the device RAM along the replay (smallest RAM)"
set xlabel "requests replayed"
set ylabel "mapping share"
set yrange [0:1]
set key top right
plot for [w in "financial1 tpcc wsrch zipf-write uniform-read"] sprintf("%s/aps-share-%s.dat", results, w) using 1:2 title w
