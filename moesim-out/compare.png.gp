# moesim figure: run `gnuplot THIS_FILE` to render it again
set terminal pngcairo size 1000,600 font 'Sans,11' background rgb 'white'
set output 'moesim-out/compare.png'
set title 'moesim compare: mixtral-8x7b on dgx-a100-2node, train, routing generated, nominal figures' noenhanced
set key noenhanced
set grid back lc rgb '#dddddd'
set ylabel 'time per iteration (ms)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside right top
set yrange [0:*]
set xtics nomirror
$d0 << EOD
0 2834.486390087 "fifo"
1 2245.6940733149995 "concurrent"
2 2268.7940389149999 "priority"
3 2471.1824540299995 "lina"
4 2227.2134444589997 "schemoe"
EOD
$d1 << EOD
0 37.429753264749991 "fifo"
1 37.553550544124988 "concurrent"
2 37.788153440125001 "priority"
3 37.788153442562496 "lina"
4 37.730977518125002 "schemoe"
EOD
$d2 << EOD
0 479.54071239925003 "fifo"
1 378.80079672525005 "concurrent"
2 394.02117200831242 "priority"
3 105.7110336046875 "lina"
4 361.86427485449997 "schemoe"
EOD
$d3 << EOD
0 479.05087642099994 "fifo"
1 479.095456012375 "concurrent"
2 480.10911439349991 "priority"
3 480.10911439349991 "lina"
4 479.11260105324999 "schemoe"
EOD
plot $d0 using 2:xtic(3) with histograms lc rgb '#1f77b4' title 'step time', \
     $d1 using 2 with histograms lc rgb '#d62728' title 'all-to-all', \
     $d2 using 2 with histograms lc rgb '#ff7f0e' title 'exposed communication', \
     $d3 using 2 with histograms lc rgb '#8c564b' title 'allreduce'
