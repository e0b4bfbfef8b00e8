# make tables: the measured tables of the course's texts, from the CSVs that
# `make bench` writes. Every number in them comes from a CSV row; none is
# typed by hand, so a new `make bench` is one `make tables` away from the text.
#
#   awk -f tests/tables.awk -f tests/tables_kinds.awk docs/results/*.csv README.md lessons/*/README.md ...
#
# Operands ending in .csv are read as bench output (columns found by the
# header's names, so their order may change). Every other operand is a
# markdown file whose regions
#
#   <!-- measured: KIND -->
#   ...            (replaced on every run)
#   <!-- /measured -->
#
# are regenerated; a missing closing line is added after the opening one.
# KIND is
#   lessonN     every kernel of lesson N on every shape of the sweep, with the
#               copy and cuDNN beside them (one table per CSV, in the order given);
#               a shape whose N is not a power of two (bench runs only lesson 8's
#               entry point there) only where the lesson has a row at it
#   lessonN main  the same with the main kernel alone (lesson 8's text keeps its
#               paths' columns in docs/lesson8-paths.md)
#   lessonN compact [GPU] RxC RxC ...
#               the lessonN table of one GPU (GPU as for inline numbers below:
#               "h200", "h100"; default the first CSV) at the shapes listed,
#               in that order: the few that carry the lesson's point
#   lesson9     (and "lesson9 main") lesson 9's own table: its entry points in
#               float16 and bfloat16 as % of the copy of the same 16-bit bytes,
#               cuDNN's 16-bit softmax beside them, and the float32 lesson 8
#               time over the float16 time at the same shape, with the same
#               ratio for the copies
#   lesson10    lesson 10's own table (training: backward, log-softmax, loss,
#               classifier), one per CSV: per shape each kernel's time and its %
#               of its OWN bound, which bench writes in the pct_of_copy column
#               (backward: 1.5 x the copy; log-softmax and classifier: the copy;
#               cross-entropy: the read-only pass, lesson 0's "read"; the 16-bit
#               classifier: the copy of the same 16-bit bytes), the classifier's
#               effective GB/s from the least bytes it moves, and the copy and
#               read pass GB/s
#   readme      the course table of README.md: its rows keep their first four
#               cells (number, lesson, idea, bytes) and get, per CSV, the GB/s
#               and % of copy of the lesson's main kernel at 16384 x 4096
#               (lesson 10: its fused classifier, effective GB/s and % of its
#               own bound, the copy)
#   shape RxC   every kernel at one shape, e.g. "shape 1024x512" (one per CSV),
#               but lesson 10's and the read pass, whose % is of another bound:
#               a line under the table points to lesson 10's text
#   gpus        each later CSV against the first: per lesson (main kernel), the
#               ratio of their effective GB/s at a few shapes, beside the ratio
#               of their copies at the same shape (with one CSV: a line saying
#               that a second GPU is needed)
#   peers OP [GPU]  other libraries' kernels (docs/results/peers/*.csv) beside
#               the course's on the same GPU: tests/tables_peers.awk says how
# A single number in prose is an inline marker, rewritten on every run:
#
#   ... at <!-- m 1 naive 16384x4096 gbps -->253<!-- /m --> GB/s, ...
#   <!-- m LESSON NAME RxC [GPU] FIELD -->NUMBER<!-- /m -->
#   <!-- m LESSON NAME RxC [GPU] / LESSON NAME RxC [GPU] FIELD -->RATIO<!-- /m -->
#
# LESSON NAME RxC picks the CSV row (lesson 0 for "copy", "cudnn", "read");
# a 16-bit row's NAME is "name:dtype", e.g. "fastest:f16". GPU is a short
# key in lower case, "h100" or "h200" (the GPU's short name, or a part of
# the CSV's file name); without it, the first CSV given (the Makefile gives
# them sorted by name: the H100's first). FIELD: gbps (as the tables print
# it), pct (% of copy, one decimal), ms, us (the median time), time (the
# median time with its unit, as the tables print it: "2.12 ms", "182 µs"),
# eff (lesson 10's effective GB/s). With "/", the number is the first
# operand's field over the second's (two decimals, none from 10 on): a
# speed-up is "A ms / B ms", a GPU's gain "... h200 / ... h100 gbps". The
# unit stays outside the marker (but for "time"), so that the source reads
# "<!-- m ... pct -->8.5<!-- /m --> % of the copy". A row whose check did
# not pass gets the tables' warning sign. Markers inside fenced code blocks
# are left alone; a marker's opening and closing are on one line.
# Lesson 11's CSVs (docs/results/multi-gpu/*.csv, written by
# lessons/11_multi_gpu/sweep.sh; known by their "combine" column) have columns
# of their own: per shape and number of GPUs K, each way of combining. Their
# region is "lesson11" (every shape, one table per such CSV) or
# "lesson11 [GPU] RxC RxC ..." (one CSV's table at the shapes listed), and
# their inline markers name a row as "11 COMBINE:K RxC [GPU]":
#   <!-- m 11 all-gather:2 16384x131072 ms -->3.13<!-- /m --> ms
# with FIELD ms, us, time (the median per call, the slices resident), pct
# (% of a copy of one GPU's slice), bound (% of the 2/3 of that copy that
# 12 bytes per element allow), coll_us, coll_ms, coll_pct (the collectives'
# time and share of the call), copy_us, copy_ms (the slice's copy), l8_us,
# l8_ms, l8_time (lesson 8 on one GPU of the same host, same shape) and l8x
# (lesson 8's time over this row's); "/" between two such operands as above.
# A file is written only when its text changes, so a second run touches
# nothing. A CSV's optional dtype column (f32, f16, bf16; absent in older
# CSVs: all f32) names the storage type: a 16-bit row's kernel is known here
# by its name and its type, "fastest f16", "copy bf16", "cudnn f16". Errors (a
# CSV without the needed columns, an unknown KIND, an inline marker naming no
# row) are one line on stderr and exit status 2, before any file is written.
# POSIX awk: runs under mawk, gawk and BSD awk.

