/* SPDX-License-Identifier: MIT */
/*
 * How fast one guest may start sessions: a token bucket per key (a Xen
 * domain, a local user), so that one churning NEW and END cannot keep
 * the daemon forking and everyone else waiting.  A key may start
 * @burst sessions at once, then @per_s a second.  The table is small
 * and fixed: the key idle longest gives its place to a new one (a full
 * bucket, so a guest gains nothing by crowding others out).
 */
#ifndef XCUDAD_RATE_H
#define XCUDAD_RATE_H

#include <stdint.h>

#define XD_RATE_KEYS	64

struct xd_rate {
	unsigned int per_s;	/* 0: no limit */
	unsigned int burst;
	struct {
		uint64_t key;	/* 0: free */
		uint64_t at;	/* ns: when @tokens was right */
		uint64_t tokens;	/* in 1/1000000000 of a session */
	} b[XD_RATE_KEYS];
};

void xd_rate_init(struct xd_rate *r, unsigned int per_s, unsigned int burst);
/* Whether @key (not 0) may start a session at @now_ns: 1, and it is counted. */
int xd_rate_take(struct xd_rate *r, uint64_t key, uint64_t now_ns);

#endif /* XCUDAD_RATE_H */
