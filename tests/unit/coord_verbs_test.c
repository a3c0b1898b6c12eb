/* The verb table (coordinator/coord_verbs.c): a row for every verb of the
 * protocol, named as the trace names it, with the flags, caller class and
 * roles the coordinator and its actors have today, and a handler that
 * answers even a request whose verb carries no fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_fixture.h"
#include "coord_verbs.h"
#include "msg.h"

#define V(x) BERTH__REQUEST__VERB_##x

/* Every field of Request's verb oneof has its row, named as the field; the
 * table has no other row. */
static void
test_every_verb_has_a_row(void **state)
{
	const ProtobufCMessageDescriptor *d = &berth__request__descriptor;
	Berth__Request req = BERTH__REQUEST__INIT;
	size_t i, nverbs = 0;

	(void)state;
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const struct coord_verb *v;

		if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
			continue;
		nverbs++;
		v = coord_verb_find((Berth__Request__VerbCase)f->id);
		assert_non_null(v);
		assert_string_equal(v->name, f->name);
		req.verb_case = (Berth__Request__VerbCase)f->id;
		assert_string_equal(coord_verb_name(&req), msg_verb_name(&req));
	}
	for (i = 0; coord_verb_row(i) != NULL; i++)
		;
	assert_int_equal(i, nverbs);
	req.verb_case = BERTH__REQUEST__VERB__NOT_SET;
	assert_string_equal(coord_verb_name(&req), "none");
	assert_null(coord_verb_find((Berth__Request__VerbCase)99));
}

/* Each verb reads or mutates; these only read; only claim parks. */
static void
test_flags(void **state)
{
	static const Berth__Request__VerbCase reads[] = {
		V(LIST),      V(SHOW),      V(STATUS), V(SCAN),  V(SHOULD_STOP),
		V(SEAT_LIST), V(SEAT_SHOW), V(HOSTS),  V(TRACE),
	};
	const struct coord_verb *v;
	size_t i, j;

	(void)state;
	for (i = 0; (v = coord_verb_row(i)) != NULL; i++) {
		int r = 0;

		for (j = 0; j < sizeof reads / sizeof reads[0]; j++)
			r |= reads[j] == v->verb;
		assert_int_equal((v->flags & COORD_VERB_READS) != 0, r);
		assert_int_equal((v->flags & COORD_VERB_MUTATES) != 0, !r);
		assert_int_equal((v->flags & COORD_VERB_PARKS) != 0, v->verb == V(CLAIM));
	}
}

struct who {
	Berth__Request__VerbCase verb;
	unsigned callers;
	unsigned roles;
};

/* DESIGN §1's classes, and the actors that send each verb today (a grep of
 * supervisor/, recovery/ and reaper/). */
