/*
 * The coordinator's startup and shutdown: the home's lock, the database,
 * the trace, the sockets and their callers; closing them in the order
 * that keeps durable state safe. Apart from coord_server.c (the loop)
 * because it runs once, before and after it; they share the server's
 * state (coord_server_int.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "coord_caller.h"
#include "coord_db.h"
#include "coord_exec.h"
#include "coord_hosts.h"
#include "coord_mem.h"
#include "coord_park.h"
#include "coord_sched.h"
#include "coord_server.h"
#include "coord_server_int.h"
#include "coord_settings.h"
#include "coord_trace.h"
#include "coord_verbs.h"
#include "failpoint.h"
#include "ident.h"
#include "ids.h"
#include "log.h"
#include "msg.h"
#include "observe.h"
#include "rpc.h"
#include "util.h"

/* ------------------------------------------------------------- startup */

/* Only one coordinator per home: the database has one owner (DESIGN §1). */
static int
cs_lock(struct coord_server *cs, char *err, size_t errlen)
{
	char buf[32];
	ssize_t n;
	long pid;
	int fd;

	snprintf(cs->lock_path, sizeof(cs->lock_path), "%s/coordinator.lock", cs->home);
	if ((fd = open(cs->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		snprintf(err, errlen, "cannot open %s: %s", cs->lock_path, strerror(errno));
		return 1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK) {
			n = pread(fd, buf, sizeof(buf) - 1, 0);
			buf[n > 0 ? n : 0] = '\0';
			pid = strtol(buf, NULL, 10);
			if (pid > 0)
				snprintf(
					err, errlen,
					"another coordinator (pid %ld) is running for %s (it holds %s)",
					pid, cs->home, cs->lock_path);
			else
				snprintf(err, errlen,
					 "another coordinator is running for %s (it holds %s)",
					 cs->home, cs->lock_path);
		} else {
			snprintf(err, errlen, "cannot lock %s: %s", cs->lock_path, strerror(errno));
		}
		close(fd);
		return 1;
	}
	/* Our pid, for the message another coordinator prints. */
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		log_warn("cannot write the pid into %s: %s", cs->lock_path, strerror(errno));
	cs->lockfd = fd;
	return 0;
}

/*
 * Which store this home's coordinator opens (DESIGN §2, §13). A home keeps
 * the store it was first given: --store writes its URL into $home/store
 * (0600), and a later start without --store (a restart by the launcher,
 * the next berth up) opens the same one. A home never changes stores by
 * itself: a different --store, or --store for a home whose berth.db exists,
 * is refused, since the runs and tickets of the one would silently vanish
 * from view behind the other. 0 with the store in out (a path or a URL),
 * or 2 with a message.
 */
static int
cs_store(const char *home, const char *given, char *out, size_t n, char *err, size_t errlen)
{
	char file[PATH_MAX], kept[PATH_MAX] = "", tmp[PATH_MAX];
	ssize_t len = 0;
	int fd;

	snprintf(file, sizeof file, "%s/store", home);
	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
		len = read(fd, kept, sizeof kept - 1);
		close(fd);
		kept[len > 0 ? len : 0] = '\0';
		kept[strcspn(kept, "\n")] = '\0';
		if (!coord_db_is_url(kept)) {
			snprintf(err, errlen, "%s does not hold a postgresql:// URL", file);
			return 2;
		}
	} else if (errno != ENOENT) {
		snprintf(err, errlen, "cannot read %s: %s", file, strerror(errno));
		return 2;
	}
	if (given == NULL) {
		if (kept[0] != '\0')
			snprintf(out, n, "%s", kept);
		else
			snprintf(out, n, "%s/berth.db", home);
		return 0;
	}
	if (kept[0] != '\0') {
		if (strcmp(kept, given) != 0) {
			snprintf(
				err, errlen,
				"%s keeps its store in %s, not in the --store given; a home does not "
				"change stores (start without --store, or use another home)",
				home, file);
			return 2;
		}
		snprintf(out, n, "%s", given);
		return 0;
	}
	snprintf(tmp, sizeof tmp, "%s/berth.db", home);
	if (access(tmp, F_OK) == 0) {
		snprintf(err, errlen,
			 "%s has its store in %s; a home does not change stores: use another home "
			 "for --store",
			 home, tmp);
		return 2;
	}
	snprintf(tmp, sizeof tmp, "%s/store.tmp", home);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0 ||
	    dprintf(fd, "%s\n", given) < 0 || fsync(fd) != 0 || close(fd) != 0 ||
	    rename(tmp, file) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", file, strerror(errno));
		return 2;
	}
	snprintf(out, n, "%s", given);
	return 0;
}

