#ifndef BERTH_CLOCK_H
#define BERTH_CLOCK_H
#include <stdint.h>

/* Wall time (ms since the epoch) and monotonic time (ms). Tests inject time
 * with clock_fake_set(); every decision that compares times (lease expiry,
 * due activations, backoff) reads clock_wall_ms() so tests control it. */
int64_t clock_wall_ms(void);
int64_t clock_mono_ms(void);
/* Make clock_wall_ms() and clock_mono_ms() return fixed values (tests). */
void clock_fake_set(int64_t wall_ms);
void clock_fake_advance(int64_t delta_ms);
void clock_fake_clear(void);

#endif
