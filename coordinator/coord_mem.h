#ifndef BERTH_COORD_MEM_H
#define BERTH_COORD_MEM_H
#include <stddef.h>

/* Memory for the coordinator's messages and rows. A request is decided in
 * one pass that builds many small protobuf-c messages; an allocation that
 * fails there has no sensible way back, so these abort (logged) instead of
 * returning NULL. */

/* Zeroed memory for n bytes (1 for n == 0). */
void *coord_mem_alloc(size_t n);
/* A copy of str; NULL for NULL. */
char *coord_mem_strdup(const char *str);
/* Makes room in the array *vp (of elements of size bytes, n in use, room
 * for *cap) for one more element, doubling from first. */
void coord_mem_grow(void *vp, size_t n, size_t *cap, size_t size, size_t first);

#endif
