/* rewrite: turns a CUDA source file (.cu, .cuh, .h) into one that g++ can
 * compile against cuda_emu.h, the CPU emulator. Usage:
 *
 *     rewrite INPUT OUTPUT [NAME]
 *
 * NAME (default INPUT) goes into a #line directive, so that compiler
 * messages, __FILE__ and the emulator's reports name the original file.
 * Only four constructs change, each within its own lines (newlines that a
 * rewrite removes are put back right after it), so line numbers stay right:
 *
 *   K<<<G, B[, S[, ST]]>>>(ARGS)   a launch: ::emu::launch(...) (cuda_emu.h)
 *   extern __shared__ T name[];    a static pointer to the dynamic buffer
 *   __shared__ T a[N], b;          static T a[N], b; + a declaration calling
 *                                  emu_shared_touch(&a, ...) for each name
 *   asm [volatile] (...)           a call that aborts, naming inline PTX
 *
 * Everything else, comments and strings included, is copied byte for byte.
 * This is a scanner, not a C++ parser: it knows comments, string and
 * character literals (raw strings too), numbers with digit separators, and
 * bracket nesting, which is all these four constructs need. The kernel
 * expression K is found by walking back from <<< over a name, a template
 * argument list, `::`, `.`, `->`, a call or an index (kern, ns::kern<T, 4>,
 * (flag ? k1 : k2), table[i]).
 *
 * Written in C because build and test paths use no Python (the project's
 * rule) and the build must need nothing beyond the compilers. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *s;
    size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s) {
            fprintf(stderr, "rewrite: out of memory\n");
            exit(1);
        }
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }
static void putc_(buf *b, char c) { put(b, &c, 1); }

static const char *in_name, *in; /* the input, NUL-terminated */
static size_t n;
static int line = 1;              /* for error messages */

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: rewrite: ", in_name, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(1);
}

static int is_ident(int c) { return isalnum(c) || c == '_' || c == '$'; }

/* If in[i] starts a comment or a string/char literal, returns the index
 * just past it; otherwise i. */
static size_t skip_token(size_t i)
{
    if (in[i] == '/' && in[i + 1] == '/') {
        while (i < n && in[i] != '\n') {
            if (in[i] == '\\' && in[i + 1] == '\n') i++; /* a continued comment */
            i++;
        }
        return i;
    }
    if (in[i] == '/' && in[i + 1] == '*') {
        const char *e = strstr(in + i + 2, "*/");
        if (!e) fail("unterminated comment");
        return (size_t)(e - in) + 2;
    }
    if (in[i] == '"') {
        /* R"delim( ... )delim": the R (or u8R, LR, uR, UR) just before. */
        if (i > 0 && in[i - 1] == 'R' && (i < 2 || !is_ident(in[i - 2]) ||
                                          (i >= 2 && strchr("8LuU", in[i - 2])))) {
            size_t d = i + 1;
            while (d < n && in[d] != '(') d++;
            char close[24];
            size_t dl = d - (i + 1);
            if (dl > 16) fail("raw string delimiter too long");
            close[0] = ')';
            memcpy(close + 1, in + i + 1, dl);
            close[dl + 1] = '"';
            close[dl + 2] = 0;
            const char *e = strstr(in + d, close);
            if (!e) fail("unterminated raw string");
            return (size_t)(e - in) + dl + 2;
        }
        for (i++; i < n && in[i] != '"'; i++)
            if (in[i] == '\\') i++;
        return i + 1;
    }
    if (in[i] == '\'') {
        /* A digit separator (1'000'000) is not a character literal: the
         * identifier-like run before it starts with a digit. */
        size_t k = i;
        while (k > 0 && (is_ident(in[k - 1]) || in[k - 1] == '\'' || in[k - 1] == '.')) k--;
        if (k < i && isdigit((unsigned char)in[k])) return i;
        for (i++; i < n && in[i] != '\''; i++)
            if (in[i] == '\\') i++;
        return i + 1;
    }
    return i;
}

static size_t skip_space(size_t i)
{
    for (;;) {
        while (i < n && (isspace((unsigned char)in[i]) || (in[i] == '\\' && in[i + 1] == '\n'))) i++;
        size_t j = (in[i] == '/' && (in[i + 1] == '/' || in[i + 1] == '*')) ? skip_token(i) : i;
        if (j == i) return i;
        i = j;
    }
}

