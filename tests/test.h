/* A minimal test vocabulary, shared by every test program.
 *
 * Each test prints exactly one line: "PASS name", "FAIL name: why" or
 * "SKIP name: why". tests/run.sh counts the lines of all programs and
 * prints "N passed, N failed, N skipped". */
#ifndef TESTS_TEST_H
#define TESTS_TEST_H

#include <stdarg.h>
#include <stdio.h>

static int test_failed_count;

static inline void test_pass(const char *name) { printf("PASS %s\n", name); fflush(stdout); }

static inline void test_skip(const char *name, const char *why)
{
    printf("SKIP %s: %s\n", name, why);
    fflush(stdout);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void test_fail(const char *name, const char *fmt, ...)
{
    va_list ap;
    printf("FAIL %s: ", name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    test_failed_count++;
}

/* Reports one test from a condition; the message says what was expected. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline void test_expect(int ok, const char *name, const char *fmt, ...)
{
    if (ok) {
        test_pass(name);
        return;
    }
    va_list ap;
    printf("FAIL %s: ", name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    test_failed_count++;
}

/* Exit status of a test program: non-zero if anything failed. */
static inline int test_exit_status(void) { return test_failed_count ? 1 : 0; }

#endif
