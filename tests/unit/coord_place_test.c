/* Placement (coordinator/coord_place.c, docs/MANY-HOSTS.md "Placement"),
 * on either engine (the fixture's store): a ticket that names a host or
 * labels is claimed only by a host it allows, by claim-next and by a named
 * claim; its placement stays with its retries (a lost run's too) and its
 * --every firings; edit changes it; a malformed one is refused from any
 * sender; show says why a placed ticket waits. Another host is this
 * fixture's coordinator under another host id (as coord_hosts_test plays
 * it), or a row of the hosts table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coord_fixture.h"
#include "coord_hosts.h"
#include "labels.h"

/* This fixture's coordinator becomes host id, offering labels. */
static void
host_as(struct fx *f, const char *id, const char *labels)
{
	fx_host(f, id, labels, 30000);
}

/* An add of "true" with a placement (host NULL: any; labels NULL-ended)
 * and a priority: the reply. */
static const Berth__Reply *
add_placed(struct fx *f, const char *host, char **labels, int32_t priority, uint32_t retries,
	   int64_t every_ms)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Add a = BERTH__ADD__INIT;
	char *argv[] = { "true" };

	a.n_argv = 1;
	a.argv = argv;
	a.host = (char *)host;
	a.labels = labels;
	while (labels != NULL && labels[a.n_labels] != NULL)
		a.n_labels++;
	a.has_priority = 1;
	a.priority = priority;
	a.has_retries = 1;
	a.retries = retries;
	a.has_every_ms = every_ms > 0;
	a.every_ms = every_ms;
	req.verb_case = BERTH__REQUEST__VERB_ADD;
	req.add = &a;
	return ex(f, &req);
}

static const char *
add_ok(struct fx *f, const char *host, char **labels, int32_t priority)
{
	static char id[32];
	const Berth__Reply *r = add_placed(f, host, labels, priority, 0, 0);

	assert_granted(r);
	snprintf(id, sizeof id, "%s", r->granted->add->ticket);
	return id;
}

static const char *
claimed(const Berth__Reply *r)
{
	assert_granted(r);
	return r->granted->claim->ticket;
}

/* Claim-next passes over what this host may not take, in the order it
 * would otherwise have claimed; a named claim of it is denied placement;
 * the hosts row records the labels offered; another host takes the rest. */
static void
test_claim_skips_placed(void **state)
{
	struct fx *f = *state;
	char *gpu[] = { "gpu", NULL }, *big[] = { "big", NULL }, *both[] = { "gpu", "ssd", NULL };
	const Berth__Reply *r;
	Berth__Host **hv;
	size_t nh, i;

	host_as(f, "h1", "gpu,ssd");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM hosts WHERE host = 'h1'"
				    " AND labels = 'gpu,ssd'"),
			 1);
	add_ok(f, "h2", NULL, 9); /* T1: another host's */
	add_ok(f, NULL, big, 8);  /* T2: a label h1 does not offer */
	add_ok(f, NULL, gpu, 1);  /* T3 */
	add_ok(f, NULL, NULL, 0); /* T4 */
	add_ok(f, "h1", both, 0); /* T5 */
	assert_string_equal(claimed(claim(f, NULL)), "T3");
	assert_string_equal(claimed(claim(f, NULL)), "T4");
	assert_string_equal(claimed(claim(f, NULL)), "T5");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	r = claim(f, "T1");
	assert_string_equal(denied(r), "placement");
	assert_string_equal(fact(r, "host_wanted"), "h2");
	assert_string_equal(fact(r, "host"), "h1");
	r = claim(f, "T2");
	assert_string_equal(denied(r), "placement");
	assert_string_equal(fact(r, "labels"), "big");
	assert_string_equal(fact(r, "host_labels"), "gpu,ssd");
	assert_int_equal(sql_int(f, "SELECT count(*) FROM runs"), 3);
	assert_int_equal(coord_hosts_rows(f->db, &hv, &nh), 0);
	assert_int_equal(nh, 1);
	assert_int_equal(hv[0]->n_labels, 2);
	assert_string_equal(hv[0]->labels[0], "gpu");
	assert_string_equal(hv[0]->labels[1], "ssd");
	for (i = 0; i < nh; i++)
		berth__host__free_unpacked(hv[i], NULL);
	free(hv);
	/* h2, offering big: both are its. */
	host_as(f, "h2", "big");
	assert_string_equal(claimed(claim(f, NULL)), "T1");
	assert_string_equal(claimed(claim(f, NULL)), "T2");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
}

/* A retry (here of a run that ended lost) and an --every firing keep the
 * ticket's placement: another host never takes them. */
