#!/usr/bin/env bash
# make sanitize: build/odd_shapes (every kernel on odd shapes) under each
# compute-sanitizer tool; one summary line per tool, logs in BUILD/sanitize/.
# Usage: tests/sanitize.sh BUILD_DIR
set -u
build=$1
command -v compute-sanitizer >/dev/null || { echo "sanitize: compute-sanitizer is not on PATH" >&2; exit 2; }
mkdir -p "$build/sanitize"
status=0
for tool in memcheck racecheck synccheck initcheck; do
    log="$build/sanitize/$tool.log"
    extra=""
    [ $tool = memcheck ] && extra="--leak-check full"
    compute-sanitizer --tool $tool $extra --error-exitcode 99 "$build/odd_shapes" >"$log" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$log" | tail -n 2 | tr '\n' ' ')
    fails=$(grep -c '^FAIL ' "$log")
    passes=$(grep -c '^PASS ' "$log")
    if [ $rc -eq 0 ] && [ "$fails" -eq 0 ]; then
        echo "PASS sanitize $tool: $passes kernel x shape checks, $summary"
    else
        echo "FAIL sanitize $tool: exit $rc, $fails failed checks, $summary (see $log)"
        status=1
    fi
done
exit $status
