/* SPDX-License-Identifier: MIT */
/*
 * What both ends of the upstream link (xcuda/upstream.h) share: the key
 * and its MACs, addresses, sockets, and reading and writing frames with
 * few system calls (small frames gather in a buffer, large extents go
 * straight between the socket and the arena).
 */
#ifndef XCUDAD_UP_LINK_H
#define XCUDAD_UP_LINK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "xcuda/upstream.h"
#include "up_spans.h"

/* How long each step of the handshake may take, at most, in all. */
#define XD_UP_HANDSHAKE_MS	10000
/* How long a frame that has begun may stall, reading or writing. */
#define XD_UP_STALL_MS		30000
/*
 * The server says it is alive this often at most while a request runs
 * long (the relay asks for a third of its XCUDA_UPSTREAM_TIMEOUT_S), and
 * not more often than the minimum.
 */
#define XD_UP_HEARTBEAT_MS	5000
#define XD_UP_HEARTBEAT_MIN_MS	100
/*
 * Waiting for the next frame, a reader that had bytes lately first asks
 * the socket again for XCUDA_LINK_SPIN_US microseconds: on a fast link
 * the answer comes within microseconds, and each sleep costs a wake-up
 * on both ends of the round trip.  It takes a core while it spins, so by
 * default only where XD_UP_SPIN_MIN_CPUS are online (docs/performance.md,
 * "Upstream link").
 */
#define XD_UP_SPIN_US		50
#define XD_UP_SPIN_MIN_CPUS	4
#define XD_UP_SPIN_ENV		"XCUDA_LINK_SPIN_US"
#define XD_UP_SPIN_RECENT_NS	10000000ull

struct xd_up_key {
	size_t len;
	uint8_t bytes[XCUDA_UP_KEY_MAX];
};

/*
 * Reads the key at @path once: a regular file owned by this process's
 * user, with no permission for the group or others, of XCUDA_UP_KEY_MIN
 * to XCUDA_UP_KEY_MAX bytes.  0, or -1 with the reason in @why.
 */
int xd_up_key_load(const char *path, struct xd_up_key *k, char *why,
		   size_t whylen);
void xd_up_key_wipe(struct xd_up_key *k);

#define XD_UP_LABEL_SERVER	"xcuda-up server"
#define XD_UP_LABEL_RELAY	"xcuda-up relay"
#define XD_UP_LABEL_DOMAIN	"xcuda-up domain"

/* HMAC-SHA256(key, @label | @a | @b), the nonces: 0, or -1. */
int xd_up_mac(const struct xd_up_key *k, const char *label,
	      const uint8_t a[XCUDA_UP_NONCE], const uint8_t b[XCUDA_UP_NONCE],
	      uint8_t out[XCUDA_UP_MAC]);
/* Whether @mac is that MAC, in constant time. */
int xd_up_mac_ok(const struct xd_up_key *k, const char *label,
		 const uint8_t a[XCUDA_UP_NONCE],
		 const uint8_t b[XCUDA_UP_NONCE],
		 const uint8_t mac[XCUDA_UP_MAC]);
/*
 * The IPC domain (ipc_table.h) of a relayed session whose relay names
 * @domain of the relay @origin: XD_DOMAIN_RELAYED and 63 bits of
 * HMAC-SHA256(key, "xcuda-up domain" | origin | domain), so that equal
 * pairs meet and no other; 0 (nothing shared) for @domain 0.
 */
uint64_t xd_up_domain(const struct xd_up_key *k,
		      const uint8_t origin[XCUDA_UP_ORIGIN], uint64_t domain);
/* A fresh nonce from getrandom(): 0, or a negative errno. */
int xd_up_nonce(uint8_t out[XCUDA_UP_NONCE]);

/*
 * HOST:PORT, [V6ADDR]:PORT, or :PORT / *:PORT (any address, to listen
 * on) into @host (empty: any) and @port.  0, or -1 when malformed.
 */
int xd_up_addr_split(const char *s, char *host, size_t hostlen, char *port,
		     size_t portlen);
/*
 * A listening TCP socket on @hostport (SO_REUSEADDR, non-blocking, close
 * on exec): its descriptor, or -1 with the reason in @why.
 */
int xd_up_listen(const char *hostport, char *why, size_t whylen);
/*
 * Connects to @hostport within @timeout_ms, trying each address: a
 * blocking socket set up for the link, or a negative errno (-EINVAL: a
 * malformed address, -ENOENT: it names no host).
 */
