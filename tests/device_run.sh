#!/usr/bin/env bash
# One call on a GPU machine (the course's device runs): build, test, run the
# lessons, keep every log and CSV under $OUT, print a short summary last.
# Usage: OUT=/some/dir tests/device_run.sh
set -u
OUT=${OUT:-build/device}
mkdir -p "$OUT"
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
{ nvcc --version | tail -n 1; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } \
    >"$OUT/env.txt" 2>&1
make -j"$(nproc)" all >"$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log"; exit 1; }
make test >"$OUT/test.log" 2>&1
test_status=$?
make lessons >"$OUT/lessons.log" 2>&1
lessons_status=$?
cp build/lessons.csv "$OUT/" 2>/dev/null
# Lesson 1's exercise 3: the same bytes as many short rows and as few long ones.
for shape in "131072 512" "512 131072"; do
    set -- $shape
    for n in 1 2; do
        build/lesson$n --rows "$1" --cols "$2" --csv "$OUT/shapes.csv" >>"$OUT/shapes.log" 2>&1
    done
done
grep -E '^(FAIL|SKIP)' "$OUT/test.log" | head -n 20
cat "$OUT/env.txt"
echo "make test: status $test_status, $(tail -n 1 "$OUT/test.log")"
echo "make lessons: status $lessons_status"
sed -n '/^All lessons/,$p' "$OUT/lessons.log"