BEGIN {
    NEED = "lesson name rows cols median_ms gbps pct_of_copy verified gpu cuda_driver cuda_runtime commit date"
    # The kernel a lesson is about; its others are variants to compare.
    split("naive stable three-pass warp fused online attention-plain fastest", MAIN, " ")
    MAIN[9] = "fastest f16"      # lesson 9: 16-bit storage, its entry point in float16
    HALF_L = 9
    # Lesson 10 (training): its rows' pct_of_copy is of each kernel's own bound,
    # and their gbps is bench's copy-equivalent 2 x M x N x size / time; the
    # effective GB/s counts the least bytes per element each kernel moves.
    MAIN[10] = "classifier_fused"
    TRAIN_L = 10
    split("softmax_backward,log_softmax_forward,cross_entropy_forward,classifier_fused", TRAIN_K, ",")
    split("1.5 × copy,copy,read pass,copy", TRAIN_BOUND, ",")
    LEAST["softmax_backward"] = 12; LEAST["log_softmax_forward"] = 8; LEAST["cross_entropy_forward"] = 4
    LEAST["classifier_fused"] = 8; LEAST["classifier_fused f16"] = 4; LEAST["classifier_fused bf16"] = 4
    LEAST["read"] = 4
    README_ROWS = 16384; README_COLS = 4096
    # The shapes of the cross-GPU table: the sweep's ends and the points where
    # lesson 8 changes path, then the L2-resident 1024 x 512.
    split("2097152 x 32,16384 x 4096,1024 x 65536,64 x 1048576,8 x 8388608,1 x 67108864,1024 x 512", GPUS_SHAPES, ",")
    NGPUS_SHAPES = 7
    MG_L = 11        # lesson 11: its own CSVs and markers (tables_kinds.awk)
    MG_NAME = "^all-(gather|reduce):[0-9]+$"
    TRACK = 0.95     # a ratio of at least 95 % of the copy's "tracks the copy" (bold)
    DASH = "–"       # no row: the kernel does not take this shape, or was skipped
    WARN = "⚠"       # the row's check did not pass (verified is not "yes")
    BAD = " " WARN
    ncsv = 0; nmd = 0; failed = 0
}

