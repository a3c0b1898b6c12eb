#ifndef BERTH_UTIL_H
#define BERTH_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Durations: "250ms", "5s", "2m", "1h", "1d", also compound "1h30m"; a bare
 * number is seconds. Signs, spaces, fractions, overflow refused. 0 or -1. */
int dur_parse(const char *s, int64_t *ms);
/* Human duration: "850ms", "42s", "3m", "2h5m", "3d4h". */
void dur_format(int64_t ms, char *buf, size_t n);
/* Local time "YYYY-mm-dd HH:MM:SS" from wall ms. */
void time_format(int64_t wall_ms, char *buf, size_t n);

/* A command-line number of an actor's main: plain decimal digits (an
 * optional sign, leading blanks as strtoll takes them; no unit, no
 * fraction) within [min, max]. 0 with *out set, or -1 with *out untouched
 * after one line on stderr naming the program, the option and the value. */
int opt_parse_ms(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out);
/* The same for counts and for ms options kept as int. */
int opt_parse_int(const char *opt, const char *s, int min, int max, int *out);

/* $BERTH_HOME, else ${XDG_STATE_HOME:-$HOME/.local/state}/berth. Caller frees. */
char *home_default(void);
/* mkdir -p with mode 0700 for the leaf and missing parents. */
int home_ensure(const char *home);
/* "ipc://<home>/coordinator.sock" into buf. */
int home_socket_url(const char *home, char *buf, size_t n);
/* "<home>/runs/<run>" into buf; -1 for an empty run id, one starting with
 * '.', or containing '/'. home_socket_url fails when the socket path would
 * not fit sun_path (107 bytes). */
int home_run_dir(const char *home, const char *run_id, char *buf, size_t n);

/* 0..15 for a hex digit (either case), -1 for anything else. */
int hex_digit(int c);

/* Writes all of buf to path atomically: temp file, fsync, rename, fsync dir. */
int file_write_atomic(const char *path, const void *buf, size_t len);

#endif
