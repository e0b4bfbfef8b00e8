# make check-texts: the course's texts stay a textbook. Run from the
# repository root (a file's path decides its budget; links resolve from its
# folder):
#
#   awk -f tests/texts.awk README.md lessons/*/README.md docs/*.md
#   awk -v list=1 -f tests/texts.awk ...     also prints each file's words (the budget's count)
#
# Each problem is one line "FILE:LINE: RULE: what", on stdout; the exit status
# is 1 if there is any, 0 if none. The rules:
#
#   budget    words over the file's budget: README.md 2000; lessons
#             01-07 (lessons/0[1-7]_*/README.md) 4000; other lessons 5000;
#             every page under docs/ 5000; all lessons/*/README.md given,
#             together, 35000 (reported on the last lesson given)
#   date      a date (2026-11-24, "Nov 2026", "24 November 2026") in prose:
#             dates belong in the captions `make tables` writes
#   commit    a word of 7-40 hex digits with a digit and a letter a-f in it
#   measured  a number typed by hand with a unit of measurement after it:
#             GB/s, TB/s, MB/s, GiB/s; %; µs, us, ms, ns; a speed-up "1.9×",
#             "3 x faster", "27 times slower". Such a number comes from a CSV
#             through an inline marker of `make tables` (tests/tables.awk).
#             A figure that is not a measurement of this course (a data
#             sheet's peak bandwidth, a design constant, a tolerance) is
#             allowed on a line that carries a comment saying what it is:
#             <!-- fact: the H100's data sheet -->
#   seed      "seed 00N" (any case): a source document is named by what it is
#   link      a relative link or image [..](path) or ![..](path) whose file
#             does not exist (http(s):, mailto: and #anchors are not checked;
#             for path#anchor the path is)
#
# A note under docs/experiments/ is the record of a one-off run, not
# `make bench`'s: its setup and result may name the date, the commit and the
# numbers measured, so only the budget, seed and link rules apply to it.
#
# The budget counts every run of non-blank characters outside the block
# regions `make tables` generates (<!-- measured: KIND --> ... <!-- /measured
# -->): code blocks, comments, inline markers and hand-written tables too, as
# a reader meets them all. The other rules read prose: every line outside
# fenced code blocks (``` or ~~~), HTML comments, generated regions and the
# number inside an inline marker <!-- m ... -->N<!-- /m -->; hand-written
# markdown tables (lines starting with |) are prose. Links are checked
# everywhere but in code blocks, generated regions included; seed names
# everywhere, code blocks included (a program's quoted output too).
# POSIX awk: runs under mawk, gawk and BSD awk.

BEGIN {
    MONTH = "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\\.?"
    YEAR = "(19|20)[0-9][0-9]"
    NUM = "[0-9]([0-9.,]*[0-9])?"
    nbad = 0; lesson_words = 0; last_lesson = ""
}

function problem(rule, what) {
    print FILENAME ":" FNR ": " rule ": " what
    nbad++
}

