/* Arrays that grow (vec.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

int
vec_grow(void *pv, size_t *cap, size_t need, size_t size)
{
	void **v = pv, *nv;
	size_t ncap = *cap > 0 ? *cap : 8;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			goto nomem;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / size)
		goto nomem;
	if ((nv = realloc(*v, ncap * size)) == NULL)
		goto nomem;
	*v = nv;
	*cap = ncap;
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

int
vec_push_str(char ***v, size_t *n, size_t *cap, const char *s)
{
	char *dup;

	if (vec_grow(v, cap, *n + 2, sizeof(**v)) < 0 || (dup = strdup(s)) == NULL)
		return -1;
	(*v)[(*n)++] = dup;
	(*v)[*n] = NULL;
	return 0;
}

void
vec_free_str(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}
