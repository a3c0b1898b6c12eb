/* coord_trace_log.c and coord_exec.c's part of the global trace (DESIGN
 * §13): on PostgreSQL every group's lines go to trace_log in the group's
 * transaction (grants with their commit, a group of denials committed on
 * its own, reads never), and the verb trace reads them back a page at a
 * time; a sqlite store keeps none and says so. */
#include <stdio.h>
#include <string.h>

#include "coord_fixture.h"
#include "store_fixture.h"

static const Berth__TraceLog *
trace_read(struct fx *f, int64_t after, uint32_t last, uint32_t max_bytes)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__TraceRead m = BERTH__TRACE_READ__INIT;
	const Berth__Reply *r;

	m.has_after = after != 0;
	m.after = after;
	m.has_last = last != 0;
	m.last = last;
	m.has_max_bytes = max_bytes != 0;
	m.max_bytes = max_bytes;
	req.verb_case = BERTH__REQUEST__VERB_TRACE;
	req.trace = &m;
	r = ex(f, &req);
	assert_granted(r);
	assert_int_equal(r->granted->payload_case, BERTH__GRANTED__PAYLOAD_TRACE);
	return r->granted->trace;
}

static int
trace_error(struct fx *f, int64_t after, uint32_t last)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__TraceRead m = BERTH__TRACE_READ__INIT;

	m.has_after = 1;
	m.after = after;
	m.has_last = 1;
	m.last = last;
	req.verb_case = BERTH__REQUEST__VERB_TRACE;
	req.trace = &m;
	return errcode(ex(f, &req));
}

/* Two grants, a denial and a read, each decided with its trace line. */
static void
decisions(struct fx *f)
{
	f->trace = 1;
	f->trace_seq = 1;
	assert_non_null(add(f));                 /* seq 1 */
	assert_granted(claim(f, "T1"));          /* seq 2 */
	assert_non_null(denied(claim(f, "T1"))); /* seq 3: claimed already */
	assert_non_null(show(f, "T1"));          /* seq 4: a read */
	f->trace = 0;
}

/* The store keeps the grants' groups and the denial's, in order, with the
 * host and the first line's seq; the read is in the host's file only. */
static void
test_groups_kept(void **state)
{
	struct fx *f = *state;
	const Berth__TraceLog *tl;

	decisions(f);
	if (!test_store_pg()) {
		assert_int_equal(sql_int(f, "SELECT count(*) FROM trace_log"), 0);
		tl = trace_read(f, 0, 0, 0);
		assert_false(tl->shared);
		assert_int_equal(tl->n_groups, 0);
		return;
	}
	assert_int_equal(sql_int(f, "SELECT count(*) FROM trace_log"), 3);
	tl = trace_read(f, 0, 0, 0);
	assert_true(tl->shared);
	assert_false(tl->more);
	assert_string_equal(tl->host, coord_db_host(f->db)->id);
	assert_int_equal(tl->n_groups, 3);
	assert_true(tl->groups[0]->id < tl->groups[1]->id);
	assert_true(tl->groups[1]->id < tl->groups[2]->id);
	assert_int_equal(tl->groups[0]->seq, 1);
	assert_int_equal(tl->groups[2]->seq, 3);
	assert_string_equal(tl->groups[0]->host, coord_db_host(f->db)->id);
	assert_non_null(strstr(tl->groups[0]->lines, "{\"seq\":1,"));
	assert_non_null(strstr(tl->groups[0]->lines, "\"verb\":\"add\""));
	assert_non_null(strstr(tl->groups[1]->lines, "\"decision\":\"granted\""));
	assert_non_null(strstr(tl->groups[2]->lines, "\"verb\":\"claim\""));
	assert_non_null(strstr(tl->groups[2]->lines, "\"decision\":\"denied\""));
	assert_int_equal(tl->groups[2]->lines[strlen(tl->groups[2]->lines) - 1], '\n');
}

/* Pages: after an id, the newest N, a budget of bytes (at least one group
 * a page); bad arguments are errors, not reads. */
static void
test_pages(void **state)
{
	struct fx *f = *state;
	const Berth__TraceLog *tl;
	int64_t first;

	decisions(f);
	assert_int_equal(trace_error(f, -1, 0), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(trace_error(f, 5, 1), BERTH__ERROR_CODE__ERR_INVALID);
	if (!test_store_pg())
		return;
	tl = trace_read(f, 0, 0, 1);
	assert_int_equal(tl->n_groups, 1);
	assert_true(tl->more);
	first = tl->groups[0]->id;
	tl = trace_read(f, first, 0, 1);
	assert_int_equal(tl->n_groups, 1);
	assert_int_equal(tl->groups[0]->seq, 2);
	tl = trace_read(f, tl->groups[0]->id, 0, 0);
	assert_int_equal(tl->n_groups, 1);
	assert_int_equal(tl->groups[0]->seq, 3);
	tl = trace_read(f, tl->groups[0]->id, 0, 0);
	assert_int_equal(tl->n_groups, 0);
	assert_false(tl->more);
	tl = trace_read(f, 0, 1, 0);
	assert_int_equal(tl->n_groups, 1);
	assert_int_equal(tl->groups[0]->seq, 3);
	tl = trace_read(f, 0, 10, 0);
	assert_int_equal(tl->n_groups, 3);
	assert_int_equal(tl->groups[0]->id, first);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_groups_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pages, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
