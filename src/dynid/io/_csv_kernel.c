/* Compiled parser of a numeric CSV body for dynid.io.readers (optional; called through ctypes).
 *
 * dynid_parse_csv(buf, len, ncol, out, max_rows) reads rows of exactly `ncol` comma-separated decimal
 * numbers from buf[0:len) into out (row-major doubles). Blank lines and '#' comments (to the end of the
 * line) are skipped, '\r' before '\n' is ignored, fields may carry spaces or tabs around the number.
 * Numbers are converted exactly as strtod (C locale) rounds them, as numpy's loadtxt does — the values are
 * the same bit for bit: by Clinger's fast path where it is exact (mantissa below 2^53, power of ten within
 * +-22: every value dynid writes), else by strtod. Anything else — an empty, quoted, hexadecimal or non-numeric field,
 * NaN or inf written out, a row with another number of fields, more rows than max_rows — makes it return
 * -(1 + index of the line), and the caller reads the file with numpy's loadtxt instead (whose errors are
 * then reported). Returns the number of rows. It touches no Python object: ctypes releases the GIL
 * around the call, so two threads parse the two halves of a file at once.
 *
 * dynid_format_cells(...) is the other direction, for dynid.io._fastcsv.format_rows: every value as the 16
 * bytes "+d.ddddddddde+dd," of numpy's vectorised formatter there, by the same operations in the same order
 * on the same tables (frexp, one multiplication by a power of ten, rint), so the text is the same byte for
 * byte; the cells it cannot write (zero, NaN, inf, |exponent| >= 99) it lists for Python.
 */
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int allowed(char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' || c == 'e' || c == 'E';
}

static int blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static const double POW10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
                                 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* a[0:n] (only characters `allowed` accepts) as a double, exactly as strtod rounds it. Clinger's fast path:
 * a decimal mantissa below 2^53 and a power of ten within +-22 are both exact doubles, so one IEEE
 * multiplication or division rounds correctly; anything else goes to strtod. 0: not a number. */
static int number(const char *a, long n, double *v) {
    const char *s = a, *e = a + n;
    int neg = 0;
    if (s < e && (*s == '+' || *s == '-')) neg = (*s++ == '-');
    unsigned long long m = 0;
    int digits = 0, frac = 0, seen = 0, dot = 0;
    for (; s < e; ++s) {
        if (*s >= '0' && *s <= '9') {
            seen = 1;
            if (digits < 19) {
                if (m || *s != '0') ++digits;
                m = m * 10 + (unsigned)(*s - '0');
                if (dot) ++frac;
            } else {
                digits = 99;                    /* too many digits for the fast path */
            }
        } else if (*s == '.' && !dot) {
            dot = 1;
        } else {
            break;
        }
    }
    if (!seen) return 0;
    long ex = 0;
    if (s < e && (*s == 'e' || *s == 'E')) {
        ++s;
        int eneg = 0, edig = 0;
        if (s < e && (*s == '+' || *s == '-')) eneg = (*s++ == '-');
        for (; s < e && *s >= '0' && *s <= '9'; ++s, ++edig)
            if (ex < 100000) ex = ex * 10 + (*s - '0');
        if (!edig) return 0;
        if (eneg) ex = -ex;
    }
    if (s != e) return 0;
    long p = ex - frac;
    if (digits <= 19 && m <= (1ULL << 53) && p >= -22 && p <= 22) {
        double x = (double)m;
        x = p < 0 ? x / POW10[-p] : x * POW10[p];
        *v = neg ? -x : x;
        return 1;
    }
    char small[64];
    char *tmp = n < (long)sizeof(small) ? small : malloc((size_t)n + 1);
    if (tmp == NULL) return 0;
    memcpy(tmp, a, (size_t)n);
    tmp[n] = '\0';
    char *used;
    *v = strtod(tmp, &used);
    int ok = used == tmp + n;
    if (tmp != small) free(tmp);
    return ok;
}

