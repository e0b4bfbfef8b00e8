# Refreshes a results CSV with kernels measured again (tests/device_run.sh
# sweep's ab-new*/ CSVs, or bench --part runs): each row of the newer CSVs
# whose lesson is in LESSONS (a space-separated list; unset: every lesson
# but 0, the copy, read pass and cuDNN) takes the place of the row of the
# same kernel, shape and storage type in the last file named, the CSV to
# refresh; a row it lacks goes at its end. Every row keeps its own commit,
# date and copy. A CSV without a dtype column (older ones) holds float32.
# Usage: awk [-v LESSONS="8 9 10"] -f tests/csv_merge.awk NEW.csv... OLD.csv >MERGED.csv
BEGIN {
    FS = ","
    if (LESSONS != "") { n = split(LESSONS, l, " "); for (i = 1; i <= n; i++) want[l[i]] = 1 }
}
FNR == 1 {
    delete col
    for (i = 1; i <= NF; i++) col[$i] = i
    if (FILENAME == ARGV[ARGC - 1]) print
    next
}
{
    key = $col["lesson"] SUBSEP $col["name"] SUBSEP $col["rows"] SUBSEP $col["cols"] SUBSEP \
          ("dtype" in col ? $col["dtype"] : "f32")
}
FILENAME != ARGV[ARGC - 1] {
    if (LESSONS != "" ? ($col["lesson"] in want) : $col["lesson"] != 0) {
        if (!(key in fresh)) order[++nfresh] = key
        fresh[key] = $0
    }
    next
}
key in fresh { print fresh[key]; used[key] = 1; next }
{ print }
END {
    for (i = 1; i <= nfresh; i++) if (!(order[i] in used)) print fresh[order[i]]
}
