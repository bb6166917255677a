# The plot of bench/reproduce/aps_before_after.sh (gnuplot -e "results='DIR'" aps_before_after.gp).
set terminal pngcairo size 1400,900 font "DejaVu Sans,9"
set output sprintf("%s/aps-before-after.png", results)
set multiplot layout 2,5 title "APS's mapping share along the replay (seed 1): before (tune unit 0 / 64K / 512K) and after (the step controller)"
set yrange [0:1]
set format x "%.0s%c"
set xtics rotate by -45 font ",7"
set key top right font ",7"
do for [size in "small large"] {
  do for [w in "financial1 tpcc wsrch zipf-write uniform-read"] {
    set title sprintf("%s, %s RAM", w, size)
    f = sprintf("%s/%s-%s.dat", results, w, size)
    plot f using 1:2 with lines title "old, 0", "" using 1:3 with lines title "old, 64K", "" using 1:4 with lines title "old, 512K", "" using 1:5 with lines lw 2 lc rgb "black" title "new"
  }
}
unset multiplot
