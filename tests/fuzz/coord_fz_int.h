#ifndef BERTH_COORD_FZ_INT_H
#define BERTH_COORD_FZ_INT_H
/* Private to coord_fz.c, coord_fz_value.c and coord_fz_req.c: what the
 * generator's parts and the driver share. Not for the harnesses. */
#include <stddef.h>
#include <stdint.h>

#include "berth.pb-c.h"
#include "coord_fz.h"

struct coord_caller;

/* coord_fz_value.c: memory of the request being built (freed by
 * cfz_free_all), a copy of s in it, a run learned (or NULL), and values of
 * each kind, hostile now and then. */
void *cfz_alloc(struct cfz *f, size_t n);
char *cfz_str(struct cfz *f, const char *s);
const struct cfz_run *pick_run(struct cfz *f);
char *any_str(struct cfz *f);
int64_t any_i64(struct cfz *f);
uint32_t any_u32(struct cfz *f);
Berth__Ident *any_ident(struct cfz *f);
Berth__Add *any_add(struct cfz *f);
char *run_id_or_any(struct cfz *f);

/* coord_fz_req.c: who a request with this instance comes from. */
const struct coord_caller *cfz_caller(const Berth__Request *q, struct coord_caller *who);

#endif
