# make tables, part 2: the tables themselves, one function per kind of
# measured region (tests/tables.awk reads the CSVs and the texts and calls
# these). Run as: awk -f tests/tables.awk -f tests/tables_kinds.awk CSV... TEXT...

# Every CSV's table, or with nsel > 0 only CSV flo's at the shapes sel[1..nsel]
# (KIND "lessonN compact"), in that order.
function table_lesson(L, md, only_main, flo, nsel, sel,    f, fhi, s, i, j, n, k, names, wide, shp, row, mainname, nmid, nvoc, nshow) {
    s = ""
    fhi = nsel ? flo : ncsv
    if (!nsel) flo = 1
    for (f = flo; f <= fhi; f++) {
        s = s generated_note(f) "\n"
        n = nkern[f, L]
        if (n == 0) { s = s "No lesson " L " rows in " csvname[f] " yet: run `make bench && make tables`.\n\n"; continue }
        # The main kernel first, then the others as bench ran them.
        mainname = ((f, L, MAIN[L]) in kern_seen) ? MAIN[L] : kern[f, L, 1]
        k = 0; names[++k] = mainname
        for (i = 1; i <= n; i++) if (kern[f, L, i] != mainname) names[++k] = kern[f, L, i]
        if (only_main) n = 1                       # "lessonN main": the other kernels live elsewhere
        wide = (n <= 3)                            # else: only % of copy for the variants
        s = s measured_on(f, "", L) ". Median time per call; GB/s = "
        s = s "2 × M × N × 4 bytes / time; % of a device-to-device copy of the same bytes timed in the same "
        s = s "process. Reproduce with `make bench && make tables`.\n\n"
        row = "| M x N | " mainname " time | " mainname " GB/s | " mainname " % of copy"
        for (j = 2; j <= n; j++) row = row (wide ? " | " names[j] " GB/s" : "") " | " names[j] " % of copy"
        s = s row " | copy GB/s | cuDNN GB/s |\n"
        row = "|---|---:|---:|---:|"
        for (j = 2; j <= n; j++) row = row (wide ? "---:|" : "") "---:|"
        s = s row "---:|---:|\n"
        nbad = 0; badlist = ""; ndash = 0; nmid = 0; nvoc = 0
        nshow = nsel ? nsel : nshape[f]
        for (i = 1; i <= nshow; i++) {
            shp = nsel ? sel[i] : shape[f, i]
            if (nsel && !((f, L, shp) in lesson_at)) die("lesson" L " compact: no lesson " L " row at " shp " in " csvname[f])
            if (!nsel && !is_pow2(scols[f, shp])) {
                if (!((f, L, shp) in lesson_at)) continue
                if (srows[f, shp] == int(67108864 / scols[f, shp])) nmid++; else nvoc++
            }
            row = "| " shape_name(f, shp) " | " cell(f, L, mainname, shp, "time") " | " cell(f, L, mainname, shp, "gb") " | " cell(f, L, mainname, shp, "pct")
            for (j = 2; j <= n; j++)
                row = row (wide ? " | " cell(f, L, names[j], shp, "gb") : "") " | " cell(f, L, names[j], shp, "pct")
            s = s row " | " cell(f, 0, "copy", shp, "gb") " | " cell(f, 0, "cudnn", shp, "gb") " |\n"
            for (j = 1; j <= n; j++) collect_bad(f, L, names[j], shp)
            collect_bad(f, 0, "copy", shp); collect_bad(f, 0, "cudnn", shp)
        }
        if (nmid) s = s "\nRows whose N is not a power of two: M = floor(2^26 / N), so M x N is just under 2^26; only the entry point (" mainname "), the copy and cuDNN are run there.\n"
        if (nvoc) s = s "\nRows of other M: the vocabulary shapes language models train on, each beside a length off the vector width; lessons 8, 9 and 10's entry points run there.\n"
        s = s table_end(f, md)
    }
    return s
}

# KIND "lessonN compact [GPU] RxC ...": one GPU's table (the first CSV's
# without a GPU key) at the shapes the lesson's text picks, in its order.
function table_compact(kind, where, md,    t, n, i, L, f, key, nsel, sel) {
    n = split(kind, t, " "); L = substr(t[1], 7) + 0; nsel = 0; key = ""
    for (i = 3; i <= n; i++) {
        if (t[i] ~ /^[0-9]+x[0-9]+$/) { sel[++nsel] = t[i]; sub(/x/, " x ", sel[nsel]) }
        else if (key == "" && t[i] ~ /^[a-z0-9]+$/) key = t[i]
        else die(where ": '" t[i] "' in a compact region is neither a shape RxC nor a GPU key")
    }
    if (nsel == 0) die(where ": a compact region lists its shapes, e.g. 'lesson" L " compact 16384x4096 512x131072'")
    f = inline_csv(key, where)
    if (nkern[f, L] == 0) die(where ": no lesson " L " rows in " csvname[f])
    return table_lesson(L, md, 0, f, nsel, sel)
}

