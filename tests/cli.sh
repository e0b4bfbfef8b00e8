#!/usr/bin/env bash
# The lesson programs' command-line behaviour: every bad input gets exit
# status 2 and exactly one line on stderr; --help works; a machine without a
# GPU gets one clear line and exit status 3. And a valid --input holding a
# row of only -inf passes every lesson's own check (NaN there, as the plain
# definition gives; zeros in lesson 7, whose attention kernels define them),
# on the GPU, or on the CPU emulator's build (BUILD_DIR/emu) without one.
# Lesson 9 alone takes --dtype f16|bf16|f32 and 16-bit .npy files ('<f2',
# and '<u2' holding bfloat16 bits), in and out; every other lesson refuses
# --dtype with exit status 2. Lesson 10 also takes --ignore-index and
# --reduction mean|sum|none: a bad value gets exit status 2 and one line; its
# four kernels pass their checks with each reduction and on long rows
# (the tests reach every long-row mode and the 16-bit logits). Lesson 11
# takes --gpus, --method and --comm the same way, and checks K ranks on one
# device through its in-process stand-in (--comm local).
# Usage: tests/cli.sh BUILD_DIR N...   (the lesson numbers)
set -u
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

have_gpu=0
nvidia-smi -L >/dev/null 2>&1 && have_gpu=1

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }

# expect_usage_error NAME PROGRAM ARGS...: exit 2, one line on stderr, no stdout.
expect_usage_error() {
    local name=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    local status=$? lines
    lines=$(wc -l <"$tmp/err")
    if [ "$status" -ne 2 ]; then
        fail "$name" "exit status $status, want 2 (stderr: $(head -c 200 "$tmp/err"))"
    elif [ "$lines" -ne 1 ]; then
        fail "$name" "$lines lines on stderr, want 1: $(head -c 300 "$tmp/err")"
    elif [ -s "$tmp/out" ]; then
        fail "$name" "printed to stdout: $(head -c 200 "$tmp/out")"
    else
        pass "$name"
    fi
}

