# Mpps against table size, from the data report.py writes (sweep.dat):
#   gnuplot -e "datafile='sweep.dat'; outfile='sweep.png'; subtitle='...'" bench/sweep.gp
# Columns: sources, then median, min and max Mpps of bare XDP_DROP, the
# minimal limiter, xdp-ratelimit and the nftables meter.
if (!exists("subtitle")) subtitle = ""
set terminal pngcairo size 900,560 noenhanced font ",10"
set output outfile
set title "Throughput against table size (veth, one CPU, every source tracked)\n".subtitle
set xlabel "sources, each in the table (the generator's order)"
set ylabel "Mpps reaching XDP (median, min-max)"
set logscale x 2
set xtics ("1Ki" 1024, "4Ki" 4096, "16Ki" 16384, "64Ki" 65536, "256Ki" 262144, \
	   "1Mi" 1048576, "4Mi" 4194304, "16Mi" 16777216)
set yrange [0:*]
set key outside right top
set grid
plot datafile using 1:2:3:4 with yerrorlines lw 2 title "bare XDP_DROP", \
     datafile using 1:5:6:7 with yerrorlines lw 2 title "minimal limiter", \
     datafile using 1:8:9:10 with yerrorlines lw 2 title "xdp-ratelimit", \
     datafile using 1:11:12:13 with yerrorlines lw 2 title "nftables meter"
