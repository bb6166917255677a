# The ratios of bench/workloads/run.sh as bars, one group per workload figure, on a log scale
# (1 = as fast as the other side).
#   gnuplot -e "data='ratios.dat'; output='results.png'" plot.gp
# (store='slowstore': flashdir was over slowstore, and the title says so)
# data: tab-separated, a header line (point, then a title per ratio), then a line per figure.
set terminal pngcairo size 1200,600 font ",10"
set output output
if (!exists("store")) store = "backing"
if (store eq "slowstore") {
  set title "flashdir over slowstore against slowstore itself (bench/workloads/run.sh --store slowstore)" noenhanced
} else {
  set title "flashdir against passthrough\\_hp and the backing directory (bench/workloads/run.sh)"
}
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [*:*]
set ytics (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200)
set grid ytics
set ylabel "ratio (flashdir / other, higher is better)"
set xtics rotate by -20 noenhanced
set key outside right top noenhanced
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 lc rgb "black"
set datafile separator "\t"
columns = int(system("head -n 1 '" . data . "' | awk -F '\t' '{ print NF }'"))
plot for [i=2:columns] data using i:xtic(1) title columnheader(i)
