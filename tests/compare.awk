# Prints the comparison table of `make lessons` from the CSV the lessons wrote.
# Speedup is lesson 1's median time over each lesson's median time.
BEGIN { FS = "," }
NR == 1 { next }
{
    n++; num[n] = $1; name[n] = $2; ms[n] = $5; gbps[n] = $8; pct[n] = $10; ok[n] = $12
    shape = $3 " x " $4
    if ($1 == 1) base = $5
    gpu = $13; for (i = 14; gpu !~ /"$/ && i <= NF; i++) gpu = gpu "," $i
}
END {
    if (n == 0) { print "no lesson results"; exit 1 }
    gsub(/"/, "", gpu)
    printf "\nAll lessons at %s on %s\n", shape, gpu
    printf "%-8s %-10s %12s %10s %10s %10s %9s\n", "lesson", "name", "time (ms)", "GB/s", "% of copy", "speedup", "check"
    for (i = 1; i <= n; i++)
        printf "%-8s %-10s %12.4f %10.1f %10.1f %9.2fx %9s\n", num[i], name[i], ms[i], gbps[i], pct[i],
               (base > 0 ? base / ms[i] : 0), ok[i]
}
