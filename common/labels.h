#ifndef BERTH_LABELS_H
#define BERTH_LABELS_H
#include <stddef.h>

/*
 * Placement names (DESIGN §13, docs/MANY-HOSTS.md "Placement"): a host id,
 * and the labels a host offers and a ticket asks for. One rule for all of
 * them, checked by the CLI before it sends, by the coordinator for every
 * sender, and by the coordinator's own command line: 1 to LABELS_NAME_MAX
 * of [A-Za-z0-9._-]. A list of labels is kept in the store as one string,
 * the names joined by commas in the order given (no name holds a comma).
 */
#define LABELS_NAME_MAX 64 /* bytes of one host id or label */
#define LABELS_MAX      16 /* labels of one ticket or host */
/* The joined list, with its NUL. */
#define LABELS_JOINED_MAX (LABELS_MAX * (LABELS_NAME_MAX + 1))

/* 1 when s is a host id or a label. */
int labels_name_ok(const char *s);
/* Whether v[0..n) is a list of labels for what (an option's name, for the
 * message): each a name, none twice, at most LABELS_MAX. 0, or -1 with a
 * sentence in why. */
int labels_check(char *const *v, size_t n, const char *what, char *why, size_t len);
/* The same for "L1,L2,...", as an option gives it. */
int labels_check_list(const char *list, const char *what, char *why, size_t len);
/* v[0..n) joined by commas into out: 0, or -1 when it does not fit. */
int labels_join(char *const *v, size_t n, char *out, size_t len);
/* 1 when every label of the joined list need is in the joined list have
 * (an empty need is met by every host). */
int labels_cover(const char *have, const char *need);

#endif