# Malformed .npy files.
printf 'NOT A NUMPY FILE AT ALL' >"$tmp/bad_magic.npy"
npy_header() { # DICT
    local dict=$1 pad
    pad=$(( 64 - (10 + ${#dict} + 1) % 64 ))
    printf '\x93NUMPY\x01\x00'; printf "$(printf '\\x%02x\\x%02x' $(( (${#dict} + pad + 1) % 256 )) $(( (${#dict} + pad + 1) / 256 )))"
    printf '%s%*s\n' "$dict" "$pad" ''
}
write_npy() { # FILE DICT DATA_BYTES
    { npy_header "$2"; head -c "$3" /dev/zero; } >"$1"
}
write_npy "$tmp/f64.npy" "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }" 48
write_npy "$tmp/rank1.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }" 24
write_npy "$tmp/short.npy" "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" 8
write_npy "$tmp/fortran.npy" "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }" 24

# A valid 4 x 8 float32 input whose row 1 is all -inf (a query whose every
# key is masked), next to an ordinary row, a row with some -inf and a row
# with one finite score. Floats as big-endian hex bit patterns, written
# little-endian.
f32() { for h in "$@"; do printf "\\x${h:6:2}\\x${h:4:2}\\x${h:2:2}\\x${h:0:2}"; done; }
NINF=ff800000
{ npy_header "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), }"
  f32 3f000000 bf800000 40000000 40400000 be800000 3fc00000 00000000 c0000000 # 0.5 -1 2 3 -0.25 1.5 0 -2
  f32 $NINF $NINF $NINF $NINF $NINF $NINF $NINF $NINF
  f32 3f800000 $NINF 40000000 $NINF 40400000 $NINF 40800000 $NINF              # 1 2 3 4, -inf between
  f32 c0a00000 $NINF $NINF $NINF $NINF $NINF $NINF $NINF                       # -5, then -inf
} >"$tmp/masked_row.npy"

# 16-bit inputs, 2 x 8, as little-endian 16-bit patterns (given big-endian
# in hex): an ordinary row, and a row with float16's largest finite value
# (65504; an ordinary large value in bfloat16) and -inf among finite ones.
u16() { for h in "$@"; do printf "\\x${h:2:2}\\x${h:0:2}"; done; }
{ npy_header "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 8), }"
  u16 3800 bc00 4000 4200 b400 3e00 0000 c000                # 0.5 -1 2 3 -0.25 1.5 0 -2
  u16 7bff 3c00 fc00 7bff 0000 fbff 4000 fc00                # 65504 1 -inf 65504 0 -65504 2 -inf
} >"$tmp/half.npy"
{ npy_header "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 8), }"
  u16 3f00 bf80 4000 4040 be80 3fc0 0000 c000                # the same first row in bfloat16
  u16 7f7f 3f80 ff80 7f7f 0000 ff7f 4000 ff80                # ~3.39e38 1 -inf ~3.39e38 0 -3.39e38 2 -inf
} >"$tmp/bf16.npy"
# descr of an .npy file's header
descr_of() { head -c 128 "$1" | tr -d '\000' | grep -ao "'descr': '[<>a-z0-9]*'" | cut -d"'" -f4; }

for n in "${@:2}"; do
    prog="$build/lesson$n"
    [ -x "$prog" ] || { fail "lesson$n CLI" "$prog not built"; continue; }
    L="lesson$n rejects"
    expect_usage_error "$L a negative --rows"           "$prog" --rows -5
    expect_usage_error "$L --cols 0"                    "$prog" --cols 0
    expect_usage_error "$L a non-numeric --rows"        "$prog" --rows abc
    expect_usage_error "$L --cols 1e99"                 "$prog" --cols 1e99
    expect_usage_error "$L an overflowing --rows"       "$prog" --rows 99999999999999999999
    expect_usage_error "$L --rows above 2^31-1"         "$prog" --rows 2147483648
    expect_usage_error "$L a fractional --cols"         "$prog" --cols 3.5
    expect_usage_error "$L --iters 0"                   "$prog" --iters 0
    expect_usage_error "$L a negative --warmup"         "$prog" --warmup -1
    expect_usage_error "$L a non-numeric --seed"        "$prog" --seed x1
    expect_usage_error "$L an unknown --input-kind"     "$prog" --input-kind gaussian
    expect_usage_error "$L an unknown flag"             "$prog" --frobnicate
    expect_usage_error "$L a stray argument"            "$prog" 1024
    expect_usage_error "$L --rows without a value"      "$prog" --rows
    expect_usage_error "$L --input with --rows"         "$prog" --input "$tmp/f64.npy" --rows 2
    expect_usage_error "$L a missing --input file"      "$prog" --input "$tmp/nope.npy"
    expect_usage_error "$L a file that is not .npy"     "$prog" --input "$tmp/bad_magic.npy"
    expect_usage_error "$L a float64 .npy"              "$prog" --input "$tmp/f64.npy"
    expect_usage_error "$L a rank-1 .npy"               "$prog" --input "$tmp/rank1.npy"
    expect_usage_error "$L a truncated .npy"            "$prog" --input "$tmp/short.npy"
    expect_usage_error "$L a Fortran-order .npy"        "$prog" --input "$tmp/fortran.npy"

    if [ "$n" = 9 ]; then
        expect_usage_error "$L an unknown --dtype"          "$prog" --dtype f64
        expect_usage_error "$L --dtype without a value"     "$prog" --dtype
        expect_usage_error "$L an empty --dtype"            "$prog" --dtype=
    else
        expect_usage_error "$L --dtype (float32 only)"      "$prog" --dtype f16
        expect_usage_error "$L a float16 .npy"              "$prog" --input "$tmp/half.npy"
        expect_usage_error "$L a bfloat16 (<u2) .npy"       "$prog" --input "$tmp/bf16.npy"
    fi

    "$prog" --help >"$tmp/out" 2>&1
    status=$?
    if [ $status -eq 0 ] && grep -q -- '--input-kind' "$tmp/out"; then pass "lesson$n --help lists the options"
    else fail "lesson$n --help lists the options" "status $status"; fi
    if [ "$n" = 9 ]; then
        if grep -q -- '--dtype TYPE' "$tmp/out" && grep -q "'<u2' (bfloat16" "$tmp/out"; then
            pass "lesson9 --help explains --dtype and the bfloat16 file convention"
        else fail "lesson9 --help explains --dtype and the bfloat16 file convention" "$(head -c 200 "$tmp/out")"; fi
    fi

    # The masked row through --input, on whichever build can run here.
    name="lesson$n checks a valid --input with a row of only -inf and passes"
    runner=$prog
    [ $have_gpu -eq 0 ] && runner="$build/emu/lesson$n"
    if [ ! -x "$runner" ]; then
        echo "SKIP $name: no GPU, and $runner (make lesson$n EMU=1) not built"
    else
        EMU_QUIET=1 "$runner" --input "$tmp/masked_row.npy" --output "$tmp/y.npy" --iters 20 --warmup 1 \
            >"$tmp/out" 2>&1
        status=$?
        # Lesson 7's kernels define that row as zeros: read them from --output
        # (after the 128-byte header and row 0's 32 bytes), not only from its check.
        zeros=yes
        [ "$n" = 7 ] && [ "$(od -An -v -tx1 -j 160 -N 32 "$tmp/y.npy" 2>/dev/null | tr -d ' \n')" != \
            "$(printf '0%.0s' $(seq 64))" ] && zeros=no
        # Lesson 7 also checks every variant: its 4 demos (one line each)
        # and, on a GPU, the 5 variants of its table that fit 4 x 8 (the
        # [S, S] masks need rows >= cols); nothing may report FAIL.
        variants=ok
        if [ "$n" = 7 ]; then
            want=4 got=$(grep -c '^  check: PASS' "$tmp/out")
            [ $have_gpu -eq 1 ] && want=9 got=$((got + $(grep -cE '^  [a-z].* PASS$' "$tmp/out")))
            { [ "$got" -ne $want ] || grep -q FAIL "$tmp/out"; } && variants="$got of $want PASS"
        fi
        if [ $status -eq 0 ] && grep -q 'check *PASS' "$tmp/out" && [ $zeros = yes ] && [ "$variants" = ok ]; then
            pass "$name"
        else
            fail "$name" "status $status, lesson 7's zeros: $zeros, variant checks: $variants: $(grep -a 'check' "$tmp/out" | tail -n 1)"
        fi
    fi

    # Lesson 9: each --dtype on a small shape, and 16-bit files in and out.
    if [ "$n" = 9 ] && [ -x "$runner" ]; then
        for dt in f16 bf16 f32; do
            name="lesson9 --dtype $dt runs both entry points and lesson 8, and every check passes"
            EMU_QUIET=1 "$runner" --dtype $dt --rows 37 --cols 1000 --iters 20 --warmup 1 >"$tmp/out" 2>&1
            status=$?
            if [ $status -eq 0 ] && [ "$(grep -c 'check *PASS' "$tmp/out")" -eq 3 ] && ! grep -q FAIL "$tmp/out"; then
                pass "$name"
            else fail "$name" "status $status: $(grep -a 'check' "$tmp/out" | tr '\n' ' ')"; fi
        done
        # file, --dtype, descr wanted in --output
        for case in "half.npy::<f2" "bf16.npy::<u2" "half.npy:bf16:<u2" "bf16.npy:f16:<f2" "masked_row.npy:f16:<f2"; do
            file=${case%%:*}; rest=${case#*:}; dt=${rest%%:*}; want=${rest#*:}
            name="lesson9 --input $file${dt:+ --dtype $dt} passes and --output is '$want'"
            rm -f "$tmp/y9.npy"
            EMU_QUIET=1 "$runner" --input "$tmp/$file" ${dt:+--dtype $dt} --output "$tmp/y9.npy" --iters 20 --warmup 1 \
                >"$tmp/out" 2>&1
            status=$?
            got=$(descr_of "$tmp/y9.npy" 2>/dev/null)
            if [ $status -eq 0 ] && [ "$(grep -c 'check *PASS' "$tmp/out")" -eq 3 ] && [ "$got" = "$want" ]; then
                pass "$name"
            else fail "$name" "status $status, descr '$got': $(grep -a 'check' "$tmp/out" | tr '\n' ' ')"; fi
        done
        # the output of a float16 run read back as input: a round trip through the program's own file
        name="lesson9 reads back its own float16 --output as --input"
        EMU_QUIET=1 "$runner" --input "$tmp/half.npy" --output "$tmp/y9.npy" --iters 20 --warmup 1 >/dev/null 2>&1
        EMU_QUIET=1 "$runner" --input "$tmp/y9.npy" --iters 20 --warmup 1 >"$tmp/out" 2>&1
        status=$?
        if [ $status -eq 0 ] && grep -q 'shape *2 x 8 float16 values' "$tmp/out" && grep -q 'check *PASS' "$tmp/out"; then
            pass "$name"
        else fail "$name" "status $status: $(grep -a -e shape -e check "$tmp/out" | tr '\n' ' ')"; fi
    fi

    # Lesson 10's own options: bad values on any build; a target out of
    # range is known only with the shape, on the build that can run here.
    if [ "$n" = 10 ]; then
        expect_usage_error "$L --reduction max"                 "$prog" --reduction max
        expect_usage_error "$L a non-numeric --ignore-index"    "$prog" --ignore-index abc
        expect_usage_error "$L --ignore-index without a value"  "$prog" --ignore-index
        expect_usage_error "$L an --ignore-index beyond 32 bits" "$prog" --ignore-index 4294967296
        if [ -x "$runner" ]; then
            for args in "--rows 5 --cols 40 --ignore-index 3 --reduction mean" "--rows 5 --cols 40 --reduction sum" \
                        "--rows 3 --cols 20000 --reduction sum" "--rows 7 --cols 300 --reduction none" "--rows 2 --cols 33"; do
                name="lesson10 $args: its four kernels pass their checks"
                EMU_QUIET=1 "$runner" $args --iters 20 --warmup 1 >"$tmp/out" 2>&1
                status=$?
                if [ $status -eq 0 ] && [ "$(grep -c 'check *PASS' "$tmp/out")" -eq 4 ]; then pass "$name"
                else fail "$name" "status $status: $(grep -a 'check' "$tmp/out" | tr '\n' ' ')"; fi
            done
        fi
    fi
    # Lesson 11: its own flags, and K ranks on one device through the stand-in.
    if [ "$n" = 11 ]; then
        expect_usage_error "$L --gpus 0"                        "$prog" --gpus 0
        expect_usage_error "$L --gpus 17"                       "$prog" --gpus 17
        expect_usage_error "$L --method ring"                   "$prog" --method ring
        expect_usage_error "$L --comm mpi"                      "$prog" --comm mpi
        expect_usage_error "$L --gpus without a value"          "$prog" --gpus
        if [ -x "$runner" ]; then
            expect_usage_error "$L more --gpus than GPUs over NCCL" env EMU_QUIET=1 "$runner" --comm nccl --gpus 16 --rows 2 --cols 10
            for args in "--comm local --gpus 3 --rows 5 --cols 1001" "--comm local --gpus 4 --rows 3 --cols 3 --method all-reduce" \
                        "--comm local --gpus 2 --rows 2 --cols 70001 --method all-gather"; do
                name="lesson11 $args: the gathered output passes its check"
                EMU_QUIET=1 "$runner" $args --iters 20 --warmup 1 >"$tmp/out" 2>&1
                status=$?
                if [ $status -eq 0 ] && grep -q 'check *PASS' "$tmp/out"; then pass "$name"
                else fail "$name" "status $status: $(grep -a 'check' "$tmp/out" | tr '\n' ' ')"; fi
            done
        fi
    fi

    if [ $have_gpu -eq 0 ]; then
        "$prog" --rows 4 --cols 8 >"$tmp/out" 2>"$tmp/err"
        status=$?
        if [ $status -eq 3 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'needs an NVIDIA GPU' "$tmp/err"; then
            pass "lesson$n says in one line that it needs a GPU, and exits 3"
        else
            fail "lesson$n says in one line that it needs a GPU, and exits 3" "status $status: $(cat "$tmp/err")"
        fi
        echo "SKIP lesson$n rejects a shape larger than GPU memory: no GPU"
        echo "SKIP lesson$n runs and checks a small shape: no GPU"
    else
        expect_usage_error "$L a shape larger than GPU memory" "$prog" --rows 2000000 --cols 500000
        "$prog" --rows 37 --cols 1000 --iters 20 --warmup 1 >"$tmp/out" 2>&1
        status=$?
        if [ $status -eq 0 ] && grep -q 'check *PASS' "$tmp/out" && grep -qE '% of (copy|bound)' "$tmp/out"; then
            pass "lesson$n runs and checks a small shape"
        else
            fail "lesson$n runs and checks a small shape" "status $status: $(tail -n 3 "$tmp/out")"
        fi
    fi
done
