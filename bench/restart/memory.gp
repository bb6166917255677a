# The daemon's resident memory against the cache's size (bench/restart/run.py, part 2), log-log.
#   gnuplot -e "data='memory.dat'; output='memory.png'" memory.gp
# data: tab-separated, a comment line, then a line per cache size: size in GiB, then in MB the
# RSS of the empty mount, the RSS and the peak (VmHWM) after the fill, after a clean remount and
# after the remount that follows a kill -9, then the size as written.
set terminal pngcairo size 900,600 font ",10"
set output output
set title "flashdir daemon memory against cache size (bench/restart/run.py)"
set datafile separator "\t"
set logscale x 2
set logscale y 2
set xrange [0.18:22]
set xlabel "cache size, GiB"
set ylabel "resident memory, MB (10^6 bytes)"
set grid
set key top left noenhanced
plot data using 1:2:xtic(9) with linespoints lw 2 title "empty mount", \
     data using 1:3 with linespoints lw 2 title "after the fill", \
     data using 1:4 with linespoints dashtype 2 title "after the fill, peak (VmHWM)", \
     data using 1:5 with linespoints lw 2 title "clean remount", \
     data using 1:6 with linespoints dashtype 2 title "clean remount, peak (the restart)", \
     data using 1:7 with linespoints lw 2 title "kill -9 remount", \
     data using 1:8 with linespoints dashtype 2 title "kill -9 remount, peak (the restart)"
