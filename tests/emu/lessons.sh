#!/usr/bin/env bash
# Each lesson program built for the CPU emulator (`make lessonN EMU=1`)
# runs a small shape, checks it against the float64 reference, and says
# that it measured no time.
# Usage: tests/emu/lessons.sh EMU_BUILD_DIR N...
set -u
build=$1; shift
for n in "$@"; do
    name="lesson$n runs and checks a small shape on the CPU emulator, without timings"
    out=$("$build/lesson$n" --rows 37 --cols 1000 2>&1)
    status=$?
    if [ $status -eq 0 ] && grep -q 'check *PASS' <<<"$out" && grep -q 'not meaningful' <<<"$out" \
        && ! grep -q '% of copy' <<<"$out"; then
        echo "PASS $name"
    else
        echo "FAIL $name: exit status $status: $(tail -n 3 <<<"$out")"
    fi
done
