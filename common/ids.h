#ifndef BERTH_IDS_H
#define BERTH_IDS_H
#include <stddef.h>
#include <stdint.h>

#define IDS_RUN_LEN   32 /* 128-bit run id, hex */
#define IDS_TOKEN_LEN 64 /* 256-bit worker token, hex */
#define IDS_HASH_LEN  64 /* SHA-256, hex */

/* Fills out (2*nbytes+1 bytes) with nbytes of getrandom() as lowercase hex. */
int ids_random_hex(char *out, size_t nbytes);
int ids_run_id(char out[IDS_RUN_LEN + 1]);
int ids_token(char out[IDS_TOKEN_LEN + 1]);
/* An instance id for an actor process start (64-bit, hex). */
int ids_instance(char out[17]);
/* Hex SHA-256 of a string: tokens are stored only as this hash. */
void ids_hash_hex(const char *s, char out[IDS_HASH_LEN + 1]);
/* Constant-time comparison of two equal-length buffers: 1 when equal. */
int ids_consttime_eq(const void *a, const void *b, size_t n);

/* HMAC-SHA256 (RFC 2104, 4231). */
void ids_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t len, uint8_t out[32]);

/* A run's worker token is derived, not stored: hex HMAC-SHA256 under the
 * coordinator's secret key of the run id. So no stored reply needs to hold
 * a token, and a replayed claim can carry it again. */
#define IDS_KEY_LEN 32
void ids_token_for(const uint8_t key[IDS_KEY_LEN], const char *run_id, char out[IDS_TOKEN_LEN + 1]);

/* SHA-256 (FIPS 180-4). */
void ids_sha256(const void *data, size_t len, uint8_t out[32]);

#endif