# ---- KIND lesson9: 16-bit storage against its copy and against float32 ------------------------
# "1.93×": CSV f's time of kernel (La, a) over that of (Lb, b) at one shape.
function time_ratio(f, La, a, Lb, b, shp,    ka, kb) {
    ka = f SUBSEP La SUBSEP a SUBSEP shp; kb = f SUBSEP Lb SUBSEP b SUBSEP shp
    if (!(ka in ms) || !(kb in ms) || ms[kb] + 0 <= 0) { ndash++; return DASH }
    collect_bad(f, La, a, shp); collect_bad(f, Lb, b, shp)
    return sprintf("%.2f×", ms[ka] / ms[kb]) ((mark(ka) mark(kb)) != "" ? BAD : "")
}

function table_half(md,    f, s, i, shp, L, row, j, nv, v, vname) {
    L = HALF_L; s = ""
    # the other 16-bit columns: % of the copy of the same bytes
    nv = split("fastest bf16,fused f16,fused bf16", v, ",")
    split("fastest bf16,fused f16,fused bf16", vname, ",")
    for (f = 1; f <= ncsv; f++) {
        s = s generated_note(f) "\n"
        if (nkern[f, L] == 0) { s = s "No lesson " L " rows in " csvname[f] " yet: run `make bench && make tables`.\n\n"; continue }
        s = s measured_on(f, "", L) ". Median time per call; GB/s = 2 × M × N × 2 bytes / time; % of a "
        s = s "device-to-device copy of the same 16-bit bytes timed in the same process; f32 / f16: lesson 8's "
        s = s "softmax_fastest on float32 at the same shape, its time over the float16 entry point's (and the "
        s = s "float32 copy's time over the 16-bit copy's: what halving the bytes gives a copy). "
        s = s "Reproduce with `make bench && make tables`.\n\n"
        row = "| M x N | fastest f16 time | fastest f16 GB/s | fastest f16 % of copy"
        for (j = 1; j <= nv; j++) row = row " | " vname[j] " % of copy"
        s = s row " | cuDNN f16 % of copy | cuDNN bf16 % of copy | f32 / f16 time: fastest | f32 / f16 time: copy |\n"
        row = "|---|---:|---:|---:|"
        for (j = 1; j <= nv; j++) row = row "---:|"
        s = s row "---:|---:|---:|---:|\n"
        nbad = 0; badlist = ""; ndash = 0
        for (i = 1; i <= nshape[f]; i++) {
            shp = shape[f, i]
            if (!((f, L, shp) in lesson_at)) continue
            row = "| " shape_name(f, shp) " | " cell(f, L, MAIN[L], shp, "time") " | " cell(f, L, MAIN[L], shp, "gb")
            row = row " | " cell(f, L, MAIN[L], shp, "pct")
            for (j = 1; j <= nv; j++) row = row " | " cell(f, L, v[j], shp, "pct")
            row = row " | " cell(f, 0, "cudnn f16", shp, "pct") " | " cell(f, 0, "cudnn bf16", shp, "pct")
            row = row " | " time_ratio(f, 8, MAIN[8], L, MAIN[L], shp) " | " time_ratio(f, 0, "copy", 0, "copy f16", shp) " |"
            s = s row "\n"
            collect_bad(f, L, MAIN[L], shp)
            for (j = 1; j <= nv; j++) collect_bad(f, L, v[j], shp)
            collect_bad(f, 0, "copy f16", shp); collect_bad(f, 0, "copy bf16", shp)
            collect_bad(f, 0, "cudnn f16", shp); collect_bad(f, 0, "cudnn bf16", shp)
        }
        s = s table_end(f, md)
    }
    return s
}

