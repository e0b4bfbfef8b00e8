# tests/device_run.sh's A/B table: bench CSVs of a base build (folders
# ab-base*) and of the new one (ab-new*), each kernel at each shape and
# storage type: the base's and the new medians in ms, run by run, and the
# ratio of the best new to the best base (below 1: the new one is faster).
# The spread between one build's runs is the noise to read the ratio against.
BEGIN { FS = "," }
FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; side = FILENAME ~ /ab-base/ ? "base" : "new"; next }
{
    key = $col["lesson"] " " $col["name"] " " $col["rows"] "x" $col["cols"] " " $col["dtype"]
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    t = $col["median_ms"] + 0
    runs[key, side] = runs[key, side] sprintf(" %.4f", t)
    if (!((key, side) in best) || t < best[key, side]) best[key, side] = t
    if ($col["verified"] != "yes") bad[key] = 1
}
END {
    printf "%-52s %-24s %-24s %s\n", "kernel (lesson name MxN dtype)", "base ms", "new ms", "new/base"
    for (i = 1; i <= n; i++) {
        k = order[i]
        r = ((k, "base") in best) && ((k, "new") in best) && best[k, "base"] > 0 ? sprintf("%.3f", best[k, "new"] / best[k, "base"]) : "-"
        printf "%-52s %-24s %-24s %s%s\n", k, runs[k, "base"], runs[k, "new"], r, (k in bad) ? "  NOT VERIFIED" : ""
    }
}
