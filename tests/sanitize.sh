#!/usr/bin/env bash
# make sanitize: compute-sanitizer's four tools over programs that run every
# kernel: build/odd_shapes (every kernel of tests/kernels.h on odd shapes)
# and the lesson tests named after it (lesson 5's strided views, lesson 7's
# masks, causal rows and attention forward, lesson 8's forced paths, ...).
# One summary line per tool and program, logs in BUILD/sanitize/.
# Usage: tests/sanitize.sh BUILD_DIR PROGRAM...
set -u
build=$1; shift
command -v compute-sanitizer >/dev/null || { echo "sanitize: compute-sanitizer is not on PATH" >&2; exit 2; }
mkdir -p "$build/sanitize"
export SOFTMAX_SANITIZE=1 # the lesson tests leave out their few slowest shapes
status=0
for prog in "$@"; do
    for tool in memcheck racecheck synccheck initcheck; do
        log="$build/sanitize/$(basename "$prog")-$tool.log"
        extra=""
        [ $tool = memcheck ] && extra="--leak-check full"
        compute-sanitizer --tool $tool $extra --error-exitcode 99 "$prog" >"$log" 2>&1
        rc=$?
        summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$log" | tail -n 2 | tr '\n' ' ')
        fails=$(grep -c '^FAIL ' "$log")
        passes=$(grep -c '^PASS ' "$log")
        if [ $rc -eq 0 ] && [ "$fails" -eq 0 ]; then
            echo "PASS sanitize $tool $(basename "$prog"): $passes checks, $summary"
        else
            echo "FAIL sanitize $tool $(basename "$prog"): exit $rc, $fails failed checks, $summary (see $log)"
            status=1
        fi
    done
done
exit $status