long dynid_parse_csv(const char *buf, long len, int ncol, double *out, long max_rows) {
    const char *p = buf, *end = buf + len;
    long rows = 0, line = 0;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL) eol = end;
        const char *stop = memchr(p, '#', (size_t)(eol - p));
        if (stop == NULL) stop = eol;
        const char *s = p;
        while (s < stop && blank(*s)) ++s;
        if (s == stop) {                     /* blank or comment line */
            p = eol + 1;
            ++line;
            continue;
        }
        if (rows >= max_rows) return -(1 + line);
        double *row = out + rows * (long)ncol;
        s = p;
        for (int c = 0; c < ncol; ++c) {
            const char *fe = memchr(s, ',', (size_t)(stop - s));
            if (fe == NULL) {
                if (c != ncol - 1) return -(1 + line);
                fe = stop;
            } else if (c == ncol - 1) {
                return -(1 + line);
            }
            const char *a = s, *b = fe;
            while (a < b && blank(*a)) ++a;
            while (b > a && blank(b[-1])) --b;
            long n = (long)(b - a);
            if (n <= 0) return -(1 + line);
            for (long k = 0; k < n; ++k)
                if (!allowed(a[k])) return -(1 + line);
            if (!number(a, n, row + c)) return -(1 + line);
            s = fe + 1;
        }
        ++rows;
        p = eol + 1;
        ++line;
    }
    return rows;
}

/* The cells v[0:n_cells) of rows of m values into out (16 bytes each: two little-endian words from the tables of
 * dynid.io._fastcsv, indexed as it indexes them); each row's last separator is '\n'. With cols (m column
 * numbers of rows of `total` cells) value c of a row goes to cell cols[c] of the output row, the other cells are
 * left as they are; without (NULL), the rows are m cells wide. Cells that are zero, not finite or of a decimal
 * exponent beyond +-98 get the text of 1.0 (with their sign) and their index in v in special[]; returns how
 * many. pow10[k + 330] = 10^k; exp10/next10 indexed by frexp's exponent + e2_offset. */
long dynid_format_cells(const double *v, long n_cells, long m, const long *cols, long total, unsigned char *out,
                        const uint64_t *lead, const uint64_t *hi4, const uint64_t *lo4_w0, const uint64_t *lo4_w1,
                        const uint64_t *tail, const int64_t *exp10, const double *next10, const double *pow10,
                        long e2_offset, long digits, long *special) {
    const uint64_t row_end = (uint64_t)(44 ^ 10) << 56;
    int64_t top = 1;
    for (long k = 0; k <= digits; ++k) top *= 10;
    if (cols == NULL) total = m;
    long n_special = 0, col = 0, row = 0;
    for (long i = 0; i < n_cells; ++i) {
        double x0 = v[i], x = fabs(x0);
        int ok = isfinite(x0) && x > 0.0;
        if (!ok) x = 1.0;
        uint64_t bits;
        memcpy(&bits, &x, 8);
        int e2 = (int)(bits >> 52);             /* frexp's exponent: the biased one - 1022 (a normal number) */
        if (e2 == 0) frexp(x, &e2);             /* (subnormal) */
        else e2 -= 1022;
        int64_t e = exp10[e2 + e2_offset];
        if (x >= next10[e2 + e2_offset]) e += 1;
        if (ok && (e >= 99 || e <= -99)) ok = 0;
        if (!ok) {
            e = 0;
            x = 1.0;
            special[n_special++] = i;
        }
        x *= pow10[digits + 330 - e];
        /* round half to even, as numpy's rint: 0 <= x < 2^52 here (digits <= 14), where adding and taking away
         * 2^52 rounds exactly so in IEEE arithmetic */
        int64_t mant = (int64_t)((x + 4503599627370496.0) - 4503599627370496.0);
        if (mant >= top) {                      /* rounding carried into a new decade */
            mant /= 10;
            e += 1;
        }
        int64_t first = mant / 100000000, rest = mant % 100000000;
        int64_t h = rest / 10000, l = rest % 10000;
        first += signbit(x0) ? 10 : 0;
        uint64_t w[2];
        w[0] = lead[first] | hi4[h] | lo4_w0[l];
        w[1] = tail[e + 99] | lo4_w1[l];
        long cell = cols == NULL ? col : cols[col];
        if (cell == total - 1) w[1] ^= row_end;
        memcpy(out + 16 * (row * total + cell), w, 16);
        if (++col == m) {
            col = 0;
            ++row;
        }
    }
    return n_special;
}

static struct PyModuleDef csv_module = {
    PyModuleDef_HEAD_INIT, "_csv_kernel",
    "Compiled parser and formatter of numeric CSV rows, called through ctypes (see dynid.io.readers, "
    "dynid.io._fastcsv).", -1, NULL,
};

PyMODINIT_FUNC PyInit__csv_kernel(void) { return PyModule_Create(&csv_module); }
