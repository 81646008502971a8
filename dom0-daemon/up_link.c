// SPDX-License-Identifier: MIT
/*
 * The upstream link's common parts (up_link.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/env.h"
#include "common/ring_wait.h"
#include "ipc_table.h"
#include "up_link.h"

/* Pieces up to this size are copied into the write buffer. */
#define XD_UP_WR_COPY	8192
/* Keep-alive: probes after this long idle, this often, this many. */
#define XD_UP_KA_IDLE_S	30
#define XD_UP_KA_INTVL_S 10
#define XD_UP_KA_CNT	3

/* ---- the key ---- */

int xd_up_key_load(const char *path, struct xd_up_key *k, char *why,
		   size_t whylen)
{
	struct stat st;
	ssize_t r;
	size_t got = 0;
	int fd;

	memset(k, 0, sizeof(*k));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file");
		goto fail;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, whylen, "owned by uid %u, not by this daemon's "
			 "user (uid %u)", (unsigned int)st.st_uid,
			 (unsigned int)geteuid());
		goto fail;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(why, whylen, "mode %04o: the group and others may "
			 "not have any access (chmod 600)",
			 (unsigned int)(st.st_mode & 07777));
		goto fail;
	}
	if (st.st_size < XCUDA_UP_KEY_MIN || st.st_size > XCUDA_UP_KEY_MAX) {
		snprintf(why, whylen, "%lld bytes: a key has %d to %d",
			 (long long)st.st_size, XCUDA_UP_KEY_MIN,
			 XCUDA_UP_KEY_MAX);
		goto fail;
	}
	while (got < (size_t)st.st_size) {
		r = read(fd, k->bytes + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(why, whylen, "%s", r ? strerror(errno) :
				 "it shrank while being read");
			goto fail;
		}
		got += (size_t)r;
	}
	close(fd);
	k->len = got;
	return 0;
fail:
	close(fd);
	xd_up_key_wipe(k);
	return -1;
}

void xd_up_key_wipe(struct xd_up_key *k)
{
	OPENSSL_cleanse(k, sizeof(*k));
}

int xd_up_mac(const struct xd_up_key *k, const char *label,
	      const uint8_t a[XCUDA_UP_NONCE], const uint8_t b[XCUDA_UP_NONCE],
	      uint8_t out[XCUDA_UP_MAC])
{
	uint8_t msg[32 + 2 * XCUDA_UP_NONCE];
	size_t n = strlen(label);
	unsigned int len = 0;

	if (n > 32 || !k->len)
		return -1;
	memcpy(msg, label, n);
	memcpy(msg + n, a, XCUDA_UP_NONCE);
	memcpy(msg + n + XCUDA_UP_NONCE, b, XCUDA_UP_NONCE);
	if (!HMAC(EVP_sha256(), k->bytes, (int)k->len, msg,
		  n + 2 * XCUDA_UP_NONCE, out, &len) || len != XCUDA_UP_MAC)
		return -1;
	return 0;
}

int xd_up_mac_ok(const struct xd_up_key *k, const char *label,
		 const uint8_t a[XCUDA_UP_NONCE],
		 const uint8_t b[XCUDA_UP_NONCE],
		 const uint8_t mac[XCUDA_UP_MAC])
{
	uint8_t want[XCUDA_UP_MAC];
	int ok;

	if (xd_up_mac(k, label, a, b, want))
		return 0;
	ok = !CRYPTO_memcmp(want, mac, XCUDA_UP_MAC);
	OPENSSL_cleanse(want, sizeof(want));
	return ok;
}

uint64_t xd_up_domain(const struct xd_up_key *k,
		      const uint8_t origin[XCUDA_UP_ORIGIN], uint64_t domain)
{
	uint8_t a[XCUDA_UP_NONCE] = { 0 }, b[XCUDA_UP_NONCE] = { 0 };
	uint8_t mac[XCUDA_UP_MAC];
	uint64_t h;

	if (!domain)
		return 0;
	memcpy(a, origin, XCUDA_UP_ORIGIN);
	memcpy(a + XCUDA_UP_ORIGIN, &domain, sizeof(domain));
	if (xd_up_mac(k, XD_UP_LABEL_DOMAIN, a, b, mac))
		return 0;
	memcpy(&h, mac, sizeof(h));
	return XD_DOMAIN_RELAYED | (h & ~XD_DOMAIN_RELAYED);
}

