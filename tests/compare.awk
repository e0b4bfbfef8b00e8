# Prints the comparison table of `make lessons` from the CSV the lessons wrote.
# Speedup is lesson 1's median time over each lesson's median time.
# A row with empty timing columns comes from the CPU emulator (`make lessons
# EMU=1`), which times nothing: its table shows the checks only and says so.
BEGIN { FS = "," }
NR == 1 { next }
{
    n++; num[n] = $1; name[n] = $2; ms[n] = $5; gbps[n] = $8; pct[n] = $10; ok[n] = $12
    if ($NF ~ /^b?f16$/) name[n] = name[n] " (" $NF ")"  # lesson 9's storage type, the last column
    shape = $3 " x " $4
    if ($1 == 1 && base == "") base = $5
    if ($5 == "") emu = 1
    if ($1 == 10) has10 = 1
    if ($1 == 11) has11 = 1
    gpu = $13; for (i = 14; gpu !~ /"$/ && i <= NF; i++) gpu = gpu "," $i
}
END {
    if (n == 0) { print "no lesson results"; exit 1 }
    gsub(/"/, "", gpu)
    if (emu) {
        printf "\nAll lessons at %s on %s: the checks only, no timings\n", shape, gpu
        printf "%-8s %-22s %-14s %s\n", "lesson", "kernel", "time", "check against float64"
        for (i = 1; i <= n; i++)
            printf "%-8s %-22s %-14s %s\n", num[i], name[i], "not measured",
                   ok[i] == "yes" ? "PASS" : ok[i] == "no" ? "not checked (--no-check)" : "FAIL"
        print "Times mean nothing on a CPU: `make lessons` on a GPU measures them."
        exit
    }
    printf "\nAll lessons at %s on %s\n", shape, gpu
    printf "%-8s %-22s %12s %10s %10s %10s %9s\n", "lesson", "kernel", "time (ms)", "GB/s", "% of copy", "speedup", "check"
    for (i = 1; i <= n; i++)
        printf "%-8s %-22s %12.4f %10.1f %10.1f %9.2fx %9s\n", num[i], name[i], ms[i], gbps[i], pct[i],
               (base > 0 ? base / ms[i] : 0), ok[i]
    if (has10)
        print "Lesson 10: each kernel's % is of its own bound (the copy, 1.5 x the copy for the backward, a read pass for the loss)."
    if (has11)
        print "Lesson 11: the split softmax on slices resident on every GPU it uses (no scatter from or gather to GPU 0);" \
              " % of a copy of each GPU's slice, all GPUs at once."
}
