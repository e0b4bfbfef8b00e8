#!/usr/bin/env bash
# The plot script turns a small committed CSV (real H100 rows) into the three
# PNGs. Needs matplotlib: in the system's python3 or in .venv (`make plots`
# installs it there); skipped with a reason when neither has it.
# Usage: tests/plots.sh BUILD_DIR VENV_PYTHON
set -u
build=$1; py=python3
name="plots: docs/plots.py draws the sweep, the bars and the small-shape plot from a CSV"
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
    py=$2
    if ! "$py" -c 'import matplotlib' 2>/dev/null; then
        echo "SKIP $name: matplotlib is in neither python3 nor .venv (make plots installs it)"
        exit 0
    fi
fi
out="$build/plots-test"
rm -rf "$out"
log=$("$py" docs/plots.py tests/data/sample_results.csv --out "$out" 2>&1)
ok=1
for f in sweep bars; do
    png="$out/sample_results-$f.png"
    # a PNG starts with \x89PNG
    [ -s "$png" ] && [ "$(head -c 4 "$png" | tail -c 3)" = "PNG" ] || ok=0
done
if [ $ok = 1 ]; then echo "PASS $name"; else echo "FAIL $name: $log"; fi
bad="$build/plots-test-bad.csv"
printf 'lesson,name\n1,naive\n' >"$bad"
if "$py" docs/plots.py "$bad" --out "$out" >/dev/null 2>&1; then
    echo "FAIL plots: a CSV without the needed columns is rejected"
else
    echo "PASS plots: a CSV without the needed columns is rejected"
fi
