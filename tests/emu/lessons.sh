#!/usr/bin/env bash
# Each lesson program built for the CPU emulator (`make lessonN EMU=1`)
# runs a small shape, checks it against the float64 reference, and says
# that it measured no time. Their --csv rows, made as `make lessons EMU=1`
# makes them, give tests/compare.awk's table of checks: one row per kernel,
# each "not measured" and PASS, and no timing columns.
# Usage: tests/emu/lessons.sh EMU_BUILD_DIR N...
set -u
build=$1; shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in "$@"; do
    name="lesson$n runs and checks a small shape on the CPU emulator, without timings"
    out=$("$build/lesson$n" --rows 37 --cols 1000 --csv "$tmp/lessons.csv" 2>&1)
    status=$?
    if [ $status -eq 0 ] && grep -q 'check *PASS' <<<"$out" && grep -q 'not meaningful' <<<"$out" \
        && ! grep -q '% of copy' <<<"$out"; then
        echo "PASS $name"
    else
        echo "FAIL $name: exit status $status: $(tail -n 3 <<<"$out")"
    fi
done
name="the lessons' table on the CPU emulator (make lessons EMU=1) lists every lesson's checks, no timings"
table=$(awk -f tests/compare.awk "$tmp/lessons.csv" 2>&1)
missing=""
for n in "$@"; do grep -Eq "^$n +[^ ].* +not measured +PASS\$" <<<"$table" || missing="$missing $n"; done
if [ -z "$missing" ] && grep -q '^All lessons at 37 x 1000 on CPU emulator' <<<"$table" \
    && ! grep -Eq 'FAIL|GB/s|speedup' <<<"$table"; then
    echo "PASS $name"
else
    echo "FAIL $name: lessons$missing missing or not PASS: $(tr '\n' '|' <<<"$table" | head -c 600)"
fi
