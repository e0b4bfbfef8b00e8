/* Command-line options shared by every lesson program (see options.h).
 *
 * The parser is strict on purpose: a benchmark that silently reads
 * "--cols 1e6" as 1 (what atoi does) measures the wrong thing. Every value
 * is checked in full, and every problem gets one line that names the flag. */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* rows * cols may not exceed this: 2^40 floats is 4 TiB, far beyond any GPU,
 * and the limit keeps every byte count well inside 64 bits. */
#define MAX_RUNS 1000000LL

void options_defaults(options *o, long long rows, long long cols)
{
    memset(o, 0, sizeof *o);
    o->rows = rows;
    o->cols = cols;
    o->iters = 20;
    o->warmup = 5;
    o->seed = 1;
    o->kind = INPUT_NORMAL;
    o->check = 1;
    o->storage = DTYPE_F32;
}

static const char *const KIND_NAMES[] = {"normal", "uniform", "large", "special"};
#define NKINDS (int)(sizeof KIND_NAMES / sizeof KIND_NAMES[0])

const char *input_kind_name(input_kind k)
{
    return (int)k >= 0 && (int)k < NKINDS ? KIND_NAMES[k] : "unknown";
}

/* Copies user text into buf for an error message: at most 40 characters,
 * anything unprintable shown as '?', so the message stays one short line
 * whatever was typed (a value can contain a newline). */
static const char *shown(const char *s, char *buf, size_t len)
{
    size_t i = 0, max = len - 4; /* room for "..." and the NUL */
    if (max > 40) max = 40;
    for (; s[i] && i < max; i++) buf[i] = (s[i] >= 32 && s[i] < 127) ? s[i] : '?';
    if (s[i]) {
        memcpy(buf + i, "...", 3);
        i += 3;
    }
    buf[i] = '\0';
    return buf;
}

/* Reads a whole decimal number: digits only, no sign, no spaces, nothing
 * after it. strtoull would accept " 12", "+12", "-1" (as a huge value!) and
 * "12abc" up to the junk, so we read the digits ourselves.
 * Returns 0 on success, 1 if s is not a whole number, 2 if it exceeds max. */
static int read_whole(const char *s, unsigned long long max, unsigned long long *v)
{
    if (*s == '\0') return 1;
    unsigned long long n = 0;
    int too_big = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return 1;
        unsigned d = (unsigned)(*p - '0');
        /* n * 10 + d > max, tested without overflowing */
        if (too_big || n > (max - d) / 10) too_big = 1;
        else n = n * 10 + d;
    }
    *v = n;
    return too_big ? 2 : 0;
}

/* An integer option in [lo, hi]. A leading '-' followed by digits is a
 * negative number: say it is below the minimum rather than "not a number". */
static int parse_int(const char *flag, const char *s, long long lo, long long hi,
                     long long *out, char *err, size_t errlen)
{
    char buf[48];
    unsigned long long v = 0;
    if (s[0] == '-' && s[1] != '\0' && read_whole(s + 1, ULLONG_MAX, &v) != 1) {
        snprintf(err, errlen, "%s: must be at least %lld (got %s)", flag, lo, shown(s, buf, sizeof buf));
        return -1;
    }
    int r = read_whole(s, (unsigned long long)hi, &v);
    if (r == 1) {
        snprintf(err, errlen, "%s: '%s' is not a whole number", flag, shown(s, buf, sizeof buf));
        return -1;
    }
    if (r == 2) {
        snprintf(err, errlen, "%s: %s is too large (at most %lld)", flag, shown(s, buf, sizeof buf), hi);
        return -1;
    }
    if ((long long)v < lo) {
        snprintf(err, errlen, "%s: must be at least %lld (got %llu)", flag, lo, v);
        return -1;
    }
    *out = (long long)v;
    return 0;
}

typedef enum { OPT_ROWS, OPT_COLS, OPT_ITERS, OPT_WARMUP, OPT_SEED, OPT_KIND, OPT_INPUT,
               OPT_OUTPUT, OPT_CSV, OPT_NO_CHECK, OPT_DTYPE, OPT_HELP } opt_id;

static const struct {
    const char *name;
    opt_id id;
    int takes_value;
} FLAGS[] = {
    {"--rows", OPT_ROWS, 1},     {"--cols", OPT_COLS, 1},         {"--iters", OPT_ITERS, 1},
    {"--warmup", OPT_WARMUP, 1}, {"--seed", OPT_SEED, 1},         {"--input-kind", OPT_KIND, 1},
    {"--input", OPT_INPUT, 1},   {"--output", OPT_OUTPUT, 1},     {"--csv", OPT_CSV, 1},
    {"--no-check", OPT_NO_CHECK, 0}, {"--dtype", OPT_DTYPE, 1},   {"--help", OPT_HELP, 0},
    {"-h", OPT_HELP, 0},
};
#define NFLAGS (int)(sizeof FLAGS / sizeof FLAGS[0])

