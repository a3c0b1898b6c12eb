#ifndef BERTH_COORD_DB_INT_H
#define BERTH_COORD_DB_INT_H
/* Inside the store: what coord_db.c asks of a backend (coord_store_*.c).
 * coord_db.c keeps the statement cache, the bindings' parsing, the key and
 * the options; a backend only prepares, binds, steps and reads. */
#include "coord_db.h"
#include "ids.h"

/* The most parameters one statement binds. */
#define COORD_DB_MAXARGS 48

struct coord_val {
	char kind; /* 'i' int64, 't' text, 'n' NULL, 'b' blob */
	int64_t i;
	const char *t;
	const void *b;
	size_t blen;
};

struct coord_store_ops {
	enum coord_store_kind kind;
	/* The store as people are shown it, into where. */
	void (*describe)(const char *store, char *where, size_t n);
	/* Connects, and brings the schema up to date: 0, or -1 with err. */
	int (*open)(struct coord_db *db, const char *store, char *err, size_t errlen);
	void (*close)(struct coord_db *db);
	void *(*prepare)(struct coord_db *db, const char *sql);
	void (*finalize)(struct coord_db *db, void *st);
	int (*bind)(struct coord_db *db, void *st, const struct coord_val *v, int n);
	int (*step)(struct coord_db *db, void *st);
	void (*reset)(void *st);
	/* The rows the statement last stepped to its end changed. */
	int (*changes)(struct coord_db *db, void *st);
	int (*isnull)(void *st, int i);
	int64_t (*i64)(void *st, int i);
	const char *(*text)(void *st, int i); /* NULL for NULL */
	const void *(*blob)(void *st, int i, size_t *len);
	int (*script)(struct coord_db *db, const char *sql);
	int (*in_txn)(struct coord_db *db);
	const char *(*errmsg)(struct coord_db *db);
	/* coord_db_wake_fd and friends; NULL: the store has one coordinator. */
	int (*wake_fd)(struct coord_db *db);
	int (*woken)(struct coord_db *db);
	void (*wake_others)(struct coord_db *db);
	/* The statement that opens a group's transaction. */
	const char *begin_read, *begin_write;
	/* A group of claims for the next ticket, which other hosts' claims
	 * may decide beside (coord_db_begin_claims), and the lock they take
	 * one at a time (coord_db_serial); NULL: as begin_write, nothing. */
	const char *begin_claims, *serial;
	/* Fresh planner statistics after the queue grew (coord_db_tend_stats);
	 * NULL: the store's plans do not need them. */
	const char *analyze;
};

extern const struct coord_store_ops coord_store_sqlite;
extern const struct coord_store_ops coord_store_pg;

struct coord_st {
	struct coord_db *db;
	const char *sql; /* the literal's address is the key */
	void *be;        /* the backend's statement */
};

/* The statements are a fixed set of literals, fewer than this. */
#define DB_STMT_CACHE 256

struct coord_db {
	const struct coord_store_ops *ops;
	void *be; /* the backend's connection */
	struct coord_db_opts o;
	struct coord_st cache[DB_STMT_CACHE];
	int ncache;
	int64_t housekept_ms;
	char where[512];          /* coord_db_where */
	struct coord_host host;   /* coord_db_host */
	uint8_t key[IDS_KEY_LEN]; /* the worker tokens' key (ids_token_for) */
	int64_t added;            /* tickets added since the store was opened */
	int64_t analyzed;         /* ... when the statistics were last made */
	int claims;               /* the open transaction is begin_claims' */
	int serial;               /* ... and has taken the serial lock */
};

#endif