int xd_up_nonce(uint8_t out[XCUDA_UP_NONCE])
{
	size_t got = 0;
	ssize_t r;

	while (got < XCUDA_UP_NONCE) {
		r = getrandom(out + got, XCUDA_UP_NONCE - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r ? -errno : -EIO;
		got += (size_t)r;
	}
	return 0;
}

/* ---- addresses and sockets ---- */

int xd_up_addr_split(const char *s, char *host, size_t hostlen, char *port,
		     size_t portlen)
{
	const char *colon, *h = s;
	size_t hl;

	if (!s || !*s)
		return -1;
	if (*s == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			return -1;
		h = s + 1;
		hl = (size_t)(end - h);
		colon = end + 1;
		if (!hl)
			return -1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -1;
		hl = (size_t)(colon - s);
		/* A bare IPv6 address needs its brackets. */
		if (memchr(s, ':', hl))
			return -1;
		if (hl == 1 && *s == '*')
			hl = 0;
	}
	if (hl >= hostlen || !colon[1] || strlen(colon + 1) >= portlen)
		return -1;
	memcpy(host, h, hl);
	host[hl] = 0;
	strcpy(port, colon + 1);
	for (h = port; *h; h++)
		if (*h < '0' || *h > '9')
			return -1;
	/* Five digits at most: atoi() of more wraps, into range too. */
	if (strlen(port) > 5 || atoi(port) < 1 || atoi(port) > 65535)
		return -1;
	return 0;
}

void xd_up_sock_setup(int fd)
{
	int one = 1, idle = XD_UP_KA_IDLE_S, intvl = XD_UP_KA_INTVL_S;
	int cnt = XD_UP_KA_CNT;

	/* Requests and answers are small and wanted now: no Nagle. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* A peer that vanished without a word is found out in ~1 min. */
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

int xd_up_listen(const char *hostport, char *why, size_t whylen)
{
	struct addrinfo hints, *res = NULL, *ai;
	char host[256], port[16];
	int fd = -1, one = 1, err = 0, gai;

	if (xd_up_addr_split(hostport, host, sizeof(host), port,
			     sizeof(port))) {
		snprintf(why, whylen, "'%s' is not HOST:PORT", hostport);
		return -1;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	gai = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (gai) {
		snprintf(why, whylen, "%s: %s", hostport, gai_strerror(gai));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
			    SOCK_NONBLOCK, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 128))
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(why, whylen, "%s: %s", hostport, strerror(err));
	return fd;
}

/* One address, within @deadline: the connected socket or -errno. */
static int xd_up_connect_one(const struct addrinfo *ai, uint64_t deadline)
{
	struct pollfd p;
	socklen_t len = sizeof(int);
	int fd, err = 0, r;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			err = -errno;
			goto fail;
		}
		p.fd = fd;
		p.events = POLLOUT;
		do
			r = poll(&p, 1, xr_poll_ms(deadline));
		while (r < 0 && errno == EINTR);
		if (r <= 0) {
			err = r ? -errno : -ETIMEDOUT;
			goto fail;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err) {
			err = -err;
			goto fail;
		}
	}
	/* Blocking from now on: every wait is poll()'s, with its timeout. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		err = -errno;
		goto fail;
	}
	xd_up_sock_setup(fd);
	return fd;
fail:
	close(fd);
	return err;
}

int xd_up_connect(const char *hostport, int timeout_ms)
{
	uint64_t deadline = xd_up_deadline(timeout_ms);
	struct addrinfo hints, *res = NULL, *ai;
	char host[256], port[16];
	int fd = -ENOENT;

	if (xd_up_addr_split(hostport, host, sizeof(host), port,
			     sizeof(port)) || !*host)
		return -EINVAL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (getaddrinfo(host, port, &hints, &res))
		return -ENOENT;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = xd_up_connect_one(ai, deadline);
		if (fd >= 0 || fd == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	return fd;
}

void xd_up_peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	char h[NI_MAXHOST], p[NI_MAXSERV];

	if (getpeername(fd, (struct sockaddr *)&sa, &sl) ||
	    (sa.ss_family != AF_INET && sa.ss_family != AF_INET6) ||
	    getnameinfo((struct sockaddr *)&sa, sl, h, sizeof(h), p,
			sizeof(p), NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, sa.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h,
		 p);
}

uint64_t xd_up_deadline(int ms)
{
	return xr_deadline(ms);
}

/* Waits for @events on @fd until @deadline: 1, 0 (timeout) or -errno. */
static int xd_up_poll(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	r = poll(&p, 1, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 1 : -errno;
	return r;
}

int xd_up_read_all(int fd, void *buf, size_t len, uint64_t deadline)
{
	size_t got = 0;
	ssize_t r;
	int w;

	while (got < len) {
		w = xd_up_poll(fd, POLLIN, xr_poll_ms(deadline));
		if (w < 0)
			return w;
		if (!w)
			return -ETIMEDOUT;
		r = recv(fd, (char *)buf + got, len - got, MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (!r)
			return -EPIPE;
		got += (size_t)r;
	}
	return 0;
}

int xd_up_write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t r;
	int w;

	while (done < len) {
		r = send(fd, (const char *)buf + done, len - done,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r > 0) {
			done += (size_t)r;
			continue;
		}
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		w = xd_up_poll(fd, POLLOUT, XD_UP_STALL_MS);
		if (w < 0)
			return w;
		if (!w)
			return -ETIMEDOUT;
	}
	return 0;
}

/* ---- frames in ---- */

int xd_up_rd_init(struct xd_up_rd *r, int fd, size_t cap)
{
	unsigned long long us = 0;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->cap = cap;
	if (sysconf(_SC_NPROCESSORS_ONLN) >= XD_UP_SPIN_MIN_CPUS)
		us = XD_UP_SPIN_US;
	/* a bad value gets the default: the link works either way */
	if (xcuda_env_uint(XD_UP_SPIN_ENV, 1000000, &us) < 0)
		us = XD_UP_SPIN_US;
	r->spin_ns = us * 1000;
	r->buf = malloc(cap);
	r->last = xr_now_ns();
	return r->buf ? 0 : -ENOMEM;
}

void xd_up_rd_fini(struct xd_up_rd *r)
{
	free(r->buf);
	r->buf = NULL;
}

/* One recv() into @p that never waits: bytes, 0 at end of file, or -errno. */
static ssize_t xd_up_rd_once(struct xd_up_rd *r, void *p, size_t len)
{
	ssize_t n = recv(r->fd, p, len, MSG_DONTWAIT);

	r->calls++;
	if (n < 0)
		return -errno;
	if (n > 0) {
		r->last = xr_now_ns();
		r->bytes += (uint64_t)n;
	}
	return n;
}

/* Bytes within @r->spin_ns, into the empty buffer: 1, or 0 if none came. */
static int xd_up_rd_spin(struct xd_up_rd *r)
{
	uint64_t now = xr_now_ns(), until = now + r->spin_ns;
	ssize_t n;

	if (!r->spin_ns || now - r->last > XD_UP_SPIN_RECENT_NS)
		return 0;
	do {
		n = xd_up_rd_once(r, r->buf, r->cap);
		if (n > 0) {
			r->pos = 0;
			r->end = (size_t)n;
			return 1;
		}
		/* end of file or an error: the read says which */
		if (n != -EAGAIN && n != -EINTR)
			return 1;
		xr_cpu_relax();
	} while (xr_now_ns() < until);
	return 0;
}

int xd_up_rd_wait(struct xd_up_rd *r, int timeout_ms)
{
	if (xd_up_rd_buffered(r))
		return 1;
	if (timeout_ms && xd_up_rd_spin(r))
		return 1;
	r->calls++;
	return xd_up_poll(r->fd, POLLIN, timeout_ms);
}

int xd_up_rd_more(struct xd_up_rd *r)
{
	int n = 0;

	if (xd_up_rd_buffered(r))
		return 1;
	r->calls++;
	return !ioctl(r->fd, FIONREAD, &n) && n > 0;
}

/* One recv() into @p, waiting up to @stall_ms: bytes, or -errno/-EPIPE. */
static ssize_t xd_up_rd_recv(struct xd_up_rd *r, void *p, size_t len,
			     int stall_ms)
{
	ssize_t n;
	int w;

	for (;;) {
		n = xd_up_rd_once(r, p, len);
		if (n > 0)
			return n;
		if (!n)
			return -EPIPE;
		if (n != -EAGAIN && n != -EINTR)
			return n;
		r->calls++;
		w = xd_up_poll(r->fd, POLLIN, stall_ms);
		if (w < 0)
			return w;
		if (!w)
			return -ETIMEDOUT;
	}
}

int xd_up_rd_read(struct xd_up_rd *r, void *dst, size_t len, int stall_ms)
{
	uint8_t *d = dst;
	int any = 0;
	ssize_t n;

	while (len) {
		size_t have = xd_up_rd_buffered(r);

		if (have) {
			if (have > len)
				have = len;
			if (d) {
				memcpy(d, r->buf + r->pos, have);
				d += have;
			}
			r->pos += have;
			len -= have;
			any = 1;
			continue;
		}
		r->pos = r->end = 0;
		/* A large rest goes straight where it belongs. */
		if (d && len >= r->cap / 2) {
			n = xd_up_rd_recv(r, d, len, stall_ms);
			if (n > 0) {
				d += n;
				len -= (size_t)n;
			}
		} else {
			n = xd_up_rd_recv(r, r->buf, r->cap, stall_ms);
			if (n > 0)
				r->end = (size_t)n;
		}
		if (n == -EPIPE)
			return any ? -EPROTO : -EPIPE;
		if (n < 0)
			return (int)n;
		any = 1;
	}
	return 0;
}

/* ---- frames out ---- */

int xd_up_wr_init(struct xd_up_wr *w, int fd, size_t cap,
		  unsigned int maxiov, int stall_ms)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->last = xr_now_ns();
	w->cap = cap;
	w->stall_ms = stall_ms;
	w->maxiov = maxiov > IOV_MAX ? IOV_MAX : maxiov;
	w->buf = malloc(cap);
	w->iov = calloc(w->maxiov, sizeof(*w->iov));
	if (!w->buf || !w->iov) {
		xd_up_wr_fini(w);
		return -ENOMEM;
	}
	return 0;
}

void xd_up_wr_fini(struct xd_up_wr *w)
{
	free(w->buf);
	free(w->iov);
	w->buf = NULL;
	w->iov = NULL;
}

int xd_up_wr_ext(struct xd_up_wr *w, const uint8_t *arena,
		 const struct xd_up_span *s)
{
	struct xcuda_up_ext e = { s->off, s->width, s->pitch, s->rows };
	uint64_t k;
	int ret;

	ret = xd_up_wr_add(w, &e, sizeof(e));
	for (k = 0; k < s->rows && !ret; k++)
		ret = xd_up_wr_add(w, arena + s->off + k * s->pitch, s->width);
	return ret;
}

int xd_up_wr_flush(struct xd_up_wr *w)
{
	struct iovec *iov = w->iov;
	unsigned int n = w->niov;
	struct msghdr m;
	ssize_t r;
	int ret = 0, p;

	while (n) {
		memset(&m, 0, sizeof(m));
		m.msg_iov = iov;
		m.msg_iovlen = n;
		r = sendmsg(w->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		w->calls++;
		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR) {
				ret = -errno;
				break;
			}
			w->calls++;
			p = xd_up_poll(w->fd, POLLOUT, w->stall_ms);
			if (p <= 0) {
				ret = p ? p : -ETIMEDOUT;
				break;
			}
			continue;
		}
		if (r > 0) {
			__atomic_store_n(&w->last, xr_now_ns(),
					 __ATOMIC_RELAXED);
			w->bytes += (uint64_t)r;
		}
		/* Past what went: whole pieces, then part of one. */
		while (n && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (char *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	w->niov = 0;
	w->used = 0;
	return ret;
}

int xd_up_wr_add(struct xd_up_wr *w, const void *p, size_t len)
{
	int ret;

	if (!len)
		return 0;
	if (len <= XD_UP_WR_COPY) {
		struct iovec *last = w->niov ? &w->iov[w->niov - 1] : NULL;

		if (w->used + len > w->cap ||
		    (w->niov == w->maxiov &&
		     (!last || (uint8_t *)last->iov_base + last->iov_len !=
		      w->buf + w->used))) {
			ret = xd_up_wr_flush(w);
			if (ret)
				return ret;
			last = NULL;
		}
		memcpy(w->buf + w->used, p, len);
		/* Right after the last copied piece: one piece still. */
		if (last && (uint8_t *)last->iov_base + last->iov_len ==
			    w->buf + w->used) {
			last->iov_len += len;
		} else {
			w->iov[w->niov].iov_base = w->buf + w->used;
			w->iov[w->niov++].iov_len = len;
		}
		w->used += len;
		return 0;
	}
	if (w->niov == w->maxiov) {
		ret = xd_up_wr_flush(w);
		if (ret)
			return ret;
	}
	w->iov[w->niov].iov_base = (void *)p;
	w->iov[w->niov++].iov_len = len;
	return 0;
}

void xd_up_counters(const struct xd_up_rd *r, const struct xd_up_wr *w,
		    char *buf, size_t len)
{
	snprintf(buf, len, "link: %llu bytes in over %llu syscalls, %llu "
		 "bytes out over %llu syscalls",
		 (unsigned long long)r->bytes, (unsigned long long)r->calls,
		 (unsigned long long)w->bytes, (unsigned long long)w->calls);
}
