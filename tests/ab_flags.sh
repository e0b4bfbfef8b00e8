#!/bin/sh
# A/B of one compile-time switch on the GPU machine: the working tree built
# twice, plainly (build/) and with -D$FLAG (build_alt/, sm_90), then
# `bench --lesson L --cols $C` of both, alternately, two runs each, for each
# L of $LESSONS; tests/ab.awk's table (base: without the flag, new: with it)
# goes to $OUT/ab.txt and its lines matching $SHOW to stdout. For tuning
# experiments (docs/experiments/): the switch is an #ifdef in the tree;
# build_alt/ is ignored by git. KEEP=1 keeps the runs' CSVs in
# $OUT/ab-csv.tgz (ab-baseR-L/, ab-newR-L/), for tests/csv_merge.awk.
# C_L (C_10=32000,32768) gives lesson L its own lengths.
# SHAPES="L:MxN ..." (shapes the bench's sweep lacks) builds and times lesson
# L's program instead, `lessonL --rows M --cols N --csv` (ARGS_L: more of
# its options, e.g. ARGS_10="--reduction none"), in place of LESSONS' bench.
# RUNS: how many alternations (default 2). No pair of runs starts past
# STOP_S seconds from the start (default 400), so that the table of what
# ran comes back inside the device's limit on a call.
#   OUT=... FLAG=NAME LESSONS="8 10" [C=32768,65536] [C_10=...] [SHOW=regex] [KEEP=1] sh tests/ab_flags.sh
#   OUT=... FLAG=NAME SHAPES="8:409x163840 10:2730x24576" [ARGS_10=...] sh tests/ab_flags.sh
set -u
t0=$(date +%s)
late() { [ $(($(date +%s) - t0)) -ge "${STOP_S:-400}" ]; }
: "${OUT:?}" "${FLAG:?}"
[ -n "${SHAPES:-}" ] || : "${LESSONS:?}"
C=${C:-32768,65536,131072,262144,524288,1048576}
if [ -n "${SHAPES:-}" ]; then
    targets=$(for s in $SHAPES; do echo "lesson${s%%:*}"; done | sort -u)
else
    targets=bench
fi
# make does not see a changed -D: build_alt/ built with another flag goes
[ "$(cat build_alt/ab_flag 2>/dev/null)" = "$FLAG" ] || rm -rf build_alt
mkdir -p build_alt && echo "$FLAG" >build_alt/ab_flag
# both builds at once: a few long nvcc runs leave most cores idle in one
make -j"$(nproc)" $(for t in $targets; do echo "build/$t"; done) >"$OUT/b1.log" 2>&1 &
make -j"$(nproc)" BUILD=build_alt ARCH="-gencode arch=compute_90,code=sm_90 -D$FLAG" \
    $(for t in $targets; do echo "build_alt/$t"; done) >"$OUT/b2.log" 2>&1 &
wait
for b in b1 b2; do grep -q 'Error [0-9]' "$OUT/$b.log" && { tail "$OUT/$b.log"; exit 1; }; done
for r in $(seq "${RUNS:-2}"); do
    if [ -n "${SHAPES:-}" ]; then
        mkdir -p "$OUT/ab-base$r-shapes" "$OUT/ab-new$r-shapes"
        for s in $SHAPES; do
            late && break 2
            L=${s%%:*} mn=${s#*:}
            eval "args=\${ARGS_$L:-}"
            for side in base new; do
                b=build; [ $side = new ] && b=build_alt
                $b/lesson"$L" --rows "${mn%x*}" --cols "${mn#*x}" $args --csv "$OUT/ab-$side$r-shapes/$L.csv" \
                    >/dev/null 2>&1
            done
        done
        continue
    fi
    for L in $LESSONS; do
        late && break 2
        eval "cl=\${C_$L:-\$C}"
        mkdir -p "$OUT/ab-base$r-$L" "$OUT/ab-new$r-$L"
        build/bench --lesson "$L" --cols "$cl" --out "$OUT/ab-base$r-$L" >/dev/null 2>&1
        build_alt/bench --lesson "$L" --cols "$cl" --out "$OUT/ab-new$r-$L" >/dev/null 2>&1
    done
done
rmdir "$OUT"/ab-base* "$OUT"/ab-new* 2>/dev/null # those STOP_S left empty
awk -f tests/ab.awk "$OUT"/ab-base*/*.csv "$OUT"/ab-new*/*.csv >"$OUT/ab.txt"
[ "${KEEP:-0}" = 1 ] && (cd "$OUT" && tar czf ab-csv.tgz ab-base* ab-new*)
rm -rf "$OUT"/ab-base* "$OUT"/ab-new*
grep -E "${SHOW:-.}" "$OUT/ab.txt"
