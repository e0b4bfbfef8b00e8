#!/usr/bin/env bash
# Runs each test command given as an argument, shows its output, and counts
# the lines that start with PASS, FAIL or SKIP. A command that exits non-zero
# without printing a FAIL line counts as one failure (a crash, say).
# Ends with "N passed, N failed, N skipped"; exit status 1 on any failure.
set -u
passed=0 failed=0 skipped=0
for cmd in "$@"; do
    out=$(mktemp)
    bash -c "$cmd" >"$out" 2>&1
    status=$?
    cat "$out"
    p=$(grep -c '^PASS ' "$out") f=$(grep -c '^FAIL ' "$out") s=$(grep -c '^SKIP ' "$out")
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $cmd: exited with status $status without reporting a failure"
        f=1
    fi
    if [ $((p + f + s)) -eq 0 ]; then
        echo "FAIL $cmd: ran no test"
        f=1
    fi
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    rm -f "$out"
done
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
