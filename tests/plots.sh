#!/usr/bin/env bash
# The plot scripts: docs/plots.py turns two small committed CSVs (real H100
# rows, and real H200 rows at the same shapes) into the measured PNGs of each
# GPU and the H200-against-H100 comparison, docs/diagrams.py draws the idea pictures. Needs
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

log=$("$py" docs/diagrams.py --out "$out" 2>&1)
files=()
for f in 1 2 3 4 5 6 7 8 8-cluster 8-grid; do files+=("$out/idea-lesson$f.png"); done
check "plots: docs/diagrams.py draws the idea picture of every lesson" "$log" "${files[@]}"

bad="$build/plots-test-bad.csv"
printf 'lesson,name\n1,naive\n' >"$bad"
if "$py" docs/plots.py "$bad" --out "$out" >/dev/null 2>&1; then
    echo "FAIL plots: a CSV without the needed columns is rejected"
else
    echo "PASS plots: a CSV without the needed columns is rejected"
fi
