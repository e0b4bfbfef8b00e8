#!/usr/bin/env bash
# The kernel tests' bug-catch rate (`make test-mutants`; not part of `make
# test`). Applies each mutation of tests/mutants.txt alone to a copy of the
# tree (build/mutants/tree), rebuilds there the emulator's test programs it
# runs (only what the mutation touches is recompiled), and runs the tests of the
# lesson the mutation is named after (L9-...: lesson 9, whose test runs
# lesson 8's 16-bit code; else the mutated file's lesson):
# tests/test_lessonN.cu first, then, if that passes, the
# kernel matrix (tests/test_kernels.cu). A mutation is caught when a test
# fails (a FAIL line, or the program stops on an error the emulator
# reports). Prints a table and "caught N of M"; exit status 1 if one that
# the list does not mark `gpu:` got through.
#
#   tests/mutants.sh [list] [name ...]     default list: tests/mutants.txt
#   tests/mutants.sh --check [list]        only whether every edit still
#                                          applies to the sources (make test)
#   MUTANTS_SHARDS=K tests/mutants.sh ...  K copies of the built tree, each
#                                          taking every K-th mutation, run at
#                                          once on nproc / K cores each
#
# A mutation of lessons 8-10 costs about four core-minutes of rebuild and
# test: the whole list takes hours on 2 cores, about 35 minutes on 16
# (MUTANTS_SHARDS=16). A test program is stopped at its first FAIL line: one
# is enough to catch.
#
# Everything runs on the CPU emulator (common/emu, docs/emulator.md); no
# GPU is needed or used.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
list=tests/mutants.txt
if [ $# -gt 0 ] && [ -f "$1" ]; then list=$1; shift; fi
want=" $* "
work=$root/build/mutants
tree=$work/tree
jobs=$(nproc 2>/dev/null || echo 2)
shards=${MUTANTS_SHARDS:-1}
shard=${MUTANTS_SHARD:-} # k/K: set by the parent for one shard
mkdir -p "$work"
report=$work/report.md

fail() { echo "mutants: $*" >&2; exit 2; }
[ -f "$list" ] || fail "no mutation list $list"

# ---- the list: one record per mutation, edits as (at, find, with) -------
names=() files=() whats=() gpus=() edits=()
cur=-1
while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
    '#'* | '') continue ;;
    '['*']'*)
        cur=$((cur + 1))
        names[cur]=${line%%]*}; names[cur]=${names[cur]#[}
        files[cur]=${line#*] }
        whats[cur]='' gpus[cur]='' edits[cur]=''
        at='' ;;
    'what: '*) whats[cur]=${line#what: } ;;
    'gpu: '*) gpus[cur]=${line#gpu: } ;;
    'at: '*) at=${line#at: } ;;
    'find: '*) find=${line#find: } ;;
    'with:'*)
        with=${line#with:}; with=${with# }
        edits[cur]+="$at"$'\x1f'"$find"$'\x1f'"$with"$'\x1e'
        at='' ;;
    *) fail "$list: cannot read the line: $line" ;;
    esac
done <"$list"
total=$((cur + 1))
[ "$total" -gt 0 ] || fail "$list holds no mutation"

# Applies one edit to $tree/$1: the first line holding `find`, at or after
# the first line holding `at` (if given). 1 if there is none.
apply_edit() {
    AT=$2 FIND=$3 WITH=$4 awk '
        BEGIN { at = ENVIRON["AT"]; find = ENVIRON["FIND"]; with = ENVIRON["WITH"]; armed = at == ""; done = 0 }
        {
            line = $0
            if (!done && !armed && index(line, at)) armed = 1
            if (!done && armed && (i = index(line, find))) {
                line = substr(line, 1, i - 1) with substr(line, i + length(find))
                done = 1
            }
            print line
        }
        END { exit done ? 0 : 1 }' "$tree/$1" >"$tree.edited" && cp "$tree.edited" "$tree/$1"
}

# Applies every edit of mutation $1 to its file in $tree; 1, with the
# `find` text that is missing on stdout, if one does not apply.
apply_mutation() {
    local e at find with
    IFS=$'\x1e' read -r -d '' -a list_edits <<<"${edits[$1]}"
    for e in "${list_edits[@]}"; do
        [ -n "${e//[$'\n']/}" ] || continue
        IFS=$'\x1f' read -r at find with <<<"$e"
        apply_edit "${files[$1]}" "$at" "$find" "$with" || { printf '%s' "$find"; return 1; }
    done
}

# ---- --check: every edit still applies to the sources as they are -------
if [ "$check" = 1 ]; then
    tree=$(mktemp -d) bad=0
    work=$tree
    for ((i = 0; i < total; i++)); do
        name=${names[i]} file=${files[i]}
        mkdir -p "$tree/$(dirname "$file")"
        if ! cp "$root/$file" "$tree/$file" 2>/dev/null; then
            echo "FAIL mutants: [$name] names $file, which does not exist"
            bad=1
            continue
        fi
        if missing=$(apply_mutation "$i"); then
            echo "PASS mutants: [$name] still applies to $file"
        else
            echo "FAIL mutants: [$name] no longer applies to $file: \`$missing\` not found (update tests/mutants.txt)"
            bad=1
        fi
    done
    rm -rf "$tree"
    exit $bad
fi

lessons=$(ls -d lessons/0[3-9]_* lessons/[1-9][0-9]_* 2>/dev/null | sed 's|lessons/0*\([0-9]*\)_.*|\1|')
targets="build/emu/tests/test_kernels"
for n in $lessons; do targets+=" build/emu/tests/test_lesson$n"; done
mk() { make -C "$tree" -j"$jobs" GIT_COMMIT=mutants "$@" >"$work/${log:-build}.log" 2>&1; }

# ---- a clean copy of the sources, built once ------------------------------
if [ -z "$shard" ]; then
    echo "mutants: copying the tree to $tree and building the emulator's tests (make -j$jobs)"
    rm -rf "$tree"
    mkdir -p "$tree"
    tar -C "$root" --exclude=./build --exclude=./.git --exclude=./.venv -cf - . | tar -C "$tree" -xf - ||
        fail "cannot copy the tree"
    mk $targets || { tail -20 "$work/build.log"; fail "the unmutated tree does not build"; }
fi

# ---- shards: copies of the built tree run at once, their tables joined ----
if [ -z "$shard" ] && [ "$shards" -gt 1 ]; then
    per=$((jobs / shards))
    [ "$per" -ge 1 ] || per=1
    echo "mutants: $shards shards of $per cores each"
    pids=()
    for ((k = 0; k < shards; k++)); do
        rm -rf "$tree-$k" "$work/report-$k.md"
        cp -a "$tree" "$tree-$k" || fail "cannot copy the built tree"
        MUTANTS_SHARD=$k/$shards MUTANTS_TREE=$tree-$k MUTANTS_REPORT=$work/report-$k.md MUTANTS_JOBS=$per \
            "$0" "$list" "$@" >"$work/shard-$k.out" 2>&1 &
        pids+=($!)
    done
    bad=0
    for p in "${pids[@]}"; do wait "$p" || bad=1; done
    cat "$work"/shard-*.out | grep -E '^(CAUGHT|NOT CAUGHT)'
    {
        echo "| mutation | file | what | caught by |"
        echo "|---|---|---|---|"
        cat "$work"/report-*.md 2>/dev/null | grep -v -e '^| mutation |' -e '^|---|'
    } >"$report"
    count() { cat "$work"/shard-*.out | grep -c -E "$1"; }
    for ((k = 0; k < shards; k++)); do
        grep -q '^caught ' "$work/shard-$k.out" && continue
        bad=1
        echo "mutants: shard $k did not finish:"
        tail -5 "$work/shard-$k.out"
    done
    echo
    echo "caught $(count '^CAUGHT') of $(count '^(CAUGHT|NOT CAUGHT)') mutations (table: $report)"
    exit $bad
fi
[ -z "$shard" ] || { tree=$MUTANTS_TREE report=$MUTANTS_REPORT jobs=$MUTANTS_JOBS; }

# Runs one test program of the tree, stopped at its first FAIL line (awk
# exits, the program's next line ends it); its output in $2. 0: passed.
run_test() {
    (cd "$tree" && EMU_QUIET=1 EMU_TIMEOUT=120 timeout 900 "$1" 2>&1 |
        awk '{ print; fflush() } /^FAIL / { exit 1 }') >"$2"
}

{
    echo "| mutation | file | what | caught by |"
    echo "|---|---|---|---|"
} >"$report"
caught=0 ran=0 escaped=0 sel=-1
for ((i = 0; i < total; i++)); do
    name=${names[i]} file=${files[i]}
    [ "$want" = "  " ] || [[ "$want" == *" $name "* ]] || continue
    sel=$((sel + 1)) # the how-manieth of those asked for
    [ -z "$shard" ] || [ $((sel % ${shard#*/})) -eq "${shard%/*}" ] || continue
    ran=$((ran + 1))
    # the lesson its name says (L9-...: lesson 8's 16-bit code is lesson 9's), else its file's
    n=$(echo "$name" | sed -n 's|^L\([0-9][0-9]*\)-.*|\1|p')
    [ -n "$n" ] || n=$(echo "$file" | sed -n 's|^lessons/0*\([0-9]*\)_.*|\1|p')
    [ -f "$tree/$file" ] || fail "[$name]: no file $file"
    result=''
    missing=$(apply_mutation "$i") || result="NOT APPLIED: \`$missing\` not found (the list is out of date)"
    start=$(date +%s)
    if [ -z "$result" ]; then
        # (once more on one job if it fails: a failed parallel build is
        # not yet a mutation that does not build)
        need="${n:+build/emu/tests/test_lesson$n} build/emu/tests/test_kernels" # only what runs
        if ! log=$name.build mk $need && ! log=$name.build jobs=1 mk $need; then
            result="DOES NOT BUILD (not a valid mutation)"
        else
            for t in $need; do
                if ! run_test "$t" "$work/$name.$(basename "$t").log"; then
                    first=$(grep -m1 -E '^FAIL |emu: error|failed:' "$work/$name.$(basename "$t").log" | cut -c1-160)
                    result="$(basename "$t"): ${first:-exit status non-zero}"
                    break
                fi
            done
        fi
    fi
    cp "$root/$file" "$tree/$file" # the original back; the next build recompiles it
    case "$result" in
    test_*) caught=$((caught + 1)); verdict="CAUGHT" ;;
    *)
        verdict="NOT CAUGHT"
        [ -n "$result" ] || result="NOT CAUGHT${gpus[i]:+ on the CPU emulator (${gpus[i]})}"
        [ -n "${gpus[i]}" ] || escaped=$((escaped + 1)) ;;
    esac
    printf '%-11s %-24s %3ds  %s\n' "$verdict" "[$name]" $(($(date +%s) - start)) "$result"
    echo "| $name | $file | ${whats[i]} | ${result//|/\\|} |" >>"$report"
done
[ -n "$shard" ] || mk $targets >/dev/null 2>&1 # leave the copy built from the originals
echo
echo "caught $caught of $ran mutations (table: $report)"
[ "$escaped" -eq 0 ]
