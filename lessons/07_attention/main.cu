/* Lesson 7 program: the attention variants on small examples (scaled,
 * masked, causal, a fully masked row), the attention forward with its
 * memory footprint, then the timing: the plain softmax through the
 * harness, and (GPU only) every variant against it and the copy. Every
 * variant's output, in the demos and in the timing, is checked against
 * that variant's float64 reference (softmax_attention_reference.h), where
 * a fully masked row must be zeros; any failure makes the exit status 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "npy.h"
#include "reference.h"
#include "attention_forward.h"
#include "softmax_attention.h"
#include "softmax_attention_reference.h"

static const lesson LESSON = {
    7, "attention",
    "scale, masks and causal fused into lesson 5's row; attention without the S x S matrix",
    "1 read + 1 write (row on chip; + mask bytes when masked)", 8.0, softmax_attention_plain,
    verify_rtol, 16384, 4096,
};

/* ---- running one variant on small host arrays, and checking it ------------- */

/* What a demo's runs came to against the reference: one line per demo. */
typedef struct {
    int runs, failed;
    double max_rel;
    char first_bad[640]; /* the first failing run, described */
} demo_check;

static int demo_checking = 1; /* 0 with --no-check */
static int demo_failures;     /* over all demos: the exit status */

/* y = the variant `spec` describes (host masks in spec) of host x, on a
 * poisoned y (an unwritten output is NaN and fails); then y is checked
 * against the variant's float64 reference into *dc. */
