/* Placement names: see labels.h. */
#include <stdio.h>
#include <string.h>

#include "labels.h"

static const char labels_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789._-";

int
labels_name_ok(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	return n >= 1 && n <= LABELS_NAME_MAX && strspn(s, labels_chars) == n;
}

/* One name of a list for the message: its first bytes, shown safely. */
static void
labels_bad(const char *s, size_t n, const char *what, char *why, size_t len)
{
	char shown[LABELS_NAME_MAX + 8];
	size_t i, k = 0;

	for (i = 0; i < n && k + 4 < sizeof shown; i++)
		shown[k++] = strchr(labels_chars, s[i]) != NULL && s[i] != '\0' ? s[i] : '?';
	if (i < n) {
		shown[k++] = '.';
		shown[k++] = '.';
		shown[k++] = '.';
	}
	shown[k] = '\0';
	if (n == 0)
		snprintf(why, len, "%s: an empty name", what);
	else if (n > LABELS_NAME_MAX)
		snprintf(why, len, "%s: '%s' is %zu bytes; a name is at most %d", what, shown, n,
			 LABELS_NAME_MAX);
	else
		snprintf(why, len,
			 "%s: '%s' holds a character other than a letter, digit, '.', '_' or '-'",
			 what, shown);
}

/* Names [s, s + n) of the list, checked and compared with the earlier
 * ones (they are at most LABELS_MAX). */
static int
labels_one(const char *s, size_t n, const char *const *seen, const size_t *seen_n, size_t k,
	   const char *what, char *why, size_t len)
{
	size_t i;

	if (n == 0 || n > LABELS_NAME_MAX || strspn(s, labels_chars) < n) {
		labels_bad(s, n, what, why, len);
		return -1;
	}
	for (i = 0; i < k; i++)
		if (seen_n[i] == n && memcmp(seen[i], s, n) == 0) {
			snprintf(why, len, "%s: label '%.*s' is given twice", what, (int)n, s);
			return -1;
		}
	return 0;
}

int
labels_check(char *const *v, size_t n, const char *what, char *why, size_t len)
{
	const char *seen[LABELS_MAX];
	size_t seen_n[LABELS_MAX], i;

	if (n > LABELS_MAX) {
		snprintf(why, len, "%s: %zu labels; at most %d", what, n, LABELS_MAX);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const char *s = v[i] != NULL ? v[i] : "";

		if (labels_one(s, strlen(s), seen, seen_n, i, what, why, len) != 0)
			return -1;
		seen[i] = s;
		seen_n[i] = strlen(s);
	}
	return 0;
}

int
labels_check_list(const char *list, const char *what, char *why, size_t len)
{
	const char *seen[LABELS_MAX], *p = list, *comma;
	size_t seen_n[LABELS_MAX], k = 0, n;

	for (;;) {
		comma = strchr(p, ',');
		n = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (k == LABELS_MAX) {
			snprintf(why, len, "%s: more than %d labels", what, LABELS_MAX);
			return -1;
		}
		if (labels_one(p, n, seen, seen_n, k, what, why, len) != 0)
			return -1;
		seen[k] = p;
		seen_n[k++] = n;
		if (comma == NULL)
			return 0;
		p = comma + 1;
	}
}

int
labels_join(char *const *v, size_t n, char *out, size_t len)
{
	size_t i, at = 0, l;

	if (len == 0)
		return -1;
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		l = strlen(v[i]);
		if (at + (i > 0) + l + 1 > len)
			return -1;
		if (i > 0)
			out[at++] = ',';
		memcpy(out + at, v[i], l + 1);
		at += l;
	}
	return 0;
}

/* 1 when [s, s + n) is one of the names of the joined list have. */
static int
labels_has(const char *have, const char *s, size_t n)
{
	const char *p = have, *comma;
	size_t l;

	while (*p != '\0') {
		comma = strchr(p, ',');
		l = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (l == n && memcmp(p, s, n) == 0)
			return 1;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	return 0;
}

int
labels_cover(const char *have, const char *need)
{
	const char *p = need != NULL ? need : "", *comma;
	size_t n;

	if (have == NULL)
		have = "";
	while (*p != '\0') {
		comma = strchr(p, ',');
		n = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (n > 0 && !labels_has(have, p, n))
			return 0;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	return 1;
}
