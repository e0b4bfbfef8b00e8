#!/usr/bin/env bash
# make sanitize: compute-sanitizer's four tools over programs that run every
# kernel: build/odd_shapes (every kernel of tests/kernels.h on odd shapes)
# and the lesson tests named after it (lesson 5's strided views, lesson 7's
# masks, causal rows and attention forward, lesson 8's forced paths, ...).
# One summary line per tool and program, logs in BUILD/sanitize/.
# SANITIZE_JOBS=K runs K of the tool-program pairs at once (default 1): the
# tools are mostly CPU work, so a machine of many cores shares one GPU well.
# Usage: [SANITIZE_JOBS=K] tests/sanitize.sh BUILD_DIR PROGRAM...
set -u
build=$1; shift
command -v compute-sanitizer >/dev/null || { echo "sanitize: compute-sanitizer is not on PATH" >&2; exit 2; }
mkdir -p "$build/sanitize"
rm -f "$build"/sanitize/*.line
export SOFTMAX_SANITIZE=1 # the lesson tests leave out their few slowest shapes
# and each run names its tool in SOFTMAX_SANITIZE_TOOL (test_lesson8's synccheck_skips)

# One tool over one program: its summary line in $build/sanitize/NAME-TOOL.line.
one() {
    local build=$1 prog=$2 tool=$3 extra=""
    local log="$build/sanitize/$(basename "$prog")-$tool.log"
    [ "$tool" = memcheck ] && extra="--leak-check full"
    SOFTMAX_SANITIZE_TOOL=$tool compute-sanitizer --tool "$tool" $extra --error-exitcode 99 "$prog" >"$log" 2>&1
    local rc=$? summary fails passes
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$log" | tail -n 2 | tr '\n' ' ')
    fails=$(grep -c '^FAIL ' "$log")
    passes=$(grep -c '^PASS ' "$log")
    if [ $rc -eq 0 ] && [ "$fails" -eq 0 ]; then
        echo "PASS sanitize $tool $(basename "$prog"): $passes checks, $summary"
    else
        echo "FAIL sanitize $tool $(basename "$prog"): exit $rc, $fails failed checks, $summary (see $log)"
    fi >"${log%.log}.line"
}
export -f one

pairs=()
for prog in "$@"; do
    for tool in memcheck racecheck synccheck initcheck; do pairs+=("$prog $tool"); done
done
printf '%s\n' "${pairs[@]}" | xargs -P "${SANITIZE_JOBS:-1}" -L 1 bash -c 'one "$0" $1 $2' "$build"
status=0
for p in "${pairs[@]}"; do
    set -- $p
    line="$build/sanitize/$(basename "$1")-$2.line"
    if [ -f "$line" ]; then cat "$line"; else echo "FAIL sanitize $2 $(basename "$1"): did not run"; fi
    grep -q '^PASS' "$line" 2>/dev/null || status=1
done
exit $status