# ---- KIND lesson10: training kernels, each against its own bound -----------------------------
function table_train(md,    f, s, i, j, k, shp, L, row, sep, half) {
    L = TRAIN_L; s = ""
    for (f = 1; f <= ncsv; f++) {
        s = s generated_note(f) "\n"
        if (nkern[f, L] == 0) { s = s "No lesson " L " rows in " csvname[f] " yet: run `make bench && make tables`.\n\n"; continue }
        half = ((f, L, TRAIN_K[4] " f16") in kern_seen) || ((f, L, TRAIN_K[4] " bf16") in kern_seen)
        s = s measured_on(f, "", L) ". Median time per call; each kernel's % is of its own bound, the time of the "
        s = s "least traffic any kernel computing the same function moves, timed in the same process: "
        s = s "softmax_backward against 1.5 × a device-to-device copy of the M × N floats (12 bytes per element "
        s = s "against the copy's 8), log_softmax_forward and classifier_fused against the copy, "
        s = s "cross_entropy_forward against a read-only pass over the M × N floats (4 bytes per element)"
        if (half) s = s ", classifier_fused on float16 and bfloat16 logits against the copy of the same 16-bit bytes"
        s = s ". A row split across blocks moves more (12 bytes per element, 20 for the backward) and is measured "
        s = s "against the same bound. classifier GB/s = 8 × M × N bytes / time; copy GB/s = 8 × M × N bytes / "
        s = s "its time, read pass GB/s = 4 × M × N bytes / its time. Reproduce with `make bench && make tables`.\n\n"
        row = "| M x N"; sep = "|---|"
        for (k = 1; k <= 4; k++) {
            row = row " | " TRAIN_K[k] " time" (k == 4 ? " | " TRAIN_K[k] " GB/s" : "") " | % of " TRAIN_BOUND[k]
            sep = sep "---:|---:|" (k == 4 ? "---:|" : "")
        }
        if (half) { row = row " | f16 classifier % of f16 copy | bf16 classifier % of bf16 copy"; sep = sep "---:|---:|" }
        s = s row " | copy GB/s | read pass GB/s |\n" sep "---:|---:|\n"
        nbad = 0; badlist = ""; ndash = 0
        for (i = 1; i <= nshape[f]; i++) {
            shp = shape[f, i]
            if (!((f, L, shp) in lesson_at)) continue
            row = "| " shape_name(f, shp)
            for (k = 1; k <= 4; k++) {
                row = row " | " cell(f, L, TRAIN_K[k], shp, "time")
                if (k == 4) row = row " | " cell(f, L, TRAIN_K[k], shp, "eff")
                row = row " | " cell(f, L, TRAIN_K[k], shp, "pct")
                collect_bad(f, L, TRAIN_K[k], shp)
            }
            if (half) for (j = 1; j <= 2; j++) {
                row = row " | " cell(f, L, TRAIN_K[4] (j == 1 ? " f16" : " bf16"), shp, "pct")
                collect_bad(f, L, TRAIN_K[4] (j == 1 ? " f16" : " bf16"), shp)
            }
            s = s row " | " cell(f, 0, "copy", shp, "gb") " | " cell(f, 0, "read", shp, "eff") " |\n"
            collect_bad(f, 0, "copy", shp); collect_bad(f, 0, "read", shp)
            if (half) { collect_bad(f, 0, "copy f16", shp); collect_bad(f, 0, "copy bf16", shp) }
        }
        s = s footnotes() "\n"
    }
    return s
}