function die(msg) {
    print "tables: " msg > "/dev/stderr"
    failed = 2
    exit 2
}

# Splits one CSV line into out[1..n], honouring "quoted, fields" and "".
function csv_split(s, out,    n, i, c, field, q) {
    n = 0; field = ""; q = 0
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (q) {
            if (c != "\"") field = field c
            else if (substr(s, i + 1, 1) == "\"") { field = field c; i++ }
            else q = 0
        } else if (c == "\"") q = 1
        else if (c == ",") { out[++n] = field; field = "" }
        else field = field c
    }
    out[++n] = field
    return n
}

# ---- reading the CSVs -------------------------------------------------------------
# Lesson 11's CSVs (a "combine" column) are read by tables_kinds.awk (mg_header, mg_row).
FILENAME ~ /\.csv$/ && ((FILENAME in mg_of) || (FNR == 1 && mg_header())) { if (FNR > 1) mg_row(); next }
# The peers' CSVs (a "peer" column) by tables_peers.awk (pe_header, pe_row).
FILENAME ~ /\.csv$/ && ((FILENAME in pe_of) || (FNR == 1 && pe_header())) { if (FNR > 1) pe_row(); next }

FILENAME ~ /\.csv$/ {
    sub(/\r$/, "")
    if (FNR == 1) {
        ncsv++; csvname[ncsv] = FILENAME; nshape[ncsv] = 0; nrows[ncsv] = 0
        ncol = csv_split($0, h)
        for (k in col) delete col[k]
        for (i = 1; i <= ncol; i++) col[h[i]] = i
        missing = ""
        nneed = split(NEED, need, " ")
        for (i = 1; i <= nneed; i++) if (!(need[i] in col)) missing = missing " " need[i]
        if (missing != "") die(FILENAME " lacks the columns" missing " (is it `make bench` output?)")
        next
    }
    if ($0 == "") next
    if (csv_split($0, v) != ncol) die(FILENAME ":" FNR ": " ncol " fields expected")
    f = ncsv; L = v[col["lesson"]] + 0; name = v[col["name"]]
    dt = ("dtype" in col) ? v[col["dtype"]] : ""
    if (dt != "" && dt != "f32") name = name " " dt
    shp = v[col["rows"]] " x " v[col["cols"]]
    if (!((f, shp) in shape_seen)) {              # shapes in the order bench wrote them
        shape_seen[f, shp] = 1; shape[f, ++nshape[f]] = shp
        srows[f, shp] = v[col["rows"]]; scols[f, shp] = v[col["cols"]]
    }
    if (!((f, L, name) in kern_seen)) {           # a lesson's kernels, also in CSV order
        kern_seen[f, L, name] = 1; kern[f, L, ++nkern[f, L]] = name
    }
    key = f SUBSEP L SUBSEP name SUBSEP shp       # a later row of the same run wins
    ms[key] = v[col["median_ms"]]; gb[key] = v[col["gbps"]]; pct[key] = v[col["pct_of_copy"]]
    ver[key] = v[col["verified"]]
    lesson_at[f, L, shp] = 1
    if ("bytes_per_elem" in col) bpe[key] = v[col["bytes_per_elem"]]
    esize[key] = (dt == "f16" || dt == "bf16") ? 2 : 4   # bytes per element stored
    nrows[f]++
    gpu[f] = v[col["gpu"]]; drv[f] = v[col["cuda_driver"]]; rt[f] = v[col["cuda_runtime"]]
    if ("sm_clock_mhz" in col) smclk[f] = v[col["sm_clock_mhz"]]
    if ("mem_clock_mhz" in col) memclk[f] = v[col["mem_clock_mhz"]]
    c = v[col["commit"]]
    if (!((f, c) in commit_seen)) { commit_seen[f, c] = 1; commits[f] = commits[f] (commits[f] == "" ? "" : ", ") c }
    if (!((f, L, c) in lcommit_seen)) {           # a lesson's own rows may come from a later run
        lcommit_seen[f, L, c] = 1; lcommits[f, L] = lcommits[f, L] (lcommits[f, L] == "" ? "" : ", ") c
    }
    d = substr(v[col["date"]], 1, 10)
    if (date_lo[f] == "" || d < date_lo[f]) date_lo[f] = d
    if (d > date_hi[f]) date_hi[f] = d
    next
}

