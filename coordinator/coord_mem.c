/* Allocation that cannot fail: see coord_mem.h. */
#include <stdlib.h>
#include <string.h>

#include "coord_mem.h"
#include "log.h"

void *
coord_mem_alloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (p == NULL) {
		log_error("coordinator: out of memory (%zu bytes)", n);
		abort();
	}
	return p;
}

char *
coord_mem_strdup(const char *str)
{
	size_t n;
	char *p;

	if (str == NULL)
		return NULL;
	n = strlen(str);
	p = coord_mem_alloc(n + 1);
	memcpy(p, str, n);
	return p;
}

void
coord_mem_grow(void *vp, size_t n, size_t *cap, size_t size, size_t first)
{
	void *v, *nv;

	if (n < *cap)
		return;
	memcpy(&v, vp, sizeof v);
	*cap = *cap ? *cap * 2 : first;
	if ((nv = realloc(v, *cap * size)) == NULL) {
		log_error("coordinator: out of memory (%zu elements of %zu bytes)", *cap, size);
		abort();
	}
	memcpy(vp, &nv, sizeof nv);
}
