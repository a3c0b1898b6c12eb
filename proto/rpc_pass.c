/*
 * Requests of an actor that works in passes (recovery, the reaper): one
 * unanswered request ends the pass's talking, and hello carries the
 * process's identity so the coordinator can later tell it alive or gone.
 */
#include <string.h>

#include "ident.h"
#include "log.h"
#include "rpc_pass.h"

int
rpc_pass_call(struct rpc_pass *p, Berth__Request *req, Berth__Reply **rep, const char *verb,
	      const char *what)
{
	int rc;

	*rep = NULL;
	if (p->unreachable)
		return -1;
	rc = rpc_call(p->client, req, rep, p->timeout_ms);
	if (rc < 0) {
		log_warn("%s %s: no answer from the coordinator: %s", verb, what, strerror(-rc));
		p->unreachable = 1;
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
	im.boot_id = self.boot_id;
	im.has_pid = 1;
	im.pid = self.pid;
	im.has_start_time = 1;
	im.start_time = self.start_time;
	im.has_pgid = 1;
	im.pgid = self.pgid;
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
