#!/usr/bin/env bash
# Lesson 11's measured table: each shape on 1, 2, 4 ... GPUs (as many as
# there are) and lesson 8 on one GPU, as CSV on stdout.
#
#   make build/lesson11 build/lesson8
#   bash lessons/11_multi_gpu/sweep.sh > lesson11.csv 2> lesson11.log
#
# Each lesson11 run checks its output (against the float64 reference on the
# harness's path, or by sums and sampled ratios for a row too long for GPU 0
# to hold whole) and then times both ways of combining on the resident
# slices. SWEEP_SHAPES="rows x cols ..." replaces the shapes below.
# With --parse, reads a log of such runs on stdin instead of running them.
set -u
SHAPES=${SWEEP_SHAPES:-"1x32768 1x262144 64x131072 1024x131072 4096x65536 16384x32768 4096x262144 16384x131072 1x268435456 1x17179869184 1x34359738368"}
BUILD=${BUILD:-build}

parse() {
    awk -v gpu="$1" -v commit="$2" -v date="$3" '
    /^== gpus /    { g = $3; r = $5; c = $7; l8 = 0; ok = "no"; next }
    /^== lesson8 / { g = 0; r = $4; c = $6; l8 = 1; next }
    l8 && $1 == "time" { t8[r "," c] = $2; next }
    $1 == "check" { ok = ($2 == "PASS") ? "yes" : "no"; next }
    /copy of each GPU.s slice/ { cp[g "," r "," c] = $6; next }
    /^ *all-(gather|reduce) \(/ {
        k = g "," r "," c; n++
        key[n] = k; shape[n] = r "," c
        line[n] = g "," r "," c "," $1 "," $4 "," cp[k] "," $5 "," $7 "," $9 "," ok
    }
    END {
        print "gpus,rows,cols,combine,median_ms,slice_copy_ms,pct_of_slice_copy,collectives_ms,collectives_pct," \
              "verified,lesson8_ms,lesson8_over_this,gpu,commit,date"
        for (i = 1; i <= n; i++) {
            split(line[i], f, ",")
            t = t8[shape[i]]
            printf "%s,%s,%s,\"%s\",%s,%s\n", line[i], t, t ? sprintf("%.2f", t / f[5]) : "", gpu, commit, date
        }
    }'
}

if [ "${1:-}" = "--parse" ]; then
    parse "${2:?GPU name}" "${3:?commit}" "${4:?date}"
    exit
fi

export NCCL_NVLS_ENABLE=0 # NVLink multicast stays off (it can take shared GPUs out of service)
ngpus=$(nvidia-smi -L | wc -l)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
commit=${GIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for s in $SHAPES; do
    r=${s%x*} c=${s#*x}
    g=1
    while [ $g -le "$ngpus" ]; do
        echo "== gpus $g rows $r cols $c"
        "$BUILD/lesson11" --gpus $g --rows $r --cols $c --iters 50 2>&1
        g=$((g * 2))
    done
    # lesson 8's harness holds x and y on the host as well: up to 2^32 elements
    if [ $((r * c)) -le $((1 << 32)) ]; then
        echo "== lesson8 rows $r cols $c"
        "$BUILD/lesson8" --rows $r --cols $c --iters 50 --no-check 2>&1
    fi
done | tee /dev/stderr | parse "$ngpus x $gpu" "$commit" "$date"
