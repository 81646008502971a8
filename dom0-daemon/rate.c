// SPDX-License-Identifier: MIT
/*
 * Session start rates (rate.h).
 */
#include <string.h>

#include "rate.h"

#define XD_RATE_ONE	1000000000ull	/* a session, in tokens */

void xd_rate_init(struct xd_rate *r, unsigned int per_s, unsigned int burst)
{
	memset(r, 0, sizeof(*r));
	r->per_s = per_s;
	r->burst = burst ? burst : 1;
}

int xd_rate_take(struct xd_rate *r, uint64_t key, uint64_t now_ns)
{
	uint64_t cap = r->burst * XD_RATE_ONE, add;
	unsigned int i, idle = 0;

	if (!r->per_s || !key)
		return 1;
	for (i = 0; i < XD_RATE_KEYS && r->b[i].key != key; i++)
		if (r->b[i].at < r->b[idle].at)
			idle = i;
	if (i == XD_RATE_KEYS) {
		i = idle;
		r->b[i].key = key;
		r->b[i].at = now_ns;
		r->b[i].tokens = cap;
	}
	/* Time only goes forward here, and never fills past the burst. */
	if (now_ns > r->b[i].at) {
		add = now_ns - r->b[i].at;
		add = add > cap / r->per_s ? cap : add * r->per_s;
		r->b[i].tokens = add >= cap - r->b[i].tokens ? cap :
				 r->b[i].tokens + add;
		r->b[i].at = now_ns;
	}
	if (r->b[i].tokens < XD_RATE_ONE)
		return 0;
	r->b[i].tokens -= XD_RATE_ONE;
	return 1;
}
