#!/usr/bin/env bash
# The check of the texts (tests/texts.awk, `make check-texts`), first on a
# scratch tree: a clean chapter passes, and each kind of violation planted in
# a copy of it fails with one line naming the file, the line and the rule.
# Then, if texts are given, the check on them.
# Usage: tests/texts.sh BUILD_DIR [TEXT...]
set -u
build=$1; shift
root=$(pwd)
dir="$build/texts-test"
rm -rf "$dir" && mkdir -p "$dir/lessons/01_x" "$dir/docs/img" || exit 1
: >"$dir/docs/img/a.png"
: >"$dir/docs/page.md"

pass() { echo "PASS texts: $1"; }
fail() { echo "FAIL texts: $1: $2"; }
check() { (cd "$dir" && awk -f "$root/tests/texts.awk" "$@"); }
ch=lessons/01_x/README.md

# A clean chapter: facts of the hardware and the design, generated numbers,
# dates and commits only where they may be.
cat >"$dir/clean.md" <<'EOF'
# Lesson 1 — scratch

A warp is 32 threads; a block of 128 threads, 32 KB of shared memory, 8 bytes
per element at 16384 x 4096 (2^26 floats). See [the page](../../docs/page.md#top),
![the idea](../../docs/img/a.png) and [the web](https://example.com/x.md).
It runs at <!-- m 1 naive 16384x4096 gbps -->253<!-- /m --> GB/s,
<!-- m 1 naive 16384x4096 pct -->8.5<!-- /m --> % of the copy, <!-- m 1 naive 512x131072 / 1 naive 16384x4096 ms -->27<!-- /m --> times slower.
The memory's peak <!-- fact: the H100's data sheet --> is 3.35 TB/s.
<!-- a comment: measured 2026-11-24 at 250 GB/s, commit a9af9ab -->

```
$ make lesson1            # prints 250 GB/s on 2026-11-24
```

<!-- measured: lesson1 -->
**NVIDIA H100**: measured by `make bench`, 2026-11-26, commit a9af9ab. [more](../../docs/page.md)

| 16384 x 4096 | 2.12 ms | 253 | 8.5 % |
<!-- /measured -->
EOF

cp "$dir/clean.md" "$dir/$ch"
check "$ch" >"$dir/out" 2>&1; status=$?
name="a clean chapter passes (facts, inline and block generated regions, code, comments, a fact note)"
if [ $status -eq 0 ] && [ ! -s "$dir/out" ]; then pass "$name"; else fail "$name" "exit status $status: $(head -c 400 "$dir/out")"; fi

# plant RULE TEXT: the clean chapter with one line more; the check must fail
# with the line's number and the rule.
plant() {
    local rule=$1 text=$2 line status
    cp "$dir/clean.md" "$dir/$ch"
    printf '%s\n' "$text" >>"$dir/$ch"
    line=$(wc -l <"$dir/$ch" | tr -d ' ')
    [ "$rule" = budget ] && line=1
    check "$ch" >"$dir/out" 2>&1; status=$?
    name="planted ($rule): $(printf '%s' "$text" | cut -c1-50)"
    if [ $status -ne 1 ]; then fail "$name" "exit status $status: $(head -c 300 "$dir/out")"
    elif [ "$(wc -l <"$dir/out")" -ne 1 ] || ! grep -q "^$ch:$line: $rule: " "$dir/out"; then
        fail "$name" "expected one line '$ch:$line: $rule: ...', got: $(head -c 300 "$dir/out")"
    else pass "$name"; fi
}

plant budget "$(awk 'BEGIN { for (i = 0; i < 4000; i++) printf "word "; print "" }')"
plant date "Measured on 2026-11-24 by make bench."
plant date "Rerun in Nov 2026 on another H100."
plant commit "At commit a9af9ab the kernel was faster."
plant measured "On the H100 it runs at 250 GB/s."
plant measured "That is 8.4 % of the copy."
plant measured "The call takes 57.0 ms at this shape."
plant measured "Lesson 2 is 1.26× faster here."
plant measured "The long rows are 27 times slower."
plant seed "Seed 001's kernel forgets the other warps."
plant link "See [the notes](missing.md) for more."
plant link "![a figure](../../docs/img/none.png)"

name="the lessons' total budget: 9 chapters of 3,952 words fail together, on the last one"
for i in 1 2 3 4 5 6 7 8 9; do
    mkdir -p "$dir/lessons/0${i}_y"
    awk 'BEGIN { print "# x"; for (i = 0; i < 3950; i++) printf "word "; print "" }' >"$dir/lessons/0${i}_y/README.md"
done
check $(cd "$dir" && echo lessons/0?_y/README.md) >"$dir/out" 2>&1; status=$?
if [ $status -eq 1 ] && [ "$(wc -l <"$dir/out")" -eq 1 ] &&
   grep -q '^lessons/09_y/README.md:1: budget: 35568 words in the lessons given, over 35000' "$dir/out"; then pass "$name"
else fail "$name" "exit status $status: $(head -c 300 "$dir/out")"; fi

if [ $# -gt 0 ]; then
    name="the course's texts keep their rules ($# files: budgets, dates, commits, measured numbers, seeds, links)"
    awk -f tests/texts.awk "$@" >"$dir/real" 2>&1; status=$?
    if [ $status -eq 0 ]; then pass "$name"
    else fail "$name" "$(wc -l <"$dir/real" | tr -d ' ') problem(s):"; sed 's/^/    /' "$dir/real"; fi
fi
exit 0
