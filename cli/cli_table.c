/* Tables that fit: `berth list` and `berth status` print rows that never
 * wrap. Each column is as wide as its widest cell; when the row is wider
 * than the terminal, the columns that may shrink (a command, a reason) give
 * up width, widest first, down to their floor, and a cell that no longer
 * fits ends in "...". No row ever carries trailing blanks.
 *
 * Cells are stored as given: callers pass text already escaped (cli_esc),
 * so what is measured here is valid UTF-8 without control characters. */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "vec.h"

/* Columns of one code point: 0 for combining marks, 2 for the wide East
 * Asian ranges and emoji, else 1. Close enough for a table, and it needs
 * no locale (the CLI does not call setlocale). */
static int
cp_width(unsigned cp)
{
	if ((cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x200b && cp <= 0x200f) ||
	    (cp >= 0xfe00 && cp <= 0xfe0f))
		return 0;
	if ((cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) ||
	    (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
	    (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
	    (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
	    (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd))
		return 2;
	return 1;
}

/* The code point at s (length in *len); a stray byte counts as one. */
static unsigned
cp_at(const unsigned char *s, size_t *len)
{
	unsigned cp = s[0];
	size_t n = cp < 0x80 ? 1 : (cp & 0xe0) == 0xc0 ? 2 : (cp & 0xf0) == 0xe0 ? 3 : 4;
	size_t i;

	if (n == 1) {
		*len = 1;
		return cp;
	}
	cp &= 0x3f >> (n - 1);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*len = 1;
			return s[0];
		}
		cp = cp << 6 | (s[i] & 0x3f);
	}
	*len = n;
	return cp;
}

size_t
cli_text_width(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t w = 0, len;

	while (*p != '\0') {
		w += (size_t)cp_width(cp_at(p, &len));
		p += len;
	}
	return w;
}

/* Writes s cut to at most width columns ("..." at the end when cut), and
 * pads with blanks to width unless pad is 0. */
static void
put_cell(FILE *f, const char *s, size_t width, int pad)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t w = cli_text_width(s), used = 0, len, cw;

	if (w <= width) {
		fputs(s ? s : "", f);
		used = w;
	} else {
		/* Room for the dots first; a column narrower than them is cut
		 * without. */
		size_t room = width >= 4 ? width - 3 : width;

		while (*p != '\0') {
			cw = (size_t)cp_width(cp_at(p, &len));
			if (used + cw > room)
				break;
			fwrite(p, 1, len, f);
			used += cw;
			p += len;
		}
		if (width >= 4) {
			fputs("...", f);
			used += 3;
		}
	}
	for (; pad && used < width; used++)
		fputc(' ', f);
}

int
cli_table_init(struct cli_table *t, size_t ncols, const char *const *heads, const size_t *floor)
{
	memset(t, 0, sizeof *t);
	if (ncols == 0 || ncols > CLI_TABLE_MAXCOLS)
		return -1;
	t->ncols = ncols;
	t->heads = heads;
	memcpy(t->floor, floor, ncols * sizeof *floor);
	return 0;
}

int
cli_table_add(struct cli_table *t, const char *const *cells)
{
	char **row;
	size_t i;

	if (vec_grow(&t->rows, &t->cap, t->nrows + 1, sizeof *t->rows) == -1)
		return -1;
	if ((row = calloc(t->ncols, sizeof *row)) == NULL)
		return -1;
	for (i = 0; i < t->ncols; i++) {
		if ((row[i] = strdup(cells[i] ? cells[i] : "")) == NULL) {
			while (i-- > 0)
				free(row[i]);
			free(row);
			return -1;
		}
	}
	t->rows[t->nrows++] = row;
	return 0;
}

void
cli_table_fit(const struct cli_table *t, size_t width, size_t *w)
{
	size_t i, r, total;

	for (i = 0; i < t->ncols; i++) {
		w[i] = cli_text_width(t->heads[i]);
		for (r = 0; r < t->nrows; r++) {
			size_t cw = cli_text_width(t->rows[r][i]);

			if (cw > w[i])
				w[i] = cw;
		}
	}
	if (width == 0)
		return;
	for (;;) {
		size_t widest = t->ncols;

		for (total = t->ncols - 1, i = 0; i < t->ncols; i++)
			total += w[i];
		if (total <= width)
			return;
		/* The widest column that may still give up width. */
		for (i = 0; i < t->ncols; i++)
			if (t->floor[i] > 0 && w[i] > t->floor[i] &&
			    (widest == t->ncols || w[i] > w[widest]))
				widest = i;
		if (widest == t->ncols)
			return; /* at every floor: cli_table_print cuts the row */
		w[widest]--;
	}
}

void
cli_table_print(FILE *f, const struct cli_table *t, size_t width)
{
	size_t w[CLI_TABLE_MAXCOLS], i, r, last, col;

	if (width != 0 && width <= t->indent + 1)
		width = t->indent + 2;
	cli_table_fit(t, width != 0 ? width - t->indent : 0, w);
	for (r = 0; r <= t->nrows; r++) {
		const char *const *cells = r == 0 ? t->heads : (const char *const *)t->rows[r - 1];

		/* The last non-empty cell is not padded. */
		for (last = t->ncols; last > 0 && cells[last - 1][0] == '\0'; last--)
			;
		fprintf(f, "%*s", (int)t->indent, "");
		for (col = t->indent, i = 0; i < last; i++) {
			size_t cw = w[i];

			if (i > 0) {
				if (width != 0 && col + 1 >= width)
					break;
				fputc(' ', f);
				col++;
			}
			/* Whatever the floors left too wide is cut at the edge. */
			if (width != 0 && col + cw > width)
				cw = width - col;
			put_cell(f, cells[i], cw, i + 1 < last);
			col += cw;
		}
		fputc('\n', f);
	}
}

void
cli_table_free(struct cli_table *t)
{
	size_t r, i;

	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < t->ncols; i++)
			free(t->rows[r][i]);
		free(t->rows[r]);
	}
	free(t->rows);
	t->rows = NULL;
	t->nrows = t->cap = 0;
}

size_t
cli_term_width(void)
{
	const char *c = getenv("COLUMNS");
	struct winsize ws;
	long long n;

	/* COLUMNS first, as ls and ps read it; then the terminal itself. Not
	 * a terminal: no limit, so a pipe or a file gets whole rows. */
	if (c != NULL && cli_parse_int(c, 1, 100000, &n) == 0)
		return (size_t)n;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 0;
}