/* The index of the bracket that closes the one at in[open]. */
static size_t match_forward(size_t open)
{
    int depth = 0;
    for (size_t i = open; i < n;) {
        size_t j = skip_token(i);
        if (j != i) {
            i = j;
            continue;
        }
        char c = in[i];
        if (c == '(' || c == '[' || c == '{') depth++;
        if (c == ')' || c == ']' || c == '}') {
            if (--depth == 0) return i;
        }
        i++;
    }
    fail("unbalanced brackets after '%c'", in[open]);
}

static int count_newlines(const char *s, size_t len)
{
    int k = 0;
    for (size_t i = 0; i < len; i++) k += s[i] == '\n';
    return k;
}

/* Appends s[0..len) on one line: comments and newlines become spaces. */
static void put_flat(buf *b, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '/' && i + 1 < len && s[i + 1] == '/') {
            while (i < len && s[i] != '\n') i++;
            putc_(b, ' ');
        } else if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
            i += 2;
            while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/')) i++;
            i++;
            putc_(b, ' ');
        } else if (s[i] == '\\' && i + 1 < len && s[i + 1] == '\n') {
            putc_(b, ' ');
            i++;
        } else if (s[i] == '\n' || s[i] == '\r') {
            putc_(b, ' ');
        } else if (s[i] == '"' || s[i] == '\'') { /* copy literals whole */
            char q = s[i];
            putc_(b, q);
            for (i++; i < len && s[i] != q; i++) {
                if (s[i] == '\\' && i + 1 < len) putc_(b, s[i++]);
                putc_(b, s[i]);
            }
            if (i < len) putc_(b, q);
        } else {
            putc_(b, s[i]);
        }
    }
}

/* Newlines that a rewrite removed, put back after it; inside a #define
 * they must stay continuations. */
static void put_newlines(buf *b, int k, int in_directive)
{
    for (int i = 0; i < k; i++) puts_(b, in_directive ? " \\\n" : "\n");
}

static const char *const KEYWORDS[] = {
    "return", "if", "while", "for", "switch", "case", "else", "do", "sizeof", "throw",
    "co_return", "new", "delete", "typedef", "static", "const", "volatile", "auto", "void", NULL,
};

static int is_keyword(const char *s, size_t len)
{
    for (int i = 0; KEYWORDS[i]; i++)
        if (strlen(KEYWORDS[i]) == len && !strncmp(s, KEYWORDS[i], len)) return 1;
    return 0;
}

/* ---- walking back over the kernel expression (in the output) --------------- */
static size_t back_space(const char *o, size_t j)
{
    while (j > 0 && (isspace((unsigned char)o[j - 1]) || (o[j - 1] == '\\' && o[j] == '\n'))) j--;
    return j;
}

/* o[p] is a closing bracket; returns the index of its opening one, or
 * (size_t)-1. Angle brackets count only against angle brackets, and stop
 * at anything that cannot be inside a template argument list. */
static size_t match_back(const char *o, size_t p)
{
    const char close = o[p], open = close == ')' ? '(' : close == ']' ? '[' : '<';
    int depth = 0;
    for (size_t k = p + 1; k-- > 0;) {
        char c = o[k];
        if (c == close) depth++;
        else if (c == open) {
            if (--depth == 0) return k;
        } else if (close == '>' && (c == ')' || c == ']')) {
            size_t m = match_back(o, k);
            if (m == (size_t)-1) return m;
            k = m;
        } else if (close == '>' && (c == ';' || c == '{' || c == '}')) {
            return (size_t)-1;
        }
    }
    return (size_t)-1;
}

static size_t kernel_start(const char *o, size_t end)
{
    size_t start = end, j = end;
    for (;;) {
        if (j == 0) return start;
        char c = o[j - 1];
        if (c == '>' || c == ')' || c == ']') {
            size_t k = match_back(o, j - 1);
            if (k == (size_t)-1) return start;
            start = k;
            j = back_space(o, k);
            if (c == ')' && !(j > 0 && is_ident(o[j - 1]))) return start; /* (expr) */
            continue;
        }
        if (!is_ident(c)) return start;
        size_t k = j;
        while (k > 0 && is_ident(o[k - 1])) k--;
        if (is_keyword(o + k, j - k)) return start;
        start = k;
        j = back_space(o, k);
        if (j >= 2 && o[j - 1] == ':' && o[j - 2] == ':') {
            start = j - 2;
            j = back_space(o, j - 2);
        } else if (j >= 1 && o[j - 1] == '.') {
            start = j - 1;
            j = back_space(o, j - 1);
        } else if (j >= 2 && o[j - 1] == '>' && o[j - 2] == '-') {
            start = j - 2;
            j = back_space(o, j - 2);
        } else {
            return start;
        }
    }
}

