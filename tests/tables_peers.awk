# make tables, the peers: other libraries' softmax and cross-entropy kernels
# measured on the same GPU (docs/results/peers/*.csv, known by their "peer"
# column), beside this course's rows of the bench CSV of that GPU.
#
# A peers CSV has the columns op (softmax, ce), dtype, rows, cols, peer,
# version, median_ms, copy_ms (a copy of the same bytes in the same
# process), pct_of_copy, status ("ok", or "refused": the library does not
# take the shape), gpu and date. A peer may have several rows of a shape
# (runs on different days): the table shows its fastest.
#
# Region "peers OP [GPU]": per storage type and shape of the peers CSV, the
# course's kernel (softmax: lesson 8's entry point, lesson 9's for 16-bit
# rows; ce: lesson 10's fused classifier, with its loss summed and, as
# classifier_none, without the total) and each peer, as time and % of
# copy, and the best peer's time over the course's (above 1: the course is
# faster): QuACK's cross-entropy returns the per-row losses and no total,
# so it is set against classifier_none (the summed classifier where that
# has no row), the other peers (which reduce the loss) against the summed
# classifier. Inline markers name a peer's row as "peer PEER OP:DTYPE RxC [GPU]"
# with FIELD ms, us, time or pct, and mix with bench rows in ratios:
#   <!-- m peer quack softmax:bf16 256x262144 h200 / 9 fastest:bf16 256x262144 h200 ms -->1.07<!-- /m -->

function pe_header(    n, h, i, need, k, missing) {
    sub(/\r$/, "")
    n = csv_split($0, h)
    for (i = 1; i <= n; i++) if (h[i] == "peer") break
    if (i > n) return 0
    npe++; pe_of[FILENAME] = npe; pename[npe] = FILENAME
    for (k in pcol) delete pcol[k]
    for (i = 1; i <= n; i++) pcol[h[i]] = i
    split("op dtype rows cols peer version median_ms copy_ms pct_of_copy status gpu date", need, " ")
    missing = ""
    for (i = 1; i in need; i++) if (!(need[i] in pcol)) missing = missing " " need[i]
    if (missing != "") die(FILENAME " lacks the peers columns" missing)
    pncol[npe] = n
    return 1
}

function pe_row(    v, p, op, dt, shp, peer, key, d, n) {
    sub(/\r$/, "")
    if ($0 == "") return
    p = pe_of[FILENAME]
    if (csv_split($0, v) != pncol[p]) die(FILENAME ":" FNR ": " pncol[p] " fields expected")
    op = v[pcol["op"]]; dt = v[pcol["dtype"]]; peer = v[pcol["peer"]]
    shp = v[pcol["rows"]] " x " v[pcol["cols"]]
    if (!((p, op, dt, shp) in pshape_seen)) {
        pshape_seen[p, op, dt, shp] = 1; n = ++npshape[p, op]
        pshape_dt[p, op, n] = dt; pshape_at[p, op, n] = shp
    }
    if (!((p, peer) in ppeer_seen)) { ppeer_seen[p, peer] = 1; ppeer[p, ++nppeer[p]] = peer }
    key = p SUBSEP op SUBSEP dt SUBSEP shp SUBSEP peer
    # a shape a peer ran more than once: its fastest run (a slow one may be another process's noise)
    if (!(key in pms) || pstat[key] != "ok" ||
        (v[pcol["status"]] == "ok" && v[pcol["median_ms"]] + 0 < pms[key] + 0)) {
        pms[key] = v[pcol["median_ms"]]; ppct[key] = v[pcol["pct_of_copy"]]; pstat[key] = v[pcol["status"]]
    }
    pver[p, peer] = v[pcol["version"]]; pgpu[p] = v[pcol["gpu"]]
    d = substr(v[pcol["date"]], 1, 10)
    if (pdate_lo[p] == "" || d < pdate_lo[p]) pdate_lo[p] = d
    if (d > pdate_hi[p]) pdate_hi[p] = d
}

# The peers CSV of a GPU key (as inline_csv); no key: the first.
function pe_csv(key, where,    p) {
    if (!npe) die(where ": no peers CSV given (docs/results/peers/*.csv)")
    if (key == "") return 1
    for (p = 1; p <= npe; p++) if (tolower(short_gpu(pgpu[p])) == key || index(tolower(pename[p]), key)) return p
    die(where ": no peers CSV for the GPU '" key "'")
}

# The bench CSV of the peers CSV p's GPU.
function pe_bench(p, where,    f) {
    for (f = 1; f <= ncsv; f++) if (gpu[f] == pgpu[p]) return f
    die(where ": no bench CSV of " pgpu[p] " beside " pename[p])
}

# The bench key (bench CSV f, shape shp) of the course's kernel for an
# operation and storage type; ce: the summed classifier, or (none)
# classifier_none.
function pe_bench_key(f, op, dt, shp, none,    name) {
    if (op == "softmax") return f SUBSEP (dt == "f32" ? 8 SUBSEP "fastest" : HALF_L SUBSEP "fastest " dt) SUBSEP shp
    name = (none ? "classifier_none" : "classifier_fused") (dt == "f32" ? "" : " " dt)
    return f SUBSEP TRAIN_L SUBSEP name SUBSEP shp
}

function pe_ours_cell(key,    k) {
    if (!(key in ms)) { ndash++; return DASH }
    split(key, k, SUBSEP); collect_bad(k[1], k[2], k[3], k[4])
    return fmt_time(ms[key]) " (" fmt_pct(pct[key]) ")" mark(key)
}

