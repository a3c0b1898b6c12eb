#ifndef BERTH_BERTH_LIMITS_H
#define BERTH_BERTH_LIMITS_H

/*
 * What one ticket may carry (docs/CLI.md, "Limits"). The CLI checks them
 * before it sends anything, and the coordinator again for every sender
 * (msg_add_limits, proto/msg.c): one rule in one place.
 *
 * One argument, one environment entry and one line of `berth add --batch`
 * (which runs as `sh -c LINE`) are what the kernel lets exec take as one
 * string (MAX_ARG_STRLEN, 32 pages, less its NUL); argv and environment
 * together stay well inside what exec takes under the default 8 MiB stack
 * (a quarter of it) and inside one message (RPC_MAX_MSG).
 */
#define BERTH_ARG_MAX      (128 * 1024 - 1) /* bytes of one argument or env entry */
#define BERTH_ARGV_ENV_MAX (1024 * 1024)    /* bytes of argv and env, one NUL each */
#define BERTH_NAME_MAX     255              /* --name */
#define BERTH_KEY_MAX      255              /* --key */
#define BERTH_WORKDIR_MAX  4095             /* --workdir, as a canonical path */
#define BERTH_AFTER_MAX    1000             /* --after ids */

/* `berth add --batch` sends its lines in chunks of at most this many
 * tickets and bytes, one transaction each. */
#define BERTH_BATCH_CHUNK       1000
#define BERTH_BATCH_CHUNK_BYTES (1024 * 1024)

#endif