/* ---- the four rewrites ------------------------------------------------------------ */
static buf out;
static int in_directive; /* the current line is a preprocessor directive */

/* in[i] is the first '<' of "<<<". Returns the index after the launch. */
static size_t rewrite_launch(size_t i)
{
    size_t end_k = back_space(out.s, out.len);
    size_t start_k = kernel_start(out.s, end_k);
    if (start_k == end_k) fail("<<< without a kernel before it");
    int moved = count_newlines(out.s + start_k, out.len - start_k);
    char *kernel = strndup(out.s + start_k, end_k - start_k);
    out.len = start_k;
    out.s[out.len] = 0;

    /* The configuration: up to ">>>" outside any bracket. */
    size_t c0 = i + 3, c1 = c0;
    int depth = 0;
    for (;;) {
        if (c1 >= n) fail("<<< without >>>");
        size_t j = skip_token(c1);
        if (j != c1) {
            c1 = j;
            continue;
        }
        char c = in[c1];
        if (c == '(' || c == '[' || c == '{') depth++;
        else if (c == ')' || c == ']' || c == '}') depth--;
        else if (depth == 0 && c == '>' && in[c1 + 1] == '>' && in[c1 + 2] == '>') break;
        c1++;
    }
    size_t a0 = skip_space(c1 + 3);
    if (in[a0] != '(') fail("expected '(' after >>>");
    size_t a1 = match_forward(a0);
    moved += count_newlines(in + c0, a0 - c0);

    buf k = {0};
    put_flat(&k, kernel, strlen(kernel));
    puts_(&out, "::emu::launch(::emu::config(__FILE__, __LINE__, \"");
    for (const char *p = k.s; *p; p++) {
        if (*p == '"' || *p == '\\') putc_(&out, '\\');
        putc_(&out, *p);
    }
    puts_(&out, "\", ");
    put_flat(&out, in + c0, c1 - c0);
    puts_(&out, "), ::emu::kernel_address([&](auto emu_t_) -> decltype(::emu::kaddr(emu_t_, ");
    puts_(&out, k.s);
    puts_(&out, ")) { return ::emu::kaddr(emu_t_, ");
    puts_(&out, k.s);
    puts_(&out, "); }), [&](auto &...emu_a_) { ");
    puts_(&out, k.s);
    puts_(&out, "(emu_a_...); }");
    size_t s = skip_space(a0 + 1);
    if (s < a1) {
        puts_(&out, ", ");
        put(&out, in + a0 + 1, a1 - (a0 + 1));
    }
    puts_(&out, ")");
    put_newlines(&out, moved, in_directive);
    free(kernel);
    free(k.s);
    return a1 + 1;
}

/* in[i..] is "extern"; j is where "__shared__" starts. */
static size_t rewrite_extern_shared(size_t i, size_t j)
{
    size_t d0 = j + strlen("__shared__"), semi = d0;
    while (semi < n && in[semi] != ';') {
        size_t t = skip_token(semi);
        if (t != semi) {
            semi = t;
            continue;
        }
        if (in[semi] == '(' || in[semi] == '{') semi = match_forward(semi);
        semi++;
    }
    if (semi >= n) fail("extern __shared__ without ';'");
    /* The declaration, flat, without alignment attributes (the buffer is
     * 256-byte aligned) and without the brackets' contents decided below. */
    buf d = {0};
    put_flat(&d, in + d0, semi - d0);
    buf t = {0};
    for (size_t p = 0; p < d.len;) {
        static const char *const drop[] = {"__align__", "alignas", "__attribute__", NULL};
        int dropped = 0;
        for (int q = 0; drop[q]; q++) {
            size_t l = strlen(drop[q]);
            if (!strncmp(d.s + p, drop[q], l) && !is_ident(d.s[p + l]) && (p == 0 || !is_ident(d.s[p - 1]))) {
                size_t r = p + l;
                while (r < d.len && isspace((unsigned char)d.s[r])) r++;
                if (d.s[r] == '(') {
                    int depth = 0;
                    for (; r < d.len; r++) {
                        if (d.s[r] == '(') depth++;
                        if (d.s[r] == ')' && --depth == 0) break;
                    }
                    p = r + 1;
                    dropped = 1;
                }
                break;
            }
        }
        if (!dropped) putc_(&t, d.s[p++]);
    }
    /* type NAME [ ] REST */
    char *lb = strchr(t.s, '[');
    if (!lb) fail("extern __shared__ that is not an array of unknown size");
    char *rb = strchr(lb, ']');
    if (!rb) fail("extern __shared__: unbalanced '['");
    for (char *p = lb + 1; p < rb; p++)
        if (!isspace((unsigned char)*p)) fail("extern __shared__ array with a size");
    char *ne = lb;
    while (ne > t.s && isspace((unsigned char)ne[-1])) ne--;
    char *nb = ne;
    while (nb > t.s && is_ident(nb[-1])) nb--;
    if (nb == ne) fail("extern __shared__ without a name");
    char *type = strndup(t.s, (size_t)(nb - t.s));
    char *name = strndup(nb, (size_t)(ne - nb));
    const char *rest = rb + 1;
    char decl[1024];
    snprintf(decl, sizeof decl, "static %s(*const %s)%s = (%s(*)%s)::emu_dynamic_smem();", type, name,
             rest, type, rest);
    puts_(&out, decl);
    put_newlines(&out, count_newlines(in + i, semi - i), in_directive);
    free(type);
    free(name);
    free(d.s);
    free(t.s);
    return semi + 1;
}