# ---- KIND shape RxC ----------------------------------------------------------------------------
# The path from a text at path md to the repository's root: "", "../", "../../".
function up_path(md,    up, d) {
    sub(/^\.\//, "", md)
    up = ""; d = md
    while (sub(/^[^\/]*\//, "", d)) up = up "../"
    return up
}

function table_shape(shp, md,    f, s, L, i, name, key, half, ntrain) {
    s = ""
    for (f = 1; f <= ncsv; f++) {
        s = s generated_note(f) "\n"
        if (!((f, shp) in shape_seen)) { s = s "No rows at " shp " in " csvname[f] " yet: run `make bench && make tables`.\n\n"; continue }
        s = s measured_on(f, (ncsv > 1 ? "every" : "Every") " kernel at " shp) ". "
        s = s "Reproduce with `make bench && make tables`.\n\n"
        # 16-bit rows bound their bytes by 2 x 2, not 8: the column says so only where they appear
        half = 0
        for (L = 0; L <= 99; L++) for (i = 1; i <= nkern[f, L]; i++) {
            key = f SUBSEP L SUBSEP kern[f, L, i] SUBSEP shp
            if ((key in esize) && esize[key] == 2) half = 1
        }
        s = s "| lesson | kernel | time per call | GB/s | % of copy | design bytes / element | "
        s = s (half ? "bound: 2 × element size / bytes" : "bound: 8 / bytes") " |\n"
        s = s "|---|---|---:|---:|---:|---:|---:|\n"
        nbad = 0; badlist = ""; ndash = 0; ntrain = 0
        for (L = 0; L <= 99; L++) {
            for (i = 1; i <= nkern[f, L]; i++) {
                name = kern[f, L, i]; key = f SUBSEP L SUBSEP name SUBSEP shp
                if (!(key in ms)) continue
                if (L == TRAIN_L || (L == 0 && name == "read")) { ntrain++; continue }   # other bounds: lesson 10's table
                s = s "| " (L ? L : "") " | " name " | " cell(f, L, name, shp, "time") " | " cell(f, L, name, shp, "gb")
                s = s " | " cell(f, L, name, shp, "pct") " | " ((key in bpe) ? bpe[key] : DASH)
                s = s " | " (((key in bpe) && bpe[key] + 0 > 0) ? sprintf("%.0f %%", 200 * esize[key] / bpe[key]) : DASH) " |\n"
                collect_bad(f, L, name, shp)
            }
        }
        s = s footnotes()
        if (ntrain) {
            s = s "\nLesson " TRAIN_L "'s training kernels at this shape, each against its own bound (a copy, 1.5 × a copy "
            s = s "or a read-only pass): [lessons/10_training/README.md](" up_path(md) "lessons/10_training/README.md#measured).\n"
        }
        s = s "\n"
    }
    return s
}

# ---- KIND readme: the course table, its text columns kept ------------------------------------
function trim(x) { sub(/^[ \t]+/, "", x); sub(/[ \t]+$/, "", x); return x }

# old[1..nold]: the region's present lines. Rows "| N | ... |" keep cells 1-4;
# then two columns per CSV (GB/s, % of copy), in the order the CSVs were given.
function table_readme(old, nold,    f, s, i, c, nc, head, nr, num, text, shp, key, L, line, sep, half_rows, train_rows, unmeasured) {
    shp = README_ROWS " x " README_COLS
    head = "| # | lesson | idea | bytes / element"; nr = 0
    for (i = 1; i <= nold; i++) {
        line = old[i]
        if (line !~ /^\|/) continue
        gsub(/\\\|/, "\001", line)                 # an escaped \| inside a cell is not a border
        nc = split(line, c, "|")
        if (nc < 6) continue
        if (trim(c[2]) ~ /^[0-9]+$/) {
            num[++nr] = trim(c[2])
            text[nr] = "| " trim(c[2]) " | " trim(c[3]) " | " trim(c[4]) " | " trim(c[5])
            gsub(/\001/, "\\|", text[nr])
        } else if (trim(c[2]) !~ /^:?-+:?$/)
            head = "| " trim(c[2]) " | " trim(c[3]) " | " trim(c[4]) " | " trim(c[5])
    }
    if (nr == 0)                                   # a new region: one row per lesson in the first CSV
        for (L = 1; L <= 99; L++) if (nkern[1, L]) { num[++nr] = L; text[nr] = "| " L " | " MAIN[L] " |  | " }
    s = ""
    for (f = 1; f <= ncsv; f++) s = s generated_note(f)
    s = s "\n" head; sep = "|---|---|---|---|"
    for (f = 1; f <= ncsv; f++) { s = s " | " short_gpu(gpu[f]) ": GB/s | % of copy"; sep = sep "---:|---:|" }
    s = s " |\n" sep "\n"
    nbad = 0; badlist = ""; ndash = 0; unmeasured = ""
    for (i = 1; i <= nr; i++) {
        L = num[i] + 0
        s = s text[i]
        for (f = 1; f <= ncsv; f++) {
            if (L == TRAIN_L && nkern[f, L] == 0) {    # not timed on this GPU yet: not the footnote's dash
                s = s " | " DASH " | " DASH
                unmeasured = unmeasured (unmeasured == "" ? "" : ", ") csvname[f]
                continue
            }
            s = s " | " cell(f, L, MAIN[L], shp, L == TRAIN_L ? "eff" : "gb") " | " cell(f, L, MAIN[L], shp, "pct")
            collect_bad(f, L, MAIN[L], shp)
        }
        s = s " |\n"
    }
    s = s "\nMeasured by `make bench` at " shp " (" sprintf("%.0f", README_ROWS * README_COLS * 4 / 1048576)
    s = s " MiB per tensor)"
    for (f = 1; f <= ncsv; f++) {
        s = s (f == 1 ? " on " : "; on ") provenance(f)
        key = f SUBSEP 0 SUBSEP "copy" SUBSEP shp
        if (key in gb) s = s ": the copy ran at " fmt_gb(gb[key]) " GB/s in the same process"
        key = f SUBSEP 0 SUBSEP "cudnn" SUBSEP shp
        if (key in gb) s = s " and cuDNN's softmax at " fmt_pct(pct[key]) " of it"
    }
    for (f = 1; f <= ncsv; f++) if (nkern[f, HALF_L]) half_rows = 1
    for (f = 1; f <= ncsv; f++) if (nkern[f, TRAIN_L]) train_rows = 1
    s = s ". Each row is the lesson's main kernel (" MAIN[1]
    for (L = 2; L <= (train_rows ? TRAIN_L : half_rows ? HALF_L : 8); L++) s = s ", " MAIN[L]
    s = s ")"
    if (half_rows) s = s "; lesson 9 stores float16, so its GB/s count 2 bytes per element read and written and its % is of a copy of the same 16-bit bytes"
    if (train_rows) s = s "; lesson 10's GB/s count the 8 bytes per element its fused classifier must move (read the logits, write the gradient) and its % is of the kernel's own bound, the copy"
    s = s "; each lesson's text has the full table" (ncsv > 1 ? " for each GPU" : "") ", every kernel on every shape. "
    s = s "Reproduce with `make bench && make tables`; `make lessons` runs the lessons one by one at this shape.\n"
    s = s footnotes()
    if (unmeasured != "") s = s "\n" DASH " in lesson " TRAIN_L "'s row: no lesson " TRAIN_L " rows yet in " unmeasured ".\n"
    return s "\n"
}

# ---- KIND gpus: each later CSV against the first ------------------------------------------------
# CSV f's GB/s over CSV g's for one kernel at one shape; 0 if either lacks it.
function gb_ratio(g, f, L, name, shp,    a, b) {
    a = g SUBSEP L SUBSEP name SUBSEP shp; b = f SUBSEP L SUBSEP name SUBSEP shp
    return ((a in gb) && (b in gb) && gb[a] + 0 > 0) ? gb[b] / gb[a] : 0
}

# "1.37×": the ratio of two runs' effective GB/s (the same bytes, so also the
# inverse ratio of their times); bold where it keeps TRACK of the copy's ratio.
function ratio_cell(g, f, L, name, shp,    r, copyr, a, b) {
    r = gb_ratio(g, f, L, name, shp)
    if (r == 0) { ndash++; return DASH }
    copyr = (L == 0 && name == "copy") ? 0 : gb_ratio(g, f, 0, "copy", shp)
    collect_bad(g, L, name, shp); collect_bad(f, L, name, shp)
    a = g SUBSEP L SUBSEP name SUBSEP shp; b = f SUBSEP L SUBSEP name SUBSEP shp
    return sprintf(copyr > 0 && r >= TRACK * copyr ? "**%.2f×**" : "%.2f×", r) ((mark(a) mark(b)) != "" ? BAD : "")
}

# A row of ratios: the copy, a lesson's main kernel or cuDNN.
function ratio_row(g, f, L, name, title,    j, row) {
    row = "| " title
    for (j = 1; j <= NGPUS_SHAPES; j++) row = row " | " ratio_cell(g, f, L, name, GPUS_SHAPES[j])
    return row " |\n"
}

function table_gpus(    g, f, s, j, L, row, sep, rc, ns, other) {
    if (ncsv < 2) return "Only one CSV was given (" csvname[1] "): the comparison needs `make bench` on a second GPU.\n\n"
    g = 1; s = ""
    for (f = 2; f <= ncsv; f++) {
        s = s generated_note(g) generated_note(f) "\n"
        s = s "**" short_gpu(gpu[f]) " / " short_gpu(gpu[g]) "**, per lesson: its main kernel's effective GB/s on the "
        s = s gpu[f] " over the same kernel's on the " gpu[g] " at the same shape (equally, the "
        s = s short_gpu(gpu[g]) "'s time over the " short_gpu(gpu[f]) "'s); first row: the same ratio for the "
        s = s "device-to-device copy. **Bold**: at least " sprintf("%.0f", 100 * TRACK) " % of the copy's ratio at "
        s = s "that shape, i.e. the kernel gains what the memory gains. "
        s = s gpu[g] ": " setup(g) ". " gpu[f] ": " setup(f) ". Reproduce with `make bench` on each GPU, "
        s = s "then `make tables`.\n\n"
        # M x N = 2^26 shapes are named by N; the others in full, in the note below
        row = "| lesson (kernel)"; sep = "|---|"; ns = ""; other = ""
        for (j = 1; j <= NGPUS_SHAPES; j++) {
            split(GPUS_SHAPES[j], rc, " x ")
            if ((rc[1] + 0) * (rc[2] + 0) == 67108864) {
                row = row " | N = " pow2(rc[2]); ns = ns (ns == "" ? "" : ", ") pow2(rc[2])
            } else {
                row = row " | " GPUS_SHAPES[j]
                other = other "; " GPUS_SHAPES[j] " (" mib(rc[1] * rc[2] * 4) " per tensor)"
            }
            sep = sep "---:|"
        }
        s = s row " |\n" sep "\n"
        nbad = 0; badlist = ""; ndash = 0
        s = s ratio_row(g, f, 0, "copy", "copy")
        for (L = 1; L <= 99; L++)
            if ((L in MAIN) && ((g, L, MAIN[L]) in kern_seen) && ((f, L, MAIN[L]) in kern_seen))
                s = s ratio_row(g, f, L, MAIN[L], L " (" MAIN[L] ")")
        s = s ratio_row(g, f, 0, "cudnn", "cuDNN")
        s = s "\nThe shapes: M x N = 2^26 floats (256 MiB per tensor) for N = " ns other ".\n"
        if (ndash) s = s "\n" DASH " : no row for this shape in one of the CSVs (the kernel does not take it, or `make bench` skipped it as too slow).\n"
        if (nbad) s = s "\n**" WARN " the output of these runs did not pass the check, so their ratios mean nothing:** " badlist ".\n"
        s = s "\n"
    }
    return s
}

# 2097152 -> "2 MiB", 65536 -> "64 KiB".

# ---- lesson 11: the CSVs of lessons/11_multi_gpu/sweep.sh ---------------------------------------
# Columns: gpus,rows,cols,combine,median_ms,slice_copy_ms,pct_of_slice_copy,
# collectives_ms,collectives_pct,verified,lesson8_ms,lesson8_over_this,gpu,commit,date.
# Called on a CSV's first line: 1 (and the CSV is lesson 11's) if it has a
# "combine" column; a lesson 11 CSV without the other columns is an error.
function mg_header(    h, n, i, need, missing) {
    sub(/\r$/, "")
    n = csv_split($0, h)
    for (i = 1; i <= n; i++) if (h[i] == "combine") break
    if (i > n) return 0
    nmg++; mg_of[FILENAME] = nmg; mgname[nmg] = FILENAME; mgnshape[nmg] = 0; mgnk[nmg] = 0
    for (i in mgcol) delete mgcol[i]
    for (i = 1; i <= n; i++) mgcol[h[i]] = i
    mgncol = n
    n = split("gpus rows cols combine median_ms slice_copy_ms pct_of_slice_copy collectives_ms collectives_pct verified lesson8_ms gpu commit date", need, " ")
    missing = ""
    for (i = 1; i <= n; i++) if (!(need[i] in mgcol)) missing = missing " " need[i]
    if (missing != "") die(FILENAME " lacks the columns" missing " (is it lessons/11_multi_gpu/sweep.sh output?)")
    return 1
}

function mg_row(    v, f, k, shp, key, c, d, i) {
    sub(/\r$/, "")
    if ($0 == "") return
    if (csv_split($0, v) != mgncol) die(FILENAME ":" FNR ": " mgncol " fields expected")
    f = mg_of[FILENAME]; k = v[mgcol["gpus"]] + 0
    shp = v[mgcol["rows"]] " x " v[mgcol["cols"]]
    if (!((f, shp) in mgshape_seen)) {
        mgshape_seen[f, shp] = 1; mgshape[f, ++mgnshape[f]] = shp
        mgr[f, shp] = v[mgcol["rows"]]; mgc[f, shp] = v[mgcol["cols"]]
    }
    if (!((f, k) in mgk_seen)) {                  # the numbers of GPUs, kept in ascending order
        mgk_seen[f, k] = 1
        for (i = ++mgnk[f]; i > 1 && mgk[f, i - 1] > k; i--) mgk[f, i] = mgk[f, i - 1]
        mgk[f, i] = k
    }
    key = f SUBSEP v[mgcol["combine"]] ":" k SUBSEP shp
    mgms[key] = v[mgcol["median_ms"]]; mgcopy[key] = v[mgcol["slice_copy_ms"]]
    mgpct[key] = v[mgcol["pct_of_slice_copy"]]; mgcoll[key] = v[mgcol["collectives_ms"]]
    mgcollpct[key] = v[mgcol["collectives_pct"]]; mgver[key] = v[mgcol["verified"]]
    if (v[mgcol["lesson8_ms"]] != "") mgl8[f, shp] = v[mgcol["lesson8_ms"]]
    mggpu[f] = v[mgcol["gpu"]]
    c = v[mgcol["commit"]]
    if (!((f, c) in mgcommit_seen)) { mgcommit_seen[f, c] = 1; mgcommits[f] = mgcommits[f] (mgcommits[f] == "" ? "" : ", ") c }
    d = substr(v[mgcol["date"]], 1, 10)
    if (mgdate_lo[f] == "" || d < mgdate_lo[f]) mgdate_lo[f] = d
    if (d > mgdate_hi[f]) mgdate_hi[f] = d
}

# The lesson 11 CSV of a key ("h200": a part of its file name, or the GPU's
# short name in lower case); no key: the first one given.
function mg_csv(key, where,    f, g) {
    if (nmg == 0) die(where ": no lesson " MG_L " CSV given (docs/results/multi-gpu/*.csv)")
    if (key == "") return 1
    for (f = 1; f <= nmg; f++) {
        g = mggpu[f]; sub(/^[0-9]+ x /, "", g)
        if (tolower(short_gpu(g)) == key || index(tolower(mgname[f]), key)) return f
    }
    die(where ": no lesson " MG_L " CSV for the GPU '" key "'")
}

function mg_mark(key) { return (mgver[key] == "yes") ? "" : BAD }

# One operand "11 COMBINE:K RxC [GPU]" of tokens t[i..j]: its row's key, or dies.
function mg_key(t, i, j, where,    f, shp, key) {
    if (j - i < 2 || j - i > 3 || t[i] != MG_L || t[i + 1] !~ MG_NAME || t[i + 2] !~ /^[0-9]+x[0-9]+$/)
        die(where ": a lesson " MG_L " operand is '" MG_L " all-gather:K RxC [GPU]' or all-reduce, not '" inline_join(t, i, j) "'")
    f = mg_csv(j - i == 3 ? t[j] : "", where)
    shp = t[i + 2]; sub(/x/, " x ", shp)
    key = f SUBSEP t[i + 1] SUBSEP shp
    if (!(key in mgms)) die(where ": no row for lesson " MG_L " '" t[i + 1] "' at " shp " in " mgname[f])
    return key
}

function mg_num(x, raw, fmt) { return raw ? x + 0 : sprintf(fmt, x) }
function mg_us(ms, raw) { return raw ? 1000 * ms : sprintf(ms + 0 < 0.1 ? "%.1f" : "%.0f", 1000 * ms) }
function mg_msf(ms) { return ms + 0 < 100 ? "%.2f" : "%.1f" }

function mg_field(key, field, raw, where,    r, l8) {
    if (field == "ms") return mg_num(mgms[key], raw, mg_msf(mgms[key]))
    if (field == "us") return mg_us(mgms[key], raw)
    if (field == "time") return raw ? mgms[key] + 0 : fmt_time(mgms[key])
    if (field == "pct") return mg_num(mgpct[key], raw, "%.1f")
    if (field == "bound") return mg_num(1.5 * mgpct[key], raw, "%.1f")
    if (field == "coll_ms") return mg_num(mgcoll[key], raw, mg_msf(mgcoll[key]))
    if (field == "coll_us") return mg_us(mgcoll[key], raw)
    if (field == "coll_pct") return mg_num(mgcollpct[key], raw, "%.1f")
    if (field == "copy_ms") return mg_num(mgcopy[key], raw, mg_msf(mgcopy[key]))
    if (field == "copy_us") return mg_us(mgcopy[key], raw)
    if (field ~ /^l8/) {
        split(key, r, SUBSEP)
        if (!((r[1], r[3]) in mgl8)) die(where ": no lesson 8 time at " r[3] " in " mgname[r[1]])
        l8 = mgl8[r[1], r[3]]
        if (field == "l8_ms") return mg_num(l8, raw, mg_msf(l8))
        if (field == "l8_us") return mg_us(l8, raw)
        if (field == "l8_time") return raw ? l8 + 0 : fmt_time(l8)
        if (field == "l8x" && mgms[key] + 0 > 0) return mg_num(l8 / mgms[key], raw, "%.2f")
    }
    die(where ": unknown lesson " MG_L " field '" field "' (ms, us, time, pct, bound, coll_us, coll_ms, coll_pct, copy_us, copy_ms, l8_us, l8_ms, l8_time or l8x)")
}

# "268435456" -> "2^28" from 2^20 up; other numbers as written in the CSV.
function mg_num_name(x,    p) { p = pow2(x); return (p ~ /^2\^/ && x + 0 >= 1048576) ? p : x }

# One cell: a combine's time on K GPUs, with the collectives' share in brackets for K > 1.
function mg_cell(f, name, shp, k,    key) {
    key = f SUBSEP name ":" k SUBSEP shp
    if (!(key in mgms)) { ndash++; return DASH }
    collect_mg_bad(key, name " on " k " GPU" (k > 1 ? "s" : "") " at " shp)
    return fmt_time(mgms[key]) (k > 1 ? " (" fmt_pct(mgcollpct[key]) ")" : "") mg_mark(key)
}

function collect_mg_bad(key, what) {
    if (mgver[key] == "yes") return
    nbad++; badlist = badlist (nbad > 1 ? "; " : "") what " (verified = " mgver[key] ")"
}

# KIND "lesson11": per CSV, every shape; "lesson11 [GPU] RxC ...": one CSV at those shapes.
function table_multi(kind, where, md,    t, n, i, j, k, f, flo, fhi, key, nsel, sel, s, row, sep, shp, kmax, d, nshow, a) {
    n = split(kind, t, " "); nsel = 0; key = ""
    for (i = 2; i <= n; i++) {
        if (t[i] ~ /^[0-9]+x[0-9]+$/) { sel[++nsel] = t[i]; sub(/x/, " x ", sel[nsel]) }
        else if (key == "" && t[i] ~ /^[a-z0-9]+$/) key = t[i]
        else die(where ": '" t[i] "' in a lesson " MG_L " region is neither a shape RxC nor a GPU key")
    }
    if (nmg == 0) return "No lesson " MG_L " CSV given: run lessons/11_multi_gpu/sweep.sh on two GPUs or more, then `make tables`.\n\n"
    flo = 1; fhi = nmg
    if (nsel || key != "") flo = fhi = mg_csv(key, where)
    s = ""
    for (f = flo; f <= fhi; f++) {
        kmax = mgk[f, mgnk[f]]
        d = (mgdate_lo[f] == mgdate_hi[f]) ? mgdate_lo[f] : mgdate_lo[f] " to " mgdate_hi[f]
        s = s "<!-- generated by `make tables` (tests/tables.awk) from " mgname[f] ": edit the script, not this text -->\n\n"
        s = s "Measured by `lessons/11_multi_gpu/sweep.sh` on " mggpu[f] ", " d ", commit " mgcommits[f] ". "
        s = s "Median time per call, the slices resident on their GPUs; in brackets the share of the call inside the "
        s = s "collectives; split, 1 GPU: the same program on one GPU; % of slice copy: the call against a "
        s = s "device-to-device copy of one GPU's slice (12 bytes per element allow 66.7 %); lesson 8: on one GPU of "
        s = s "the same host. Reproduce with `make build/lesson11 build/lesson8`, "
        s = s "`bash lessons/11_multi_gpu/sweep.sh > " mgname[f] "` and `make tables`.\n\n"
        row = "| M x N | lesson 8, 1 GPU"; sep = "|---|---:|"
        for (j = 1; j <= mgnk[f]; j++) {
            k = mgk[f, j]
            if (k == 1) { row = row " | split, 1 GPU"; sep = sep "---:|"; continue }
            row = row " | " k " GPUs, all-gather | " k " GPUs, all-reduce"; sep = sep "---:|---:|"
        }
        if (kmax > 1) { row = row " | " kmax " GPUs: % of slice copy | lesson 8 ÷ " kmax " GPUs"; sep = sep "---:|---:|" }
        s = s row " |\n" sep "\n"
        nbad = 0; badlist = ""; ndash = 0
        nshow = nsel ? nsel : mgnshape[f]
        for (i = 1; i <= nshow; i++) {
            shp = nsel ? sel[i] : mgshape[f, i]
            if (!((f, shp) in mgshape_seen)) die(where ": no lesson " MG_L " row at " shp " in " mgname[f])
            row = "| " mg_num_name(mgr[f, shp]) " x " mg_num_name(mgc[f, shp])
            if ((f, shp) in mgl8) row = row " | " fmt_time(mgl8[f, shp])
            else { row = row " | " DASH; ndash++ }
            for (j = 1; j <= mgnk[f]; j++) {
                k = mgk[f, j]
                if (k == 1) { row = row " | " mg_cell(f, "all-gather", shp, 1); continue }
                row = row " | " mg_cell(f, "all-gather", shp, k) " | " mg_cell(f, "all-reduce", shp, k)
            }
            if (kmax > 1) {
                a = f SUBSEP "all-gather:" kmax SUBSEP shp
                if (a in mgms) row = row " | " fmt_pct(mgpct[a]) mg_mark(a)
                else { row = row " | " DASH; ndash++ }
                if ((a in mgms) && ((f, shp) in mgl8) && mgms[a] + 0 > 0) row = row " | " sprintf("%.2f×", mgl8[f, shp] / mgms[a]) mg_mark(a)
                else { row = row " | " DASH; ndash++ }
            }
            s = s row " |\n"
        }
        if (ndash) s = s "\n" DASH " : no row in the CSV (sweep.sh runs lesson 8 up to 2^32 elements, whose harness holds the matrix on the host too; a shape one GPU cannot hold has no row on one GPU).\n"
        if (nbad) s = s "\n**" WARN " the output of these runs did not pass the check, so their times mean nothing:** " badlist ".\n"
        s = s "\n"
    }
    return s
}
