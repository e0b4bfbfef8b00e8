#!/usr/bin/env bash
# make profile-lessonN: Nsight Compute on lesson N's kernels (one launch each,
# through build/bench --only N), printing DRAM bytes read and written and the
# DRAM throughput, next to the traffic the lesson's text predicts.
# Usage: tests/profile.sh BUILD_DIR N ROWSxCOLS
set -u
build=$1; n=$2; shape=$3
rows=${shape%x*}; cols=${shape#*x}
command -v ncu >/dev/null || { echo "profile: ncu (Nsight Compute) is not on PATH" >&2; exit 2; }
# --clock-control none: measure at the clocks the GPU really runs, as the
# timings do; base units so that bytes are bytes.
ncu --clock-control none --print-units base --csv \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum \
    "$build/bench" --only "$n" --shape "$shape" >"$build/profile-lesson$n.csv" 2>"$build/profile-lesson$n.log" \
    || { cat "$build/profile-lesson$n.log" "$build/profile-lesson$n.csv" >&2; exit 1; }
awk -F'","' -v rows="$rows" -v cols="$cols" '
    /"Kernel Name"/ { for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); col[h] = i }; next }
    col["Metric Name"] && NF > 5 {
        k = $col["Kernel Name"]; sub(/\(.*/, "", k); id = $col["ID"]; gsub(/"/, "", id)
        key = id " " k; v = $col["Metric Value"]; gsub(/[",]/, "", v)
        m[key, $col["Metric Name"]] = v; if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
    }
    END {
        ideal = 2.0 * rows * cols * 4
        printf "lesson profile at %d x %d: 2 x M x N x 4 = %.1f MB is the least any softmax moves\n", rows, cols, ideal / 1e6
        printf "%-44s %10s %10s %12s %8s %10s\n", "launch", "read MB", "write MB", "(r+w)/ideal", "DRAM %", "time us"
        for (i = 1; i <= nk; i++) {
            key = order[i]; r = m[key, "dram__bytes_read.sum"]; w = m[key, "dram__bytes_write.sum"]
            printf "%-44s %10.1f %10.1f %12.2f %8.1f %10.1f\n", substr(key, 1, 44), r / 1e6, w / 1e6,
                   (r + w) / ideal, m[key, "dram__throughput.avg.pct_of_peak_sustained_elapsed"],
                   m[key, "gpu__time_duration.sum"] / 1e3
        }
    }' "$build/profile-lesson$n.csv"
