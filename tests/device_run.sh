#!/usr/bin/env bash
# One call on a GPU machine (the course's device runs): build, then the
# stages named on the command line, every log and CSV under $OUT, a short
# summary last.
# Usage: OUT=/some/dir tests/device_run.sh [test] [sanitize] [large] [bench]
#                                           [lessons] [profile] [lesson7] [views] [ab] [sweep]
#                                           [ncu] [peers] [peers-ncu]
# (ab: AB_BASE=<commit> AB_ARGS="--cols 32,1024" [AB_LESSONS="9 10"] times
#  bench at the commit and at the working tree, alternately, AB_RUNS times
#  each (default 2), for each lesson of AB_LESSONS (default: all), and
#  prints each kernel's medians side by side: tests/ab.awk)
# (sweep: SWEEP_BASE=<commit> [SWEEP_P=8] [SWEEP_PARTS="1 2"]
#  [SWEEP_LESSONS="8 9 10"] runs the whole bench sweep (of those lessons'
#  kernels only, if named) at the commit and at the working tree, part K of
#  P of each in turn, into $OUT/sweep.tgz (ab-baseK-L/, ab-newK-L/) and the A/B table
#  $OUT/sweep-ab.txt; no part starts past SWEEP_STOP_S seconds (default 330),
#  so that a call ends inside the device's limit; tests/csv_merge.awk puts
#  the new build's rows into docs/results. On the H200 with P = 8,
#  parts 1-6 take 20-45 s a build, parts 7 and 8 (the long rows, where
#  lessons 3 and 4 are slow) about 150 s: P = 16 keeps every call short)
# (peers: PEERS_PY=<peers.py> [PEERS_DTYPES=f32,bf16,f16] [PEERS_SHAPES=MxN,...]
#  [PEERS_ARGS="--peers quack"] [PEERS_TIMEOUT_S=N: the rows measured by then]
#  (peers-ncu: PEERS_PY=... PEERS_NCU="softmax:f32:512x151936 ..." runs
#  the ncu stage's sections over the first launch of QuACK's kernel for
#  each, PEERS_NCU_KERNELS a regex of its name, default "cutlass": CuTe
#  DSL's kernels; beside the ncu stage's NCU_RUNS of the same shape)
#  runs the peers' script, PYTHONPATH as set for it, into $OUT/peers.csv in
#  the columns of docs/results/peers/*.csv (tests/tables_peers.awk), each
#  library's version named; the script and its libraries are not the
#  course's: they come with the call, in a folder git ignores)
# (ncu: NCU_RUNS="9:1024x65536 ..." [NCU_KERNELS=<regex>] [NCU_BENCH=<a
#  bench binary, e.g. build/ab-base/build/bench after a sweep>] runs
#  Nsight Compute's sections (throughput, occupancy, issue slots, stall
#  reasons) over bench --only's one launch of each of those kernels;
#  NCU_TIMED=1 [NCU_COUNT=2]: over the timed sweep's launches instead,
#  for kernels --only does not launch, such as the bfloat16 ones; --only 10
#  launches each lesson 10 kernel, the classifier summed and without the
#  total, on float32 and float16 logits)
# (lesson7: lessons 7 and 8 at their default shapes, with their extra tables)
# (no stage: test and lessons)
# On a lent machine whose .git may lag the working tree, name the commit
# for the CSVs: GIT_COMMIT=<hash> tests/device_run.sh ... (the Makefile
# otherwise asks git there).
set -u
OUT=${OUT:-build/device}
mkdir -p "$OUT"
stages=${*:-test lessons}
# cuDNN for make bench: the machines here have it only as a pip wheel.
if [ -z "${CUDNN_HOME:-}" ]; then
    CUDNN_HOME=$(python3 -c 'import nvidia.cudnn as c; print(list(c.__path__)[0])' 2>/dev/null)
    export CUDNN_HOME
fi
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
{ nvcc --version | tail -n 1; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } \
    >"$OUT/env.txt" 2>&1
t0=$(date +%s)
# BUILD_ALL=0: the stages build what they need (sweep, ab, ncu with NCU_BENCH)
if [ "${BUILD_ALL:-1}" != 0 ]; then
    make -j"$(nproc)" all >"$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log"; exit 1; }
fi
summary="build: $(( $(date +%s) - t0 )) s"
for stage in $stages; do
    t0=$(date +%s)
    case $stage in
    test)     make test >"$OUT/test.log" 2>&1; st=$?
              grep -E '^(FAIL|SKIP)' "$OUT/test.log" | head -n 30
              line="make test: status $st, $(tail -n 1 "$OUT/test.log")" ;;
    sanitize) SANITIZE_JOBS=${SANITIZE_JOBS:-$(nproc)} make sanitize >"$OUT/sanitize.log" 2>&1; st=$?
              tar czf "$OUT/sanitize-logs.tgz" build/sanitize 2>/dev/null
              line="make sanitize: status $st
