#!/bin/sh
# The code's layout and size rules (`make test`): no file under lessons/
# includes a file from another lesson's folder; every file of
# common/device/ opens with the lesson that teaches it; no source file
# under lessons/ or common/ (the CPU emulator aside) over 600 lines;
# lessons 9 and 10 each at most 1200 lines of code, programs and exercises
# included; no function (or other top-level braced block) over 120 lines,
# host mains included. One PASS or FAIL line per rule, for tests/run.sh.
#   tests/code_rules.sh
set -u
files=$(find lessons common -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) \
        -not -path 'common/emu/*' | sort)
st=0
pass() { echo "PASS code rules: $1"; }
fail() { echo "FAIL code rules: $1"; st=1; }

cross=$(for f in $(echo "$files" | grep '^lessons/'); do
            d=$(dirname "$f")
            grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' "$f" | grep -v "\"\.\./$(basename "$d")/"
        done)
if [ -z "$cross" ]; then pass "no file under lessons/ includes a file from another lesson's folder"
else fail "includes across lessons: $(echo $cross)"; fi

untaught=$(for f in common/device/*; do head -n 1 "$f" | grep -q 'Taught in lesson [0-9]' || echo "$f"; done)
if [ -z "$untaught" ]; then pass "every file of common/device/ opens with the lesson that teaches it"
else fail "files of common/device/ that do not open with \"Taught in lesson N\": $(echo $untaught)"; fi

long=$(for f in $files; do n=$(wc -l <"$f"); [ "$n" -gt 600 ] && echo "$f ($n lines)"; done)
if [ -z "$long" ]; then pass "no source file under lessons/ or common/ is over 600 lines"
else fail "source files over 600 lines: $(echo $long)"; fi

for d in lessons/09_* lessons/10_*; do
    n=$(cat $(echo "$files" | grep "^$d/") | wc -l)
    if [ "$n" -le 1200 ]; then pass "$d holds $n lines of code, at most 1200"
    else fail "$d holds $n lines of code, over 1200"; fi
done

# A block opens on a line at brace depth 0 and closes where the depth
# returns to 0; braces in comments, strings and character constants are
# not counted.
big=$(awk '
    FNR == 1 { depth = 0; incomment = 0 }
    {
        line = $0; out = ""
        while (length(line) > 0) {
            if (incomment) {
                e = index(line, "*/"); if (e == 0) { line = ""; break }
                line = substr(line, e + 2); incomment = 0; continue
            }
            c = substr(line, 1, 1); two = substr(line, 1, 2)
            if (two == "//") break
            if (two == "/*") { incomment = 1; line = substr(line, 3); continue }
            if (c == "\"" || c == "\047") {
                q = c; line = substr(line, 2)
                while (length(line) > 0 && substr(line, 1, 1) != q) {
                    line = substr(line, (substr(line, 1, 1) == "\\") ? 3 : 2)
                }
                line = substr(line, 2); continue
            }
            out = out c; line = substr(line, 2)
        }
        n = gsub(/\{/, "{", out); m = gsub(/\}/, "}", out)
        if (depth == 0 && n > m) start = FNR
        depth += n - m
        if (depth == 0 && n + m > 0 && start > 0) {
            if (FNR - start + 1 > 120) printf "%s:%d (%d lines)\n", FILENAME, start, FNR - start + 1
            start = 0
        }
    }' $files)
if [ -z "$big" ]; then pass "no function under lessons/ or common/ is over 120 lines"
else fail "blocks over 120 lines: $(echo $big)"; fi
exit $st
