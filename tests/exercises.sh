#!/usr/bin/env bash
# Exercises: each tested solution passes its lesson's checker, and each
# learner's starter file compiles but fails the same checker until solved.
# A starter's output is a planted wrong answer: its checker must say what
# failed, as facts: the count of wrong elements and the shape ("N of the
# R x C elements of y are wrong"), then the first ones, "row R, column C:
# expected E, got G" (exercise 1 checks one property: "expected inf, got G").
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
        [ $kind = exercise ] && [ $status -ne 3 ] || continue
        name="exercise $n starter: the checker names the wrong elements, expected against got, and the shape"
        if [ "$n" = 1 ]; then
            grep -Eq '^NOT YET: expf\(t\): expected inf, got [^;]+; .*expected a finite value, got ' <<<"$out"
        else
            grep -Eq '^ +[0-9]+ of the [0-9]+ x [0-9]+ elements of .+ (is|are) wrong' <<<"$out" &&
                grep -Eq '^ +row [0-9]+, column [0-9]+: expected [^,]+, got [^ ]+$' <<<"$out"
        fi
        if [ $? -eq 0 ] && grep -q '^NOT YET: ' <<<"$out"; then echo "PASS $name"
        else echo "FAIL $name: $(grep -m 3 -E 'BAD|NOT YET|wrong' <<<"$out" | tr '\n' ' ')"; fi
    done
done
