// SPDX-License-Identifier: MIT
/*
 * The xenstore value a domain's device names its upstream by: the
 * toolstack writes backend/xcuda/<domid>/<devid>/upstream (xcuda-xl's
 * upstream=HOST:PORT), xcuda-back checks its characters and hands it to
 * xcudad with the session's event, and the daemon parses it with
 * xd_up_addr_split() (dom0-daemon/up_link.c) before it connects, as it
 * does --listen and --upstream.
 *
 * Input: the value's bytes (cut at the first NUL, as a C string).
 *
 * What a value that passes must give: a host shorter than its buffer,
 * of the value's own bytes, and a port of digits alone whose number is
 * 1 to 65535, as the connect that follows reads it.
 */
#include "dom0-daemon/up_link.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char host[256], port[16], *s, *end;
	unsigned long long v;
	size_t i;

	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	memset(host, 0x5a, sizeof(host));
	memset(port, 0x5a, sizeof(port));
	if (xd_up_addr_split(s, host, sizeof(host), port, sizeof(port))) {
		free(s);
		return 0;
	}
	FZ_CHECK(memchr(host, 0, sizeof(host)));
	FZ_CHECK(strstr(s, host));
	FZ_CHECK(memchr(port, 0, sizeof(port)) && port[0]);
	for (i = 0; port[i]; i++)
		FZ_CHECK(port[i] >= '0' && port[i] <= '9');
	v = strtoull(port, &end, 10);
	FZ_CHECK(!*end);
	FZ_CHECK(v >= 1 && v <= 65535);
	free(s);
	return 0;
}