function budget_of(p) {
    sub(/^\.\//, "", p)
    if (p == "README.md") return 2000
    if (p ~ /^lessons\/0[1-7]_[^\/]*\/README\.md$/) return 4000
    if (p ~ /^lessons\/[0-9][0-9]_[^\/]*\/README\.md$/) return 5000
    if (p ~ /^docs\/.*\.md$/) return 5000
    return 0
}

function end_file() {
    if (file == "") return
    if (list) printf "%6d  %s (budget %s)\n", words, file, budget ? budget : "none"
    if (budget && words > budget) { print file ":1: budget: " words " words, over " budget; nbad++ }
    if (file ~ /^(\.\/)?lessons\/[^\/]*\/README\.md$/) { lesson_words += words; last_lesson = file }
}

FNR == 1 {
    end_file()
    file = FILENAME; words = 0; budget = budget_of(file)
    infence = 0; incomment = 0; inregion = 0; counting_off = 0
    record = (file ~ /^(\.\/)?docs\/experiments\//)
    dir = file; if (!sub(/\/[^\/]*$/, "", dir)) dir = "."
}

# Drops HTML comments from s, across lines (incomment carries over).
function uncomment(s,    out, a) {
    out = ""
    while (s != "") {
        if (incomment) {
            a = index(s, "-->")
            if (!a) return out
            s = substr(s, a + 3); incomment = 0
        } else {
            a = index(s, "<!--")
            if (!a) return out s
            out = out substr(s, 1, a - 1) " "; s = substr(s, a + 4); incomment = 1
        }
    }
    return out
}

function check_seed(s,    t) {
    t = tolower(s)
    if (t ~ /(^|[^a-z0-9_])seed[ -]?0[0-9][0-9]/) problem("seed", "a source named by number; name it by what it is (see README's Sources)")
}

function exists(p) {
    if (!(p in seen_path)) seen_path[p] = (p !~ /'/ && system("test -e '" p "'") == 0)
    return seen_path[p]
}

function check_links(s,    t, target) {
    while (match(s, /\]\([^)]*\)/)) {
        target = substr(s, RSTART + 2, RLENGTH - 3); s = substr(s, RSTART + RLENGTH)
        sub(/^[ \t]*</, "", target); sub(/>[ \t]*$/, "", target)
        sub(/[ \t]+".*$/, "", target)                   # a link's "title"
        if (target ~ /^(https?:|mailto:|#)/ || target == "") continue
        sub(/#.*$/, "", target)
        if (!exists(target ~ /^\// ? target : dir "/" target)) problem("link", "no file " target " (from " dir ")")
    }
}

function check_prose(s, fact, record,    t, n, i, w, re) {
    if (record) return
    if (s ~ ("(^|[^0-9])" YEAR "-[01][0-9]-[0-3][0-9]") || s ~ (MONTH " +([0-3]?[0-9],? +)?" YEAR) ||
        s ~ ("[0-3]?[0-9] +" MONTH " +" YEAR))
        problem("date", "a date in prose; only the captions `make tables` writes carry dates")
    t = s; gsub(/[^0-9A-Za-z]+/, " ", t); n = split(t, w, " ")
    for (i = 1; i <= n; i++)
        if (length(w[i]) >= 7 && length(w[i]) <= 40 && w[i] ~ /^[0-9a-f]+$/ && w[i] ~ /[0-9]/ && w[i] ~ /[a-f]/)
            problem("commit", "'" w[i] "' looks like a commit; commits belong in generated captions")
    if (fact) return
    re = "(^|[^0-9A-Za-z_^.])" NUM " ?(([GTM]i?B/s)|%|((µs|us|ms|ns)([^A-Za-z0-9]|$))|(×|x)([.,;:)]|$| (faster|slower|quicker))|( times (faster|slower|quicker)))"
    if (match(s, re)) {
        t = substr(s, RSTART, RLENGTH); sub(/^[^0-9]/, "", t); sub(/[^0-9A-Za-z%×µ\/]$/, "", t)
        problem("measured", "'" t "' typed by hand: an inline marker of `make tables`, or <!-- fact: what it is --> if no measurement")
    }
}

# The budget's words: every word outside the generated tables, code, comments
# and inline markers too (a reader scrolls past them all).
function count_words(s,    w, n, i) {
    if (s ~ /^<!-- measured: /) counting_off = 1
    if (!counting_off) { n = split(s, w, /[ \t]+/); for (i = 1; i <= n; i++) if (w[i] != "") words++ }
    if (s == "<!-- /measured -->") counting_off = 0
}

{
    line = $0
    count_words(line)
    check_seed(line)
    if (line ~ /^[ \t]*(```|~~~)/) { infence = !infence; next }
    if (infence) next
    if (line ~ /^<!-- measured: /) inregion = 1
    if (inregion) { check_links(line); if (line == "<!-- /measured -->") inregion = 0; next }
    fact = (!incomment && index(line, "<!-- fact"))
    gsub(/<!-- m [^>]*-->[^<]*<!-- \/m -->/, " ", line)  # inline generated numbers
    line = uncomment(line)
    check_links(line)
    check_prose(line, fact, record)
}

END {
    end_file()
    if (lesson_words > 35000) { print last_lesson ":1: budget: " lesson_words " words in the lessons given, over 35000 together"; nbad++ }
    if (list) printf "%6d  lessons/*/README.md given, together (budget 35000)\n", lesson_words
    exit nbad ? 1 : 0
}
