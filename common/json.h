#ifndef BERTH_JSON_H
#define BERTH_JSON_H
#include <stddef.h>
#include <stdio.h>

/* JSON strings, written and read in one place (RFC 8259 §7). */

/* How a string is written. */
enum json_form {
	/* For output (trace lines, --json): valid JSON whatever the bytes.
	 * Control characters become \b \f \n \r \t or \u00XX (and DEL
	 * \u007f); valid UTF-8 passes through; each byte that does not start
	 * a valid UTF-8 sequence becomes \ufffd. */
	JSON_TEXT,
	/* For storing bytes that must come back as they were (argv, env):
	 * only what JSON requires is escaped (", \ and bytes below 0x20, as
	 * \" \\ \u00XX); every other byte is kept, UTF-8 or not. */
	JSON_BYTES,
};

/* Writes s (NULL: "") as a quoted JSON string. */
void json_str(FILE *f, const char *s);
void json_write(FILE *f, const char *s, enum json_form form);
/* The same into out, which has room for json_size(s) bytes; returns the
 * end of what was written (not NUL-terminated). */
char *json_put(char *out, const char *s, enum json_form form);
/* The most bytes json_put writes for s: six per byte and the quotes. */
size_t json_size(const char *s);

/*
 * Reads the JSON string whose opening quote is at *p (end bounds the input)
 * into out (cap bytes, always NUL-terminated; out NULL skips the string) and
 * moves *p past the closing quote. Escapes are decoded (\uXXXX pairs joined
 * into one character); other bytes are copied as they are. A character that
 * does not fit whole is dropped, so a cut string stays valid UTF-8 as far as
 * it goes. 0, or -1 for no opening quote, an unterminated string, a raw
 * control byte or an unknown escape. *lossy (may be NULL) is set when the
 * string held what a C string cannot say exactly: \u0000 or a lone
 * surrogate, each read as U+FFFD.
 */
int json_read_str(const char **p, const char *end, char *out, size_t cap, int *lossy);

#endif
