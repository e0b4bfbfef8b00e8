/* make bench's shapes (tests/bench.cu says what runs at each): the sweep at
 * M x N = 2^26, the lengths between the powers of two, the vocabulary
 * shapes of language models, and 1024 x 512. */
#include <string.h>

#include "bench.h"

/* May be given with -D: a dry run of the code on the CPU emulator needs a
 * tiny sweep. */
#ifndef BENCH_ELEMS
#define BENCH_ELEMS (1LL << 26)
#endif

/* Row lengths that language models softmax over (their vocabularies), as
 * points between the powers of two. */
static const long long VOCAB_COLS[] = {
    32000,  /* Llama 2, Mistral 7B */
    50257,  /* GPT-2 */
    128256, /* Llama 3 */
    151936, /* Qwen2 */
};

/* Vocabulary shapes, M x N, as language models are trained on them: each
 * aligned length, then its neighbour off the vector width (N + 1, or GPT-2's
 * own 50257 beside its padded 50304 and the multiple of 8 nearest it,
 * 50256). M is scaled by BENCH_ELEMS / 2^26. */
static const long long VOCAB_SHAPES[][2] = {
    {4096, 32000},  {4096, 32001},  /* Llama 2 */
    {2048, 50304},  {2048, 50257},  /* GPT-2, padded and as it is */
    {2048, 50256},                  /* GPT-2's nearest multiple of 8 */
    {1024, 128256}, {1024, 128257}, /* Llama 3 */
    {512, 151936},  {512, 151937},  /* Qwen2 */
    {256, 262144},  {256, 262145},  /* Gemma 3 */
};

/* The shapes, by N: N = 2^5 ... 2^26 at M x N = 2^26, with the points
 * between (shapes[s][2] = SHAPE_BETWEEN), then the vocabulary shapes
 * (SHAPE_VOCAB), then 1024 x 512. Returns how many. */
static long long sweep_rows(long long n) /* M x N just under BENCH_ELEMS, at least one row */
{
    return BENCH_ELEMS / n > 0 ? BENCH_ELEMS / n : 1;
}

int sweep_shapes(long long shapes[][3], int quick)
{
    int nshapes = 0;
    for (int e = 5; e <= 26; e++) {
        if (quick && e != 5 && e != 10 && e != 15 && e != 20) continue;
        shapes[nshapes][0] = sweep_rows(1LL << e);
        shapes[nshapes][1] = 1LL << e;
        shapes[nshapes][2] = 0;
        nshapes++;
    }
    if (!quick) {
        long long mid[2 * 11 + sizeof VOCAB_COLS / sizeof VOCAB_COLS[0]];
        int nmid = 0;
        for (int e = 10; e <= 20; e++) {
            mid[nmid++] = 3LL << (e - 1); /* 1.5 x 2^e */
            mid[nmid++] = (1LL << e) + 1;
        }
        for (size_t v = 0; v < sizeof VOCAB_COLS / sizeof VOCAB_COLS[0]; v++) mid[nmid++] = VOCAB_COLS[v];
        for (int b = 0; b < nmid; b++) { /* each in N order among the others */
            int at = nshapes;
            while (at > 0 && shapes[at - 1][1] > mid[b]) {
                memcpy(shapes[at], shapes[at - 1], sizeof shapes[at]);
                at--;
            }
            shapes[at][0] = sweep_rows(mid[b]);
            shapes[at][1] = mid[b];
            shapes[at][2] = SHAPE_BETWEEN;
            nshapes++;
        }
        for (size_t v = 0; v < sizeof VOCAB_SHAPES / sizeof VOCAB_SHAPES[0]; v++) {
            const long long m = VOCAB_SHAPES[v][0] * BENCH_ELEMS / (1LL << 26), n = VOCAB_SHAPES[v][1];
            int dup = 0; /* 256 x 2^18 is a power of two of the sweep already */
            for (int b = 0; b < nshapes; b++) dup |= shapes[b][0] == (m > 0 ? m : 1) && shapes[b][1] == n;
            if (dup) continue;
            shapes[nshapes][0] = m > 0 ? m : 1;
            shapes[nshapes][1] = n;
            shapes[nshapes][2] = SHAPE_VOCAB;
            nshapes++;
        }
    }
    shapes[nshapes][0] = 1024;
    shapes[nshapes][1] = 512;
    shapes[nshapes][2] = 0;
    nshapes++;
    return nshapes;
}