/* __shared__ becomes `static` (unless the declaration already says so:
 * decl_static is set when the main loop copies the keyword, and cleared at
 * ';', '{' and '}'). After the declaration's ';' goes a second one,
 *     [[maybe_unused]] const int emu_touch_N_ = (::emu_shared_touch(&a, sizeof(a)), ..., 0);
 * whose initialiser runs each time a thread passes there (at namespace
 * scope: once, at startup, where it does nothing), so that the runtime can
 * poison each variable once per block. */
static int decl_static;
static size_t touch_at = (size_t)-1; /* index of the ';' to append after */
static buf touch;

/* Appends to `touch` the names declared in in[k..semi): the declarators
 * separated by top-level commas, each name being the identifier before the
 * first '[' or the last identifier before '=' or the end. */
static void collect_names(size_t k, size_t semi)
{
    static int counter;
    buf d = {0};
    put_flat(&d, in + k, semi - k);
    char *part = d.s;
    int depth = 0, angle = 0, any = 0;
    char num[32];
    snprintf(num, sizeof num, "%d", counter++);
    for (char *p = d.s;; p++) {
        if (*p == '(' || *p == '[' || *p == '{') depth++;
        else if (*p == ')' || *p == ']' || *p == '}') depth--;
        else if (*p == '<' && depth == 0) angle++;
        else if (*p == '>' && depth == 0 && angle > 0) angle--;
        if (*p && !(*p == ',' && depth == 0 && angle == 0)) continue;
        /* one declarator: part .. p */
        char *end = p, *eq = memchr(part, '=', (size_t)(end - part)), *lb;
        if (eq) end = eq;
        lb = memchr(part, '[', (size_t)(end - part));
        if (lb) end = lb;
        while (end > part && !is_ident(end[-1])) end--;
        char *b = end;
        while (b > part && is_ident(b[-1])) b--;
        if (b < end && !isdigit((unsigned char)*b)) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(end - b), b);
            if (!any) {
                puts_(&touch, " [[maybe_unused]] const int emu_touch_");
                puts_(&touch, num);
                puts_(&touch, "_ = (");
            }
            puts_(&touch, "::emu_shared_touch(&");
            puts_(&touch, name);
            puts_(&touch, ", sizeof(");
            puts_(&touch, name);
            puts_(&touch, ")), ");
            any = 1;
        }
        if (!*p) break;
        part = p + 1;
    }
    if (any) puts_(&touch, "0);");
    free(d.s);
}

/* in[i..k) is "__shared__". */
static void rewrite_shared(size_t k)
{
    puts_(&out, decl_static ? "" : "static");
    /* Find the declaration's ';' (not past the end of a #define). */
    size_t semi = k;
    while (semi < n && in[semi] != ';') {
        if (in_directive && in[semi] == '\n' && in[semi - 1] != '\\') return;
        size_t t = skip_token(semi);
        if (t != semi) {
            semi = t;
            continue;
        }
        if (in[semi] == '(' || in[semi] == '[' || in[semi] == '{') semi = match_forward(semi);
        semi++;
    }
    if (semi >= n) return;
    touch.len = 0;
    if (touch.s) touch.s[0] = 0;
    collect_names(k, semi);
    if (touch.len) touch_at = semi;
}

