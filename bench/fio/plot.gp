# The ratios of bench/fio/matrix.py, one panel per workload: flashdir's figure over the other
# target's against the number of fio jobs, a line per flashdir mode and cache state, log scales
# (1 = as fast as the other target).
#   gnuplot -e "data='fast.dat'; output='fast.png'; titles='randread read ...'; heading='...'" plot.gp
# data: one block per workload (in the order of `titles`), two blank lines between blocks; each
# block a header line (jobs, then a title per line), then a line per job count, tab-separated.
set terminal pngcairo size 1500,850 font ",10"
set output output
set datafile separator "\t"
set logscale x 2
set logscale y
set xtics (1, 2, 4, 8)
set xrange [0.8:10]
set yrange [*<0.8:1.25<*]
set ytics (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500)
set grid
set xlabel "fio jobs"
set ylabel "flashdir / other (higher is better)"
set key bottom right noenhanced font ",9"
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 lc rgb "black"
set multiplot layout 2, 3 title heading noenhanced font ",13"
do for [i = 1:words(titles)] {
  set title word(titles, i) noenhanced
  plot for [c = 2:5] data index (i - 1) using 1:c with linespoints lw 2 pt 7 title columnheader(c)
}
unset multiplot
