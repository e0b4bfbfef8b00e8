#!/usr/bin/env bash
# The plot scripts: docs/plots.py turns two small committed CSVs (real H100
# rows, and real H200 rows at the same shapes) into the measured PNGs of each
# GPU and the H200-against-H100 comparison, and lesson 11's table (real rows
# from two H200s, given with --multi-gpu) into lesson11-split.png;
# docs/diagrams.py draws the idea pictures. Needs
# matplotlib: in the system's python3 or in .venv (`make plots` installs it
# there); skipped with a reason when neither has it.
# Usage: tests/plots.sh BUILD_DIR VENV_PYTHON
set -u
build=$1; py=python3
name="plots: docs/plots.py draws every measured plot from a CSV"
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
    py=$2
    if ! "$py" -c 'import matplotlib' 2>/dev/null; then
        echo "SKIP plots: matplotlib is in neither python3 nor .venv (make plots installs it)"
        exit 0
    fi
fi
out="$build/plots-test"
rm -rf "$out"

# every expected file exists, is not empty and starts with \x89PNG
check() { # NAME LOG FILE...
    local what=$1 log=$2 missing=""
    shift 2
    for png in "$@"; do
        [ -s "$png" ] && [ "$(head -c 4 "$png" | tail -c 3)" = "PNG" ] || missing="$missing ${png##*/}"
    done
    if [ -z "$missing" ]; then echo "PASS $what"; else echo "FAIL $what: missing or not PNG:$missing; $log"; fi
}

log=$("$py" docs/plots.py tests/data/sample_results.csv tests/data/sample_h200.csv --out "$out" 2>&1)
files=()
for csv in sample_results sample_h200; do
    for f in sweep paths bars climb lesson1 lesson2 lesson3 lesson4 lesson5 lesson6 lesson7 lesson8; do
        files+=("$out/$csv-$f.png")
    done
done
check "$name, for each of two GPUs" "$log" "${files[@]}"
check "plots: docs/plots.py draws the second GPU against the first (h200-vs-h100.png)" "$log" "$out/h200-vs-h100.png"
name="plots: without --multi-gpu, no lesson 11 plot"
if [ -e "$out/lesson11-split.png" ]; then echo "FAIL $name"; else echo "PASS $name"; fi

# Lesson 11's plot: shapes on 1 and 2 GPUs, one without lesson 8 (empty
# lesson8_ms), one on 2 GPUs only, measured at two commits.
log=$("$py" docs/plots.py tests/data/sample_results.csv --multi-gpu tests/data/sample_multi_gpu.csv --out "$out" 2>&1)
check "plots: docs/plots.py draws lesson 11's split against lesson 8 (--multi-gpu: lesson11-split.png)" \
    "$log" "$out/lesson11-split.png" "$out/sample_results-sweep.png"
bad="$build/plots-test-bad-split.csv"
printf 'gpus,rows,cols,combine,median_ms\n2,1,32768,all-gather,0.05\n' >"$bad"
if "$py" docs/plots.py tests/data/sample_results.csv --multi-gpu "$bad" --out "$out/bad" >/dev/null 2>&1 \
   || [ -e "$out/bad" ]; then
    echo "FAIL plots: a --multi-gpu CSV without the needed columns is rejected, before any file is written"
else
    echo "PASS plots: a --multi-gpu CSV without the needed columns is rejected, before any file is written"
fi

# Lesson 9's plot from a scratch CSV: the sample with its dtype column, and at
# each of its shapes 16-bit rows (the copy, both entry points, cuDNN) whose
# times are the float32 copy's over 1.9 to 1.97.
half="$build/plots-test-half.csv"
awk -F, -v OFS=, 'NR == 1 { print $0 ",dtype"; next } { print $0 ",f32" }
     $2 == "copy" { copy = $5 }
     $2 == "cudnn" {
         tail = $0; for (i = 1; i <= 12; i++) sub(/^[^,]*,/, "", tail)
         n = split("0 copy 1.97|9 fastest 1.95|9 fused 1.93|0 cudnn 1.5", r, "|")
         for (d = 1; d <= 2; d++) for (i = 1; i <= n; i++) {
             split(r[i], c, " "); t = copy / c[3]
             print c[1], c[2], $3, $4, t, t, t, 1, 1, 100 * c[3] / 1.97, 4, "yes", tail, (d == 1 ? "f16" : "bf16")
         }
     }' tests/data/sample_results.csv >"$half"
log=$("$py" docs/plots.py "$half" --out "$out" 2>&1)
check "plots: docs/plots.py draws lesson 9 against its 16-bit copy and against float32 (a CSV with a dtype column)" \
    "$log" "$out/plots-test-half-lesson9.png" "$out/plots-test-half-sweep.png" "$out/plots-test-half-lesson8.png"

# Lesson 10's plot from a scratch CSV: the sample with its dtype column, and at
# each shape the read pass and lesson 10's kernels (pct_of_copy: % of the
# kernel's own bound; more bytes per element above 16384, the split path).
train="$build/plots-test-train.csv"
awk -F, -v OFS=, 'NR == 1 { print $0 ",dtype"; next } { print $0 ",f32" }
     $2 == "copy" {
         tail = $0; for (i = 1; i <= 12; i++) sub(/^[^,]*,/, "", tail); sp = ($4 > 16384)
         n = split("0 read 0.52 100 4 f32|10 softmax_backward 1.6 93 12 f32|10 log_softmax_forward 1.04 96 8 f32|" \
                   "10 cross_entropy_forward 0.58 90 4 f32|10 classifier_fused 1.03 97 8 f32|10 classifier_fused 0.53 95 4 f16", r, "|")
         for (i = 1; i <= n; i++) {
             split(r[i], c, " "); t = $5 * c[3]
             print c[1], c[2], $3, $4, t, t, t, 1, 1, c[4] - (sp ? 30 : 0), c[5] + (sp && c[5] > 4 ? 4 : 0), "yes", tail, c[6]
         }
     }' tests/data/sample_results.csv >"$train"
log=$("$py" docs/plots.py "$train" --out "$out" 2>&1)
check "plots: docs/plots.py draws lesson 10, each kernel against its own bound" "$log" "$out/plots-test-train-lesson10.png" \
    "$out/plots-test-train-sweep.png" "$out/plots-test-train-bars.png"
name="plots: a CSV without lesson 10 rows makes no lesson 10 plot"
if [ -e "$out/sample_results-lesson10.png" ] || [ -e "$out/plots-test-half-lesson10.png" ]; then echo "FAIL $name"
else echo "PASS $name"; fi

log=$("$py" docs/diagrams.py --out "$out" 2>&1)
files=()
for f in 1 2 3 4 5 6 7 8 8-cluster 8-grid 9 10 11; do files+=("$out/idea-lesson$f.png"); done
check "plots: docs/diagrams.py draws the idea picture of every lesson" "$log" "${files[@]}"

bad="$build/plots-test-bad.csv"
printf 'lesson,name\n1,naive\n' >"$bad"
if "$py" docs/plots.py "$bad" --out "$out" >/dev/null 2>&1; then
    echo "FAIL plots: a CSV without the needed columns is rejected"
else
    echo "PASS plots: a CSV without the needed columns is rejected"
fi
