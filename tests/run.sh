#!/usr/bin/env bash
# Runs each test command given as an argument, shows its output, and counts
# the lines that start with PASS, FAIL or SKIP. A command that exits non-zero
# without printing a FAIL line counts as one failure (a crash, say).
# After each command's output, a line "-- COMMAND: N s" (its wall time).
# Ends with "N passed, N failed, N skipped"; exit status 1 on any failure.
# TEST_JOBS=J runs up to J commands at once (default 1); the outputs still
# come in the order of the arguments, each whole. The Makefile sets it for
# the CPU emulator's runs, which use one core each; GPU tests run one at a
# time.
set -u
jobs_max=${TEST_JOBS:-1}
case $jobs_max in '' | *[!0-9]* | 0) jobs_max=1 ;; esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
passed=0 failed=0 skipped=0

# Command i's output and exit status, in $dir/i.out and $dir/i.status (the
# status file appears whole, once the command has ended).
run_one() {
    local t0=$SECONDS
    bash -c "$2" >"$dir/$1.out" 2>&1
    local st=$?
    echo $((SECONDS - t0)) >"$dir/$1.time"
    echo $st >"$dir/$1.tmp" && mv "$dir/$1.tmp" "$dir/$1.status"
}

# Shows command i's output and adds up its lines.
report() {
    local out="$dir/$1.out" cmd=$2 status
    status=$(cat "$dir/$1.status")
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
    # how long it took: where CI's minutes go
    echo "-- ${cmd%% *}: $(cat "$dir/$1.time") s"
}

cmds=("$@")
shown=0
for i in "${!cmds[@]}"; do
    if [ "$jobs_max" -le 1 ]; then
        run_one $i "${cmds[$i]}"
    else
        while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
        run_one $i "${cmds[$i]}" &
    fi
    # show, in order, every command that has finished
    while [ $shown -le $i ] && [ -e "$dir/$shown.status" ]; do
        report $shown "${cmds[$shown]}"
        shown=$((shown + 1))
    done
done
wait
while [ $shown -lt ${#cmds[@]} ]; do
    report $shown "${cmds[$shown]}"
    shown=$((shown + 1))
done
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