# ---- reading the markdown files: kept whole, rewritten in END ---------------------------
{
    if (FNR == 1) { nmd++; mdname[nmd] = FILENAME; mdlines[nmd] = 0 }
    md[nmd, ++mdlines[nmd]] = $0
}

# ---- formatting ---------------------------------------------------------------------------
function fmt_gb(x) { return (x + 0 >= 100) ? sprintf("%.0f", x) : sprintf("%.1f", x) }
function fmt_pct(x) { return sprintf("%.1f %%", x) }
function fmt_time(t,    us) {
    us = 1000 * t
    if (us < 100) return sprintf("%.1f µs", us)
    if (us < 1000) return sprintf("%.0f µs", us)
    return sprintf(t + 0 < 100 ? "%.2f ms" : "%.1f ms", t)
}
function mark(key) { return (ver[key] == "yes") ? "" : BAD }

# One cell of a kernel at a shape: what is "gb", "pct" or "time".
function cell(f, L, name, shp, what,    key) {
    key = f SUBSEP L SUBSEP name SUBSEP shp
    if (!(key in ms)) { ndash++; return DASH }
    if (what == "gb") return fmt_gb(gb[key]) mark(key)
    if (what == "eff") return fmt_gb(eff_gb(f, name, shp, key)) mark(key)
    if (what == "pct") return fmt_pct(pct[key]) mark(key)
    return fmt_time(ms[key]) mark(key)
}

# Lesson 10 and the read pass: the least bytes per element the kernel moves x
# M x N / time, in GB/s (their CSV gbps is the copy's formula, not this).
function eff_gb(f, name, shp, key) {
    return (ms[key] + 0 > 0) ? LEAST[name] * srows[f, shp] * scols[f, shp] / (1e6 * ms[key]) : 0
}

# "NVIDIA H100 80GB HBM3" -> "H100": the column header of the README table.
function short_gpu(g,    w, n, i) {
    n = split(g, w, " "); i = 1
    if (w[i] == "NVIDIA") i++
    if (w[i] == "GeForce" || w[i] == "Tesla" || w[i] == "Quadro") i++
    if ((w[i] == "RTX" || w[i] == "GTX") && i < n) return w[i] " " w[i + 1]
    return w[i]
}

function provenance(f, L) { return gpu[f] ", " setup(f, L) }

# The run's software, clocks, date and commit, without the GPU's name; with
# a lesson L, the commits of that lesson's rows only.
function setup(f, L,    s, d) {
    d = (date_lo[f] == date_hi[f]) ? date_lo[f] : date_lo[f] " to " date_hi[f]
    s = "CUDA runtime " rt[f] " (driver " drv[f] ")"
    if (smclk[f] != "") s = s ", SM " smclk[f] " MHz, memory " memclk[f] " MHz"
    return s ", " d ", commit " (L != "" && lcommits[f, L] != "" ? lcommits[f, L] : commits[f])
}

# "measured by `make bench` on GPU, setup". With several CSVs the GPU's name
# opens the caption in bold, so that a reader who lands on the second table
# of a region knows at once which GPU it is.
function measured_on(f, what, L) {
    if (ncsv > 1) return "**" gpu[f] "**: " what (what == "" ? "measured" : ", measured") " by `make bench`, " setup(f, L)
    return (what == "" ? "Measured" : what ", measured") " by `make bench` on " provenance(f, L)
}

function generated_note(f) {
    return "<!-- generated by `make tables` (tests/tables.awk) from " csvname[f] ": edit the script, not this text -->\n"
}

