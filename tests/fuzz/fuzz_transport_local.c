// SPDX-License-Identifier: MIT
/*
 * The local transport's handshake: xd_local_accept()
 * (dom0-daemon/transport_local.c) reading a guest's hello, and the
 * descriptors that came with it, from a real unix socket, checking it
 * against the worker's limits and answering with its welcome.
 *
 * Input: a mode byte (bits 0-1: what the hello carries: nothing, a unix
 * SOCK_SEQPACKET socket as the descriptor channel, a stream socket, or a
 * channel and an eventfd; bit 2: the worker has limits; bit 3: the hello
 * comes in two writes), the limits (max_arena u64, max_ring_order u8),
 * where the hello splits (u8), then the hello's bytes.  The guest then
 * shuts its side for writing, so that a short hello ends at once.
 *
 * What the worker must do: answer a hello it took with one welcome and
 * its three descriptors, within its limits and the guest's wishes; one it
 * refused with a negative status and no descriptor; and leave no
 * descriptor open either way.
 */
#include <dirent.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "common/fdpass.h"
#include "dom0-daemon/transport_local.h"
#include "xcuda/local.h"
#include "xcuda/proto.h"
#include "fuzz.h"

#define HELLO_MAX	256
#define SESSION		42

/*
 * Descriptors of the kinds the handshake makes or takes (sockets,
 * eventfds, memfds) still open: none between two inputs.  libFuzzer's
 * own (the symbolizer's pipes) are of none of these kinds.
 */
static int open_session_fds(void)
{
	char path[64], link[128];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;
	ssize_t r;

	FZ_CHECK(dir);
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		r = readlink(path, link, sizeof(link) - 1);
		if (r <= 0)
			continue;
		link[r] = 0;
		if (!strncmp(link, "socket:", 7) ||
		    !strcmp(link, "anon_inode:[eventfd]") ||
		    !strncmp(link, "/memfd:", 7))
			n++;
	}
	closedir(dir);
	return n;
}

/* Reads the welcome, if any, with its descriptors (closed here). */
static int read_welcome(int sock, struct xcuda_local_welcome *w, int *nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 8)];
	} ctl;
	struct iovec iov = { .iov_base = w, .iov_len = sizeof(*w) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	int fds[8], n = 0, more;
	ssize_t r;

	memset(w, 0, sizeof(*w));
	r = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (r <= 0)
		return 0;
	more = xcuda_take_fds(&mh, fds, &n, 8);
	FZ_CHECK(!more);
	*nfds = n;
	while (n-- > 0)
		close(fds[n]);
	FZ_CHECK(r == (ssize_t)sizeof(*w));
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint8_t mode = fz_u8(&in);
	struct xd_local_limits lim = { .max_arena = fz_u64(&in),
				       .max_ring_order = fz_u8(&in) };
	size_t split = fz_u8(&in), len = in.n < HELLO_MAX ? in.n : HELLO_MAX;
	struct xcuda_local_hello asked;
	struct xcuda_local_welcome w;
	int sv[2], att[2] = { -1, -1 }, pass[2], npass = 0, nfds = 0, ret;
	uint64_t max_arena = XCUDA_LOCAL_ARENA_MAX;
	unsigned int max_order = XCUDA_MAX_RING_ORDER;
	struct xd_chan c;

	FZ_CHECK(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	switch (mode & 3) {
	case 1:
	case 3:
		FZ_CHECK(!socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
				     att));
		pass[npass++] = att[1];
		if ((mode & 3) == 3)
			pass[npass++] = eventfd(0, EFD_CLOEXEC);
		break;
	case 2:
		FZ_CHECK(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
				     att));
		pass[npass++] = att[1];
		break;
	}
	if (!(mode & 8) || split > len)
		split = len;
	/* The descriptors ride with the first bytes: never with none. */
	if (split) {
		FZ_CHECK(xcuda_send_fds(sv[0], in.p, split, pass, npass, 0) ==
			 (ssize_t)split);
	}
	if (len > split) {
		FZ_CHECK(xcuda_send_fds(sv[0], in.p + split, len - split,
					split ? NULL : pass,
					split ? 0 : npass, 0) ==
			 (ssize_t)(len - split));
	}
	shutdown(sv[0], SHUT_WR);
	/* Ours are in flight (or not sent): the guest keeps no copy. */
	while (npass-- > 0)
		close(pass[npass]);
	fz_take(&in, &asked, sizeof(asked));

	ret = xd_local_accept(sv[1], &c, mode & 4 ? &lim : NULL, SESSION);
	if (mode & 4) {
		if (lim.max_arena && lim.max_arena < max_arena)
			max_arena = lim.max_arena;
		if (lim.max_ring_order < max_order)
			max_order = lim.max_ring_order;
	}
	if (!ret) {
		FZ_CHECK(len >= sizeof(asked));
		FZ_CHECK(read_welcome(sv[0], &w, &nfds));
		FZ_CHECK(w.status == 0 && nfds == 3);
		FZ_CHECK(w.magic == XCUDA_LOCAL_MAGIC &&
			 w.version == XCUDA_LOCAL_VERSION);
		FZ_CHECK(w.session == SESSION && c.session == SESSION);
		FZ_CHECK(w.ring_order <= max_order &&
			 w.ring_order <= asked.ring_order);
		FZ_CHECK(w.arena_size && w.arena_size <= max_arena &&
			 w.arena_size <= asked.arena_size &&
			 !(w.arena_size % XCUDA_PAGE_SIZE));
		FZ_CHECK(c.arena && c.arena_size == w.arena_size);
		/* The arena is there, all of it: its first and last bytes. */
		c.arena[0] = 1;
		c.arena[c.arena_size - 1] = 1;
		c.ops->close(&c);	/* closes sv[1] */
	} else {
		FZ_CHECK(ret < 0);
		if (read_welcome(sv[0], &w, &nfds)) {
			FZ_CHECK(w.status == ret && nfds == 0);
			FZ_CHECK(w.magic == XCUDA_LOCAL_MAGIC);
		} else {
			/* No answer: only when there was no whole hello. */
			FZ_CHECK(len < sizeof(asked));
		}
		close(sv[1]);
	}
	close(sv[0]);
	if (att[0] >= 0)
		close(att[0]);
	FZ_CHECK(open_session_fds() == 0);
	return 0;
}