$(cat "$OUT/sanitize.log")" ;;
    large)    make test-large >"$OUT/large.log" 2>&1; st=$?
              grep -E '^FAIL' "$OUT/large.log" | head -n 20
              line="make test-large: status $st, $(tail -n 1 "$OUT/large.log")" ;;
    bench)    make bench >"$OUT/bench.log" 2>&1; st=$?
              cp docs/results/*.csv "$OUT/" 2>/dev/null
              line="make bench: status $st, $(grep -c FAILED "$OUT/bench.log") FAILED lines" ;;
    lessons)  make lessons >"$OUT/lessons.log" 2>&1; st=$?
              cp build/lessons.csv "$OUT/" 2>/dev/null
              line="make lessons: status $st
$(sed -n '/^All lessons/,$p' "$OUT/lessons.log")" ;;
    profile)  make profile-lesson5 >"$OUT/profile.log" 2>&1; st=$?
              line="make profile-lesson5: status $st
$(cat "$OUT/profile.log")" ;;
    lesson7)  build/lesson7 >"$OUT/lesson7.log" 2>&1; st7=$?
              build/lesson8 >"$OUT/lesson8.log" 2>&1; st=$?
              line="lesson7: status $st7, lesson8: status $st"
              [ $st7 -ne 0 ] && st=$st7 ;;
    views)    st=0 # any lesson run that fails its check (or crashes) makes the stage fail
              for run in "8 2097152 32" "8 16384 4096" "8 1024 65536" "8 128 524288" "8 64 1048576" \
                         "8 16 4194304" "8 1 67108864" "5 2097152 32" "5 16384 4096" "5 2048 32768" \
                         "6 2097152 32" "6 1048576 64" "6 524288 128" "6 16384 4096" \
                         "6 64 1048576"; do
                  set -- $run
                  echo "lesson$1:"
                  build/lesson"$1" --rows "$2" --cols "$3" >"$OUT/view-run.log" 2>&1 || st=1
                  sed -n '/^Views/,$p' "$OUT/view-run.log"
              done >"$OUT/views.log"; rm -f "$OUT/view-run.log"
              line="lessons 5, 6, 8 views: status $st
$(cat "$OUT/views.log")" ;;
    ab)       st=0; base=${AB_BASE:?ab needs AB_BASE=<commit>}; tree=build/ab-base
              rm -rf "$tree"; git worktree prune 2>/dev/null
              if git worktree add -f --detach "$tree" "$base" >"$OUT/ab-build.log" 2>&1 &&
                 make -C "$tree" -j"$(nproc)" GIT_COMMIT="$base" build/bench >>"$OUT/ab-build.log" 2>&1 &&
                 make -j"$(nproc)" build/bench >>"$OUT/ab-build.log" 2>&1; then
                  for r in $(seq "${AB_RUNS:-2}"); do
                      for L in ${AB_LESSONS:-all}; do
                          la=""; [ "$L" = all ] || la="--lesson $L"
                          mkdir -p "$OUT/ab-base$r-$L" "$OUT/ab-new$r-$L"
                          "$tree"/build/bench $AB_ARGS $la --out "$OUT/ab-base$r-$L" >>"$OUT/ab.log" 2>&1 || st=1
                          build/bench $AB_ARGS $la --out "$OUT/ab-new$r-$L" >>"$OUT/ab.log" 2>&1 || st=1
                      done
                  done
                  line="A/B of $base (base) against the working tree (new), $AB_ARGS
$(awk -f tests/ab.awk "$OUT"/ab-base*/*.csv "$OUT"/ab-new*/*.csv)"
              else st=1; line="ab: build failed: $(tail -n 5 "$OUT/ab-build.log")"; fi ;;
    sweep)    st=0; base=${SWEEP_BASE:?sweep needs SWEEP_BASE=<commit>}; tree=build/ab-base; P=${SWEEP_P:-8}
              if [ ! -x "$tree/build/bench" ]; then
                  rm -rf "$tree"; git worktree prune 2>/dev/null
                  { git worktree add -f --detach "$tree" "$base" &&
                    make -C "$tree" -j"$(nproc)" GIT_COMMIT="$base" build/bench; } >"$OUT/sweep-build.log" 2>&1 || st=1
              fi
              make -j"$(nproc)" build/bench >>"$OUT/sweep-build.log" 2>&1 || st=1
              done_parts=""
              for k in ${SWEEP_PARTS:-$(seq "$P")}; do
                  [ "$st" -ne 0 ] && break
                  # a part not started past SWEEP_STOP_S seconds: the next call runs it
                  [ $(( $(date +%s) - t0 )) -gt "${SWEEP_STOP_S:-330}" ] && break
                  t1=$(date +%s)
                  for L in ${SWEEP_LESSONS:-all}; do
                      la=""; [ "$L" = all ] || la="--lesson $L"
                      mkdir -p "$OUT/ab-base$k-$L" "$OUT/ab-new$k-$L"
                      "$tree"/build/bench --part "$k/$P" $la --out "$OUT/ab-base$k-$L" >>"$OUT/sweep.log" 2>&1 || st=1
                      build/bench --part "$k/$P" $la --out "$OUT/ab-new$k-$L" >>"$OUT/sweep.log" 2>&1 || st=1
                  done
                  done_parts="$done_parts $k($(( $(date +%s) - t1 )) s)"
                  # at most 8 files come back from a call: the CSVs travel in one archive, made after each
                  # part, so that a call killed at the device's limit still brings back the parts done
                  (cd "$OUT" && tar czf sweep.tgz ab-base* ab-new*)
              done
              awk -f tests/ab.awk "$OUT"/ab-base*/*.csv "$OUT"/ab-new*/*.csv >"$OUT/sweep-ab.txt" 2>/dev/null
              rm -rf "$OUT"/ab-base* "$OUT"/ab-new*
              line="sweep of $base (base) and the working tree (new), parts of $P done:$done_parts" ;;
    ncu)      st=0 # where a kernel's time goes: Nsight Compute's sections over one launch of each kernel
              [ -n "${NCU_BENCH:-}" ] || make -j"$(nproc)" build/bench >/dev/null 2>&1 || st=1
              for r in ${NCU_RUNS:?ncu needs NCU_RUNS="LESSON:MxN ..."}; do
                  n=${r%%:*}; shape=${r#*:}
                  # NCU_TIMED=1: the timed sweep's launches at that row length (every storage type),
                  # of which ncu takes NCU_KERNELS' first NCU_COUNT (default 2)
                  if [ "${NCU_TIMED:-0}" = 1 ]; then args="--lesson $n --cols ${shape#*x}"
                      lim="--launch-count ${NCU_COUNT:-2}"
                  else args="--only $n --shape $shape"; lim=""; fi
                  ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
                      --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis \
                      --section MemoryWorkloadAnalysis ${NCU_KERNELS:+-k regex:$NCU_KERNELS} $lim \
                      "${NCU_BENCH:-build/bench}" $args >"$OUT/ncu-$n-$shape.txt" 2>&1 || st=1
              done
              line="ncu: status $st, reports in ncu-*.txt" ;;
    peers-ncu) st=0; py=${PEERS_PY:?peers-ncu needs PEERS_PY=<the peers script>}
              for r in ${PEERS_NCU:?peers-ncu needs PEERS_NCU="OP:DTYPE:MxN ..."}; do
                  op=${r%%:*}; rest=${r#*:}; dt=${rest%%:*}; shape=${rest#*:}
                  ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
                      --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis \
                      -k "regex:${PEERS_NCU_KERNELS:-cutlass}" --launch-count 1 python3 "$py" --peers quack \
                      --ops "$op" --dtypes "$dt" --shapes "$shape" >"$OUT/ncu-peers-$op-$dt-$shape.txt" 2>&1 || st=1
              done
              line="peers-ncu: status $st, reports in ncu-peers-*.txt" ;;
    peers)    st=0; py=${PEERS_PY:?peers needs PEERS_PY=<the peers script>}
              shapes=${PEERS_SHAPES:-65536x1024,32768x2048,16384x4096,8192x8192,4096x16384,2048x32768,1024x65536,512x131072,256x262144,64x1048576,4096x32000,4096x32001,2048x50304,2048x50257,1024x128256,1024x128257,512x151936,512x151937,256x262145}
              timeout "${PEERS_TIMEOUT_S:-3000}" python3 "$py" --ops softmax,ce --dtypes "${PEERS_DTYPES:-f32,bf16,f16}" \
                  --shapes "$shapes" ${PEERS_ARGS:-} >"$OUT/peers-raw.txt" 2>"$OUT/peers-err.txt" || st=1
              vers=$(python3 -c 'import importlib.metadata as m, torch
for d in ("quack-kernels", "liger-kernel"):
    try: print(d.split("-")[0], m.version(d))
    except Exception: pass
print("torch", torch.__version__.split("+")[0])' 2>>"$OUT/peers-err.txt")
              awk -F, -v vers="$vers" -v day="$(date -u +%Y-%m-%d)" '
                  BEGIN { n = split(vers, l, "\n"); for (i = 1; i <= n; i++) { split(l[i], w, " "); ver[w[1]] = w[2] }
                          print "op,dtype,rows,cols,peer,version,median_ms,copy_ms,pct_of_copy,status,gpu,date" }
                  /^# / { g = $0; sub(/^# /, "", g); sub(/ torch .*/, "", g); next }
                  $1 == "softmax" || $1 == "ce" {
                      ok = $6 != "" && $9 !~ /^ERR/
                      printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,\"%s\",%s\n", $1, $2, $3, $4, $5, ver[$5], $6, $7, $8,
                             ok ? "ok" : "refused", g, day }' "$OUT/peers-raw.txt" >"$OUT/peers.csv"
              line="peers: status $st, $(grep -c ',ok,' "$OUT/peers.csv") rows, $(grep -c ',refused,' "$OUT/peers.csv") refused
$(tail -n 3 "$OUT/peers-err.txt")" ;;
    *)        echo "device_run: unknown stage '$stage'" >&2; exit 2 ;;
    esac
    summary="$summary
[$stage, $(( $(date +%s) - t0 )) s] $line"
    [ "$st" -ne 0 ] && failed=1
done
cat "$OUT/env.txt"
echo "$summary"
exit "${failed:-0}"