/* in[i..j) is "asm" and its qualifiers, in[j] is '('. */
static size_t rewrite_asm(size_t i, size_t j)
{
    size_t e = match_forward(j);
    puts_(&out, "::emu_unsupported(__FILE__, __LINE__, \"inline PTX (asm statement)\")");
    put_newlines(&out, count_newlines(in + i, e + 1 - i), in_directive);
    return e + 1;
}

static int word_is(size_t i, size_t len, const char *w)
{
    return strlen(w) == len && !strncmp(in + i, w, len);
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: rewrite INPUT OUTPUT [NAME]\n");
        return 2;
    }
    in_name = argv[1];
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    buf src = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) put(&src, chunk, got);
    fclose(f);
    put(&src, "\0\0\0\0", 4); /* lookahead past the end stays in bounds */
    src.len -= 4;
    in = src.s;
    n = src.len;

    puts_(&out, "#line 1 \"");
    puts_(&out, argc == 4 ? argv[3] : argv[1]);
    puts_(&out, "\"\n");

    int at_line_start = 1;
    for (size_t i = 0; i < n;) {
        size_t j = skip_token(i);
        if (j != i) {
            line += count_newlines(in + i, j - i);
            put(&out, in + i, j - i);
            i = j;
            continue;
        }
        char c = in[i];
        if (c == '\n') {
            line++;
            if (!(i > 0 && in[i - 1] == '\\')) in_directive = 0;
            at_line_start = 1;
            putc_(&out, c);
            i++;
            continue;
        }
        if (at_line_start && c == '#') in_directive = 1;
        if (!isspace((unsigned char)c)) at_line_start = 0;

        if (isdigit((unsigned char)c) && (i == 0 || !is_ident(in[i - 1]))) {
            /* a number: 1.5e+3f, 0x1p-126, 1'000 */
            size_t k = i;
            while (k < n && (is_ident(in[k]) || in[k] == '.' || in[k] == '\'' ||
                             ((in[k] == '+' || in[k] == '-') && strchr("eEpP", in[k - 1]))))
                k++;
            put(&out, in + i, k - i);
            i = k;
            continue;
        }
        if ((isalpha((unsigned char)c) || c == '_') && (i == 0 || !is_ident(in[i - 1]))) {
            size_t k = i;
            while (k < n && is_ident(in[k])) k++;
            size_t len = k - i;
            if (word_is(i, len, "extern")) {
                size_t s = skip_space(k);
                if (!strncmp(in + s, "__shared__", 10) && !is_ident(in[s + 10])) {
                    size_t e = rewrite_extern_shared(i, s);
                    line += count_newlines(in + i, e - i);
                    i = e;
                    continue;
                }
            } else if (word_is(i, len, "__shared__")) {
                rewrite_shared(k);
                i = k;
                continue;
            } else if (word_is(i, len, "asm") || word_is(i, len, "__asm__") || word_is(i, len, "__asm")) {
                size_t s = skip_space(k);
                for (;;) {
                    size_t q = s;
                    while (q < n && is_ident(in[q])) q++;
                    if (q > s && (word_is(s, q - s, "volatile") || word_is(s, q - s, "__volatile__") ||
                                  word_is(s, q - s, "goto") || word_is(s, q - s, "inline")))
                        s = skip_space(q);
                    else break;
                }
                if (in[s] == '(') {
                    size_t e = rewrite_asm(i, s);
                    line += count_newlines(in + i, e - i);
                    i = e;
                    continue;
                }
            }
            if (word_is(i, len, "static")) decl_static = 1;
            put(&out, in + i, len);
            i = k;
            continue;
        }
        if (c == '<' && in[i + 1] == '<' && in[i + 2] == '<') {
            size_t e = rewrite_launch(i);
            line += count_newlines(in + i, e - i);
            i = e;
            continue;
        }
        if (c == ';' || c == '{' || c == '}') decl_static = 0;
        putc_(&out, c);
        if (i == touch_at) {
            puts_(&out, touch.s);
            touch_at = (size_t)-1;
        }
        i++;
    }

    FILE *o = fopen(argv[2], "wb");
    if (!o || fwrite(out.s, 1, out.len, o) != out.len || fclose(o)) {
        perror(argv[2]);
        return 1;
    }
    free(src.s);
    free(out.s);
    return 0;
}
