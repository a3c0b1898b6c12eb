#ifndef BERTH_VEC_H
#define BERTH_VEC_H
#include <stddef.h>

/* Arrays that grow: one doubling rule, one overflow check. */

/* Grows the array *pv (a pointer to the array's pointer; elements of size
 * bytes, *cap of them allocated) so it holds at least need elements,
 * doubling from 8. 0, or -1 when memory ran out (*pv and *cap untouched,
 * errno ENOMEM). */
int vec_grow(void *pv, size_t *cap, size_t need, size_t size);

/* NULL-terminated vectors of heap strings (argv, envp): appends a copy of s
 * to *v (*n strings, room for *cap entries) and keeps the NULL after it. 0,
 * or -1 when memory ran out (*v unchanged). */
int vec_push_str(char ***v, size_t *n, size_t *cap, const char *s);
/* Frees every string of v and v itself; v may be NULL. */
void vec_free_str(char **v);

#endif