function pe_name(peer) { return peer == "quack" ? "QuACK" : peer == "liger" ? "Liger" : peer }

function pe_cell(key) {
    if (!(key in pstat)) { ndash++; return DASH }
    if (pstat[key] != "ok") return "refused"
    return fmt_time(pms[key]) " (" fmt_pct(ppct[key]) ")"
}

# KIND "peers OP [GPU]".
function table_peers(kind, where, md,    t, n, op, p, f, s, row, i, j, dt, shp, key, key0, best, b, peers, r, ce) {
    n = split(kind, t, " ")
    op = t[2]
    if (n > 3 || (op != "softmax" && op != "ce")) die(where ": a peers region is 'peers softmax|ce [GPU]', not '" kind "'")
    p = pe_csv(n == 3 ? t[3] : "", where); f = pe_bench(p, where)
    if (!npshape[p, op]) die(where ": no " op " rows in " pename[p])
    peers = ""
    for (j = 1; j <= nppeer[p]; j++) peers = peers (j > 1 ? ", " : "") pe_name(ppeer[p, j]) " " pver[p, ppeer[p, j]]
    s = "<!-- generated by `make tables` (tests/tables_peers.awk) from " pename[p] " and " csvname[f] ": edit the script, not this text -->\n"
    s = s "**" pgpu[p] "**: this course by `make bench` (" setup(f, "") "); " peers " on the same GPU, "
    s = s (pdate_lo[p] == pdate_hi[p] ? pdate_lo[p] : pdate_lo[p] " to " pdate_hi[p]) ", timed by a PyTorch script "
    s = s "(median of 20 calls with CUDA events; a peer timed on several days: its fastest day). "
    s = s "Each % is of a copy of the same bytes timed in the same process; "
    s = s "the last column is the fastest peer's time over this course's (above 1: the course is faster)"
    ce = op == "ce"
    if (ce) s = s ". QuACK's cross-entropy returns each row's loss and the gradient, no total: it is set against "
    if (ce) s = s "the classifier without the total (TRAIN_NONE; the summed one where that has no row), the others, which "
    if (ce) s = s "reduce the loss, against the summed one"
    s = s ".\n\n"
    row = "| storage | M x N | this course" (ce ? " | this course, no total" : "")
    for (j = 1; j <= nppeer[p]; j++) row = row " | " pe_name(ppeer[p, j])
    s = s row " | fastest peer / course |\n|---|---|---:|" (ce ? "---:|" : "")
    for (j = 1; j <= nppeer[p]; j++) s = s "---:|"
    s = s "---:|\n"
    nbad = 0; badlist = ""; ndash = 0
    for (i = 1; i <= npshape[p, op]; i++) {
        dt = pshape_dt[p, op, i]; shp = pshape_at[p, op, i]
        key0 = pe_bench_key(f, op, dt, shp, 0)
        row = "| " dt " | " shp " | " pe_ours_cell(key0) (ce ? " | " pe_ours_cell(pe_bench_key(f, op, dt, shp, 1)) : "")
        best = 0 # the least of a peer's time over the matching course time
        for (j = 1; j <= nppeer[p]; j++) {
            b = p SUBSEP op SUBSEP dt SUBSEP shp SUBSEP ppeer[p, j]
            row = row " | " pe_cell(b)
            key = pe_bench_key(f, op, dt, shp, ce && ppeer[p, j] == "quack")
            if (!(key in ms)) key = key0 # no classifier_none row: the summed one, which does more
            if (!(key in ms) || !(b in pstat) || pstat[b] != "ok") continue
            r = pms[b] / ms[key]
            if (best == 0 || r < best) best = r
        }
        row = row " | " (best > 0 ? sprintf("%.2f", best) : DASH)
        s = s row " |\n"
    }
    return s footnotes() "\n"
}

# An inline operand "peer PEER OP:DTYPE RxC [GPU]" of tokens t[i..j]: its key.
function pe_key(t, i, j, where,    p, od, shp, key) {
    if (j - i < 3 || j - i > 4 || t[i + 2] !~ /^(softmax|ce):(f32|f16|bf16)$/ || t[i + 3] !~ /^[0-9]+x[0-9]+$/)
        die(where ": a peer operand is 'peer PEER OP:DTYPE RxC [GPU]', not '" inline_join(t, i, j) "'")
    p = pe_csv(j - i == 4 ? t[j] : "", where)
    split(t[i + 2], od, ":"); shp = t[i + 3]; sub(/x/, " x ", shp)
    key = p SUBSEP od[1] SUBSEP od[2] SUBSEP shp SUBSEP t[i + 1]
    if (!(key in pstat)) die(where ": no row for " t[i + 1] " " t[i + 2] " at " shp " in " pename[p])
    if (pstat[key] != "ok") die(where ": " t[i + 1] " refused " t[i + 2] " at " shp ": no number to quote")
    return key
}

function pe_field(key, field, raw, where) {
    if (field == "pct") return raw ? ppct[key] + 0 : sprintf("%.1f", ppct[key])
    if (field == "ms") return raw ? pms[key] + 0 : sprintf(pms[key] + 0 < 100 ? "%.2f" : "%.1f", pms[key])
    if (field == "us") return raw ? 1000 * pms[key] : sprintf(pms[key] + 0 < 0.1 ? "%.1f" : "%.0f", 1000 * pms[key])
    if (field == "time") return raw ? pms[key] + 0 : fmt_time(pms[key])
    die(where ": unknown field '" field "' for a peer (ms, us, time or pct)")
}
