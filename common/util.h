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
/*
 * The one check of a home (DESIGN §2) that every actor and the CLI make
 * before using it: a directory owned by the caller (effective uid) that
 * neither its group nor others may write; it is never chmod'ed. With create,
 * a missing home and its missing parents are made 0700. 0: usable; 1:
 * missing (create not set); -1: refused, with one line saying why (the
 * path, the owner or the mode) in err.
 */
int home_check(const char *home, int create, char *err, size_t n);
/* home_check with create, the refusal logged: what an actor calls. */
int home_ensure(const char *home);
/* "ipc://<home>/coordinator.sock" into buf. */
int home_socket_url(const char *home, char *buf, size_t n);
/* "ipc://<home>/worker.sock": where jobs' worker verbs go (DESIGN §2). */
int home_worker_url(const char *home, char *buf, size_t n);
/* "<home>/runs/<run>" into buf; -1 for an empty run id, one starting with
 * '.', or containing '/'. home_socket_url fails when the socket path would
 * not fit sun_path (107 bytes). */
int home_run_dir(const char *home, const char *run_id, char *buf, size_t n);

/* 0..15 for a hex digit (either case), -1 for anything else. */
int hex_digit(int c);

/*
 * Text that came from a job or a user, made safe to show on a terminal
 * (DESIGN §12), as `ls -b` does: ESC becomes \e, newline \n, tab \t, carriage
 * return \r, a backslash \\; every other C0 control byte, DEL, each byte of a
 * C1 control (U+0080..U+009F) and each byte that does not start a valid UTF-8
 * sequence becomes \xNN; valid UTF-8 passes through. The result holds no
 * control byte and is valid UTF-8, so it can neither move the cursor nor
 * start a new line; and it is unambiguous (a literal "\e" comes out "\\e").
 *
 * esc_text is like snprintf: it writes at most n - 1 bytes and a NUL (never
 * half an escape or half a character) and returns the length of the whole
 * escaped text. A NULL s is "". buf may be NULL when n is 0.
 */
size_t esc_text(char *buf, size_t n, const char *s);
/* The same, written to f. */
void esc_fputs(FILE *f, const char *s);

/* Writes all of buf to path atomically: temp file, fsync, rename, fsync dir. */
int file_write_atomic(const char *path, const void *buf, size_t len);

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0 when it is not one. */
size_t utf8_len(const unsigned char *s);

#endif