/* The flag spelled by arg ("--rows" or "--rows=8"); *value points after the
 * '=' when there is one. -1 if arg is no known flag. */
static int find_flag(const char *arg, const char **value)
{
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    for (int i = 0; i < NFLAGS; i++) {
        if (strlen(FLAGS[i].name) == len && strncmp(arg, FLAGS[i].name, len) == 0) {
            *value = eq ? eq + 1 : NULL;
            return i;
        }
    }
    return -1;
}

/* Whether the word after a value flag is its value: not when it is
 * another option ("--rows --cols 8" forgot the value of --rows). */
static int is_value(const char *word) { return strncmp(word, "--", 2) != 0; }

int options_take(int argc, char **argv, int *i, const char *const *names, int n, const char **value)
{
    const char *arg = argv[*i];
    for (int k = 0; k < n; k++) {
        const size_t len = strlen(names[k]);
        if (strncmp(arg, names[k], len) != 0 || (arg[len] != '\0' && arg[len] != '=')) continue;
        if (arg[len] == '=') *value = arg + len + 1;
        else if (*i + 1 < argc && is_value(argv[*i + 1])) *value = argv[++*i];
        else *value = NULL;
        return k;
    }
    return -1;
}

int options_int(const char *flag, const char *s, long lo, long hi, int *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || s[0] == ' ' || s[0] == '+' || errno == ERANGE || v < lo || v > hi) {
        snprintf(err, errlen, "%s: '%.40s' is not a whole number from %ld to %ld", flag, s, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int options_choice(const char *flag, const char *s, const char *const *names, int n, char *err, size_t errlen)
{
    for (int k = 0; k < n; k++)
        if (strcmp(s, names[k]) == 0) return k;
    size_t used = (size_t)snprintf(err, errlen, "%s: '%.40s' is not", flag, s);
    for (int k = 0; k < n && used < errlen; k++)
        used += (size_t)snprintf(err + used, errlen - used, "%s %s", k == 0 ? "" : k == n - 1 ? " or" : ",", names[k]);
    return -1;
}

/* --help anywhere wins ("prog --rows 0 --help" shows the help). The scan
 * skips values, so "--rows -h" is a bad row count, not a request for help. */
static int help_requested(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *value;
        int f = find_flag(argv[i], &value);
        if (f < 0) continue;
        if (FLAGS[f].id == OPT_HELP && !value) return 1;
        if (FLAGS[f].takes_value && !value && i + 1 < argc && is_value(argv[i + 1])) i++;
    }
    return 0;
}

int options_parse(options *o, int argc, char **argv, char *err, size_t errlen)
{
    char buf[48];
    if (help_requested(argc, argv)) return 1;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = NULL;
        int f = find_flag(arg, &value);
        if (f < 0) {
            if (arg[0] == '-')
                snprintf(err, errlen, "unknown option '%s' (see --help)", shown(arg, buf, sizeof buf));
            else
                snprintf(err, errlen, "unexpected argument '%s' (options start with --; see --help)",
                         shown(arg, buf, sizeof buf));
            return -1;
        }
        const char *name = FLAGS[f].name;
        if (!FLAGS[f].takes_value) {
            if (value) {
                snprintf(err, errlen, "%s takes no value", name);
                return -1;
            }
        } else if (!value) {
            if (i + 1 >= argc || !is_value(argv[i + 1])) {
                snprintf(err, errlen, "%s needs a value", name);
                return -1;
            }
            value = argv[++i];
        }

        long long v;
        unsigned long long u;
        switch (FLAGS[f].id) {
        case OPT_ROWS:
            if (parse_int(name, value, 1, OPT_MAX_ROWS, &o->rows, err, errlen)) return -1;
            o->rows_set = 1;
            break;
        case OPT_COLS:
            if (parse_int(name, value, 1, OPT_MAX_COLS, &o->cols, err, errlen)) return -1;
            o->cols_set = 1;
            break;
        case OPT_ITERS:
            if (parse_int(name, value, 1, MAX_RUNS, &v, err, errlen)) return -1;
            o->iters = (int)v;
            break;
        case OPT_WARMUP:
            if (parse_int(name, value, 0, MAX_RUNS, &v, err, errlen)) return -1;
            o->warmup = (int)v;
            break;
        case OPT_SEED: {
            int r = read_whole(value, ULLONG_MAX, &u);
            if (r == 1) {
                snprintf(err, errlen, "%s: '%s' is not a whole number", name, shown(value, buf, sizeof buf));
                return -1;
            }
            if (r == 2) {
                snprintf(err, errlen, "%s: %s is too large (at most %llu)", name,
                         shown(value, buf, sizeof buf), ULLONG_MAX);
                return -1;
            }
            o->seed = u;
            break;
        }
        case OPT_KIND: {
            int k = 0;
            while (k < NKINDS && strcmp(value, KIND_NAMES[k]) != 0) k++;
            if (k == NKINDS) {
                snprintf(err, errlen, "%s: '%s' is not one of normal, uniform, large, special", name,
                         shown(value, buf, sizeof buf));
                return -1;
            }
            o->kind = (input_kind)k;
            break;
        }
        case OPT_INPUT:
        case OPT_OUTPUT:
        case OPT_CSV:
            if (value[0] == '\0') {
                snprintf(err, errlen, "%s: the file name is empty", name);
                return -1;
            }
            if (FLAGS[f].id == OPT_INPUT) o->input_path = value;
            else if (FLAGS[f].id == OPT_OUTPUT) o->output_path = value;
            else o->csv_path = value;
            break;
        case OPT_NO_CHECK:
            o->check = 0;
            break;
        case OPT_DTYPE:
            /* Parsed for every program, so the message is the same everywhere;
             * the lesson harness refuses it where storage is float32 only. */
            if (dtype_parse(value, &o->storage) != 0) {
                snprintf(err, errlen, "%s: '%s' is not one of f32, f16, bf16", name, shown(value, buf, sizeof buf));
                return -1;
            }
            o->storage_set = 1;
            break;
        case OPT_HELP: /* handled by help_requested */
            break;
        }
    }

    /* Checks that involve more than one flag. */
    if (o->input_path && (o->rows_set || o->cols_set)) {
        snprintf(err, errlen, "--input sets the shape; drop --rows/--cols");
        return -1;
    }
    /* Divided, not multiplied: rows * cols could pass 2^63. */
    if (o->rows > OPT_MAX_ELEMENTS / o->cols) {
        snprintf(err, errlen, "--rows/--cols: %lld x %lld is too many elements (at most 2^40 = %lld)",
                 o->rows, o->cols, OPT_MAX_ELEMENTS);
        return -1;
    }
    return 0;
}

