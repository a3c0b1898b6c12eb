/* The coordinator fuzz harness's values (coord_fz.h): strings, numbers,
 * identities and adds, hostile now and then, and run ids it learned. Apart
 * from coord_fz_req.c (the verbs that use them) and coord_fz.c (the
 * choices, the server's path and the checks) to keep the generator's
 * parts apart from the driver; shared through coord_fz_int.h. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "berth.pb-c.h"
#include "clock.h"
#include "coord_caller.h"
#include "coord_db.h"
#include "coord_envelope.h"
#include "coord_exec.h"
#include "coord_fz.h"
#include "coord_verbs.h"
#include "ident.h"
#include "rpc.h"
#include "coord_fz_int.h"

/* ------------------------------------------------------------ the request */

void *
cfz_alloc(struct cfz *f, size_t n)
{
	void *p = calloc(1, n ? n : 1);

	CFZ_CHECK(NULL != p);
	if (f->narena == f->carena) {
		f->carena = f->carena ? f->carena * 2 : 256;
		f->arena = realloc(f->arena, f->carena * sizeof *f->arena);
		CFZ_CHECK(NULL != f->arena);
	}
	f->arena[f->narena++] = p;
	return p;
}

void
cfz_free_all(struct cfz *f)
{
	size_t i;

	for (i = 0; i < f->narena; i++)
		free(f->arena[i]);
	f->narena = 0;
}

char *
cfz_str(struct cfz *f, const char *s)
{
	size_t n = strlen(s);
	char *p = cfz_alloc(f, n + 1);

	memcpy(p, s, n);
	return p;
}

static char *
cfz_huge(struct cfz *f, size_t n, char ch)
{
	char *p = cfz_alloc(f, n + 1);

	memset(p, ch, n);
	return p;
}

const struct cfz_run *
pick_run(struct cfz *f)
{
	return f->nruns ? &f->runs[cfz_rn(f, (uint32_t)f->nruns)] : NULL;
}

/* A string field: mostly plausible, sometimes absurd. */
char *
any_str(struct cfz *f)
{
	static const char *const pool[] = {
		"",
		"T1",
		"T2",
		"T0",
		"T-1",
		"t3",
		"T99999999999999999999",
		"T1-r1",
		"T2-r2",
		"T1-r0",
		"T1-r99999999999999999999",
		"T",
		"-r1",
		"cancel",
		"timeout",
		"succeeded",
		"failed",
		"orphaned",
		"aborted",
		"running",
		"claimed",
		"ready",
		"held",
		"x=y",
		"=",
		"noequals",
		"/",
		"/tmp",
		"/tmp/fz",
		"..",
		"\x01\x02\x7f",
		"\xff\xfe",
		"%s%n%s",
		"'; DROP TABLE runs; --",
		"{\"a\":[1,2]}",
		"[\"sh\",\"-c\"]",
		"0123456789abcdef0123456789abcdef",
		"0123456789ABCDEF0123456789ABCDEF",
		"k",
		"owner",
	};
	const struct cfz_run *r;
	char buf[64];

	switch (cfz_rn(f, 10)) {
	case 0: return cfz_huge(f, 1 + cfz_rn(f, 9000), (char)('a' + cfz_rn(f, 26)));
	case 1:
		if (cfz_rn(f, 20) == 0)
			return cfz_huge(f, 70000 + cfz_rn(f, 70000), 'Z');
		return cfz_huge(f, 250 + cfz_rn(f, 10), 'w');
	case 2:
	case 3:
		if ((r = pick_run(f)) != NULL)
			return cfz_str(f, cfz_rn(f, 2) ? r->id : r->ticket);
		/* FALLTHROUGH */
	case 4:
		snprintf(buf, sizeof buf, "T%u", 1 + cfz_rn(f, (uint32_t)f->ntickets + 2));
		return cfz_str(f, buf);
	case 5:
		snprintf(buf, sizeof buf, "T%u-r%u", 1 + cfz_rn(f, (uint32_t)f->ntickets + 2),
			 1 + cfz_rn(f, 4));
		return cfz_str(f, buf);
	default: return cfz_str(f, pool[cfz_rn(f, sizeof pool / sizeof pool[0])]);
	}
}

