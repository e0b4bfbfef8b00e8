#!/usr/bin/env bash
# Exercises: each tested solution passes its lesson's checker, and each
# learner's starter file compiles but fails the same checker until solved.
# Usage: tests/exercises.sh BUILD_DIR N...
set -u
build=$1; shift
for n in "$@"; do
    for kind in solution exercise; do
        prog="$build/$kind$n"
        if [ $kind = solution ]; then name="solution to exercise $n passes its checker"; want=0
        else name="exercise $n starter compiles and fails its checker until solved"; want=1; fi
        out=$("$prog" 2>&1)
        status=$?
        if [ $status -eq 3 ]; then echo "SKIP $name: no GPU"
        elif [ $status -eq $want ]; then echo "PASS $name"
        else echo "FAIL $name: exit status $status, want $want: $(echo "$out" | tail -n 2)"; fi
    done
done