static void run_small(attn_spec spec, const float *x, float *y, long long rows, long long cols,
                      const char *label, demo_check *dc)
{
    const attn_ref_case ref = {spec.kind, (double)spec.scale, spec.keep, spec.bias, spec.mask_rows, x, cols};
    const size_t n = (size_t)(rows * cols);
    const size_t nm = (size_t)(spec.mask_rows * cols);
    float *dx, *dy, *dbias = NULL;
    unsigned char *dkeep = NULL;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, n * sizeof(float)));
    if (spec.kind == ATTN_BYTE_MASK) {
        CUDA_CHECK(cudaMalloc(&dkeep, nm));
        CUDA_CHECK(cudaMemcpy(dkeep, spec.keep, nm, cudaMemcpyHostToDevice));
        spec.keep = dkeep;
    }
    if (spec.kind == ATTN_ADD_MASK) {
        CUDA_CHECK(cudaMalloc(&dbias, nm * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(dbias, spec.bias, nm * sizeof(float), cudaMemcpyHostToDevice));
        spec.bias = dbias;
    }
    softmax_attention_run(ATTN_PATH_AUTO, &spec, dx, dy, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    if (dkeep) CUDA_CHECK(cudaFree(dkeep));
    if (dbias) CUDA_CHECK(cudaFree(dbias));

    verify_report r;
    const int ok = verify_softmax(x, y, rows, cols, attn_ref_row, &ref, LESSON.rtol(cols), &r);
    dc->runs++;
    if (r.max_rel > dc->max_rel) dc->max_rel = r.max_rel;
    if (!ok && dc->failed++ == 0) {
        char desc[512];
        verify_describe(&r, desc, sizeof desc);
        snprintf(dc->first_bad, sizeof dc->first_bad, "%s: %s", label, desc);
    }
}

static void print_check(const demo_check *dc)
{
    if (!demo_checking) return;
    if (dc->failed) {
        demo_failures++;
        printf("  check: FAIL, %d of %d runs differ from the float64 reference; %s\n", dc->failed, dc->runs,
               dc->first_bad);
    } else {
        printf("  check: PASS, %d run%s against the float64 reference (max rel err %.1e)\n", dc->runs,
               dc->runs == 1 ? "" : "s", dc->max_rel);
    }
}

static void print_matrix(const char *title, const float *y, int rows, int cols)
{
    printf("  %s\n", title);
    for (int r = 0; r < rows; r++) {
        char label[32];
        snprintf(label, sizeof label, "  query %d", r);
        print_row(label, y + r * cols, cols);
    }
}

/* ---- the demos ------------------------------------------------------------------ */

/* One head, S = 4: the scores a query row gives its four keys. */
#define S4 4
static const float SCORES[S4 * S4] = {
    4, 1, 2, 8,
    1, 3, 0, 2,
    2, 6, 5, 1,
    0, 2, 9, 4,
};

static void demo_scaled(void)
{
    printf("1. Scaled: softmax(x * scale), scale = 1/sqrt(d), applied after the max is subtracted\n");
    const float x[4] = {1, 2, 3, 4};
    float y[4];
    demo_check dc = {0, 0, 0.0, ""};
    attn_spec s = {ATTN_SCALED, 1.0f, NULL, NULL, 0};
    run_small(s, x, y, 1, 4, "scale 1", &dc);
    print_row("scale 1", y, 4);
    s.scale = 0.125f;
    run_small(s, x, y, 1, 4, "scale 1/sqrt(64)", &dc);
    print_row("scale 1/sqrt(64)", y, 4);
    print_check(&dc);
    printf("  Scores of a dot product over d dimensions grow like sqrt(d); dividing by it keeps the\n"
           "  softmax from saturating to one key. Same kernel, one multiply per element: 8 bytes.\n\n");
}

static void demo_masked(void)
{
    printf("2. Masked: removed keys are -inf before the max (scale 1 here, for readable numbers)\n");
    print_matrix("scores", SCORES, S4, S4);
    float y[S4 * S4];
    /* Key padding: the sequence has 3 real tokens, key 3 is padding. */
    unsigned char keep[S4 * S4];
    for (int i = 0; i < S4 * S4; i++) keep[i] = i % S4 != 3;
    demo_check dc = {0, 0, 0.0, ""};
    attn_spec s = {ATTN_BYTE_MASK, 1.0f, keep, NULL, S4};
    run_small(s, SCORES, y, S4, S4, "byte mask", &dc);
    print_matrix("byte mask keeping keys 0-2 (key 3 is padding): 1 byte per score", y, S4, S4);
    /* An additive bias, ALiBi-like: -0.5 per position of distance. */
    float bias[S4 * S4];
    for (int q = 0; q < S4; q++)
        for (int k = 0; k < S4; k++) bias[q * S4 + k] = -0.5f * (float)abs(q - k);
    attn_spec b = {ATTN_ADD_MASK, 1.0f, NULL, bias, S4};
    run_small(b, SCORES, y, S4, S4, "additive mask", &dc);
    print_matrix("additive mask -0.5 |q - k| (0 keeps, -inf removes, the rest biases): 4 bytes per score",
                 y, S4, S4);
    print_check(&dc);
    printf("  Both masks are [S, S] here, broadcast over the batch of heads (mask_rows = S).\n\n");
}

static void demo_causal(void)
{
    printf("3. Causal: query q sees keys k <= q; no mask tensor, q = row %% S\n");
    float y[S4 * S4];
    demo_check dc = {0, 0, 0.0, ""};
    attn_spec s = {ATTN_CAUSAL, 1.0f, NULL, NULL, 0};
    run_small(s, SCORES, y, S4, S4, "causal", &dc);
    print_matrix("causal", y, S4, S4);
    print_check(&dc);
    printf("  Row q reads q + 1 scores and writes S: on average (S + 1) / 2 reads per row,\n"
           "  4 (S + 1) / (2 S) + 4 = 6 bytes per score instead of 8 for large S.\n\n");
}

static void demo_fully_masked(void)
{
    printf("4. A fully masked row (a query whose every key is padding)\n");
    const float x[4] = {1, 2, 3, 4};
    const unsigned char none[4] = {0, 0, 0, 0};
    float y[4];
    demo_check dc = {0, 0, 0.0, ""};
    attn_spec s = {ATTN_BYTE_MASK, 1.0f, none, NULL, 1};
    run_small(s, x, y, 1, 4, "fully masked row", &dc);
    print_row("this lesson's kernel", y, 4);
    print_check(&dc); /* the reference of this lesson's policy: zeros */
    const float neg[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    double ref[4];
    ref_softmax_row(neg, ref, 4); /* common/reference.h follows torch.softmax */
    printf("  %-22s [", "torch.softmax's answer");
    for (int i = 0; i < 4; i++) printf("%s%s", i ? ", " : "", isnan(ref[i]) ? "nan" : "a number");
    printf("]\n");
    printf("  max = -inf, and exp(-inf - (-inf)) = exp(NaN): the definition gives NaN. Attention\n"
           "  kernels return zeros (the query attends to nothing), so does PyTorch's\n"
           "  scaled_dot_product_attention; torch.softmax gives NaN. Here: shift by 0 when\n"
           "  max = -inf, and 1 / sum := 0 when sum = 0.\n\n");
}

static void demo_attention(void)
{
    enum { S = 256, D = 64 };
    printf("5. Attention, O = softmax(Q K^T / sqrt(d)) V, S = %d, d = %d, float64 CPU reference\n", S, D);
    const size_t n = (size_t)S * D;
    float *q = (float *)malloc(n * sizeof(float)), *k = (float *)malloc(n * sizeof(float));
    float *v = (float *)malloc(n * sizeof(float)), *o = (float *)malloc(n * sizeof(float));
    double *want = (double *)malloc(n * sizeof(double));
    inputs_fill(q, S, D, INPUT_NORMAL, 11);
    inputs_fill(k, S, D, INPUT_NORMAL, 12);
    inputs_fill(v, S, D, INPUT_NORMAL, 13);
    const float scale = 1.0f / sqrtf((float)D);

    float *dq, *dk, *dv, *dout, *work;
    CUDA_CHECK(cudaMalloc(&dq, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dk, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dv, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dout, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&work, (size_t)attention_materialized_work_floats(S) * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dq, q, n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dk, k, n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dv, v, n * sizeof(float), cudaMemcpyHostToDevice));
    for (int causal = 0; causal < 2; causal++) {
        attention_reference(q, k, v, want, NULL, NULL, S, D, scale, causal);
        for (int way = 0; way < 2; way++) {
            CUDA_CHECK(cudaMemset(dout, 0xFF, n * sizeof(float)));
            if (way == 0) attention_forward(dq, dk, dv, dout, S, D, scale, causal, 0);
            else attention_materialized(dq, dk, dv, dout, work, S, D, scale, causal, 0);
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaMemcpy(o, dout, n * sizeof(float), cudaMemcpyDeviceToHost));
            double worst = 0.0;
            for (size_t i = 0; i < n; i++) {
                double e = fabs((double)o[i] - want[i]);
                if (!(e <= worst)) worst = e; /* a NaN makes worst NaN */
            }
            printf("  %-11s %-48s max |O - O_ref| = %.1e\n", causal ? "causal" : "not causal",
                   way ? "materialising: S x S scores, row softmax, P V" : "online: K/V tiles, running (m, l, O)",
                   worst);
        }
    }
    CUDA_CHECK(cudaFree(dq));
    CUDA_CHECK(cudaFree(dk));
    CUDA_CHECK(cudaFree(dv));
    CUDA_CHECK(cudaFree(dout));
    CUDA_CHECK(cudaFree(work));
    free(q);
    free(k);
    free(v);
    free(o);
    free(want);

    printf("  Global memory each way needs (d = 128, float32):\n");
    printf("  %8s %16s %22s\n", "S", "online: Q K V O", "materialising: + 2 S^2");
    const long long Ss[] = {1024, 4096, 16384, 65536};
    for (int i = 0; i < 4; i++) {
        const double a = attention_forward_bytes(Ss[i], 128) / (1 << 20);
        const double b = attention_materialized_bytes(Ss[i], 128) / (1 << 20);
        printf("  %8lld %13.0f MiB %19.0f MiB\n", Ss[i], a, b);
    }
    printf("  O(S d) against O(S^2): at S = 65536 the scores and probabilities take 32 GiB.\n\n");
}

/* ---- timing the variants (GPU only) ------------------------------------------ */
#ifndef CUDA_EMU

/* time_runs times a softmax_fn; the variants need masks and a scale, which
 * this wrapper takes from here. A full mask rotates with the buffer set
 * (found from x), as x and y do, so that it too starts cold in L2. */
static struct {
    attn_spec spec;
    int sets, broadcast;
    float **x;
    unsigned char **keep; /* per set (full) or [0] (broadcast) */
    float **bias;
} T;

static void run_variant(const float *x, float *y, long long rows, long long cols, cudaStream_t st)
{
    int s = 0;
    while (s < T.sets - 1 && T.x[s] != x) s++;
    attn_spec spec = T.spec;
    const int m = T.broadcast ? 0 : s;
    if (spec.kind == ATTN_BYTE_MASK) spec.keep = T.keep[m];
    if (spec.kind == ATTN_ADD_MASK) spec.bias = T.bias[m];
    softmax_attention_run(ATTN_PATH_AUTO, &spec, x, y, rows, cols, st);
}

/* The variants' buffers: on the host the input (the lesson's own, --input's
 * rows too), room for an output, and masks that keep about 3/4 of the
 * keys (patterned, reproducible); on the device `sets` copies of x, y and
 * the full masks, and the [S, S] masks (S = cols: the first S x S of the
 * full ones) where those are no larger than the scores. */
typedef struct {
    long long rows, cols;
    size_t n, bytes;
    int sets, can_broadcast;
    float *hx, *hy, *hbias;
    unsigned char *hkeep;
    float *x[64], *y[64], *bias[64];
    unsigned char *keep[64];
    unsigned char *bkeep;
    float *bbias;
} variant_buffers;

/* The host half; 0 (after one line) when host memory is short. */
static int variant_host_buffers(variant_buffers *v, const options *o)
{
    v->hx = NULL;
    v->hy = (float *)malloc(v->bytes);
    v->hkeep = (unsigned char *)malloc(v->n);
    v->hbias = (float *)malloc(v->bytes);
    char err[512];
    long long in_rows, in_cols;
    if (o->input_path) {
        if (npy_read(o->input_path, &v->hx, &in_rows, &in_cols, err, sizeof err) != 0) {
            fprintf(stderr, "lesson7: %s\n", err);
            exit(2);
        }
    } else if ((v->hx = (float *)malloc(v->bytes)) != NULL) {
        inputs_fill(v->hx, v->rows, v->cols, o->kind, o->seed);
    }
    if (!v->hx || !v->hy || !v->hkeep || !v->hbias) {
        printf("Attention variants: not timed or checked (host memory)\n");
        free(v->hx);
        free(v->hy);
        free(v->hkeep);
        free(v->hbias);
        return 0;
    }
    for (size_t i = 0; i < v->n; i++) {
        const unsigned h = (unsigned)(i * 2654435761u) >> 28;
        v->hkeep[i] = h >= 4;
        v->hbias[i] = h >= 4 ? 0.0f : -INFINITY;
    }
    return 1;
}

/* The device half. */
static void variant_device_buffers(variant_buffers *v)
{
    for (int s = 0; s < v->sets; s++) {
        CUDA_CHECK(cudaMalloc(&v->x[s], v->bytes));
        CUDA_CHECK(cudaMalloc(&v->y[s], v->bytes));
        CUDA_CHECK(cudaMalloc(&v->keep[s], v->n));
        CUDA_CHECK(cudaMalloc(&v->bias[s], v->bytes));
        CUDA_CHECK(cudaMemcpy(v->x[s], v->hx, v->bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(v->keep[s], v->hkeep, v->n, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(v->bias[s], v->hbias, v->bytes, cudaMemcpyHostToDevice));
    }
    v->bkeep = NULL;
    v->bbias = NULL;
    if (v->can_broadcast) {
        const size_t ss = (size_t)(v->cols * v->cols);
        CUDA_CHECK(cudaMalloc(&v->bkeep, ss));
        CUDA_CHECK(cudaMalloc(&v->bbias, ss * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(v->bkeep, v->hkeep, ss, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(v->bbias, v->hbias, ss * sizeof(float), cudaMemcpyHostToDevice));
    }
}

static void free_variant_buffers(variant_buffers *v)
{
    for (int s = 0; s < v->sets; s++) {
        CUDA_CHECK(cudaFree(v->x[s]));
        CUDA_CHECK(cudaFree(v->y[s]));
        CUDA_CHECK(cudaFree(v->keep[s]));
        CUDA_CHECK(cudaFree(v->bias[s]));
    }
    if (v->bkeep) CUDA_CHECK(cudaFree(v->bkeep));
    if (v->bbias) CUDA_CHECK(cudaFree(v->bbias));
    free(v->hx);
    free(v->hy);
    free(v->hkeep);
    free(v->hbias);
}

/* The variant T holds, run once more on set 0 (its x and, for a full
 * mask, its mask) into a y poisoned with NaN, so that an element the
 * kernel never writes fails, and checked against its float64 reference
 * with the host masks. Returns 1 if it passed; else desc says how not. */
static int check_variant(variant_buffers *v, const char *name, char *desc, size_t desc_len)
{
    const long long rows = v->rows, cols = v->cols;
    CUDA_CHECK(cudaMemset(v->y[0], 0xFF, v->bytes));
    run_variant(v->x[0], v->y[0], rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(v->hy, v->y[0], v->bytes, cudaMemcpyDeviceToHost));
    /* A broadcast mask is the first S x S of the full one: the same
     * host array, read with mask_rows = S. */
    const attn_ref_case ref = {T.spec.kind, (double)T.spec.scale, v->hkeep, v->hbias, T.spec.mask_rows, v->hx, cols};
    verify_report r;
    const int ok = verify_softmax(v->hx, v->hy, rows, cols, attn_ref_row, &ref, LESSON.rtol(cols), &r);
    if (!ok) {
        char d[512];
        verify_describe(&r, d, sizeof d);
        snprintf(desc, desc_len, "%s: %s", name, d);
    }
    return ok;
}

/* Times every variant, then runs it once more into a poisoned y and checks
 * that against the variant's float64 reference with the host masks.
 * Returns 1 if any variant fails its check, else 0. */
static int time_variants(const options *o)
{
    variant_buffers v;
    const long long rows = o->rows, cols = o->cols;
    v.rows = rows, v.cols = cols;
    v.n = (size_t)rows * (size_t)cols, v.bytes = v.n * sizeof(float);
    const size_t n = v.n, bytes = v.bytes;
    v.can_broadcast = cols <= rows; /* an [S, S] mask no larger than the scores */
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    /* Per set: x, y, a full byte mask and a full float mask (3.25 x bytes);
     * rotation_sets allows 2 x bytes per set within 80 % of what it is told. */
    if (3.5 * (double)bytes + (v.can_broadcast ? 5.0 * (double)cols * cols : 0.0) > 0.8 * (double)free_b) {
        printf("Attention variants: not timed or checked (x, y and full masks need more GPU memory "
               "than is free)\n");
        return 0;
    }
    v.sets = rotation_sets(bytes, (size_t)((double)free_b / 1.7));
    if (!variant_host_buffers(&v, o)) return 0;
    variant_device_buffers(&v);

    /* Bytes each variant moves: x read + y written (4 + 4 per score), plus
     * every mask byte it loads; causal reads only q + 1 scores of row q. */
    double causal_reads = 0.0;
    for (long long r = 0; r < rows; r++) causal_reads += (double)(r % cols + 1);
    const struct {
        const char *name;
        attn_kind kind;
        float scale;
        int broadcast;
        double bytes; /* per run */
    } V[] = {
        {"plain softmax (scale 1)", ATTN_SCALED, 1.0f, 0, 8.0 * n},
        {"scaled, 1/sqrt(64)", ATTN_SCALED, 0.125f, 0, 8.0 * n},
        {"byte mask, full [rows, cols]", ATTN_BYTE_MASK, 0.125f, 0, 9.0 * n},
        {"byte mask, [S, S] broadcast", ATTN_BYTE_MASK, 0.125f, 1, 9.0 * n},
        {"additive mask, full", ATTN_ADD_MASK, 0.125f, 0, 12.0 * n},
        {"additive mask, [S, S] broadcast", ATTN_ADD_MASK, 0.125f, 1, 12.0 * n},
        {"causal, no mask tensor", ATTN_CAUSAL, 0.125f, 0, 4.0 * causal_reads + 4.0 * n},
    };
    const timing copy = time_runs(NULL, v.x, v.y, v.sets, rows, cols, o->warmup, o->iters);
    const double copy_gbps = 2.0 * bytes / (copy.median_ms * 1e6);
    const attn_plan plan = softmax_attention_plan(ATTN_PATH_AUTO, cols);
    printf("Attention variants at %lld x %lld (%s path, %s), S = %lld for the [S, S] masks and causal\n",
           rows, cols, attn_path_name(plan.path), cols % 4 == 0 ? "float4" : "scalar", cols);
    printf("  GB/s counts x, y and every mask byte loaded (a broadcast mask's mostly from L2);\n"
           "  copy: %.1f GB/s (%.4f ms). Median of %d runs. check: one more run into a NaN-filled y\n"
           "  against the variant's float64 reference (fully masked rows: zeros).\n",
           copy_gbps, copy.median_ms, o->iters);
    printf("  %-34s %9s %11s %9s %10s %12s %6s\n", "variant", "bytes/elt", "time (ms)", "GB/s",
           "% of copy", "time / plain", "check");
    double plain_ms = 0.0;
    int failed = 0;
    char bad[sizeof V / sizeof V[0]][640]; /* the failures, described after the table */
    int nbad = 0;
    for (unsigned i = 0; i < sizeof V / sizeof V[0]; i++) {
        if (V[i].broadcast && !v.can_broadcast) {
            printf("  %-34s skipped: an [S, S] mask would be larger than the scores\n", V[i].name);
            continue;
        }
        attn_spec spec = {V[i].kind, V[i].scale, NULL, NULL, V[i].broadcast ? cols : rows};
        T.spec = spec;
        T.sets = v.sets;
        T.broadcast = V[i].broadcast;
        T.x = v.x;
        T.keep = V[i].broadcast ? &v.bkeep : v.keep;
        T.bias = V[i].broadcast ? &v.bbias : v.bias;
        const timing t = time_runs(run_variant, v.x, v.y, v.sets, rows, cols, o->warmup, o->iters);
        if (i == 0) plain_ms = t.median_ms;
        const double gbps = V[i].bytes / (t.median_ms * 1e6);
        const char *check = "-";
        if (o->check) {
            const int ok = check_variant(&v, V[i].name, bad[nbad], sizeof bad[0]);
            check = ok ? "PASS" : "FAIL";
            if (!ok) {
                nbad++;
                failed = 1;
            }
        }
        printf("  %-34s %9.2f %11.4f %9.1f %9.1f %% %11.3fx %6s\n", V[i].name, V[i].bytes / n, t.median_ms,
               gbps, 100.0 * gbps / copy_gbps, t.median_ms / plain_ms, check);
    }
    for (int i = 0; i < nbad; i++) printf("  FAIL %s\n", bad[i]);
    printf("  Predicted (bandwidth-bound): scaled 1.00x, byte mask 1.125x, additive 1.5x (full;\n"
           "  broadcast: less, as far as the mask stays in L2), causal 0.75x; GB/s near the plain row's.\n\n");
    free_variant_buffers(&v);
    return failed;
}

/* The attention forward, online against materialising, at one size. */
static struct {
    const float *q, *k, *v;
    float *o, *work;
    int d, causal, materialize;
} A;

static void run_attention(const float *x, float *y, long long rows, long long cols, cudaStream_t st)
{
    (void)x;
    (void)y;
    (void)cols;
    if (A.materialize) attention_materialized(A.q, A.k, A.v, A.o, A.work, rows, A.d, 0.125f, A.causal, st);
    else attention_forward(A.q, A.k, A.v, A.o, rows, A.d, 0.125f, A.causal, st);
}

static void time_attention(const options *o)
{
    const long long S = 4096;
    const int d = 64;
    const size_t n = (size_t)S * d;
    const size_t work = (size_t)attention_materialized_work_floats(S) * sizeof(float);
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (4 * n * sizeof(float) + work > free_b / 2) {
        printf("Attention forward: not timed (GPU memory)\n");
        return;
    }
    float *h = (float *)malloc(n * sizeof(float)), *dq, *dk, *dv, *dout, *dwork;
    CUDA_CHECK(cudaMalloc(&dq, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dk, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dv, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dout, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dwork, work));
    float *ins[3] = {dq, dk, dv};
    for (int i = 0; i < 3; i++) {
        inputs_fill(h, S, d, INPUT_NORMAL, 20 + (unsigned long long)i);
        CUDA_CHECK(cudaMemcpy(ins[i], h, n * sizeof(float), cudaMemcpyHostToDevice));
    }
    A.q = dq;
    A.k = dk;
    A.v = dv;
    A.o = dout;
    A.work = dwork;
    A.d = d;
    printf("Attention forward, S = %lld, d = %d, float32 CUDA cores (no tensor cores), median of %d runs\n",
           S, d, o->iters);
    printf("  %-44s %11s %12s %14s\n", "way", "time (ms)", "GFLOP/s", "memory");
    for (int causal = 0; causal < 2; causal++)
        for (int m = 0; m < 2; m++) {
            A.causal = causal;
            A.materialize = m;
            float *px[1] = {dq}, *py[1] = {dout};
            const timing t = time_runs(run_attention, px, py, 1, S, d, o->warmup, o->iters);
            /* 2 S^2 d multiply-adds (Q K^T and P V), half of them when causal */
            const double flops = 4.0 * (double)S * S * d * (causal ? 0.5 : 1.0);
            const double mib = (m ? attention_materialized_bytes(S, d) : attention_forward_bytes(S, d)) / (1 << 20);
            char way[64];
            snprintf(way, sizeof way, "%s, %s", m ? "materialising" : "online (tiles)",
                     causal ? "causal" : "not causal");
            printf("  %-44s %11.4f %12.1f %10.0f MiB\n", way, t.median_ms, flops / (t.median_ms * 1e6), mib);
        }
    printf("\n");
    CUDA_CHECK(cudaFree(dq));
    CUDA_CHECK(cudaFree(dk));
    CUDA_CHECK(cudaFree(dv));
    CUDA_CHECK(cudaFree(dout));
    CUDA_CHECK(cudaFree(dwork));
    free(h);
}
#endif /* !CUDA_EMU */

int main(int argc, char **argv)
{
    options o;
    lesson_init(&LESSON, &o, argc, argv);
    demo_checking = o.check;

    demo_scaled();
    demo_masked();
    demo_causal();
    demo_fully_masked();
    demo_attention();

    /* Checked with this lesson's policy: a row of only -inf (a query that
     * attends to nothing) must give zeros here, where the plain reference,
     * like torch.softmax, gives NaN; any other row is the plain softmax. */
    int status = lesson_run_ref(&LESSON, &o, ref_row_softmax_masked_zeros);
#ifndef CUDA_EMU
    printf("\n");
    if (time_variants(&o)) status = 1;
    time_attention(&o);
#endif
    if (demo_failures) status = 1;
    return status;
}