int xd_up_connect(const char *hostport, int timeout_ms);
/* TCP_NODELAY, keep-alive probes: the link's options on a socket. */
void xd_up_sock_setup(int fd);
/* "ADDR:PORT" of the peer ("[ADDR]:PORT" for IPv6), for the log. */
void xd_up_peer_name(int fd, char *buf, size_t len);

/* The clock's @ms from now (xr_deadline()), and poll()'s wait for it. */
uint64_t xd_up_deadline(int ms);

/*
 * Exactly @len bytes from @fd before @deadline: 0, -ETIMEDOUT, -EPIPE
 * (end of file), or another negative errno.
 */
int xd_up_read_all(int fd, void *buf, size_t len, uint64_t deadline);
/* All of @len bytes to @fd: 0 or a negative errno. */
int xd_up_write_all(int fd, const void *buf, size_t len);

/* ---- frames in ---- */

struct xd_up_rd {
	int fd;
	uint8_t *buf;
	size_t cap, pos, end;
	uint64_t last;		/* the clock when bytes last came */
	uint64_t spin_ns;	/* XD_UP_SPIN_US */
	uint64_t bytes, calls;	/* received, and the syscalls it took */
};

int xd_up_rd_init(struct xd_up_rd *r, int fd, size_t cap);
void xd_up_rd_fini(struct xd_up_rd *r);

static inline size_t xd_up_rd_buffered(const struct xd_up_rd *r)
{
	return r->end - r->pos;
}

/*
 * Waits up to @timeout_ms (-1: forever) for a byte to read, spinning
 * first if bytes came lately: 1, 0 on timeout, or a negative errno.  End
 * of file and errors count as something to read (the read says which).
 */
int xd_up_rd_wait(struct xd_up_rd *r, int timeout_ms);
/*
 * Exactly @len bytes into @dst (NULL: dropped): what the buffer holds,
 * then, for a large rest, straight from the socket.  Each wait for more
 * lasts @stall_ms at most.  0, -EPIPE (end of file before the first
 * byte), -EPROTO (end of file within), -ETIMEDOUT, or a negative errno.
 */
int xd_up_rd_read(struct xd_up_rd *r, void *dst, size_t len, int stall_ms);
/* Whether a byte can be read now without waiting. */
int xd_up_rd_more(struct xd_up_rd *r);

/* The next @len bytes if the buffer holds them already, else NULL. */
static inline const void *xd_up_rd_peek(const struct xd_up_rd *r,
					size_t len)
{
	return xd_up_rd_buffered(r) >= len ? r->buf + r->pos : NULL;
}

/* ---- frames out ---- */

/*
 * Pieces to send in one sendmsg(): small ones copied into the buffer,
 * large ones (arena extents) referred to where they are, so they must
 * not change before the flush.
 */
struct xd_up_wr {
	int fd;
	uint8_t *buf;
	size_t cap, used;
	struct iovec *iov;
	unsigned int niov, maxiov;
	int stall_ms;
	/*
	 * The clock when bytes last went: the peer is reading.  Atomic:
	 * another thread may look (the relay's receiver).
	 */
	uint64_t last;
	uint64_t bytes, calls;	/* sent, and the syscalls it took */
};

int xd_up_wr_init(struct xd_up_wr *w, int fd, size_t cap,
		  unsigned int maxiov, int stall_ms);
void xd_up_wr_fini(struct xd_up_wr *w);
/* Adds @len bytes at @p (flushing first when full): 0 or a negative errno. */
int xd_up_wr_add(struct xd_up_wr *w, const void *p, size_t len);
/*
 * An extent of a frame: struct xcuda_up_ext for @s, then its rows, read
 * from @arena.  0 or a negative errno.
 */
int xd_up_wr_ext(struct xd_up_wr *w, const uint8_t *arena,
		 const struct xd_up_span *s);
/* Sends all that was added: 0 or a negative errno. */
int xd_up_wr_flush(struct xd_up_wr *w);

/*
 * The link's counters as one line in @buf: bytes each way and the
 * syscalls (recv, sendmsg, poll, ioctl) they took.
 */
void xd_up_counters(const struct xd_up_rd *r, const struct xd_up_wr *w,
		    char *buf, size_t len);

static inline int xd_up_wr_pending(const struct xd_up_wr *w)
{
	return w->niov != 0;
}

#endif /* XCUDAD_UP_LINK_H */
