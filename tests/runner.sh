#!/usr/bin/env bash
# tests/run.sh, the runner of `make test`, counts what it must: a command
# that crashes or prints no verdict is a failure, and with TEST_JOBS the
# outputs come whole and in the order of the arguments, each followed by the
# command's wall time.
set -u
run=tests/run.sh
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
check() { # name, wanted exit status, wanted output (a regex over its lines joined by |), command...
    local name=$1 want_status=$2 want=$3
    shift 3
    local out status
    "$@" >"$tmp" 2>&1
    status=$?
    out=$(tr '\n' '|' <"$tmp")
    if [[ $status -eq $want_status && $out =~ $want ]]; then echo "PASS runner: $name"
    else echo "FAIL runner: $name: status $status, output '$out'"; fi
}
for jobs in 1 3; do
    export TEST_JOBS=$jobs
    check "PASS, FAIL and SKIP lines are counted, and a FAIL fails the run (TEST_JOBS=$jobs)" 1 \
        '^PASS a\|-- echo: [0-9]+ s\|FAIL b\|-- echo: [0-9]+ s\|SKIP c\|-- echo: [0-9]+ s\|\|1 passed, 1 failed, 1 skipped\|$' \
        $run "echo PASS a" "echo FAIL b" "echo SKIP c"
    check "a command that exits non-zero without a FAIL line counts as a failure (TEST_JOBS=$jobs)" 1 \
        'FAIL exit 3: exited with status 3 without reporting a failure\|.*0 passed, 1 failed, 0 skipped' \
        $run "exit 3"
    check "a command that prints no verdict counts as a failure (TEST_JOBS=$jobs)" 1 \
        'FAIL true: ran no test\|.*1 passed, 1 failed' $run "echo PASS x" "true"
    check "passes and skips alone give status 0 (TEST_JOBS=$jobs)" 0 '2 passed, 0 failed, 1 skipped\|$' \
        $run "echo PASS a" "echo SKIP b; echo PASS c"
    check "outputs come whole, in the order of the arguments, whichever ends first, each followed by its wall time (TEST_JOBS=$jobs)" 0 \
        '^PASS 1a\|PASS 1b\|-- sleep: [0-9]+ s\|PASS 2\|-- echo: [0-9]+ s\|PASS 3\|-- sleep: [0-9]+ s\|\|4 passed' \
        $run "sleep 1; echo PASS 1a; sleep 1; echo PASS 1b" "echo PASS 2" "sleep 1; echo PASS 3"
done