# Footnotes under a table: what a dash means, and every failed check, by name.
function footnotes(    s) {
    s = ""
    if (ndash) s = s "\n" DASH " : no row in the CSV for this shape (the kernel does not take it, `make bench` skipped it as too slow, or the CSV predates the kernel).\n"
    if (nbad) s = s "\n**" WARN " the output of these runs did not pass the check, so their times mean nothing:** " badlist ".\n"
    return s
}

# Notes the failed checks among the kernels shown, for footnotes().
function collect_bad(f, L, name, shp,    key) {
    key = f SUBSEP L SUBSEP name SUBSEP shp
    if ((key in ver) && ver[key] != "yes") {
        nbad++
        badlist = badlist (nbad > 1 ? "; " : "") name " at " shp " (verified = " ver[key] ")"
    }
}

# ---- KIND lessonN ----------------------------------------------------------------------------
# The link from a text at path md to docs/memory-bound.md's cross-GPU section.
function gpus_link(md,    up, d) {
    sub(/^\.\//, "", md)
    if (md ~ /^docs\/[^\/]*$/) return "memory-bound.md#two-gpus-which-kernels-follow-the-bandwidth"
    up = ""; d = md
    while (sub(/^[^\/]*\//, "", d)) up = up "../"
    return up "docs/memory-bound.md#two-gpus-which-kernels-follow-the-bandwidth"
}

# Under a lesson's table: the footnotes, and for a later GPU the link to the cross-GPU section.
function table_end(f, md,    s) {
    s = footnotes()
    if (f > 1) s = s "\nHow much faster the lesson's main kernel runs on the " short_gpu(gpu[f]) " than on the "
    if (f > 1) s = s short_gpu(gpu[1]) ", against their copies, and why: [docs/memory-bound.md](" gpus_link(md) ").\n"
    return s "\n"
}

function mib(bytes) { return bytes >= 1048576 ? sprintf("%.0f MiB", bytes / 1048576) : sprintf("%.0f KiB", bytes / 1024) }

function is_pow2(n) { return pow2(n) ~ /^2\^/ }

# A row's shape as the lesson tables show it: an N between the powers of two
# named after its neighbour, "43690 x 1536 (1.5 × 2^10)", "65472 x 1025 (2^10 + 1)".
function shape_name(f, shp,    n) {
    n = scols[f, shp] + 0
    if (is_pow2(n)) return shp
    if (is_pow2(n - 1)) return shp " (" pow2(n - 1) " + 1)"
    if (n % 3 == 0 && is_pow2(2 * n / 3)) return shp " (1.5 × " pow2(2 * n / 3) ")"
    return shp
}

# "4096" -> "2^12"; other numbers as they are.
function pow2(n,    k, p) {
    n = n + 0; p = 1
    for (k = 0; k <= 62; k++) { if (p == n) return "2^" k; p *= 2 }
    return n
}

# ---- inline numbers: <!-- m SPEC -->NUMBER<!-- /m --> ---------------------------------------
# Rewrites every inline marker of one line; where is "file:line" for errors.
function inline_line(line, where,    s, a, b, c, spec) {
    s = ""
    while ((a = index(line, "<!-- m ")) > 0) {
        b = index(substr(line, a), " -->")
        if (b == 0) die(where ": an inline marker without its closing ' -->'")
        spec = substr(line, a + 7, b - 8)
        c = index(substr(line, a + b + 3), "<!-- /m -->")
        if (c == 0) die(where ": '<!-- m " spec " -->' without '<!-- /m -->' on the same line")
        s = s substr(line, 1, a + b + 2) inline_value(spec, where) "<!-- /m -->"
        line = substr(line, a + b + 3 + c - 1 + 11)
    }
    return s line
}

# The CSV of a GPU key ("h100", "h200": its short name or a part of the
# CSV's file name, in lower case); no key: the first CSV given.
function inline_csv(key, where,    f, k) {
    if (key == "") return 1
    for (f = 1; f <= ncsv; f++) {
        k = tolower(short_gpu(gpu[f]))
        if (k == key || index(tolower(csvname[f]), key)) return f
    }
    die(where ": no CSV for the GPU '" key "' (a GPU's short name in lower case, e.g. " tolower(short_gpu(gpu[1])) ")")
}

# One operand "L NAME RxC [GPU]" of tokens t[i..j]: its CSV key, or dies.
function inline_key(t, i, j, where,    f, name, shp, key) {
    if (j - i < 2 || j - i > 3 || t[i] !~ /^[0-9]+$/ || t[i + 2] !~ /^[0-9]+x[0-9]+$/)
        die(where ": an inline operand is 'LESSON NAME RxC [GPU]', not '" inline_join(t, i, j) "'")
    f = inline_csv(j - i == 3 ? t[j] : "", where)
    name = t[i + 1]; sub(/:/, " ", name)
    shp = t[i + 2]; sub(/x/, " x ", shp)
    key = f SUBSEP (t[i] + 0) SUBSEP name SUBSEP shp
    if (!(key in ms)) die(where ": no row for lesson " t[i] " '" name "' at " shp " in " csvname[f])
    return key
}

function inline_join(t, i, j,    s) { s = t[i]; while (++i <= j) s = s " " t[i]; return s }

# A row's number for one field: what the tables would print, without a unit
# but for "time"; "raw" for a ratio's operands.
function inline_field(key, field, raw, where,    f, shp, nm, r) {
    if (field == "gbps") return raw ? gb[key] + 0 : fmt_gb(gb[key])
    if (field == "pct") return raw ? pct[key] + 0 : sprintf("%.1f", pct[key])
    if (field == "ms") return raw ? ms[key] + 0 : sprintf(ms[key] + 0 < 100 ? "%.2f" : "%.1f", ms[key])
    if (field == "us") return raw ? 1000 * ms[key] : sprintf(ms[key] + 0 < 0.1 ? "%.1f" : "%.0f", 1000 * ms[key])
    if (field == "time") return raw ? ms[key] + 0 : fmt_time(ms[key])
    if (field == "eff") {
        split(key, r, SUBSEP); f = r[1]; nm = r[3]; shp = r[4]
        if (!(nm in LEAST)) die(where ": 'eff' is for lesson 10's kernels and the read pass, not " nm)
        return raw ? eff_gb(f, nm, shp, key) : fmt_gb(eff_gb(f, nm, shp, key))
    }
    die(where ": unknown inline field '" field "' (gbps, pct, ms, us, time or eff)")
}

# A marker operand's kind, from its first tokens t[i], t[i + 1]: a bench CSV's
# row (0), lesson 11's (1: tables_kinds.awk) or a peer's (2: tables_peers.awk);
# then its key, field and mark.
function op_kind(t, i) { return t[i] == "peer" ? 2 : (t[i] == MG_L && t[i + 1] ~ MG_NAME) ? 1 : 0 }
function any_key(k, t, i, j, where) {
    return k == 2 ? pe_key(t, i, j, where) : k ? mg_key(t, i, j, where) : inline_key(t, i, j, where)
}
function any_field(k, key, field, raw, where) {
    return k == 2 ? pe_field(key, field, raw, where) : k ? mg_field(key, field, raw, where) : inline_field(key, field, raw, where)
}
function any_mark(k, key) { return k == 2 ? "" : k ? mg_mark(key) : mark(key) }

function inline_value(spec, where,    t, n, i, sl, a, b, va, vb, r, ka, kb) {
    n = split(spec, t, " ")
    for (i = 1; i <= n; i++) if (t[i] == "/") sl = i
    ka = op_kind(t, 1)
    if (!sl) {
        a = any_key(ka, t, 1, n - 1, where)
        return any_field(ka, a, t[n], 0, where) any_mark(ka, a)
    }
    kb = op_kind(t, sl + 1)
    a = any_key(ka, t, 1, sl - 1, where); b = any_key(kb, t, sl + 1, n - 1, where)
    va = any_field(ka, a, t[n], 1, where); vb = any_field(kb, b, t[n], 1, where)
    if (vb + 0 <= 0) die(where ": a ratio over zero")
    r = va / vb
    return sprintf(r >= 10 ? "%.0f" : "%.2f", r) ((any_mark(ka, a) any_mark(kb, b)) != "" ? BAD : "")
}

# ---- rewriting the markdown files -------------------------------------------------------------
function region(kind, old, nold, where, md) {
    if (kind ~ ("^lesson" MG_L "( |$)")) return table_multi(kind, where, md)     # lesson 11: tables_kinds.awk
    if (kind ~ /^peers( |$)/) return table_peers(kind, where, md)                 # tables_peers.awk
    if (kind == "lesson" HALF_L || kind == "lesson" HALF_L " main") return table_half(md)
    if (kind == "lesson" TRAIN_L || kind == "lesson" TRAIN_L " main") return table_train(md)
    if (kind ~ /^lesson[0-9]+$/) return table_lesson(substr(kind, 7) + 0, md, 0)
    if (kind ~ /^lesson[0-9]+ main$/) return table_lesson(substr(kind, 7) + 0, md, 1)
    if (kind ~ /^lesson[0-9]+ compact /) return table_compact(kind, where, md)
    if (kind == "readme") return table_readme(old, nold)
    if (kind == "gpus") return table_gpus()
    if (kind ~ /^shape [0-9]+x[0-9]+$/) { sub(/^shape /, "", kind); sub(/x/, " x ", kind); return table_shape(kind, md) }
    die(where ": unknown region '" kind "' (lessonN, lessonN main, lessonN compact ..., readme, shape RxC, gpus or peers OP)")
}

END {
    if (failed) exit failed
    if (ncsv == 0 && nmg == 0) die("no CSV with rows given (run `make bench` first)")
    for (f = 1; f <= ncsv; f++) if (nrows[f] == 0) die(csvname[f] " has a header but no rows")
    # Every text is rewritten in memory first, so that an error in any of
    # them (exit 2) leaves every file as it was.
    for (m = 1; m <= nmd; m++) {
        before = ""; out = ""; nreg = 0; ninl = 0; infence = 0; n = mdlines[m]
        for (i = 1; i <= n; i++) before = before md[m, i] "\n"
        for (i = 1; i <= n; i++) {
            line = md[m, i]
            if (line ~ /^[ \t]*(```|~~~)/) infence = !infence
            if (line !~ /^<!-- measured: .* -->$/ || infence) {
                if (!infence && index(line, "<!-- m ")) { line = inline_line(line, mdname[m] ":" i); ninl++ }
                out = out line "\n"; continue
            }
            kind = line; sub(/^<!-- measured: /, "", kind); sub(/ -->$/, "", kind)
            # The region ends at the next closing line, unless another opening comes first.
            for (j = i + 1; j <= n && md[m, j] != "<!-- /measured -->" && md[m, j] !~ /^<!-- measured: /; j++) ;
            closed = (j <= n && md[m, j] == "<!-- /measured -->")
            nold = 0
            if (closed) for (k = i + 1; k < j; k++) old[++nold] = md[m, k]
            out = out line "\n" region(kind, old, nold, mdname[m] ":" i, mdname[m]) "<!-- /measured -->\n"
            if (failed) exit failed
            nreg++
            if (closed) i = j
        }
        newtext[m] = out; changed[m] = ((nreg || ninl) && out != before); counts[m] = (nreg ? nreg " region(s)" : "")
        if (ninl) counts[m] = counts[m] (nreg ? " and " : "") ninl " line(s) of inline numbers"
    }
    for (m = 1; m <= nmd; m++) {
        if (!changed[m]) continue
        tmp = mdname[m] ".tables-tmp"
        printf "%s", newtext[m] > tmp
        close(tmp)
        if (system("mv '" tmp "' '" mdname[m] "'") != 0) die("cannot replace " mdname[m])
        print "tables: wrote " counts[m] " of " mdname[m]
    }
}
