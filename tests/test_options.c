/* The command line: every valid form is read as meant, every invalid one
 * is refused with one line that names the flag. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "test.h"

#define MAXARGS 8

/* argv for "prog" and the NULL-terminated words; returns argc. */
static int make_argv(char **argv, const char *const *words)
{
    int argc = 1;
    argv[0] = (char *)"prog";
    while (*words && argc <= MAXARGS) argv[argc++] = (char *)*words++;
    argv[argc] = NULL;
    return argc;
}

/* Parses the NULL-terminated words after the program name into o (from
 * the defaults 64 x 128); returns options_parse's result. */
static int parse(options *o, char *err, size_t errlen, const char *const *words)
{
    char *argv[MAXARGS + 2];
    const int argc = make_argv(argv, words);
    options_defaults(o, 64, 128);
    err[0] = '\0';
    return options_parse(o, argc, argv, err, errlen);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_defaults(void)
{
    options o;
    char err[256];
    int r = parse(&o, err, sizeof err, ARGS(NULL));
    test_expect(r == 0 && o.rows == 64 && o.cols == 128 && !o.rows_set && !o.cols_set && o.iters == 20 &&
                    o.warmup == 5 && o.seed == 1 && o.kind == INPUT_NORMAL && !o.input_path && !o.output_path &&
                    !o.csv_path && o.check == 1,
                "options: no arguments give the defaults (given shape, 20 runs, 5 warm-up, seed 1, normal, checked)",
                "r %d rows %lld cols %lld iters %d warmup %d seed %llu", r, o.rows, o.cols, o.iters, o.warmup,
                o.seed);
}

static void test_valid(void)
{
    options o;
    char err[256];
    int r;

    r = parse(&o, err, sizeof err, ARGS("--rows", "8", "--cols", "100000"));
    test_expect(r == 0 && o.rows == 8 && o.cols == 100000 && o.rows_set && o.cols_set,
                "options: --rows 8 --cols 100000 sets the shape and marks it set", "r %d: %s", r, err);

    r = parse(&o, err, sizeof err, ARGS("--rows=8", "--cols=3", "--iters=7", "--warmup=0", "--seed=42"));
    test_expect(r == 0 && o.rows == 8 && o.cols == 3 && o.iters == 7 && o.warmup == 0 && o.seed == 42,
                "options: the --flag=value form works for every value flag", "r %d: %s", r, err);

    r = parse(&o, err, sizeof err, ARGS("--rows", "2147483647", "--cols", "1", "--iters", "1000000"));
    test_expect(r == 0 && o.rows == 2147483647LL && o.iters == 1000000,
                "options: the largest values are accepted (rows 2^31-1, iters 10^6)", "r %d: %s", r, err);
    r = parse(&o, err, sizeof err, ARGS("--rows", "1", "--cols", "2147483665"));
    test_expect(r == 0 && o.cols == 2147483665LL,
                "options: a single row longer than 2^31 elements is accepted (1 x 2^31+17)", "r %d: %s", r, err);

    r = parse(&o, err, sizeof err, ARGS("--rows", "1048576", "--cols", "1048576"));
    test_expect(r == 0, "options: exactly 2^40 elements is accepted", "r %d: %s", r, err);

    r = parse(&o, err, sizeof err, ARGS("--seed", "18446744073709551615"));
    test_expect(r == 0 && o.seed == 18446744073709551615ULL, "options: --seed takes any 64-bit value (2^64-1)",
                "r %d: %s", r, err);

    r = parse(&o, err, sizeof err, ARGS("--seed", "0", "--rows", "007"));
    test_expect(r == 0 && o.seed == 0 && o.rows == 7, "options: --seed 0 and leading zeros are fine", "r %d: %s", r,
                err);

    const char *kinds[] = {"normal", "uniform", "large", "special"};
    int ok = 1;
    for (int k = 0; k < 4; k++) {
        r = parse(&o, err, sizeof err, ARGS("--input-kind", kinds[k]));
        if (r != 0 || o.kind != (input_kind)k || strcmp(input_kind_name(o.kind), kinds[k]) != 0) ok = 0;
    }
    test_expect(ok, "options: --input-kind accepts normal, uniform, large, special, and input_kind_name names them",
                "failed");

    r = parse(&o, err, sizeof err, ARGS("--input", "in.npy", "--output=out.npy", "--csv", "r.csv", "--no-check"));
    test_expect(r == 0 && o.input_path && !strcmp(o.input_path, "in.npy") && !strcmp(o.output_path, "out.npy") &&
                    !strcmp(o.csv_path, "r.csv") && o.check == 0 && !o.rows_set && !o.cols_set,
                "options: --input, --output, --csv take file names; --no-check turns the check off", "r %d: %s", r,
                err);

    r = parse(&o, err, sizeof err, ARGS("--rows", "8", "--rows", "9", "--input-kind", "large", "--input-kind=uniform"));
    test_expect(r == 0 && o.rows == 9 && o.kind == INPUT_UNIFORM, "options: a flag given twice: the last one wins",
                "r %d rows %lld", r, o.rows);

    r = parse(&o, err, sizeof err, ARGS("--help"));
    int r2 = parse(&o, err, sizeof err, ARGS("-h"));
    int r3 = parse(&o, err, sizeof err, ARGS("--rows", "0", "--help"));
    int r4 = parse(&o, err, sizeof err, ARGS("--output", "--help"));
    int r5 = parse(&o, err, sizeof err, ARGS("--rows", "-h"));
    test_expect(r == 1 && r2 == 1 && r3 == 1 && r4 == 1 && r5 == -1,
                "options: --help and -h return 1, even after a bad value ('--rows -h' is a bad value)",
                "got %d %d %d %d %d", r, r2, r3, r4, r5);
}

/* Each must be refused: -1, a non-empty message on one line, naming `want`. */
static const struct {
    const char *words[MAXARGS];
    const char *want; /* a part of the message */
} BAD[] = {
    {{"--rows", "-5"}, "--rows: must be at least 1 (got -5)"},
    {{"--cols", "0"}, "--cols: must be at least 1 (got 0)"},
    {{"--rows", "abc"}, "--rows: 'abc' is not a whole number"},
    {{"--cols", "1e99"}, "--cols: '1e99' is not a whole number"},
    {{"--cols", "3.5"}, "--cols: '3.5' is not a whole number"},
    {{"--cols", "0x10"}, "--cols: '0x10' is not a whole number"},
    {{"--rows", "+5"}, "--rows: '+5' is not a whole number"},
    {{"--rows", " 5"}, "--rows: ' 5' is not a whole number"},
    {{"--rows", "5 "}, "--rows: '5 ' is not a whole number"},
    {{"--rows", "12abc"}, "--rows: '12abc' is not a whole number"},
    {{"--rows", ""}, "--rows: '' is not a whole number"},
    {{"--rows="}, "--rows: '' is not a whole number"},
    {{"--rows", "99999999999999999999"}, "--rows: 99999999999999999999 is too large (at most 2147483647)"},
    {{"--cols", "1099511627777"}, "--cols: 1099511627777 is too large (at most 1099511627776)"},
    {{"--rows", "2147483647", "--cols", "2147483647"}, "too many elements"},
    {{"--rows", "1048576", "--cols", "1048577"}, "--rows/--cols"},
    {{"--iters", "0"}, "--iters: must be at least 1 (got 0)"},
    {{"--iters", "1000001"}, "--iters: 1000001 is too large (at most 1000000)"},
    {{"--warmup", "-1"}, "--warmup: must be at least 0 (got -1)"},
    {{"--warmup", "1000001"}, "--warmup: 1000001 is too large"},
    {{"--seed", "x1"}, "--seed: 'x1' is not a whole number"},
    {{"--seed", "-1"}, "--seed: '-1' is not a whole number"},
    {{"--seed", "18446744073709551616"}, "--seed: 18446744073709551616 is too large"},
    {{"--input-kind", "gaussian"}, "--input-kind: 'gaussian' is not one of normal, uniform, large, special"},
    {{"--input-kind", "Normal"}, "--input-kind: 'Normal' is not one of"},
    {{"--foo"}, "unknown option '--foo' (see --help)"},
    {{"--rows"}, "--rows needs a value"},
    {{"--rows", "--cols", "8"}, "--rows needs a value"},
    {{"--input"}, "--input needs a value"},
    {{"--input="}, "--input: the file name is empty"},
    {{"1024"}, "unexpected argument '1024'"},
    {{"--no-check=yes"}, "--no-check takes no value"},
    {{"--input", "x.npy", "--rows", "2"}, "--input sets the shape; drop --rows/--cols"},
    {{"--cols=4", "--input=x.npy"}, "--input sets the shape; drop --rows/--cols"},
    {{"--rows", "1\n2"}, "--rows: '1?2' is not a whole number"},
    {{"--rows", "123456789012345678901234567890123456789012345678901234567890"}, "is too large"},
};

static void test_invalid(void)
{
    int n = (int)(sizeof BAD / sizeof BAD[0]);
    for (int i = 0; i < n; i++) {
        options o;
        char err[256], name[200], shown[120] = "";
        for (int w = 0; BAD[i].words[w]; w++) {
            size_t at = strlen(shown);
            const char *word = BAD[i].words[w];
            int quote = !word[0] || strchr(word, ' '); /* show '' and ' 5' */
            snprintf(shown + at, sizeof shown - at, quote ? "%s'%s'" : "%s%s", w ? " " : "", word);
        }
        for (char *p = shown; *p; p++)
            if (*p == '\n') *p = '?';
        snprintf(name, sizeof name, "options: rejects [%s]", shown);
        int r = parse(&o, err, sizeof err, BAD[i].words);
        test_expect(r == -1 && err[0] && !strchr(err, '\n') && strstr(err, BAD[i].want), name,
                    "returned %d with message '%s', want -1 and a line containing '%s'", r, err, BAD[i].want);
    }

    /* A long junk value is shortened: the message stays short. */
    options o;
    char err[256], junk[1000];
    memset(junk, 'z', sizeof junk - 1);
    junk[sizeof junk - 1] = '\0';
    int r = parse(&o, err, sizeof err, ARGS("--cols", junk));
    test_expect(r == -1 && strlen(err) < 120 && strstr(err, "zzz...'"),
                "options: a 999-character bad value is cut short in the message", "got '%s'", err);
}

/* --help's text lists every flag. */
static void test_usage(void)
{
    const char *name = "options: the usage text lists every flag";
    FILE *f = tmpfile();
    if (!f) {
        test_skip(name, "no temporary file");
        return;
    }
    options_usage(f, "prog");
    char text[4096];
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    const char *flags[] = {"--rows", "--cols", "--iters", "--warmup", "--seed", "--input-kind", "--input ",
                           "--output", "--csv", "--no-check", "--help", "-h", "normal", "uniform", "large",
                           "special", "prog"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (!strstr(text, flags[i])) {
            test_fail(name, "'%s' missing", flags[i]);
            return;
        }
    test_pass(name);
}

/* A lesson's own flags (lessons 10 and 11): options_take on the words
 * "prog WORDS...", from word 1; returns the flag index, with the index
 * reached and the value. */
static int take(const char *const *words, int *i, const char **value)
{
    static const char *const NAMES[] = {"--gpus", "--method"};
    char *argv[MAXARGS + 2];
    const int argc = make_argv(argv, words);
    *i = 1;
    *value = "unset";
    return options_take(argc, argv, i, NAMES, 2, value);
}

static void test_take(void)
{
    int i, f;
    const char *v;
    f = take(ARGS("--gpus", "2", "--rows", "8"), &i, &v);
    test_expect(f == 0 && i == 2 && v && !strcmp(v, "2"), "options_take: \"--gpus 2\" is flag 0 with value 2, two words",
                "f %d i %d v %s", f, i, v ? v : "NULL");
    f = take(ARGS("--method=all-reduce"), &i, &v);
    test_expect(f == 1 && i == 1 && v && !strcmp(v, "all-reduce"), "options_take: \"--method=all-reduce\" is one word",
                "f %d i %d v %s", f, i, v ? v : "NULL");
    f = take(ARGS("--gpus=-1"), &i, &v);
    test_expect(f == 0 && v && !strcmp(v, "-1"), "options_take: a value may start with one '-'", "f %d v %s", f,
                v ? v : "NULL");
    f = take(ARGS("--gpus", "-3"), &i, &v);
    test_expect(f == 0 && i == 2 && v && !strcmp(v, "-3"), "options_take: \"--gpus -3\" takes -3 as the value",
                "f %d i %d v %s", f, i, v ? v : "NULL");
    f = take(ARGS("--gpus", "--rows", "8"), &i, &v);
    test_expect(f == 0 && i == 1 && !v, "options_take: a flag followed by another option has no value (NULL)",
                "f %d i %d v %s", f, i, v ? v : "NULL");
    f = take(ARGS("--gpus"), &i, &v);
    test_expect(f == 0 && i == 1 && !v, "options_take: a flag at the end has no value (NULL)", "f %d i %d v %s", f,
                i, v ? v : "NULL");
    f = take(ARGS("--gpusx", "2"), &i, &v);
    const int f2 = take(ARGS("--rows", "2"), &i, &v);
    test_expect(f == -1 && f2 == -1 && i == 1, "options_take: other words, a longer name included, are not taken",
                "f %d f2 %d i %d", f, f2, i);
}

/* A lesson flag's value (lessons 10 and 11): options_int takes a whole
 * number in its range, negative ones included, and nothing else;
 * options_choice gives a name's index, or a message naming every choice. */
static void test_int_and_choice(void)
{
    char err[200];
    int v = 7;
    test_expect(options_int("--ignore-index", "-100", INT_MIN, INT_MAX, &v, err, sizeof err) == 0 && v == -100,
                "options_int: \"-100\" is -100", "v %d", v);
    static const char *const BAD[] = {"abc", "+5", " 5", "5x", "", "4294967296", "17", "0"};
    for (int k = 0; k < 8; k++) {
        v = 7;
        const int r = options_int("--gpus", BAD[k], 1, 16, &v, err, sizeof err);
        char name[120];
        snprintf(name, sizeof name, "options_int: '%s', not a whole number from 1 to 16, is refused, naming the flag",
                 BAD[k]);
        test_expect(r == -1 && v == 7 && strstr(err, "--gpus") != NULL, name, "r %d v %d err %s", r, v, err);
    }
    static const char *const NAMES[] = {"on-chip", "split", "grid"};
    const int k = options_choice("--long-rows", "grid", NAMES, 3, err, sizeof err);
    test_expect(k == 2, "options_choice: a name's index", "k %d", k);
    const int bad = options_choice("--long-rows", "twice", NAMES, 3, err, sizeof err);
    test_expect(bad == -1 && strcmp(err, "--long-rows: 'twice' is not on-chip, split or grid") == 0,
                "options_choice: another word is refused with every choice named", "%d: %s", bad, err);
}

int main(void)
{
    test_defaults();
    test_valid();
    test_invalid();
    test_usage();
    test_take();
    test_int_and_choice();
    return test_exit_status();
}