void options_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "Usage: %s [options]\n"
            "  --rows N            rows M of the input (1 to %lld)\n"
            "  --cols N            columns N, the softmax length (1 to %lld)\n"
            "  --iters N           timed runs; the median is reported (default 20)\n"
            "  --warmup N          untimed runs before timing (default 5)\n"
            "  --seed N            input generator seed, 0 to 2^64-1 (default 1)\n"
            "  --input-kind KIND   normal: N(0,1); uniform: U(-4,4); large: each row offset\n"
            "                      by +-100..3000, naive softmax overflows; special: constant\n"
            "                      rows, -inf entries, +-FLT_MAX, denormals (default normal)\n"
            "  --input FILE.npy    read the input from a float32 rank-2 .npy file (sets the shape)\n"
            "  --output FILE.npy   write the softmax output as a .npy file\n"
            "  --csv FILE          append one line of results to FILE\n"
            "  --no-check          skip the comparison with the float64 reference\n"
            "  --help, -h          this text\n"
            "Values may also be given as --flag=value.\n",
            prog, OPT_MAX_ROWS, OPT_MAX_COLS);
}

void options_usage_dtype(FILE *f)
{
    fprintf(f,
            "  --dtype TYPE        storage of input and output: f16 (IEEE float16, the default),\n"
            "                      bf16 (bfloat16) or f32; the arithmetic is float32 for all three.\n"
            "                      Generated inputs are made in float32 and rounded to TYPE (to\n"
            "                      nearest, ties to even). With --input the file's type is the\n"
            "                      default; another TYPE converts its values the same way.\n"
            "  --input FILE.npy    may also hold '<f2' (float16) or '<u2' (bfloat16 as raw 16-bit\n"
            "                      patterns, the top half of a float32: NumPy has no bfloat16)\n"
            "  --output FILE.npy   is written in the storage type: '<f4', '<f2' or '<u2' (bfloat16)\n");
}
