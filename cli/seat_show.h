#ifndef BERTH_SEAT_SHOW_H
#define BERTH_SEAT_SHOW_H
#include <stddef.h>
#include <stdint.h>

#include "berth.pb-c.h"

/* berth seat's output (seat_show.c). */

/* "alice@host (seat repo, key repo, workdir /src/app, held 3m, heartbeat
 * 12s ago)" from a denial's facts, into buf. */
void seat_describe_holder(const Berth__Denied *d, char *buf, size_t n);
/* Says on stderr why an acquire of item was refused, with what to do; CLI_FAIL. */
int seat_acquire_refused(const char *item, const char *reason, const char *holder,
			 const char *holder_item);
void seat_human(const Berth__Seat *s, int64_t now);
void seat_table(const Berth__SeatListReply *l);
void seat_json_list(const Berth__SeatListReply *l);
/* A seat verb's refusal code as a person says it. */
const char *seat_words(const char *outcome);

#endif