int64_t
any_i64(struct cfz *f)
{
	static const int64_t pool[] = {
		0,
		1,
		-1,
		2,
		100,
		1000,
		60000,
		-60000,
		3600000,
		INT64_MAX,
		INT64_MIN,
		INT64_MAX - 1,
		INT64_MIN + 1,
		INT64_MAX / 2,
		INT64_MIN / 2,
		(int64_t)1 << 53,
		INT32_MAX,
		INT32_MIN,
		(int64_t)UINT32_MAX + 1,
	};

	switch (cfz_rn(f, 4)) {
	case 0: return (int64_t)cfz_rnd(f);
	case 1: return f->now + (int64_t)cfz_rn(f, 100000) - 50000;
	default: return pool[cfz_rn(f, sizeof pool / sizeof pool[0])];
	}
}

uint32_t
any_u32(struct cfz *f)
{
	static const uint32_t pool[] = { 0,         1,          2,
					 50,        1000,       60000,
					 INT32_MAX, UINT32_MAX, (uint32_t)INT32_MAX + 1 };

	return cfz_rn(f, 3) == 0 ? (uint32_t)cfz_rnd(f)
				 : pool[cfz_rn(f, sizeof pool / sizeof pool[0])];
}

static char **
any_strv(struct cfz *f, size_t *n)
{
	char **v;
	size_t i;

	*n = cfz_rn(f, 5) == 0 ? 0 : 1 + cfz_rn(f, 4);
	if (cfz_rn(f, 40) == 0)
		*n = 2000 + cfz_rn(f, 2000);
	v = cfz_alloc(f, (*n ? *n : 1) * sizeof *v);
	for (i = 0; i < *n; i++)
		v[i] = cfz_rn(f, 3) ? cfz_str(f, cfz_rn(f, 2) ? "true" : "echo") : any_str(f);
	return v;
}

Berth__Ident *
any_ident(struct cfz *f)
{
	Berth__Ident *id;

	if (cfz_rn(f, 6) == 0)
		return NULL;
	id = cfz_alloc(f, sizeof *id);
	berth__ident__init(id);
	if (cfz_rn(f, 4))
		id->boot_id = cfz_rn(f, 2) ? cfz_str(f, "00000000-0000-0000-0000-000000000000")
					   : any_str(f);
	id->has_pid = cfz_rn(f, 5) != 0;
	id->pid = cfz_rn(f, 2) ? (int32_t)(1 + cfz_rn(f, 4000000)) : (int32_t)cfz_rnd(f);
	id->has_start_time = cfz_rn(f, 5) != 0;
	id->start_time = cfz_rnd(f);
	id->has_pgid = cfz_rn(f, 2);
	id->pgid = (int32_t)cfz_rnd(f);
	return id;
}

Berth__Add *
any_add(struct cfz *f)
{
	Berth__Add *a = cfz_alloc(f, sizeof *a);

	berth__add__init(a);
	if (cfz_rn(f, 3) == 0)
		a->name = any_str(f);
	if (cfz_rn(f, 8)) {
		a->argv = any_strv(f, &a->n_argv);
	}
	if (cfz_rn(f, 3) == 0)
		a->workdir = any_str(f);
	if (cfz_rn(f, 4) == 0)
		a->env = any_strv(f, &a->n_env);
	if (cfz_rn(f, 3) == 0)
		a->key = any_str(f);
	a->has_timeout_ms = cfz_rn(f, 3) == 0;
	a->timeout_ms = any_i64(f);
	a->has_retries = cfz_rn(f, 3) == 0;
	a->retries = any_u32(f);
	a->has_at_ms = cfz_rn(f, 4) == 0;
	a->at_ms = any_i64(f);
	a->has_every_ms = cfz_rn(f, 5) == 0;
	a->every_ms = any_i64(f);
	a->has_hold = cfz_rn(f, 6) == 0;
	a->hold = 1;
	a->has_priority = cfz_rn(f, 3) == 0;
	a->priority = (int32_t)any_i64(f);
	if (cfz_rn(f, 5) == 0)
		a->after = any_strv(f, &a->n_after);
	a->has_workdir_default = cfz_rn(f, 4) == 0;
	a->workdir_default = cfz_rn(f, 2);
	return a;
}

char *
run_id_or_any(struct cfz *f)
{
	const struct cfz_run *r = pick_run(f);

	if (r != NULL && cfz_rn(f, 3))
		return cfz_str(f, r->id);
	return cfz_rn(f, 8) ? any_str(f) : NULL;
}
