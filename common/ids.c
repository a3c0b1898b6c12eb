/*
 * Random identifiers and SHA-256.
 *
 * Run ids, worker tokens and instance ids come from getrandom(): they must
 * not collide across restarts and a token must not be guessable. Tokens are
 * stored only as their SHA-256, so a leaked database does not leak the right
 * to act as a worker. SHA-256 is implemented here (FIPS 180-4) to keep the
 * coordinator's only crypto dependency a page of code.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "ids.h"
#include "log.h"

static const char ids_hexdigits[] = "0123456789abcdef";

static void
ids_to_hex(const uint8_t *in, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = ids_hexdigits[in[i] >> 4];
		out[2 * i + 1] = ids_hexdigits[in[i] & 0xf];
	}
	out[2 * n] = '\0';
}

int
ids_random_hex(char *out, size_t nbytes)
{
	uint8_t buf[64];
	size_t got = 0;
	ssize_t r;

	if (nbytes > sizeof(buf)) {
		errno = EINVAL;
		return -1;
	}
	while (got < nbytes) {
		r = getrandom(buf + got, nbytes - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			log_error("getrandom: %s", strerror(errno));
			return -1;
		}
		got += (size_t)r;
	}
	ids_to_hex(buf, nbytes, out);
	return 0;
}

int
ids_run_id(char out[IDS_RUN_LEN + 1])
{
	return ids_random_hex(out, IDS_RUN_LEN / 2);
}

int
ids_token(char out[IDS_TOKEN_LEN + 1])
{
	return ids_random_hex(out, IDS_TOKEN_LEN / 2);
}

int
ids_instance(char out[17])
{
	return ids_random_hex(out, 8);
}

void
ids_hash_hex(const char *s, char out[IDS_HASH_LEN + 1])
{
	uint8_t d[32];

	ids_sha256(s, strlen(s), d);
	ids_to_hex(d, sizeof(d), out);
}

/* HMAC (RFC 2104) over SHA-256. */
void
ids_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t len, uint8_t out[32])
{
	uint8_t k[64], pad[64 + 32], *inner;
	size_t i;

	memset(k, 0, sizeof(k));
	if (keylen > sizeof(k))
		ids_sha256(key, keylen, k);
	else if (keylen > 0)
		memcpy(k, key, keylen);
	if ((inner = malloc(64 + len)) == NULL)
		abort(); /* a few bytes more than the message: nothing to recover */
	for (i = 0; i < 64; i++)
		inner[i] = k[i] ^ 0x36;
	if (len > 0)
		memcpy(inner + 64, msg, len);
	ids_sha256(inner, 64 + len, pad + 64);
	for (i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	ids_sha256(pad, sizeof(pad), out);
	explicit_bzero(k, sizeof(k));
	explicit_bzero(inner, 64 + len);
	free(inner);
}

void
ids_token_for(const uint8_t key[IDS_KEY_LEN], const char *run_id, char out[IDS_TOKEN_LEN + 1])
{
	uint8_t d[32];

	ids_hmac_sha256(key, IDS_KEY_LEN, run_id, strlen(run_id), d);
	ids_to_hex(d, sizeof(d), out);
	explicit_bzero(d, sizeof(d));
}

/* Every byte is examined whatever the earlier ones were, so the time taken
 * does not tell an attacker how much of a token matched. */
int
ids_consttime_eq(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t diff = 0;
	size_t i;

	for (i = 0; i < n; i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}

/* SHA-256, FIPS 180-4 §6.2. */

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
sha256_block(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2, s0, s1;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0];
	b = h[1];
	c = h[2];
	d = h[3];
	e = h[4];
	f = h[5];
	g = h[6];
	hh = h[7];
	for (i = 0; i < 64; i++) {
		t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) +
		     sha256_k[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += hh;
}

void
ids_sha256(const void *data, size_t len, uint8_t out[32])
{
	uint32_t h[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};
	const uint8_t *p = data;
	uint8_t tail[128];
	uint64_t bits = (uint64_t)len * 8;
	size_t rest, tlen, i;

	for (; len >= 64; p += 64, len -= 64)
		sha256_block(h, p);

	/* Padding: 0x80, zeros, then the message length in bits, big-endian,
	 * filling one block or two when fewer than 9 bytes remain. */
	rest = len;
	memset(tail, 0, sizeof(tail));
	if (rest > 0)
		memcpy(tail, p, rest);
	tail[rest] = 0x80;
	tlen = rest + 9 <= 64 ? 64 : 128;
	for (i = 0; i < 8; i++)
		tail[tlen - 1 - i] = (uint8_t)(bits >> (8 * i));
	sha256_block(h, tail);
	if (tlen == 128)
		sha256_block(h, tail + 64);

	for (i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(h[i] >> 8);
		out[4 * i + 3] = (uint8_t)h[i];
	}
}