static void
test_placement_kept(void **state)
{
	struct fx *f = *state;
	char *gpu[] = { "gpu", NULL }, run[40];
	const Berth__Reply *r;
	const char *t1, *t2;
	char id1[32], id2[32];

	host_as(f, "h1", "gpu");
	r = add_placed(f, NULL, gpu, 0, 1, 0);
	assert_granted(r);
	t1 = r->granted->add->ticket;
	snprintf(id1, sizeof id1, "%s", t1);
	r = add_placed(f, "h1", NULL, 0, 0, 60000);
	assert_granted(r);
	t2 = r->granted->add->ticket;
	snprintf(id2, sizeof id2, "%s", t2);
	/* id1's run ends lost: h1 is declared lost while it runs. */
	claim_ok(f, id1, run, NULL);
	assert_granted(start(f, run));
	assert_int_equal(sql_run(f, "UPDATE hosts SET epoch = epoch + 1, lost_ms = berth_now_ms()"
				    " WHERE host = 'h1'"),
			 0);
	{
		Berth__Request req = BERTH__REQUEST__INIT;
		Berth__Lose m = BERTH__LOSE__INIT;

		m.run_id = run;
		req.verb_case = BERTH__REQUEST__VERB_LOSE;
		req.lose = &m;
		assert_granted(ex(f, &req));
	}
	assert_string_equal(show(f, id1)->state, "ready");
	/* id2 runs once and succeeds: its next firing is queued. */
	host_as(f, "h1", "gpu");
	run_to_exit(f, id2, 0, run);
	assert_granted(settle(f, run, NULL));
	clock_fake_advance(10 * 60 * 1000); /* past the backoff and the next firing */
	host_as(f, "h2", "");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	assert_int_equal(show(f, id1)->n_labels, 1);
	assert_string_equal(show(f, id1)->labels[0], "gpu");
	assert_string_equal(show(f, id2)->host_wanted, "h1");
	host_as(f, "h1", "gpu");
	r = claim(f, NULL);
	assert_string_equal(claimed(r), id1);
	assert_int_equal(r->granted->claim->attempt, 2);
	r = claim(f, NULL);
	assert_string_equal(claimed(r), id2);
	assert_int_equal(r->granted->claim->attempt, 2);
}

/* A malformed placement from any sender is refused with the reason, and
 * nothing is added. */
