/*
 * Requests of an actor that works in passes (recovery, the reaper): one
 * unanswered request ends the pass's talking, and hello carries the
 * process's identity so the coordinator can later tell it alive or gone.
 */
#include <limits.h>
#include <string.h>

#include "ident.h"
#include "log.h"
#include "msg.h"
#include "observe.h"
#include "rpc_observe.h"
#include "rpc_pass.h"
#include "util.h"

struct rpc_client *
rpc_pass_client(const char *home, const char *actor, int board)
{
	struct rpc_client *c;
	char url[PATH_MAX + 32];

	if (home_socket_url(home, url, sizeof(url)) < 0 ||
	    (c = rpc_client_open(url, actor)) == NULL)
		return NULL;
	/* A SIGTERM during a pass ends the request it waits on (at most a
	 * second later), not only the pass: stopping while the coordinator is
	 * down must not wait out the request's timeout. */
	rpc_client_on_abort(c, rpc_stop_signal_pending, NULL);
	/* Observation only: whatever cannot be opened is logged and lived
	 * without. */
	if (board)
		observe_attach(home, actor, rpc_client_instance(c));
	else
		observe_attach_ring(home, actor, rpc_client_instance(c));
	rpc_observe_install();
	return c;
}

int
rpc_pass_call(struct rpc_pass *p, Berth__Request *req, Berth__Reply **rep, const char *verb,
	      const char *what)
{
	char desc[256];
	int rc;

	*rep = NULL;
	if (p->unreachable || p->broken)
		return -1;
	rc = rpc_call(p->client, req, rep, p->timeout_ms);
	if (rc < 0) {
		log_warn("%s %s: no answer from the coordinator: %s", verb, what, strerror(-rc));
		p->unreachable = 1;
		return -1;
	}
	if (msg_reply_is_bug(*rep)) {
		msg_describe(*rep, desc, sizeof(desc));
		log_error(
			"bug: the coordinator refused our %s %s as malformed: %s; exiting for the "
			"launcher to restart us",
			verb, what, desc);
		berth__reply__free_unpacked(*rep, NULL);
		*rep = NULL;
		p->broken = 1;
		return -1;
	}
	return 0;
}

int
rpc_pass_hello(struct rpc_pass *p)
{
	Berth__Request req = BERTH__REQUEST__INIT;
	Berth__Hello hello = BERTH__HELLO__INIT;
	Berth__Ident im = BERTH__IDENT__INIT;
	Berth__Reply *rep;
	struct ident self;
	char desc[256];
	int rc = -1;

	if (ident_self(&self) < 0) {
		log_error("hello: cannot read this process's identity");
		return -1;
	}
	p->unreachable = 0;
	msg_ident_to(&self, &im);
	hello.ident = &im;
	req.verb_case = BERTH__REQUEST__VERB_HELLO;
	req.hello = &hello;
	if (rpc_pass_call(p, &req, &rep, "hello", "") < 0)
		return -1;
	if (msg_is_granted(rep))
		rc = 0;
	else {
		msg_describe(rep, desc, sizeof(desc));
		log_error("hello: %s", desc);
	}
	berth__reply__free_unpacked(rep, NULL);
	return rc;
}