static void
test_callers(void **state)
{
	static const struct who who[] = {
		{ V(CLAIM), CALLER_ACTOR, ROLE_SUPERVISOR },
		{ V(START), CALLER_ACTOR, ROLE_SUPERVISOR },
		{ V(RENEW), CALLER_ACTOR, ROLE_SUPERVISOR },
		{ V(READOPT), CALLER_ACTOR, ROLE_SUPERVISOR | ROLE_RECOVERY },
		{ V(RECORD_EXIT), CALLER_ACTOR, ROLE_SUPERVISOR | ROLE_RECOVERY },
		{ V(ABANDON), CALLER_ACTOR, ROLE_SUPERVISOR | ROLE_RECOVERY },
		{ V(SETTLE), CALLER_ACTOR, ROLE_ANY },
		{ V(HELLO), CALLER_ACTOR, ROLE_ANY },
		{ V(SCAN), CALLER_ACTOR, ROLE_ANY },
		{ V(MARK_STOP), CALLER_ACTOR, ROLE_REAPER },
		{ V(SEAT_REAP), CALLER_ACTOR, ROLE_REAPER },
		{ V(HOSTS), CALLER_ACTOR, ROLE_RECOVERY | ROLE_SUPERVISOR | ROLE_REAPER },
		{ V(HOST_LOST), CALLER_ACTOR, ROLE_RECOVERY },
		{ V(LOSE), CALLER_ACTOR, ROLE_RECOVERY },
		{ V(ADD), CALLER_OPERATOR, 0 },
		{ V(ADD_BATCH), CALLER_OPERATOR, 0 },
		{ V(LIST), CALLER_OPERATOR | CALLER_ACTOR, ROLE_REAPER },
		{ V(SHOW), CALLER_OPERATOR, 0 },
		{ V(HOLD), CALLER_OPERATOR, 0 },
		{ V(RELEASE), CALLER_OPERATOR, 0 },
		{ V(RETRY), CALLER_OPERATOR, 0 },
		{ V(CANCEL), CALLER_OPERATOR, 0 },
		{ V(STATUS), CALLER_OPERATOR, 0 },
		{ V(SEAT_ACQUIRE), CALLER_OPERATOR, 0 },
		{ V(SEAT_RELEASE), CALLER_OPERATOR, 0 },
		{ V(SEAT_FORCE_RELEASE), CALLER_OPERATOR, 0 },
		{ V(SEAT_HEARTBEAT), CALLER_OPERATOR, 0 },
		{ V(SEAT_STOP), CALLER_OPERATOR, 0 },
		{ V(SEAT_ACTIVITY), CALLER_OPERATOR, 0 },
		{ V(SEAT_LIST), CALLER_OPERATOR, 0 },
		{ V(SEAT_SHOW), CALLER_OPERATOR, 0 },
		{ V(SEAT_CONFIRM), CALLER_OPERATOR, 0 },
		{ V(SEAT_CLEAR), CALLER_OPERATOR, 0 },
		{ V(EDIT), CALLER_OPERATOR, 0 },
		{ V(REMOVE), CALLER_OPERATOR, 0 },
		{ V(CLEAN), CALLER_OPERATOR, 0 },
		{ V(TRACE), CALLER_OPERATOR, 0 },
		{ V(SLOTS), CALLER_OPERATOR, 0 },
		{ V(PAUSE), CALLER_OPERATOR, 0 },
		{ V(RESUME), CALLER_OPERATOR, 0 },
		{ V(HEARTBEAT), CALLER_WORKER | CALLER_OPERATOR, 0 },
		{ V(PROGRESS), CALLER_WORKER | CALLER_OPERATOR, 0 },
		{ V(NOTE), CALLER_WORKER | CALLER_OPERATOR, 0 },
		{ V(SHOULD_STOP), CALLER_WORKER | CALLER_OPERATOR, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof who / sizeof who[0]; i++) {
		const struct coord_verb *v = coord_verb_find(who[i].verb);

		assert_non_null(v);
		if (v->callers != who[i].callers || v->roles != who[i].roles)
			fail_msg("%s: classes %u roles %u, want %u %u", v->name, v->callers,
				 v->roles, who[i].callers, who[i].roles);
	}
	assert_null(coord_verb_row(sizeof who / sizeof who[0]));
}

/* Only a claim for the next ticket waits, as long as it asks. */
static void
test_wait_ms(void **state)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Claim c = BERTH__CLAIM__INIT;

	(void)state;
	req.verb_case = V(CLAIM);
	req.claim = &c;
	c.has_wait_ms = 1;
	c.wait_ms = 500;
	assert_int_equal(coord_verb_wait_ms(&req), 500);
	c.ticket = "T1";
	assert_int_equal(coord_verb_wait_ms(&req), 0);
	c.ticket = "";
	assert_int_equal(coord_verb_wait_ms(&req), 500);
	req.claim = NULL;
	assert_int_equal(coord_verb_wait_ms(&req), 0);
	req.verb_case = V(LIST);
	assert_int_equal(coord_verb_wait_ms(&req), 0);
}

/* Every handler answers a request whose verb has no message at all (a
 * peer that sent only the oneof's tag): never a crash, never a storage
 * fault. */
static void
test_every_handler_answers_empty(void **state)
{
	struct fx *f = *state;
	const struct coord_verb *v;
	size_t i;

	for (i = 0; (v = coord_verb_row(i)) != NULL; i++) {
		Berth__Request req = BERTH__REQUEST__INIT;
		const Berth__Reply *r;

		req.verb_case = v->verb;
		r = ex(f, &req);
		assert_int_not_equal(r->result_case, BERTH__REPLY__RESULT__NOT_SET);
		if (r->result_case == BERTH__REPLY__RESULT_ERROR)
			assert_int_not_equal(r->error->code, BERTH__ERROR_CODE__ERR_STORAGE);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_verb_has_a_row),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_callers),
		cmocka_unit_test(test_wait_ms),
		cmocka_unit_test_setup_teardown(test_every_handler_answers_empty, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