static void
test_add_invalid(void **state)
{
	struct fx *f = *state;
	char *dup[] = { "gpu", "gpu", NULL }, *empty[] = { "", NULL }, *comma[] = { "a,b", NULL };
	char *ctl[] = { "g\npu", NULL }, *nul[] = { "gpu", NULL, NULL };
	char *many[LABELS_MAX + 2], names[LABELS_MAX + 1][8], longl[LABELS_NAME_MAX + 2];
	char *lng[] = { longl, NULL };
	const Berth__Reply *r;
	int i;

	for (i = 0; i <= LABELS_MAX; i++) {
		snprintf(names[i], sizeof names[i], "l%d", i);
		many[i] = names[i];
	}
	many[LABELS_MAX + 1] = NULL;
	memset(longl, 'x', sizeof longl - 1);
	longl[sizeof longl - 1] = '\0';
	r = add_placed(f, "bad host", NULL, 0, 0, 0);
	assert_int_equal(errcode(r), BERTH__ERROR_CODE__ERR_INVALID);
	assert_non_null(strstr(r->error->message, "--host"));
	r = add_placed(f, NULL, dup, 0, 0, 0);
	assert_int_equal(errcode(r), BERTH__ERROR_CODE__ERR_INVALID);
	assert_non_null(strstr(r->error->message, "twice"));
	assert_int_equal(errcode(add_placed(f, NULL, empty, 0, 0, 0)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(add_placed(f, NULL, comma, 0, 0, 0)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(add_placed(f, NULL, ctl, 0, 0, 0)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(add_placed(f, NULL, many, 0, 0, 0)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(add_placed(f, NULL, lng, 0, 0, 0)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	{
		/* A label that is NULL on the wire (an empty repeated
		 * string unpacks as "", but a sender in process may pass
		 * NULL). */
		Berth__Request req = BERTH__REQUEST__INIT;
		Berth__Add a = BERTH__ADD__INIT;
		char *argv[] = { "true" };

		a.n_argv = 1;
		a.argv = argv;
		a.labels = nul + 1;
		a.n_labels = 1;
		req.verb_case = BERTH__REQUEST__VERB_ADD;
		req.add = &a;
		assert_int_equal(errcode(ex(f, &req)), BERTH__ERROR_CODE__ERR_INVALID);
	}
	assert_int_equal(sql_int(f, "SELECT count(*) FROM tickets"), 0);
	/* The longest allowed label and LABELS_MAX of them are taken. */
	longl[LABELS_NAME_MAX] = '\0';
	assert_granted(add_placed(f, NULL, lng, 0, 0, 0));
	many[LABELS_MAX] = NULL;
	assert_granted(add_placed(f, NULL, many, 0, 0, 0));
}

static const Berth__Reply *
edit_place(struct fx *f, const char *id, const char *host, char **labels, int set_labels)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Edit m = BERTH__EDIT__INIT;

	m.id = (char *)id;
	m.host = (char *)host;
	m.labels = labels;
	while (labels != NULL && labels[m.n_labels] != NULL)
		m.n_labels++;
	m.has_set_labels = set_labels;
	m.set_labels = set_labels;
	req.verb_case = BERTH__REQUEST__VERB_EDIT;
	req.edit = &m;
	return ex(f, &req);
}

/* Edit changes a queued ticket's placement, checked as add's; the next
 * claim judges the new one. */
static void
test_edit(void **state)
{
	struct fx *f = *state;
	char *gpu[] = { "gpu", NULL }, *dup[] = { "x", "x", NULL };
	char t1[32];

	host_as(f, "h1", "");
	snprintf(t1, sizeof t1, "%s", add_ok(f, NULL, gpu, 0));
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	assert_int_equal(errcode(edit_place(f, t1, NULL, dup, 1)), BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(edit_place(f, t1, "a/b", NULL, 0)),
			 BERTH__ERROR_CODE__ERR_INVALID);
	assert_int_equal(errcode(edit_place(f, t1, NULL, gpu, 0)), BERTH__ERROR_CODE__ERR_INVALID);
	assert_granted(edit_place(f, t1, "h9", NULL, 1)); /* no labels, but host h9 */
	assert_int_equal(show(f, t1)->n_labels, 0);
	assert_string_equal(show(f, t1)->host_wanted, "h9");
	assert_string_equal(denied(claim(f, NULL)), "nothing_due");
	assert_granted(edit_place(f, t1, "", NULL, 0)); /* any host */
	assert_string_equal(claimed(claim(f, NULL)), t1);
	/* Not once it is claimed. */
	assert_string_equal(denied(edit_place(f, t1, "h9", NULL, 0)), "not_editable");
}

/* show (and list) say why a placed ticket waits when no live host may take
 * it, and say nothing of it once one may. */
static void
test_waiting(void **state)
{
	struct fx *f = *state;
	char *gpu[] = { "gpu", NULL }, *two[] = { "gpu", "big", NULL };
	char t1[32], t2[32], t3[32], t4[32];

	host_as(f, "h1", "ssd");
	snprintf(t1, sizeof t1, "%s", add_ok(f, NULL, gpu, 0));
	snprintf(t2, sizeof t2, "%s", add_ok(f, "h3", NULL, 0));
	snprintf(t3, sizeof t3, "%s", add_ok(f, "h3", two, 0));
	snprintf(t4, sizeof t4, "%s", add_ok(f, "h1", NULL, 0));
	assert_string_equal(show(f, t1)->waiting, "no live host offers label gpu");
	assert_string_equal(show(f, t2)->waiting, "host h3 is not live");
	assert_string_equal(show(f, t3)->waiting, "no live host h3 offering labels gpu,big");
	assert_string_equal(show(f, t4)->waiting, "");
	/* A lapsed host offering gpu does not count; a live one does. */
	assert_int_equal(sql_run(f, "INSERT INTO hosts (host, epoch, ttl_ms, renewed_ms,"
				    " expires_ms, labels) VALUES ('h3', 1, 3000,"
				    " berth_now_ms() - 9000, berth_now_ms() - 6000, 'big,gpu')"),
			 0);
	assert_string_equal(show(f, t1)->waiting, "no live host offers label gpu");
	assert_int_equal(sql_run(f, "UPDATE hosts SET renewed_ms = berth_now_ms(),"
				    " expires_ms = berth_now_ms() + 60000 WHERE host = 'h3'"),
			 0);
	assert_string_equal(show(f, t1)->waiting, "");
	assert_string_equal(show(f, t2)->waiting, "");
	assert_string_equal(show(f, t3)->waiting, "");
	assert_int_equal(show(f, t3)->n_labels, 2);
	assert_string_equal(show(f, t3)->labels[1], "big");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_claim_skips_placed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_edit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waiting, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