int
coord_server_open(struct coord_server **out, const struct coord_server_opts *o, char *err,
		  size_t errlen)
{
	struct coord_server *cs;
	struct coord_db_opts so;
	char path[PATH_MAX];
	int rv = 1;

	*out = NULL;
	err[0] = '\0';
	if ((cs = calloc(1, sizeof(*cs))) == NULL || (cs->home = strdup(o->home)) == NULL) {
		snprintf(err, errlen, "out of memory");
		free(cs);
		return 1;
	}
	cs->lockfd = -1;
	coord_park_init(&cs->park);
	if (home_ensure(cs->home) != 0) {
		snprintf(err, errlen, "cannot create %s", cs->home);
		goto fail;
	}
	if (cs_lock(cs, err, errlen) != 0)
		goto fail;
	if (fp_init_env(cs->home, err, errlen) != 0) {
		rv = 2;
		goto fail;
	}
	if (ids_instance(cs->instance) != 0) {
		snprintf(err, errlen, "cannot make an instance id");
		goto fail;
	}
	observe_attach(cs->home, "coordinator", cs->instance);
	observe_beat("starting");

	memset(&so, 0, sizeof(so));
	so.sync_full = o->sync_full;
	so.default_lease_ms = o->lease_ms > 0 ? o->lease_ms : 30000;
	so.backoff_base_ms = o->backoff_ms > 0 ? o->backoff_ms : 1000;
	so.backoff_max_ms = o->backoff_max_ms > 0 ? o->backoff_max_ms : 300000;
	if (so.backoff_max_ms < so.backoff_base_ms)
		so.backoff_max_ms = so.backoff_base_ms;
	if ((rv = cs_store(cs->home, o->store, path, sizeof path, err, errlen)) != 0)
		goto fail;
	if (coord_db_is_url(path))
		so.key_dir = cs->home;
	so.host_id = o->host_id;
	if (coord_db_open(&cs->db, path, &so, err, errlen) != 0) {
		if (err[0] == '\0')
			snprintf(err, errlen, "cannot open the database %s", path);
		rv = 2;
		goto fail;
	}
	/* This host's lease in the store, before any request is decided. */
	if (o->host_id != NULL) {
		struct coord_host *h = coord_db_host(cs->db);

		snprintf(h->id, sizeof h->id, "%s", o->host_id);
		snprintf(h->labels, sizeof h->labels, "%s", o->labels != NULL ? o->labels : "");
		h->ttl_ms = o->host_ttl_ms > 0 ? o->host_ttl_ms : COORD_HOST_TTL_MS;
		if (ident_boot_id(h->boot_id) != 0)
			snprintf(h->boot_id, sizeof h->boot_id, "unknown");
		if (coord_hosts_tend(cs->db, clock_mono_ms(), 1) != 0) {
			snprintf(err, errlen, "cannot take the host lease of %s in %s: %s", h->id,
				 coord_db_where(cs->db), coord_db_errmsg(cs->db));
			goto fail;
		}
		log_info("host %s, epoch %lld, lease TTL %lld ms, labels %s, store %s", h->id,
			 (long long)h->epoch, (long long)h->ttl_ms,
			 h->labels[0] != '\0' ? h->labels : "none", coord_db_where(cs->db));
	}
	/* berth slots and berth pause last for one launch of the group: the
	 * launcher's monitor draws BERTH_LAUNCH_ID once, so a restart of this
	 * coordinator keeps them and the next berth up starts afresh. */
	if (coord_settings_launch(cs->db, getenv("BERTH_LAUNCH_ID")) < 0) {
		snprintf(err, errlen, "cannot read the group's settings in %s", path);
		goto fail;
	}
	if (coord_trace_open(&cs->trace, cs->home) != 0) {
		snprintf(err, errlen, "cannot open the trace under %s/trace", cs->home);
		goto fail;
	}
	/* The last decision's line, if a crash came between its COMMIT and
	 * its write. */
	{
		uint64_t seq;
		char *line;
		int rc = coord_exec_kept_line(cs->db, &seq, &line);

		if (rc == 1)
			rc = coord_trace_restore(cs->trace, seq, line);
		free(line);
		if (rc < 0) {
			snprintf(err, errlen, "cannot restore the trace under %s/trace", cs->home);
			goto fail;
		}
	}
	if (home_socket_url(cs->home, cs->url, sizeof(cs->url)) != 0) {
		snprintf(err, errlen, "the socket path under %s is too long", cs->home);
		goto fail;
	}
	/* A socket file left by a coordinator that died is stale: we hold the
	 * lock, so no live coordinator can be listening on it. */
	if (unlink(cs->url + strlen("ipc://")) != 0 && errno != ENOENT)
		log_warn("cannot remove the stale socket %s: %s", cs->url + 6, strerror(errno));
	if (home_worker_url(cs->home, cs->worker_url, sizeof(cs->worker_url)) != 0) {
		snprintf(err, errlen, "the socket path under %s is too long", cs->home);
		goto fail;
	}
	if (unlink(cs->worker_url + strlen("ipc://")) != 0 && errno != ENOENT)
		log_warn("cannot remove the stale socket %s: %s", cs->worker_url + 6,
			 strerror(errno));
	if ((cs->callers = coord_callers_new(NULL, o->actor_exes, o->nactor_exes)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if ((cs->rpc = rpc_server_open(cs->url, o->nctx)) == NULL) {
		snprintf(err, errlen, "cannot listen on %s", cs->url);
		goto fail;
	}
	/* Jobs' own socket: worker verbs only (DESIGN §2, §5). */
	if ((cs->worker_listener = rpc_server_listen(cs->rpc, cs->worker_url)) < 0) {
		snprintf(err, errlen, "cannot listen on %s", cs->worker_url);
		goto fail;
	}
	coord_exec_group_init(&cs->group, cs->db, 1, coord_trace_seq(cs->trace) + 1);
	*out = cs;
	return 0;
fail:
	coord_server_close(cs);
	return rv;
}

void
coord_server_close(struct coord_server *cs)
{
	if (cs == NULL)
		return;
	coord_park_drop_all(&cs->park, cs->rpc);
	coord_exec_group_free(&cs->group);
	free(cs->slots);
	/* Durable state first: nng_close() can block inside nng 1.5.2 when a
	 * peer's pipe is closing at the same moment, and nothing may be left
	 * unflushed behind it (main.c bounds that wait). */
	coord_trace_close(cs->trace);
	coord_db_close(cs->db);
	observe_detach("stopped");
	/* Replies already handed to nng are flushed by rpc_server_close. */
	rpc_server_close(cs->rpc);
	coord_callers_free(cs->callers);
	if (cs->lockfd >= 0)
		close(cs->lockfd); /* releases the lock */
	free(cs->home);
	free(cs);
}
