// SPDX-License-Identifier: MIT
/*
 * The upstream link (xcuda/upstream.h): a GPU server (xcudad --listen
 * 127.0.0.1:PORT --key K) and a relay (xcudad --upstream 127.0.0.1:PORT
 * --key K), both the built daemon (env XCUDAD), on sockets in a fresh
 * temporary directory, and guests on the relay's socket through the
 * guest library's `local` transport:
 *  - the key file's checks, and the options that need it;
 *  - ECHO of 1 B to 64 MiB through the chain, checksummed and filled
 *    back, and xcudactl's echo;
 *  - OPEN, a CUDA call and xcudactl info answer through the chain as
 *    they do directly;
 *  - the spans both ends list for a request (up_spans.h), and the
 *    server's `tcp` channel in this process over a socket pair: bytes in
 *    and out, a posted copy's bytes held until a synchronous answer and
 *    kept from what a later request brings, a failed copy's dropped;
 *  - handshakes the server refuses (bad magic, a short hello, a wrong
 *    MAC, which it logs with the peer), hostile frames after a correct
 *    handshake (bad magic, in_len that is not the extents', an extent
 *    past the arena, truncated frames): each ends that session only;
 *  - a relay with another key and a server without the key: refused,
 *    the guest's session fails at once with a clear error;
 *  - a server worker stopped (the relay's timeout), killed, and the
 *    whole server killed: the guest's next call fails promptly, no hang;
 *  - graph copies (up_graph.h): a copy side's spans and the relay's
 *    table; the channel's GEXT frame before an answer, a PUT frame's
 *    bytes landing except where a posted copy's are pending; hostile PUT
 *    frames to the server and hostile GEXT frames to a relay (from a
 *    fake server with the key) ending only that session; the relay's
 *    PUT before a GRAPH_LAUNCH of an exec it was told about, only then;
 *    on a GPU, a graph of 1D and 2D copies to and from host memory
 *    through the relay, launched synchronously and posted.
 *  - host functions: the `tcp` channel's records (xrec) and completions
 *    (xdon), read by the worker's next() or by a waiting trampoline that
 *    queues the requests it meets; hostile completions ending only their
 *    session; the relay writing a record into the guest's slot area and
 *    bumping its wake word, sending the guest's completion back, and
 *    ending the session on a malformed record;
 *  - end to end without a GPU: the guest library's runner behind the
 *    real relay, and this process as the GPU server (the `tcp` channel,
 *    the worker's session and hostfn.c, CUDA played by a thread): the
 *    server's "worker" blocked in a stream synchronisation while the
 *    trampoline reads the guest's completion itself, and the bytes the
 *    function wrote reaching the copy queued behind it.
 */
#include <arpa/inet.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>

#include <linux/futex.h>
#include <sys/syscall.h>

#include "xcuda/graph.h"
#include "xcuda/hash.h"
#include "xcuda/hostfn.h"
#include "xcuda/upstream.h"
#include "dom0-daemon/hostfn.h"
#include "dom0-daemon/ipc_table.h"
#include "dom0-daemon/log.h"
#include "dom0-daemon/transport_tcp.h"
#include "dom0-daemon/up_graph.h"
#include "dom0-daemon/worker.h"
#include "guest-lib/hostfn.h"
#include "dom0-daemon/up_link.h"
#include "dom0-daemon/up_mapped.h"
#include "common/byte_runs.h"
#include "dom0-daemon/up_spans.h"
#include "daemon_harness.h"

#define GARENA		(128ull << 20)
/* A lost session is reported by then. */
#define FAIL_MS		10000

struct dmn {
	const char *name;
	pid_t pid;
	char sock[400];
	char log[400];
};

static struct dmn srv = { "server", -1, "", "" };
static struct dmn rel = { "relay", -1, "", "" };
static struct dmn rel2 = { "relay2", -1, "", "" };
static struct dmn rel3 = { "relay3", -1, "", "" };
static struct dmn rel4 = { "relay4", -1, "", "" };
static struct dmn rel5 = { "relay5", -1, "", "" };
static struct dmn *dmns[] = { &srv, &rel, &rel2, &rel3, &rel4, &rel5 };
static char keyp[400], key2p[400], badkeyp[400], shortkeyp[400];
static char ctl[512];
static struct xd_up_key key;
static int port, fport;

/* ---- daemons ---- */

static int dlog_count(const struct dmn *d, const char *needle)
{
	char *log = check_slurp(d->log, NULL), *p;
	int n = 0;

	for (p = log; p && (p = strstr(p, needle)); p++)
		n++;
	free(log);
	return n;
}

static int dlog_wait(const struct dmn *d, const char *needle, int count,
		     long ms)
{
	long end = now_ms() + ms;

	do {
		if (dlog_count(d, needle) >= count)
			return 1;
		nap_ms(20);
	} while (now_ms() < end);
	return 0;
}

/* The pid of the worker the daemon started last, or -1. */
static pid_t last_worker(const struct dmn *d)
{
	char *log = check_slurp(d->log, NULL), *p, *last = NULL;
	pid_t pid = -1;

	for (p = log; p && (p = strstr(p, ": worker ")); p++)
		if (!strncmp(strchr(p + 9, ' ') ? strchr(p + 9, ' ') : p,
			     " started", 8))
			last = p;
	if (last)
		pid = (pid_t)atoi(last + 9);
	free(log);
	return pid;
}

/* Starts @d with @extra (NULL-ended) and, if @timeout, the relay timeout. */
static int dmn_start(struct dmn *d, const char *const *extra,
		     const char *timeout)
{
	const char *argv[24];
	int before = dlog_count(d, "listening on "), n = 0, fd, status;
	long end = now_ms() + TIMEOUT_MS;
	struct stat st;
	pid_t pid;

	argv[n++] = xcudad;
	argv[n++] = "--socket";
	argv[n++] = d->sock;
	argv[n++] = "--no-xen";
	argv[n++] = "-v";
	while (*extra && n < 23)
		argv[n++] = *extra++;
	argv[n] = NULL;
	unlink(d->sock);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 2);
			dup2(fd, 1);
		}
		if (timeout)
			setenv("XCUDA_UPSTREAM_TIMEOUT_S", timeout, 1);
		execv(xcudad, (char *const *)argv);
		_exit(127);
	}
	d->pid = pid;
	while (now_ms() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			d->pid = -1;
			return -1;
		}
		if (!stat(d->sock, &st) && dlog_count(d, "listening on ") >
		    before)
			return 0;
		nap_ms(20);
	}
	return -1;
}

static int dmn_stop(struct dmn *d, int sig)
{
	long end = now_ms() + TIMEOUT_MS;
	int status;

	if (d->pid < 0)
		return -1;
	kill(d->pid, sig);
	while (now_ms() < end) {
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			d->pid = -1;
			return status;
		}
		nap_ms(20);
	}
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &status, 0);
	d->pid = -1;
	return -1;
}

static int dmn_alive(struct dmn *d)
{
	int status;

	return d->pid > 0 && waitpid(d->pid, &status, WNOHANG) == 0;
}

/* Runs xcudad with @args and waits: its exit status, or -1. */
static int xcudad_exit(const char *const *args, const char *logp)
{
	const char *argv[16];
	int n = 0, status, fd;
	long end = now_ms() + TIMEOUT_MS;
	pid_t pid;

	argv[n++] = xcudad;
	while (*args && n < 15)
		argv[n++] = *args++;
	argv[n] = NULL;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 2);
			dup2(fd, 1);
		}
		execv(xcudad, (char *const *)argv);
		_exit(127);
	}
	while (now_ms() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		nap_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static void teardown(void)
{
	char path[512];
	unsigned int i;

	for (i = 0; i < sizeof(dmns) / sizeof(dmns[0]); i++) {
		if (check_failed) {
			char *log = check_slurp(dmns[i]->log, NULL);

			printf("--- %s log ---\n%s--- end ---\n", dmns[i]->name,
			       log ? log : "(none)\n");
			free(log);
		}
		if (dmns[i]->pid > 0)
			dmn_stop(dmns[i], SIGKILL);
	}
	if (getenv("XCUDAD_TEST_KEEP")) {
		printf("kept %s\n", dir);
		return;
	}
	if (check_failed)
		return;
	for (i = 0; i < sizeof(dmns) / sizeof(dmns[0]); i++) {
		unlink(dmns[i]->log);
		unlink(dmns[i]->sock);
	}
	unlink(keyp);
	unlink(key2p);
	unlink(badkeyp);
	unlink(shortkeyp);
	snprintf(path, sizeof(path), "%s/opt.log", dir);
	unlink(path);
	rmdir(dir);
}

/* A free TCP port on 127.0.0.1 (free now, that is). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), p = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		p = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return p;
}

/*
 * A server played by this test: a socket listening on a free port of
 * 127.0.0.1 (REQUIREd as @server), and @d started as a relay to it with
 * the test's key (REQUIREd as @relay).  The socket, its port in *@lport.
 */
static int relay_to_here(struct dmn *d, const char *server,
			 const char *relay, int *lport)
{
	const char *args[] = { "--upstream", NULL, "--key", keyp, NULL };
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char addr[64];
	int fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	REQUIRE_MSG(fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
		    !listen(fd, 4) &&
		    !getsockname(fd, (struct sockaddr *)&a, &len),
		    server, "%s", strerror(errno));
	*lport = ntohs(a.sin_port);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", *lport);
	args[1] = addr;
	REQUIRE_MSG(!dmn_start(d, args, NULL), relay, "did not start");
	return fd;
}

static int write_key(const char *path, size_t len, mode_t mode, int seed)
{
	uint8_t buf[256];
	size_t i;
	int fd;

	for (i = 0; i < len && i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + seed);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, buf, len) != (ssize_t)len || fchmod(fd, mode)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* ---- guests ---- */

static int g_open(struct xc_transport *t, const struct dmn *d)
{
	struct xc_transport_opts o = { 0 };

	memset(t, 0, sizeof(*t));
	o.path = d->sock;
	o.arena_size = GARENA;
	return xc_local_open(t, &o);
}

static int do_open(struct xc_transport *t, struct xcuda_open_res *r)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, XCUDA_FEATURES_ALL,
				     0, 0 };
	struct xcuda_request req;
	struct xcuda_response rsp;
	int err;

	a.arena_size = t->arena_size;
	a.arena_addr = (uintptr_t)t->arena;
	req_init(t, &req, XCUDA_OP_OPEN, &a, sizeof(a));
	err = rpc(t, &req, &rsp);
	if (err)
		return -1000 + err;
	memcpy(r, rsp.out, sizeof(*r));
	return rsp.status;
}

/* ---- the link's own frames, as a relay (or a hostile one) sends ---- */

static int tcp_connect(int p)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_port = htons((uint16_t)p);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int rd(int fd, void *buf, size_t len)
{
	return xd_up_read_all(fd, buf, len, xd_up_deadline(5000));
}

/* Whether the peer closes within 5 s (what it sends first is dropped). */
static int closes(int fd)
{
	long end = now_ms() + 5000;
	char buf[4096];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t r;

	while (now_ms() < end) {
		if (poll(&p, 1, 200) <= 0)
			continue;
		r = recv(fd, buf, sizeof(buf), 0);
		if (r <= 0)
			return 1;
	}
	return 0;
}

/*
 * The relay's half of the handshake on @fd: 0 with the welcome in *@w,
 * or a negative errno; @bad_mac sends a wrong MAC.
 */
static int handshake_as(int fd, uint64_t arena, int bad_mac,
			uint32_t alive_ms, const uint8_t *origin,
			uint64_t domain, struct xcuda_up_welcome *w)
{
	struct xcuda_up_hello h = { XCUDA_UP_MAGIC, XCUDA_UP_VERSION, { 0 } };
	struct xcuda_up_chal ch;
	struct xcuda_up_open o;
	int ret;

	memset(&o, 0, sizeof(o));
	xd_up_nonce(h.nonce);
	ret = xd_up_write_all(fd, &h, sizeof(h));
	if (!ret)
		ret = rd(fd, &ch, sizeof(ch));
	if (ret)
		return ret;
	if (!xd_up_mac_ok(&key, XD_UP_LABEL_SERVER, h.nonce, ch.nonce, ch.mac))
		return -EACCES;
	xd_up_mac(&key, XD_UP_LABEL_RELAY, ch.nonce, h.nonce, o.mac);
	if (bad_mac)
		o.mac[7] ^= 1;
	o.arena_size = arena;
	o.alive_ms = alive_ms;
	if (origin)
		memcpy(o.origin, origin, sizeof(o.origin));
	o.domain = domain;
	ret = xd_up_write_all(fd, &o, sizeof(o));
	return ret ? ret : rd(fd, w, sizeof(*w));
}

static int handshake_alive(int fd, uint64_t arena, int bad_mac,
			   uint32_t alive_ms, struct xcuda_up_welcome *w)
{
	return handshake_as(fd, arena, bad_mac, alive_ms, NULL, 0, w);
}

static int handshake(int fd, uint64_t arena, int bad_mac,
		     struct xcuda_up_welcome *w)
{
	return handshake_alive(fd, arena, bad_mac, 0, w);
}

static int send_frame(int fd, const struct xcuda_request *req,
		      uint32_t in_len, const void *in, size_t inbytes)
{
	struct xcuda_up_req f = { XCUDA_UP_REQ_MAGIC, in_len, *req };
	int ret = xd_up_write_all(fd, &f, sizeof(f));

	return ret || !inbytes ? ret : xd_up_write_all(fd, in, inbytes);
}

/*
 * One frame from the server: its header in *@f, the extents in @e (at
 * most @max), their bytes one after another in @buf (@cap).
 */
static int read_frame(int fd, struct xcuda_up_rsp *f, struct xcuda_up_ext *e,
		      unsigned int max, uint8_t *buf, size_t cap)
{
	size_t used = 0, n;
	unsigned int i;
	int ret = rd(fd, f, sizeof(*f));

	for (i = 0; !ret && i < f->nr_out; i++) {
		ret = i < max ? rd(fd, &e[i], sizeof(e[i])) : -E2BIG;
		n = ret ? 0 : e[i].width * e[i].rows;
		if (!ret && n > cap - used)
			ret = -E2BIG;
		if (!ret)
			ret = rd(fd, buf + used, n);
		used += n;
	}
	return ret;
}

/* A frame that answers (heartbeats skipped). */
static int read_answer(int fd, struct xcuda_up_rsp *f, struct xcuda_up_ext *e,
		       unsigned int max, uint8_t *buf, size_t cap)
{
	int ret;

	do
		ret = read_frame(fd, f, e, max, buf, cap);
	while (!ret && f->magic == XCUDA_UP_DATA_MAGIC && !f->nr_out);
	return ret;
}

static void raw_req(struct xcuda_request *req, uint32_t session, uint16_t op,
		    const void *args, uint16_t len)
{
	memset(req, 0, sizeof(*req));
	req->hdr.op = op;
	req->hdr.len = len;
	req->hdr.session = session;
	req->hdr.id = next_id++;
	if (len)
		memcpy(req->args, args, len);
}

/* A raw session: handshake, then OPEN; the socket, or -1. */
static int raw_session(uint64_t arena, struct xcuda_up_welcome *w)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, XCUDA_FEATURES_ALL,
				     0, 0 };
	struct xcuda_request req;
	struct xcuda_up_rsp f;
	struct xcuda_up_ext e;
	uint8_t b[64];
	int fd = tcp_connect(port);

	if (fd < 0 || handshake(fd, arena, 0, w) || w->status)
		goto fail;
	a.arena_size = w->arena_size;
	raw_req(&req, w->session, XCUDA_OP_OPEN, &a, sizeof(a));
	if (send_frame(fd, &req, 0, NULL, 0) ||
	    read_answer(fd, &f, &e, 1, b, sizeof(b)) || f.rsp.status ||
	    f.rsp.id != req.hdr.id)
		goto fail;
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* ECHO of @len bytes at @off on a raw session: 0 when it comes back. */
static int raw_echo(int fd, uint32_t session, uint32_t off, uint32_t len)
{
	struct xcuda_echo_args a = { 7, 1, 0x77, 0 };
	static uint8_t in[8192], out[8192];
	struct xcuda_request req;
	struct xcuda_up_rsp f;
	struct xcuda_up_ext e;
	struct xcuda_echo_res r;
	uint32_t i;

	if (len > sizeof(in))
		return -1;
	for (i = 0; i < len; i++)
		in[i] = (uint8_t)(i ^ 0x3c);
	raw_req(&req, session, XCUDA_OP_ECHO, &a, sizeof(a));
	req.hdr.data_off = off;
	req.hdr.data_len = len;
	if (send_frame(fd, &req, len, in, len) ||
	    read_answer(fd, &f, &e, 1, out, sizeof(out)))
		return -1;
	memcpy(&r, f.rsp.out, sizeof(r));
	if (f.magic != XCUDA_UP_RSP_MAGIC || f.rsp.status || f.nr_out != 1 ||
	    e.off != off || e.width * e.rows != len ||
	    r.checksum != xcuda_fnv1a64(7, in, len))
		return -1;
	for (i = 0; i < len; i++)
		if (out[i] != 0x77)
			return -1;
	return 0;
}

/* ---- cases ---- */

static void check_key_checks(void)
{
	char logp[512];
	const char *no_key[] = { "--listen", "127.0.0.1:1", NULL };
	/* Alone it serves the upstreams xl configurations name. */
	const char *key_alone[] = { "--socket", rel3.sock, "--no-xen",
				    "--key", badkeyp, NULL };
	const char *both[] = { "--listen", "127.0.0.1:1", "--upstream",
			       "127.0.0.1:1", "--key", keyp, NULL };
	const char *bad_mode[] = { "--socket", rel3.sock, "--no-xen",
				   "--upstream", "127.0.0.1:1", "--key",
				   badkeyp, NULL };
	const char *too_short[] = { "--socket", rel3.sock, "--no-xen",
				    "--upstream", "127.0.0.1:1", "--key",
				    shortkeyp, NULL };
	const char *bad_addr[] = { "--socket", rel3.sock, "--no-xen",
				   "--upstream", "::1:80", "--key", keyp,
				   NULL };
	char *log;

	snprintf(logp, sizeof(logp), "%s/opt.log", dir);
	CHECK_EQ(xcudad_exit(no_key, logp), 2, "--listen without --key: "
		 "usage error");
	CHECK_EQ(xcudad_exit(key_alone, logp), 1, "--key alone is read and "
		 "checked");
	CHECK_EQ(xcudad_exit(both, logp), 2, "--listen with --upstream: "
		 "usage error");
	CHECK_EQ(xcudad_exit(bad_mode, logp), 1, "a key readable by others "
		 "is refused");
	log = check_slurp(logp, NULL);
	CHECK_MSG(log && strstr(log, "chmod 600"), "... and the log says why",
		  "log: %s", log ? log : "(none)");
	free(log);
	CHECK_EQ(xcudad_exit(too_short, logp), 1, "a 16-byte key is refused");
	CHECK_EQ(xcudad_exit(bad_addr, logp), 1, "an IPv6 address without "
		 "brackets is refused");
}

static void check_echo_sizes(void)
{
	static const uint32_t sizes[] = { 1, 4096, 1u << 20, 16u << 20,
					  64u << 20 };
	struct xc_transport t;
	struct xcuda_open_res r;
	char why[200];
	unsigned int i;
	int err;

	err = g_open(&t, &rel);
	REQUIRE_MSG(!err, "guest session through the relay", "error %d",
		    err);
	err = do_open(&t, &r);
	CHECK_MSG(!err, "OPEN through the relay", "status %d", err);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		why[0] = 0;
		CHECK_MSG(!echo_check(&t, 4096, sizes[i], i + 1, 1,
				      (uint8_t)(0x5a + i + 1), why,
				      sizeof(why)),
			  check_name("ECHO of %u bytes through the relay, "
				     "filled back", sizes[i]), "%s", why);
	}
	/* Several in flight at once: the relay pipelines them. */
	{
		struct xcuda_echo_args a = { 3, 0, 0, 0 };
		struct xcuda_request req[8];
		struct xcuda_response rsp[8];
		int n = 0, got = 0, ok = 1;

		for (i = 0; i < 8; i++) {
			memset((uint8_t *)t.arena + (i + 1) * 65536, (int)i,
			       65536);
			req_init(&t, &req[i], XCUDA_OP_ECHO, &a, sizeof(a));
			req[i].hdr.data_off = (uint32_t)((i + 1) * 65536);
			req[i].hdr.data_len = 65536;
		}
		if (t.ops->submit(&t, req, 8))
			ok = 0;
		while (ok && got < 8) {
			n = t.ops->receive(&t, rsp + got, 8 - got, TIMEOUT_MS);
			if (n <= 0)
				ok = 0;
			else
				got += n;
		}
		for (i = 0; ok && i < 8; i++) {
			struct xcuda_echo_res er;

			memcpy(&er, rsp[i].out, sizeof(er));
			if (rsp[i].id != req[i].hdr.id || rsp[i].status ||
			    er.checksum != xcuda_fnv1a64(3, (uint8_t *)t.arena +
							 (i + 1) * 65536,
							 65536))
				ok = 0;
		}
		CHECK_MSG(ok, "8 ECHOs in flight at once, answered in order",
			  "got %d", got);
	}
	CHECK_EQ(d_call(&t, XCUDA_OP_CLOSE, NULL, 0, NULL, 0), 0,
		 "CLOSE through the relay answered");
	t.ops->close(&t);
}

static void check_xcudactl(void)
{
	char cmd[2048];
	int rc;

	snprintf(cmd, sizeof(cmd), "XCUDA_SOCKET=%s XCUDA_QUIET=1 %s echo 1 "
		 "4096 1M 16M 64M > %s/ctl.out 2>&1", rel.sock, ctl, dir);
	rc = system(cmd);
	snprintf(cmd, sizeof(cmd), "%s/ctl.out", dir);
	{
		char *out = check_slurp(cmd, NULL), *p;
		int oks = 0;

		for (p = out; p && (p = strstr(p, " ok\n")); p++)
			oks++;
		CHECK_MSG(rc == 0 && oks == 5, "xcudactl echo 1 B .. 64 MiB "
			  "through the relay", "rc %d, output: %s", rc,
			  out ? out : "(none)");
		free(out);
		unlink(cmd);
	}
}

/* Lines of `xcudactl info` that say what CUDA answered. */
static char *info_facts(const struct dmn *d)
{
	char cmd[2048], path[512], *out, *line, *save = NULL, *facts;

	snprintf(path, sizeof(path), "%s/info.out", dir);
	snprintf(cmd, sizeof(cmd), "XCUDA_SOCKET=%s XCUDA_QUIET=1 %s info "
		 "> %s 2>&1", d->sock, ctl, path);
	if (system(cmd))
		return NULL;
	out = check_slurp(path, NULL);
	unlink(path);
	facts = calloc(1, out ? strlen(out) + 1 : 1);
	for (line = out ? strtok_r(out, "\n", &save) : NULL; line && facts;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "devices", 7) ||
		    !strncmp(line, "cuda init", 9) ||
		    !strncmp(line, "driver", 6) ||
		    !strncmp(line, "runtime", 7) ||
		    !strncmp(line, "version", 7)) {
			strcat(facts, line);
			strcat(facts, "\n");
		}
	}
	free(out);
	return facts;
}

static void check_same_answers(void)
{
	struct xc_transport td, tr;
	struct xcuda_open_res rd_, rr;
	struct xcuda_get_device_count_res cd, cr;
	int ed, er, sd, sr;
	char *fd_, *fr;

	memset(&rd_, 0, sizeof(rd_));
	memset(&rr, 0, sizeof(rr));
	REQUIRE_MSG(!g_open(&td, &srv) && !g_open(&tr, &rel), "sessions",
		    "cannot open the direct and the relayed session");
	ed = do_open(&td, &rd_);
	er = do_open(&tr, &rr);
	CHECK_MSG(!ed && !er && rd_.init_status == rr.init_status &&
		  rd_.device_count == rr.device_count &&
		  rd_.driver_version == rr.driver_version &&
		  rd_.runtime_version == rr.runtime_version &&
		  rd_.version == rr.version,
		  "OPEN answers through the relay as directly",
		  "status %d/%d init %d/%d count %d/%d driver %d/%d", ed, er,
		  rd_.init_status, rr.init_status, rd_.device_count,
		  rr.device_count, rd_.driver_version, rr.driver_version);
	/* Both map the arena at the guest's address: it is free in each. */
	CHECK_MSG(rr.features == rd_.features &&
		  (rr.features & XCUDA_FEAT_SAME_VA),
		  "through the relay: the same features, the arena at the "
		  "guest's address included", "features %#x, directly %#x",
		  rr.features, rd_.features);
	memset(&cd, 0x55, sizeof(cd));
	memset(&cr, 0x66, sizeof(cr));
	sd = d_call(&td, XCUDA_OP_GET_DEVICE_COUNT, NULL, 0, &cd, sizeof(cd));
	sr = d_call(&tr, XCUDA_OP_GET_DEVICE_COUNT, NULL, 0, &cr, sizeof(cr));
	CHECK_MSG(sd == sr && cd.count == cr.count && sd > -1000,
		  "cudaGetDeviceCount answers through the relay as directly",
		  "status %d/%d count %d/%d", sd, sr, cd.count, cr.count);
	CHECK_EQ(d_call(&td, XCUDA_OP_CLOSE, NULL, 0, NULL, 0), 0,
		 "CLOSE directly");
	CHECK_EQ(d_call(&tr, XCUDA_OP_CLOSE, NULL, 0, NULL, 0), 0,
		 "CLOSE through the relay");
	td.ops->close(&td);
	tr.ops->close(&tr);
	fd_ = info_facts(&srv);
	fr = info_facts(&rel);
	CHECK_MSG(fd_ && fr && *fd_ && !strcmp(fd_, fr),
		  "xcudactl info: CUDA's answers through the relay as directly",
		  "directly:\n%s\nthrough the relay:\n%s", fd_ ? fd_ : "?",
		  fr ? fr : "?");
	free(fd_);
	free(fr);
}

/* What needs the guest's own memory is refused, clearly, not hung. */
static void check_refusals(void)
{
	struct xcuda_host_register_args hr = { 4096, 0, 0, 77 };
	struct xcuda_hostfn_setup_args hf = { 65536, 4096 };
	struct xcuda_open_res r;
	struct xc_transport t;
	char why[200] = "";
	int fd, st;

	REQUIRE_MSG(!g_open(&t, &rel) && !do_open(&t, &r), "session",
		    "no session through the relay");
	fd = memfd_create("hostreg", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	st = fd >= 0 && !ftruncate(fd, 4096) && t.ops->send_fd &&
	     !t.ops->send_fd(&t, fd, 77) ?
	     d_call(&t, XCUDA_OP_HOST_REGISTER, &hr, sizeof(hr), NULL, 0) : -1;
	CHECK_MSG(st == cudaErrorMemoryAllocation, "cudaHostRegister through "
		  "the relay: \"cannot pin\" (the guest library stages "
		  "copies)", "status %d", st);
	if (fd >= 0)
		close(fd);
	st = d_call(&t, XCUDA_OP_HOSTFN_SETUP, &hf, sizeof(hf), NULL, 0);
	CHECK_MSG(!st, "host functions through the relay: HOSTFN_SETUP is "
		  "no longer refused", "status %d", st);
	st = d_call(&t, XCUDA_OP_HOSTFN_SETUP, &hf, sizeof(hf), NULL, 0);
	CHECK_MSG(st == cudaErrorInvalidValue, "... a second one is refused "
		  "by the server's worker", "status %d", st);
	CHECK_MSG(!echo_check(&t, 131072, 65536, 3, 1, 0x5d, why,
			      sizeof(why)),
		  "... and the session goes on", "%s", why);
	CHECK(!dlog_count(&srv, "host functions and stream callbacks"),
	      "... the server refuses nothing about host functions");
	t.ops->close(&t);
}

/* ---- the spans ---- */

static unsigned int spans_of(uint16_t op, const void *args, uint16_t len,
			     uint32_t off, uint32_t dlen, int which,
			     struct xd_up_span *sp)
{
	struct xcuda_request req;

	raw_req(&req, 1, op, args, len);
	req.hdr.data_off = off;
	req.hdr.data_len = dlen;
	return xd_up_spans(&req, 1u << 20, which, sp);
}

static int span_is(const struct xd_up_span *s, uint64_t off, uint64_t width,
		   uint64_t pitch, uint64_t rows)
{
	return s->off == off && s->width == width && s->pitch == pitch &&
	       s->rows == rows;
}

static void check_spans(void)
{
	struct xd_up_span sp[XD_UP_SPANS_MAX];
	struct xcuda_echo_args echo = { 0, 0, 0, 0 };
	struct xcuda_memcpy_args mc = { 0 };
	struct xcuda_memcpy_2d_args m2 = { 0 };
	struct xcuda_arena_pin_args pin = { 0, 0 };
	struct xcuda_device_get_pci_bus_id_args pci = { { 512, 13 }, 13, 0 };
	struct xcuda_drv_launch_kernel_args lk;
	unsigned int n;

	n = spans_of(XCUDA_OP_ECHO, &echo, sizeof(echo), 4096, 100, XD_UP_IN,
		     sp);
	CHECK(n == 1 && span_is(&sp[0], 4096, 100, 100, 1),
	      "spans: ECHO's extent is read");
	n = spans_of(XCUDA_OP_ECHO, &echo, sizeof(echo), 4096, 100, XD_UP_OUT,
		     sp);
	CHECK(n == 1 && span_is(&sp[0], 4096, 100, 100, 1),
	      "spans: ... and written");
	n = spans_of(XCUDA_OP_ECHO, &echo, sizeof(echo), (1u << 20) - 10, 100,
		     XD_UP_IN, sp);
	CHECK(n == 0, "spans: an extent past the arena is left out");
	mc.src = 8192;
	mc.count = 5000;
	mc.dir = XCUDA_COPY_H2D;
	CHECK(spans_of(XCUDA_OP_MEMCPY, &mc, sizeof(mc), 0, 0, XD_UP_IN, sp) ==
	      1 && span_is(&sp[0], 8192, 5000, 5000, 1) &&
	      spans_of(XCUDA_OP_MEMCPY, &mc, sizeof(mc), 0, 0, XD_UP_OUT, sp) ==
	      0, "spans: MEMCPY H2D reads its source in the arena");
	mc.dst = 8192;
	mc.src = 0x7f0000000000ull;
	mc.dir = XCUDA_COPY_D2H;
	CHECK(spans_of(XCUDA_OP_MEMCPY, &mc, sizeof(mc), 0, 0, XD_UP_IN, sp) ==
	      0 &&
	      spans_of(XCUDA_OP_MEMCPY, &mc, sizeof(mc), 0, 0, XD_UP_OUT, sp) ==
	      1 && span_is(&sp[0], 8192, 5000, 5000, 1),
	      "spans: MEMCPY D2H writes its destination, reads nothing");
	m2.src = 1000;
	m2.spitch = 100;
	m2.width = 10;
	m2.height = 3;
	m2.dir = XCUDA_COPY_H2D;
	CHECK(spans_of(XCUDA_OP_MEMCPY_2D, &m2, sizeof(m2), 0, 0, XD_UP_IN,
		       sp) == 1 && span_is(&sp[0], 1000, 10, 100, 3),
	      "spans: MEMCPY_2D reads its rows, not the gaps");
	m2.spitch = 10;
	CHECK(spans_of(XCUDA_OP_MEMCPY_2D, &m2, sizeof(m2), 0, 0, XD_UP_IN,
		       sp) == 1 && span_is(&sp[0], 1000, 30, 30, 1),
	      "spans: rows that touch are one");
	CHECK(spans_of(XCUDA_OP_ARENA_PIN, &pin, sizeof(pin), 0, 65536,
		       XD_UP_IN, sp) == 0,
	      "spans: ARENA_PIN names memory, reads none");
	CHECK(spans_of(XCUDA_OP_DEVICE_GET_PCI_BUS_ID, &pci, sizeof(pci), 0, 0,
		       XD_UP_IN, sp) == 1 &&
	      span_is(&sp[0], 512, 13, 13, 1) &&
	      spans_of(XCUDA_OP_DEVICE_GET_PCI_BUS_ID, &pci, sizeof(pci), 0, 0,
		       XD_UP_OUT, sp) == 1,
	      "spans: an argument's output buffer is sent and comes back");
	CHECK(spans_of(XCUDA_OP_DEVICE_GET_PCI_BUS_ID, &pci, 4, 0, 0,
		       XD_UP_IN, sp) == 0,
	      "spans: an extent past the declared arguments is none");
	memset(&lk, 0, sizeof(lk));
	lk.params = (struct xcuda_extent){ 256, 64 };
	CHECK(spans_of(XCUDA_OP_DRV_LAUNCH_KERNEL, &lk, sizeof(lk), 0, 0,
		       XD_UP_IN, sp) == 1 &&
	      spans_of(XCUDA_OP_DRV_LAUNCH_KERNEL, &lk, sizeof(lk), 0, 0,
		       XD_UP_OUT, sp) == 0,
	      "spans: a launch's parameters are read, never written back");
	{
		char h[64], p[16];

		CHECK(!xd_up_addr_split("[::1]:8080", h, sizeof(h), p,
					sizeof(p)) && !strcmp(h, "::1") &&
		      !strcmp(p, "8080") &&
		      !xd_up_addr_split("*:9", h, sizeof(h), p, sizeof(p)) &&
		      !*h && xd_up_addr_split("::1:80", h, sizeof(h), p,
					      sizeof(p)) &&
		      xd_up_addr_split("host:0", h, sizeof(h), p, sizeof(p)) &&
		      xd_up_addr_split("host:", h, sizeof(h), p, sizeof(p)),
		      "HOST:PORT, [V6]:PORT and *:PORT, nothing else");
		/* 2^32 + 80: atoi() made it 80 (found by fuzz_upstream_addr). */
		CHECK(xd_up_addr_split("host:4294967376", h, sizeof(h), p,
				       sizeof(p)) &&
		      xd_up_addr_split("host:65536", h, sizeof(h), p,
				       sizeof(p)),
		      "a port past 65535 is refused, however many digits");
	}
}

/* ---- the server's channel, here ---- */

/* ---- graph copies through the relay, on a GPU ---- */

#define GC_SRC	(1u << 20)	/* 1D source: 4096 bytes */
#define GC_DST	(2u << 20)	/* 1D destination */
#define GC_SRC2	(3u << 20)	/* 2D source: 4 rows of 256, pitch 1024 */
#define GC_DST2	(4u << 20)	/* 2D destination: pitch 512 */

/* A memcpy node: 0, or the worker's status (or -1000 - error). */
static int gc_node(struct xc_transport *t, uint32_t g, uint32_t dep,
		   uint32_t entry, const struct xcuda_gparams *w,
		   uint32_t *node)
{
	struct xcuda_graph_add_node_args a;
	struct xcuda_graph_add_node_res r = { 0, 0, 0 };
	uint8_t *arena = t->arena;
	int st;

	memset(&a, 0, sizeof(a));
	memcpy(arena, w, sizeof(*w));
	memcpy(arena + 1024, &dep, sizeof(dep));
	a.graph = g;
	a.entry = entry;
	a.ndeps = dep ? 1 : 0;
	a.deps = (struct xcuda_extent){ dep ? 1024 : 0, dep ? 4 : 0 };
	a.params = (struct xcuda_extent){ 0, sizeof(*w) };
	st = d_call(t, XCUDA_OP_GRAPH_ADD_NODE, &a, sizeof(a), &r, sizeof(r));
	*node = r.node;
	return st;
}

static void gc_side(struct xcuda_gside *sd, uint32_t where, uint64_t ptr,
		    uint64_t pitch, uint64_t xsize, uint64_t ysize)
{
	memset(sd, 0, sizeof(*sd));
	sd->where = where;
	sd->ptr = ptr;
	sd->pitch = pitch;
	sd->xsize = xsize;
	sd->ysize = ysize;
}

/* The destinations hold round @k's bytes (the gaps untouched). */
static int gc_landed(const uint8_t *arena, int k)
{
	unsigned int i, y;

	for (i = 0; i < 4096; i++)
		if (arena[GC_DST + i] != (uint8_t)(i * 7 + k))
			return 0;
	for (y = 0; y < 4; y++)
		for (i = 0; i < 512; i++)
			if (arena[GC_DST2 + y * 512 + i] !=
			    (i < 256 ? (uint8_t)(y * 31 + i + k) : 0xee))
				return 0;
	return 1;
}

static void check_graph_copies(void)
{
	struct xcuda_malloc_args ma = { 1u << 16 };
	struct xcuda_malloc_res mr = { 0 };
	struct xcuda_graph_create_args gca = { 0, { 0 } };
	struct xcuda_graph_create_res gcr = { 0, { 0 } };
	struct xcuda_graph_instantiate_args ia;
	struct xcuda_graph_instantiate_res ir = { 0, { 0 } };
	struct xcuda_graph_launch_args la = { 0, 0 };
	struct xcuda_graph_exec_destroy_args xd;
	struct xcuda_open_res r;
	struct xcuda_request req;
	struct xcuda_response rsp;
	struct xcuda_gparams w;
	struct xc_transport t;
	uint32_t n1, n2, n3, n4;
	uint8_t *arena;
	unsigned int i, y;
	int st, k, ok = 1, early = 0;

	REQUIRE_MSG(!g_open(&t, &rel) && !do_open(&t, &r), "session",
		    "no session through the relay");
	arena = t.arena;
	if (d_call(&t, XCUDA_OP_MALLOC, &ma, sizeof(ma), &mr, sizeof(mr))) {
		CHECK(1, "graph copies through the relay: skipped (no GPU)");
		t.ops->close(&t);
		return;
	}
	st = d_call(&t, XCUDA_OP_GRAPH_CREATE, &gca, sizeof(gca), &gcr,
		    sizeof(gcr));
	/* 1D: arena -> device -> arena. */
	memset(&w, 0, sizeof(w));
	w.type = cudaGraphNodeTypeMemcpy;
	w.kind = cudaMemcpyHostToDevice;
	w.extent[0] = 4096;
	gc_side(&w.src, XCUDA_GSIDE_ARENA, GC_SRC, 4096, 4096, 1);
	gc_side(&w.dst, XCUDA_GSIDE_DEV, mr.ptr, 4096, 4096, 1);
	st = st ? st : gc_node(&t, gcr.pGraph, 0, XCUDA_GN_MEMCPY_1D, &w, &n1);
	w.kind = cudaMemcpyDeviceToHost;
	gc_side(&w.src, XCUDA_GSIDE_DEV, mr.ptr, 4096, 4096, 1);
	gc_side(&w.dst, XCUDA_GSIDE_ARENA, GC_DST, 4096, 4096, 1);
	st = st ? st : gc_node(&t, gcr.pGraph, n1, XCUDA_GN_MEMCPY_1D, &w,
			       &n2);
	/* 2D: rows at a pitch each way. */
	w.kind = cudaMemcpyHostToDevice;
	w.extent[0] = 256;
	w.extent[1] = 4;
	w.extent[2] = 1;
	gc_side(&w.src, XCUDA_GSIDE_ARENA, GC_SRC2, 1024, 256, 4);
	gc_side(&w.dst, XCUDA_GSIDE_DEV, mr.ptr + 8192, 256, 256, 4);
	st = st ? st : gc_node(&t, gcr.pGraph, n2, XCUDA_GN_MEMCPY, &w, &n3);
	w.kind = cudaMemcpyDeviceToHost;
	gc_side(&w.src, XCUDA_GSIDE_DEV, mr.ptr + 8192, 256, 256, 4);
	gc_side(&w.dst, XCUDA_GSIDE_ARENA, GC_DST2, 512, 256, 4);
	st = st ? st : gc_node(&t, gcr.pGraph, n3, XCUDA_GN_MEMCPY, &w, &n4);
	memset(&ia, 0, sizeof(ia));
	ia.graph = gcr.pGraph;
	st = st ? st : d_call(&t, XCUDA_OP_GRAPH_INSTANTIATE, &ia, sizeof(ia),
			      &ir, sizeof(ir));
	CHECK_MSG(!st && ir.pGraphExec, "graph copies through the relay: "
		  "a graph of 1D and 2D copies to and from host memory "
		  "instantiates", "status %d", st);
	la.graphExec = ir.pGraphExec;
	for (k = 0; !st && k < 3; k++) {
		for (i = 0; i < 4096; i++)
			arena[GC_SRC + i] = (uint8_t)(i * 7 + k);
		for (y = 0; y < 4; y++)
			for (i = 0; i < 1024; i++)
				arena[GC_SRC2 + y * 1024 + i] =
					(uint8_t)(y * 31 + i + k);
		memset(arena + GC_DST, 0, 4096);
		memset(arena + GC_DST2, 0xee, 4 * 512);
		for (y = 0; y < 4; y++)
			memset(arena + GC_DST2 + y * 512, 0, 256);
		/* The first launch synchronous, the others posted. */
		req_init(&t, &req, XCUDA_OP_GRAPH_LAUNCH, &la, sizeof(la));
		if (k)
			req.hdr.flags = XCUDA_RF_POSTED;
		st = rpc(&t, &req, &rsp) ? -1 : rsp.status;
		if (k && !st && arena[GC_DST + 1] == (uint8_t)(7 + k))
			early = 1;
		st = st ? st : d_call(&t, XCUDA_OP_DEVICE_SYNCHRONIZE, NULL,
				      0, NULL, 0);
		if (!st && !gc_landed(arena, k))
			ok = 0;
	}
	CHECK_MSG(!st && ok && !early, "graph copies through the relay: "
		  "three launches with new host bytes each time, synchronous "
		  "and posted: the destinations hold them after the next "
		  "synchronous call, not before, the gaps untouched",
		  "status %d ok %d early %d", st, ok, early);
	xd.graphExec = ir.pGraphExec;
	memset(xd.pad0, 0, sizeof(xd.pad0));
	st = d_call(&t, XCUDA_OP_GRAPH_EXEC_DESTROY, &xd, sizeof(xd), NULL, 0);
	CHECK_MSG(!st, "graph copies through the relay: the exec is "
		  "destroyed", "status %d", st);
	t.ops->close(&t);
}

/* ---- graph copies' spans (up_graph.h) ---- */

static void check_gspans(void)
{
	struct xd_up_span v[8], big[4];
	struct xd_up_gside sd = { 1000, 0, 0, { 0, 0, 0 } };
	struct xd_up_gtab t;
	const struct xd_up_gent *e;
	static struct xd_up_span many[XCUDA_UP_GEXT_MAX];
	unsigned int n = 0, i;
	int ret, ok;

	/* 1D: one row, pitch and ysize not looked at. */
	ret = xd_up_gside_spans(&sd, 300, 1, 1, 1u << 20, v, &n, 8);
	CHECK_MSG(!ret && n == 1 && span_is(&v[0], 1000, 300, 300, 1),
		  "graph spans: a 1D copy is one row", "ret %d n %u", ret, n);
	/* 2D with a pitch and a position. */
	n = 0;
	sd = (struct xd_up_gside){ 1000, 64, 0, { 8, 2, 0 } };
	ret = xd_up_gside_spans(&sd, 16, 3, 1, 1u << 20, v, &n, 8);
	CHECK_MSG(!ret && n == 1 && span_is(&v[0], 1000 + 2 * 64 + 8, 16, 64,
					     3),
		  "graph spans: 2D rows at their pitch, from the position",
		  "ret %d n %u", ret, n);
	/* Rows that touch are one. */
	n = 0;
	sd = (struct xd_up_gside){ 0, 16, 0, { 0, 0, 0 } };
	ret = xd_up_gside_spans(&sd, 16, 4, 1, 1u << 20, v, &n, 8);
	CHECK_MSG(!ret && n == 1 && span_is(&v[0], 0, 64, 64, 1),
		  "graph spans: rows that touch are one", "ret %d n %u", ret,
		  n);
	/* 3D, whole slices: evenly spaced, one span. */
	n = 0;
	sd = (struct xd_up_gside){ 4096, 32, 4, { 0, 0, 1 } };
	ret = xd_up_gside_spans(&sd, 8, 4, 3, 1u << 20, v, &n, 8);
	CHECK_MSG(!ret && n == 1 && span_is(&v[0], 4096 + 128, 8, 32, 12),
		  "graph spans: 3D with whole slices is one span",
		  "ret %d n %u", ret, n);
	/* 3D, part of each slice: a span a slice. */
	n = 0;
	sd = (struct xd_up_gside){ 4096, 32, 8, { 4, 1, 0 } };
	ret = xd_up_gside_spans(&sd, 8, 2, 3, 1u << 20, v, &n, 8);
	CHECK_MSG(!ret && n == 3 && span_is(&v[0], 4096 + 36, 8, 32, 2) &&
		  span_is(&v[2], 4096 + 36 + 2 * 256, 8, 32, 2),
		  "graph spans: 3D with part of each slice, a span a slice",
		  "ret %d n %u", ret, n);
	/* Nothing to copy. */
	n = 0;
	ret = xd_up_gside_spans(&sd, 0, 2, 3, 1u << 20, v, &n, 8);
	CHECK(!ret && !n, "graph spans: an empty copy has none");
	/* Malformed or outside the arena. */
	n = 0;
	sd = (struct xd_up_gside){ (1u << 20) - 10, 0, 0, { 0, 0, 0 } };
	ok = xd_up_gside_spans(&sd, 11, 1, 1, 1u << 20, v, &n, 8) == -EINVAL;
	sd = (struct xd_up_gside){ 0, 8, 0, { 0, 0, 0 } };
	ok = ok && xd_up_gside_spans(&sd, 16, 2, 1, 1u << 20, v, &n,
				     8) == -EINVAL;
	sd = (struct xd_up_gside){ 0, 64, 2, { 0, 0, 0 } };
	ok = ok && xd_up_gside_spans(&sd, 16, 3, 2, 1u << 20, v, &n,
				     8) == -EINVAL;
	sd = (struct xd_up_gside){ 0, UINT64_MAX / 2, 4, { 0, 1, 0 } };
	ok = ok && xd_up_gside_spans(&sd, 16, 2, 1, 1u << 20, v, &n,
				     8) == -EINVAL;
	sd = (struct xd_up_gside){ 0, 64, 2 + (1ull << 62), { 0, 0, 3 } };
	ok = ok && xd_up_gside_spans(&sd, 16, 2, 1, 1u << 20, v, &n,
				     8) == -EINVAL;
	CHECK_MSG(ok && !n, "graph spans: past the arena, a pitch under the "
		  "width, rows past a slice, overflows: -EINVAL", "n %u", n);
	n = 0;
	sd = (struct xd_up_gside){ 0, 32, 8, { 0, 0, 0 } };
	CHECK(xd_up_gside_spans(&sd, 8, 2, 5, 1u << 20, big, &n, 4) ==
	      -E2BIG, "graph spans: more than the cap: -E2BIG");

	/* The relay's table. */
	memset(&t, 0, sizeof(t));
	ok = !xd_up_gtab_set(&t, 5, v, 2) && !xd_up_gtab_set(&t, 6, v, 3) &&
	     (e = xd_up_gtab_find(&t, 5)) && e->n == 2 &&
	     !memcmp(e->s, v, 2 * sizeof(*v)) && t.total == 5;
	ok = ok && !xd_up_gtab_set(&t, 5, v + 1, 1) &&
	     (e = xd_up_gtab_find(&t, 5)) && e->n == 1 &&
	     !memcmp(e->s, v + 1, sizeof(*v)) && t.total == 4;
	ok = ok && !xd_up_gtab_set(&t, 6, NULL, 0) &&
	     !xd_up_gtab_find(&t, 6) && t.total == 1 && t.n == 1;
	CHECK(ok, "graph table: set, replace, forget, with the total kept");
	for (i = 0; i < XCUDA_UP_GEXT_MAX; i++)
		many[i] = v[0];
	ok = xd_up_gtab_set(&t, 7, many, XCUDA_UP_GEXT_MAX + 1) == -E2BIG &&
	     !xd_up_gtab_find(&t, 7);
	for (i = 0; ok && i < XCUDA_UP_GEXT_TOTAL / XCUDA_UP_GEXT_MAX - 1; i++)
		ok = !xd_up_gtab_set(&t, 100 + i, many, XCUDA_UP_GEXT_MAX);
	ok = ok && xd_up_gtab_set(&t, 99, many, XCUDA_UP_GEXT_MAX) == -E2BIG &&
	     !xd_up_gtab_set(&t, 99, many, XCUDA_UP_GEXT_MAX - 1) &&
	     t.total == XCUDA_UP_GEXT_TOTAL &&
	     xd_up_gtab_set(&t, 5, many, 2) == -E2BIG &&
	     !xd_up_gtab_find(&t, 5);
	CHECK_MSG(ok, "graph table: an exec over XCUDA_UP_GEXT_MAX, or the "
		  "table over XCUDA_UP_GEXT_TOTAL: -E2BIG", "total %u",
		  t.total);
	xd_up_gtab_fini(&t);
}

struct hs {
	int fd;
	int ret;
	struct xcuda_up_welcome w;
	const uint8_t *origin;
	uint64_t domain;
};

static void *hs_relay(void *arg)
{
	struct hs *h = arg;

	h->ret = handshake_as(h->fd, 1u << 20, 0, 100, h->origin, h->domain,
			      &h->w);
	return NULL;
}

/*
 * The server's end of a tcp channel over a socket pair, @h's relay
 * shaking hands on sv[1]: xd_tcp_accept's status.
 */
static int chan_accept(struct xd_chan *c, int sv[2], uint32_t session,
		       struct hs *h)
{
	struct xd_tcp_conf conf = { &key, 0 };
	pthread_t th;
	int ret;

	memset(c, 0, sizeof(*c));
	REQUIRE_MSG(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
		    "socketpair", "%s", strerror(errno));
	h->fd = sv[1];
	pthread_create(&th, NULL, hs_relay, h);
	ret = xd_tcp_accept(sv[0], c, &conf, session);
	pthread_join(th, NULL);
	return ret;
}

static void reply_ok(struct xd_chan *c, const struct xcuda_request *req,
		     int status)
{
	struct xcuda_response rsp;

	memset(&rsp, 0, sizeof(rsp));
	rsp.id = req->hdr.id;
	rsp.op = req->hdr.op;
	rsp.flags = req->hdr.flags;
	rsp.status = status;
	c->ops->reply(c, &rsp, 0);
}

/* An XMAP frame of @nr runs, each with @bytes bytes of 0x44 (0: its own). */
static int xmap_frame(int fd, uint32_t nr, const struct xcuda_up_ext *e,
		      uint64_t bytes)
{
	struct xcuda_up_xmap f = { XCUDA_UP_XMAP_MAGIC, nr };
	static uint8_t in[8192];
	uint32_t i;
	int ret = xd_up_write_all(fd, &f, sizeof(f));

	memset(in, 0x44, sizeof(in));
	for (i = 0; i < nr && !ret; i++) {
		ret = xd_up_write_all(fd, &e[i], sizeof(e[i]));
		if (!ret)
			ret = xd_up_write_all(fd, in, bytes ? bytes :
					      e[i].width * e[i].rows);
	}
	return ret;
}

/* Mapped memory's bookkeeping (up_mapped.c), alone. */
static void check_mapped(void)
{
	static uint8_t arena[1 << 16];
	struct xd_up_span o[16], mir = { 6000, 10, 10, 1 };
	const uint64_t va = 0x7f1234560000ull;
	struct xd_up_map m;
	uint64_t w[3];
	unsigned int n, total, i;

	xd_up_map_init(&m, sizeof(arena));
	CHECK(!xd_up_map_pin(&m, 4096, 8192) && !xd_up_map_pin(&m, 8192, 100) &&
	      !xd_up_map_pin(&m, 32768, 4096) && m.npin == 2,
	      "mapped: two pinned extents, the overlapping one left out");
	w[0] = va + 5000;
	w[1] = va + 100;	/* not pinned */
	w[2] = 12345;
	CHECK_EQ(xd_up_map_scan(&m, w, sizeof(w)), 0,
		 "mapped: no guest address known, nothing mapped");
	xd_up_map_set_va(&m, va);
	CHECK_EQ(xd_up_map_scan(&m, w, sizeof(w)), 1,
		 "mapped: a word holding an address inside a pinned extent "
		 "maps it");
	CHECK_EQ(xd_up_map_scan(&m, w, sizeof(w)), 0,
		 "mapped: once mapped, it stays so");
	CHECK_EQ(xd_up_map_scan(&m, (uint8_t *)w + 4, 16), 0,
		 "mapped: only whole words count");
	memset(arena + 4096, 0x5a, 8192);
	xd_up_map_lock(&m);
	n = xd_up_map_diff_locked(&m, arena, o, 16);
	CHECK(n == 1 && o[0].off == 4096 && o[0].width == 8192 &&
	      o[0].rows == 1 && !xd_up_map_diff_locked(&m, arena, o, 16),
	      "mapped: a newly mapped extent goes whole, once");
	arena[5000] = 1;
	arena[5001] = 2;
	arena[5003] = 3;
	arena[12287] = 4;
	arena[12288] = 9;	/* not pinned */
	n = xd_up_map_diff_locked(&m, arena, o, 16);
	CHECK(n == 3 && o[0].off == 5000 && o[0].width == 2 &&
	      o[1].off == 5003 && o[1].width == 1 && o[2].off == 12287 &&
	      o[2].width == 1 && !xd_up_map_diff_locked(&m, arena, o, 16),
	      "mapped: the runs that changed, exact to the byte, pinned only");
	xd_up_map_unlock(&m);
	memset(arena + 6000, 0x77, 10);
	xd_up_map_mirror(&m, arena, &mir);
	xd_up_map_lock(&m);
	CHECK_EQ(xd_up_map_diff_locked(&m, arena, o, 16), 0,
		 "mapped: bytes that crossed the link otherwise are not sent "
		 "again");
	for (i = 0; i < 10; i++)
		arena[4200 + 3 * i] ^= 0xff;
	for (total = 0, i = 0; (n = xd_up_map_diff_locked(&m, arena, o, 4));
	     i++)
		total += n;
	CHECK(total == 10 && i == 3, "mapped: runs come 4 at a time, then "
	      "the next diff starts over");
	xd_up_map_unlock(&m);
	xd_up_map_unpin(&m, 4096);
	CHECK(!xd_up_map_any(&m) && m.npin == 1, "mapped: unpinned, not "
	      "mapped any more");
	CHECK_EQ(xd_up_map_take(&m, arena, 32768 + 4000, 200), -EPROTO,
		 "mapped (server): bytes past a pinned extent are refused");
	CHECK_EQ(xd_up_map_take(&m, arena, 100, 10), -EPROTO,
		 "mapped (server): bytes outside any pinned extent are "
		 "refused");
	arena[33000] = 0x31;
	i = (unsigned int)xd_up_map_take(&m, arena, 32768 + 10, 20);
	xd_up_map_lock(&m);
	CHECK(!i && xd_up_map_any(&m) && !xd_up_map_diff_locked(&m, arena, o, 16),
	      "mapped (server): the first bytes map the extent, its shadow "
	      "as the arena has it");
	xd_up_map_unlock(&m);
	xd_up_map_fini(&m);

	/* The twins of registered memory use the same runs (byte_runs.h). */
	{
		uint8_t src[100], sh[100], dst[100];

		memset(src, 1, sizeof(src));
		memset(sh, 1, sizeof(sh));
		memset(dst, 7, sizeof(dst));
		src[3] = 2;
		src[50] = src[51] = 3;
		CHECK(xcuda_runs_apply(src, sh, dst, sizeof(src)) == 3 &&
		      dst[3] == 2 && dst[50] == 3 && dst[51] == 3 &&
		      dst[4] == 7 && dst[52] == 7 && !memcmp(src, sh, 100) &&
		      !xcuda_runs_apply(src, sh, dst, sizeof(src)),
		      "byte runs: only the changed bytes go, once");
	}
}

/*
 * The tcp channel with mapped memory: the relay's runs land in the arena,
 * and what a kernel wrote there comes back, exact, before the answer.
 */
static void check_chan_mapped(void)
{
	struct xcuda_echo_args echo = { 0, 1, 0, 0 };
	struct xcuda_arena_pin_args pa = { 0, 0 };
	struct xcuda_up_ext x[2] = { { 65536 + 10, 100, 100, 1 },
				     { 65536 + 4000, 5, 5, 1 } };
	struct xcuda_up_ext e[8];
	struct xcuda_up_rsp f;
	struct xcuda_request req, got;
	static uint8_t buf[1 << 16];
	struct hs h = { -1, -1, { 0, 0, 0 }, NULL, 0 };
	struct xd_chan c;
	int sv[2], ret, runs = 0, other = 0, frames = 0;
	unsigned int i;

	ret = chan_accept(&c, sv, 0x7cau, &h);
	REQUIRE_MSG(!ret && !h.ret && !h.w.status, "tcp channel (mapped): "
		    "handshake", "accept %d relay %d", ret, h.ret);

	/* ARENA_PIN answered 0: the extent is pinned at this end too. */
	raw_req(&req, 0x7cau, XCUDA_OP_ARENA_PIN, &pa, sizeof(pa));
	req.hdr.data_off = 65536;
	req.hdr.data_len = 8192;
	send_frame(sv[1], &req, 0, NULL, 0);
	ret = c.ops->next(&c, &got, 2000);
	if (ret == 1)
		reply_ok(&c, &got, 0);
	ret = ret == 1 ? read_answer(sv[1], &f, e, 8, buf, sizeof(buf)) : -1;
	CHECK_MSG(!ret && !f.rsp.status, "tcp channel (mapped): ARENA_PIN "
		  "answered", "ret %d", ret);

	/* The relay's runs, then a request: they are in the arena. */
	raw_req(&req, 0x7cau, XCUDA_OP_ECHO, &echo, sizeof(echo));
	req.hdr.data_off = 8192;
	req.hdr.data_len = 100;
	ret = xmap_frame(sv[1], 2, x, 0) || send_frame(sv[1], &req, 100, buf,
						      100);
	ret = ret ? -1 : c.ops->next(&c, &got, 2000);
	CHECK_MSG(ret == 1 && c.arena[65536 + 10] == 0x44 &&
		  c.arena[65536 + 109] == 0x44 && !c.arena[65536 + 110] &&
		  c.arena[65536 + 4004] == 0x44 && !c.arena[65536 + 9],
		  "tcp channel (mapped): an XMAP frame's runs land in the "
		  "arena", "ret %d", ret);

	/* "A kernel writes" mapped memory; the synchronous answer. */
	memset(c.arena + 65536 + 50, 0x66, 10);
	c.arena[65536 + 8000] = 0x77;
	if (ret == 1)
		reply_ok(&c, &got, 0);
	do {
		ret = read_frame(sv[1], &f, e, 8, buf, sizeof(buf));
		for (i = 0; !ret && i < f.nr_out; i++) {
			if (e[i].off < 65536 || e[i].off >= 65536 + 8192)
				continue;
			if ((e[i].off == 65536 + 50 && e[i].width == 10) ||
			    (e[i].off == 65536 + 8000 && e[i].width == 1))
				runs++;
			else
				other++;
		}
		frames++;
	} while (!ret && f.magic == XCUDA_UP_DATA_MAGIC && frames < 10);
	CHECK_MSG(!ret && f.magic == XCUDA_UP_RSP_MAGIC && runs == 2 &&
		  !other, "tcp channel (mapped): what a kernel wrote comes "
		  "before the answer, exact, and not what the relay sent",
		  "ret %d runs %d other %d frames %d", ret, runs, other,
		  frames);

	/* Unpinned: nothing more goes, and runs for it are refused. */
	raw_req(&req, 0x7cau, XCUDA_OP_ARENA_UNPIN, NULL, 0);
	req.hdr.data_off = 65536;
	req.hdr.data_len = 8192;
	send_frame(sv[1], &req, 0, NULL, 0);
	ret = c.ops->next(&c, &got, 2000);
	if (ret == 1)
		reply_ok(&c, &got, 0);
	ret = ret == 1 ? read_answer(sv[1], &f, e, 8, buf, sizeof(buf)) : -1;
	CHECK_MSG(!ret && !f.nr_out, "tcp channel (mapped): ARENA_UNPIN "
		  "answered, nothing mapped is sent", "ret %d nr_out %u", ret,
		  f.nr_out);
	ret = xmap_frame(sv[1], 1, x, 0) || send_frame(sv[1], &req, 0, NULL, 0);
	CHECK_MSG(!ret && c.ops->next(&c, &got, 2000) < 0,
		  "tcp channel (mapped): runs of an unpinned extent end the "
		  "session", "ret %d", ret);
	c.ops->close(&c);
	close(sv[1]);
}

static void check_chan(void)
{
	struct xcuda_up_ext e[4];
	struct xcuda_up_rsp f;
	struct xcuda_request req, got;
	struct xcuda_memcpy_args mc = { 0 };
	struct xcuda_memcpy_2d_args m2 = { 0 };
	struct xcuda_echo_args echo = { 0, 1, 0, 0 };
	static uint8_t buf[1 << 16], in[1 << 16];
	struct xd_chan c;
	struct hs h = { -1, -1, { 0, 0, 0 }, NULL, 0 };
	int sv[2], ret;
	unsigned int i;

	ret = chan_accept(&c, sv, 0x7c9u, &h);
	REQUIRE_MSG(!ret && !h.ret && !h.w.status && h.w.session == 0x7c9u &&
		    h.w.arena_size == 1u << 20 && c.arena_size == 1u << 20 &&
		    (c.flags & XD_CHAN_REMOTE), "tcp channel: handshake",
		    "accept %d relay %d status %d", ret, h.ret, h.w.status);

	/* 1. A posted copy into the arena: its bytes are held back. */
	mc.dst = 4096;
	mc.src = 0x7f0000000000ull;
	mc.count = 1000;
	mc.dir = XCUDA_COPY_D2H;
	mc.flags = XCUDA_COPY_ASYNC;
	raw_req(&req, 0x7c9u, XCUDA_OP_MEMCPY, &mc, sizeof(mc));
	req.hdr.flags = XCUDA_RF_POSTED;
	send_frame(sv[1], &req, 0, NULL, 0);
	ret = c.ops->next(&c, &got, 2000);
	memset(c.arena + 4096, 0xab, 1000);	/* "the device wrote" */
	reply_ok(&c, &got, 0);
	ret = ret == 1 ? read_answer(sv[1], &f, e, 4, buf, sizeof(buf)) : -1;
	CHECK_MSG(!ret && f.magic == XCUDA_UP_RSP_MAGIC && !f.nr_out &&
		  f.rsp.id == req.hdr.id && !memcmp(&got, &req, sizeof(req)),
		  "tcp channel: a posted copy's answer comes without its bytes",
		  "ret %d nr_out %u", ret, f.nr_out);

	/* 2. A later request's bytes over them are dropped. */
	memset(&mc, 0, sizeof(mc));
	mc.dst = 0x7f0000000000ull;
	mc.src = 4000;
	mc.count = 2000;
	mc.dir = XCUDA_COPY_H2D;
	mc.flags = XCUDA_COPY_ASYNC;
	raw_req(&req, 0x7c9u, XCUDA_OP_MEMCPY, &mc, sizeof(mc));
	req.hdr.flags = XCUDA_RF_POSTED;
	memset(in, 0x11, 2000);
	send_frame(sv[1], &req, 2000, in, 2000);
	ret = c.ops->next(&c, &got, 2000);
	for (i = 0; ret == 1 && i < 2000; i++)
		if (c.arena[4000 + i] != (4000 + i >= 4096 && 4000 + i < 5096 ?
					  0xab : 0x11))
			ret = -100 - (int)i;
	reply_ok(&c, &got, 0);
	CHECK_MSG(ret == 1 && !read_answer(sv[1], &f, e, 4, buf, sizeof(buf)),
		  "tcp channel: bytes a later request brings over a pending "
		  "copy's are dropped, the rest land", "ret %d", ret);

	/*
	 * 2b. A query answered "not ready" brings none of them: the program
	 * may rely on no copy then (and they stay pending, step 3).
	 */
	{
		struct xcuda_stream_query_args q = { 0 };

		raw_req(&req, 0x7c9u, XCUDA_OP_STREAM_QUERY, &q, sizeof(q));
		send_frame(sv[1], &req, 0, NULL, 0);
		ret = c.ops->next(&c, &got, 2000);
		if (ret == 1)
			reply_ok(&c, &got, cudaErrorNotReady);
		ret = ret == 1 ? read_answer(sv[1], &f, e, 4, buf,
					     sizeof(buf)) : -1;
		CHECK_MSG(!ret && !f.nr_out &&
			  f.rsp.status == cudaErrorNotReady,
			  "tcp channel: a query answered not ready brings no "
			  "pending bytes", "ret %d nr_out %u", ret, f.nr_out);
	}

	/* 3. The next synchronous answer carries them, then its own. */
	raw_req(&req, 0x7c9u, XCUDA_OP_ECHO, &echo, sizeof(echo));
	req.hdr.data_off = 8192;
	req.hdr.data_len = 100;
	memset(in, 0x22, 100);
	send_frame(sv[1], &req, 100, in, 100);
	ret = c.ops->next(&c, &got, 2000);
	if (ret == 1 && c.arena[8192] == 0x22 && c.arena[8291] == 0x22)
		memset(c.arena + 8192, 0x33, 100);
	reply_ok(&c, &got, 0);
	ret = ret == 1 ? read_answer(sv[1], &f, e, 4, buf, sizeof(buf)) : -1;
	CHECK_MSG(!ret && f.nr_out == 2 && e[0].off == 4096 &&
		  e[0].width * e[0].rows == 1000 && buf[0] == 0xab &&
		  buf[999] == 0xab && e[1].off == 8192 &&
		  e[1].width * e[1].rows == 100 && buf[1000] == 0x33 &&
		  buf[1099] == 0x33,
		  "tcp channel: a synchronous answer brings the posted copy's "
		  "bytes, then its own", "ret %d nr_out %u", ret, f.nr_out);

	/* 4. A failed copy's destination never goes back. */
	memset(&mc, 0, sizeof(mc));
	mc.dst = 4096;
	mc.src = 0x7f0000000000ull;
	mc.count = 64;
	mc.dir = XCUDA_COPY_D2H;
	raw_req(&req, 0x7c9u, XCUDA_OP_MEMCPY, &mc, sizeof(mc));
	send_frame(sv[1], &req, 0, NULL, 0);
	ret = c.ops->next(&c, &got, 2000);
	reply_ok(&c, &got, cudaErrorInvalidValue);
	ret = ret == 1 ? read_answer(sv[1], &f, e, 4, buf, sizeof(buf)) : -1;
	CHECK_MSG(!ret && !f.nr_out && f.rsp.status == cudaErrorInvalidValue,
		  "tcp channel: a failed copy's destination is not sent",
		  "ret %d nr_out %u", ret, f.nr_out);

	/* 5. Rows in and rows out, the gaps untouched. */
	memset(c.arena + 20000, 0xee, 400);
	m2.dst = 0x7f0000000000ull;
	m2.src = 20000;
	m2.spitch = 100;
	m2.width = 10;
	m2.height = 3;
	m2.dir = XCUDA_COPY_H2D;
	raw_req(&req, 0x7c9u, XCUDA_OP_MEMCPY_2D, &m2, sizeof(m2));
	memset(in, 0x44, 30);
	send_frame(sv[1], &req, 30, in, 30);
	ret = c.ops->next(&c, &got, 2000);
	if (ret == 1 && (c.arena[20000] != 0x44 || c.arena[20009] != 0x44 ||
			 c.arena[20010] != 0xee || c.arena[20100] != 0x44 ||
			 c.arena[20209] != 0x44 || c.arena[20210] != 0xee))
		ret = -1;
	/* What a handler says it wrote (ARRAY_COPY's note_out). */
	if (ret == 1)
		c.ops->note_out(&c, 30000, 4, 16, 2);
	memset(c.arena + 30000, 0x55, 4);
	memset(c.arena + 30016, 0x66, 4);
	reply_ok(&c, &got, 0);
	ret = ret == 1 ? read_answer(sv[1], &f, e, 4, buf, sizeof(buf)) : -1;
	CHECK_MSG(!ret && f.nr_out == 1 && e[0].off == 30000 &&
		  e[0].width == 4 && e[0].pitch == 16 && e[0].rows == 2 &&
		  buf[0] == 0x55 && buf[3] == 0x55 && buf[4] == 0x66 &&
		  buf[7] == 0x66,
		  "tcp channel: 2D rows land without their gaps; rows a "
		  "handler noted go back packed", "ret %d nr_out %u", ret,
		  f.nr_out);

	/* 6. A request that runs long: the server says it is alive. */
	raw_req(&req, 0x7c9u, XCUDA_OP_GET_DEVICE_COUNT, NULL, 0);
	send_frame(sv[1], &req, 0, NULL, 0);
	ret = c.ops->next(&c, &got, 2000);
	nap_ms(450);
	reply_ok(&c, &got, 0);
	for (i = 0; ret == 1; i++) {
		if (read_frame(sv[1], &f, e, 4, buf, sizeof(buf)))
			ret = -1;
		else if (f.magic == XCUDA_UP_RSP_MAGIC)
			break;
		else if (f.magic != XCUDA_UP_DATA_MAGIC || f.nr_out)
			ret = -2;
	}
	CHECK_MSG(ret == 1 && i >= 2 && i <= 6 && f.rsp.id == req.hdr.id,
		  "tcp channel: while a request runs, an empty frame every "
		  "alive_ms (100 ms here)", "ret %d, %u frames", ret, i);

	/* 7. A graph's spans go to the relay before the answer. */
	raw_req(&req, 0x7c9u, XCUDA_OP_GET_DEVICE_COUNT, NULL, 0);
	send_frame(sv[1], &req, 0, NULL, 0);
	ret = c.ops->next(&c, &got, 2000);
	{
		struct xd_up_span gs[2] = { { 4096, 100, 100, 1 },
					    { 8192, 16, 32, 4 } };
		struct xcuda_up_gext g;
		struct xcuda_up_ext ge[2];

		if (ret == 1)
			ret = c.ops->graph_ext(&c, 9, gs, 2) ? -1 : 1;
		reply_ok(&c, &got, 0);
		if (ret == 1 && (rd(sv[1], &g, sizeof(g)) ||
				 rd(sv[1], ge, sizeof(ge))))
			ret = -2;
		ret = ret == 1 ? read_answer(sv[1], &f, e, 4, buf,
					     sizeof(buf)) : ret;
		CHECK_MSG(!ret && g.magic == XCUDA_UP_GEXT_MAGIC &&
			  g.exec == 9 && g.nr == 2 && !g.rsvd &&
			  ge[0].off == 4096 && ge[0].width == 100 &&
			  ge[0].rows == 1 && ge[1].off == 8192 &&
			  ge[1].width == 16 && ge[1].pitch == 32 &&
			  ge[1].rows == 4 && f.magic == XCUDA_UP_RSP_MAGIC &&
			  f.rsp.id == req.hdr.id,
			  "tcp channel: a GEXT frame (descriptions only) comes "
			  "before the answer of its request", "ret %d", ret);
	}

	/* 8. A PUT before a launch: its bytes land, pending ones stay. */
	memset(&mc, 0, sizeof(mc));
	mc.dst = 40000;
	mc.src = 0x7f0000000000ull;
	mc.count = 100;
	mc.dir = XCUDA_COPY_D2H;
	mc.flags = XCUDA_COPY_ASYNC;
	raw_req(&req, 0x7c9u, XCUDA_OP_MEMCPY, &mc, sizeof(mc));
	req.hdr.flags = XCUDA_RF_POSTED;
	send_frame(sv[1], &req, 0, NULL, 0);
	ret = c.ops->next(&c, &got, 2000);
	memset(c.arena + 40000, 0xab, 100);	/* "the device wrote" */
	reply_ok(&c, &got, 0);
	ret = ret == 1 ? read_answer(sv[1], &f, e, 4, buf, sizeof(buf)) : -1;
	memset(c.arena + 39900, 0xee, 100);
	memset(c.arena + 40100, 0xee, 100);
	memset(c.arena + 50000, 0xee, 200);
	{
		struct xcuda_graph_launch_args la = { 3, 0 };
		struct xcuda_up_put pf = { XCUDA_UP_PUT_MAGIC, 2 };
		struct xcuda_up_ext pe[2] = { { 39950, 200, 200, 1 },
					      { 50000, 8, 64, 3 } };

		memset(in, 0x5c, 200);
		raw_req(&req, 0x7c9u, XCUDA_OP_GRAPH_LAUNCH, &la, sizeof(la));
		req.hdr.flags = XCUDA_RF_POSTED;
		if (!ret && (xd_up_write_all(sv[1], &pf, sizeof(pf)) ||
			     xd_up_write_all(sv[1], &pe[0], sizeof(pe[0])) ||
			     xd_up_write_all(sv[1], in, 200) ||
			     xd_up_write_all(sv[1], &pe[1], sizeof(pe[1])) ||
			     xd_up_write_all(sv[1], in, 24) ||
			     send_frame(sv[1], &req, 0, NULL, 0)))
			ret = -2;
		ret = !ret ? c.ops->next(&c, &got, 2000) : ret;
		for (i = 39900; ret == 1 && i < 40200; i++)
			if (c.arena[i] != (i < 39950 || i >= 40150 ? 0xee :
					   i >= 40000 && i < 40100 ? 0xab :
					   0x5c))
				ret = -1000 - (int)i;
		for (i = 50000; ret == 1 && i < 50200; i++)
			if (c.arena[i] != ((i - 50000) % 64 < 8 &&
					   i < 50000 + 2 * 64 + 8 ? 0x5c :
					   0xee))
				ret = -100000 - (int)i;
		CHECK_MSG(ret == 1 && got.hdr.op == XCUDA_OP_GRAPH_LAUNCH,
			  "tcp channel: a PUT frame before a GRAPH_LAUNCH: its "
			  "rows land, the gaps and a pending copy's bytes "
			  "stay", "ret %d", ret);
		/* The launch's copies wrote: a posted copy's bytes. */
		if (ret == 1)
			c.ops->note_out(&c, 50000, 8, 64, 3);
		memset(c.arena + 50000, 0x6d, 8);
		reply_ok(&c, &got, 0);
		ret = ret == 1 ? read_answer(sv[1], &f, e, 4, buf,
					     sizeof(buf)) : -1;
		CHECK_MSG(!ret && !f.nr_out && f.rsp.id == req.hdr.id,
			  "tcp channel: a posted launch's answer comes without "
			  "the bytes its copies wrote", "ret %d nr_out %u",
			  ret, f.nr_out);
		/* Launched again: the same rows are pending once. */
		raw_req(&req, 0x7c9u, XCUDA_OP_GRAPH_LAUNCH, &la, sizeof(la));
		req.hdr.flags = XCUDA_RF_POSTED;
		send_frame(sv[1], &req, 0, NULL, 0);
		ret = c.ops->next(&c, &got, 2000);
		if (ret == 1)
			c.ops->note_out(&c, 50000, 8, 64, 3);
		reply_ok(&c, &got, 0);
		ret = ret == 1 ? read_answer(sv[1], &f, e, 4, buf,
					     sizeof(buf)) : -1;
	}
	raw_req(&req, 0x7c9u, XCUDA_OP_GET_DEVICE_COUNT, NULL, 0);
	send_frame(sv[1], &req, 0, NULL, 0);
	ret = c.ops->next(&c, &got, 2000);
	reply_ok(&c, &got, 0);
	ret = ret == 1 ? read_answer(sv[1], &f, e, 4, buf, sizeof(buf)) : -1;
	CHECK_MSG(!ret && f.nr_out == 2 && e[0].off == 40000 &&
		  e[1].off == 50000 && e[1].width == 8 && e[1].pitch == 64 &&
		  e[1].rows == 3 && buf[100] == 0x6d && buf[107] == 0x6d &&
		  buf[108] == 0x5c,
		  "tcp channel: ... they come with the next synchronous "
		  "answer, once for two launches",
		  "ret %d nr_out %u", ret, f.nr_out);

	/* 9. Malformed: in_len that is not the extents'. */
	raw_req(&req, 0x7c9u, XCUDA_OP_ECHO, &echo, sizeof(echo));
	req.hdr.data_off = 8192;
	req.hdr.data_len = 100;
	send_frame(sv[1], &req, 99, in, 99);
	CHECK_EQ(c.ops->next(&c, &got, 2000), -EPROTO,
		 "tcp channel: in_len that is not the extents' is -EPROTO");
	CHECK(c.ops->next(&c, &got, 0) == -EPROTO &&
	      c.ops->peer_gone(&c), "tcp channel: ... for good");
	c.ops->close(&c);
	close(sv[1]);
}

/* A completion, as the relay sends it. */
static int send_done(int fd, uint32_t slot, uint32_t done, uint32_t nr_ext)
{
	struct xcuda_up_done d = { XCUDA_UP_DONE_MAGIC, slot, done, nr_ext };

	return xd_up_write_all(fd, &d, sizeof(d));
}

#define HF_OFF	65536u

static void check_chan_hostfn(void)
{
	struct xcuda_echo_args echo = { 0, 1, 0, 0 };
	struct xcuda_hostfn_area *a;
	struct xcuda_request req, got;
	struct xcuda_up_ext e[4];
	struct xcuda_up_rsp f;
	struct xcuda_up_rec r;
	static uint8_t buf[1 << 16], in[1 << 12];
	struct hs h = { -1, -1, { 0, 0, 0 }, NULL, 0 };
	struct xd_chan c;
	char pay[16];
	int sv[2], ret, i;

	ret = chan_accept(&c, sv, 0x7caU, &h);
	REQUIRE_MSG(!ret && !h.ret && c.ops->hostfn_setup &&
		    c.ops->hostfn_publish && c.ops->hostfn_wait,
		    "tcp channel (host functions): handshake, the ops",
		    "accept %d relay %d", ret, h.ret);
	/* The copy's area is zeroed, whatever a request brought there. */
	memset(c.arena + HF_OFF, 0x5a, sizeof(*a));
	CHECK_EQ(c.ops->hostfn_setup(&c, HF_OFF, 4096), 0,
		 "tcp channel: hostfn_setup");
	a = (struct xcuda_hostfn_area *)(c.arena + HF_OFF);
	CHECK(!a->wake && !a->slot[63].done && !a->slot[0].seq,
	      "tcp channel: the slot area of the copy starts zeroed");

	/* 1. A record and its payload go to the relay as one frame. */
	a->slot[3].token = 0x1234;
	a->slot[3].status = 5;
	a->slot[3].flags = XCUDA_HOSTFN_GRAPH;
	a->slot[3].arg = 10;
	memcpy(c.arena + 8192, "0123456789", 10);
	a->slot[3].seq = 7;
	ret = c.ops->hostfn_publish(&c, 3, 8192, 10);
	memset(pay, 0, sizeof(pay));
	if (!ret)
		ret = rd(sv[1], &r, sizeof(r));
	if (!ret)
		ret = rd(sv[1], pay, 10);
	CHECK_MSG(!ret && r.magic == XCUDA_UP_REC_MAGIC && r.slot == 3 &&
		  r.token == 0x1234 && r.seq == 7 && r.status == 5 &&
		  r.flags == XCUDA_HOSTFN_GRAPH && r.arg == 10 &&
		  r.plen == 10 && r.poff == 8192 &&
		  !memcmp(pay, "0123456789", 10),
		  "tcp channel: a record goes as an xrec frame, its payload "
		  "after it", "ret %d magic %#x slot %u seq %u plen %u", ret,
		  r.magic, r.slot, r.seq, r.plen);
	CHECK(c.ops->hostfn_publish(&c, 64, 0, 0) == -EINVAL &&
	      c.ops->hostfn_publish(&c, 1, (1u << 20) - 8, 16) == -EINVAL,
	      "tcp channel: no record for a slot or payload out of bounds");

	/*
	 * 2. A waiting trampoline reads while the worker is in CUDA: a
	 * request on the way is queued with its bytes, the completion
	 * behind it applied.
	 */
	raw_req(&req, 0x7caU, XCUDA_OP_ECHO, &echo, sizeof(echo));
	req.hdr.data_off = 12288;
	req.hdr.data_len = 100;
	memset(in, 0x6b, 100);
	send_frame(sv[1], &req, 100, in, 100);
	send_done(sv[1], 3, 7, 0);
	for (i = 0; i < 2000 && __atomic_load_n(&a->slot[3].done,
						__ATOMIC_ACQUIRE) != 7; i++)
		c.ops->hostfn_wait(&c, &a->slot[3].done, 0, 1000);
	CHECK_MSG(a->slot[3].done == 7 && c.arena[12288] == 0x6b &&
		  c.arena[12387] == 0x6b, "tcp channel: a waiting trampoline "
		  "reads the completion, and the request before it with its "
		  "bytes", "done %u after %d waits", a->slot[3].done, i);
	ret = c.ops->next(&c, &got, 0);
	CHECK_MSG(ret == 1 && got.hdr.id == req.hdr.id &&
		  got.hdr.op == XCUDA_OP_ECHO, "tcp channel: ... next() "
		  "takes the request the trampoline queued", "ret %d", ret);
	if (ret == 1)
		memset(c.arena + 12288, 0x6c, 100);
	reply_ok(&c, &got, 0);
	ret = ret == 1 ? read_answer(sv[1], &f, e, 4, buf, sizeof(buf)) : -1;
	CHECK_MSG(!ret && f.rsp.id == req.hdr.id && f.nr_out == 1 &&
		  e[0].off == 12288 && buf[0] == 0x6c && buf[99] == 0x6c,
		  "tcp channel: ... and its answer carries what it wrote",
		  "ret %d nr_out %u", ret, f.nr_out);

	/* 3. The worker's next() applies a completion on its way. */
	send_done(sv[1], 3, 9, 0);
	raw_req(&req, 0x7caU, XCUDA_OP_GET_DEVICE_COUNT, NULL, 0);
	send_frame(sv[1], &req, 0, NULL, 0);
	ret = c.ops->next(&c, &got, 2000);
	CHECK_MSG(ret == 1 && got.hdr.id == req.hdr.id &&
		  a->slot[3].done == 9, "tcp channel: next() applies a "
		  "completion before the request", "ret %d done %u", ret,
		  a->slot[3].done);
	if (ret == 1) {
		reply_ok(&c, &got, 0);
		read_answer(sv[1], &f, e, 4, buf, sizeof(buf));
	}

	/*
	 * 4. A posted copy into the arena is pending: a record goes after
	 * its bytes as they are (the function may read them), and they stay
	 * pending for the next synchronous answer.
	 */
	{
		struct xcuda_memcpy_args mc = { 0 };
		struct xcuda_up_ext x;

		mc.dst = 4096;
		mc.src = 0x7f0000000000ull;
		mc.count = 1000;
		mc.dir = XCUDA_COPY_D2H;
		mc.flags = XCUDA_COPY_ASYNC;
		raw_req(&req, 0x7caU, XCUDA_OP_MEMCPY, &mc, sizeof(mc));
		req.hdr.flags = XCUDA_RF_POSTED;
		send_frame(sv[1], &req, 0, NULL, 0);
		ret = c.ops->next(&c, &got, 2000);
		memset(c.arena + 4096, 0xab, 1000);
		if (ret == 1) {
			reply_ok(&c, &got, 0);
			ret = read_answer(sv[1], &f, e, 4, buf, sizeof(buf));
		}
		a->slot[4].token = 0x55;
		a->slot[4].seq = 11;
		ret = ret ? ret : c.ops->hostfn_publish(&c, 4, 0, 0);
		if (!ret)
			ret = read_frame(sv[1], &f, e, 4, buf, sizeof(buf));
		CHECK_MSG(!ret && f.magic == XCUDA_UP_DATA_MAGIC &&
			  f.nr_out == 1 && e[0].off == 4096 &&
			  e[0].width * e[0].rows == 1000 && buf[0] == 0xab &&
			  buf[999] == 0xab && !rd(sv[1], &r, sizeof(r)) &&
			  r.magic == XCUDA_UP_REC_MAGIC && r.slot == 4,
			  "tcp channel: a record goes after the pending "
			  "extents' bytes", "ret %d magic %#x nr_out %u", ret,
			  f.magic, f.nr_out);

		/*
		 * 5. A completion brings bytes for copies queued behind the
		 * function: they land, less the pending ones, before done.
		 */
		struct xcuda_up_done d = { XCUDA_UP_DONE_MAGIC, 4, 11, 2 };
		x = (struct xcuda_up_ext){ 20000, 16, 16, 1 };
		memset(in, 0x71, 16);
		ret = xd_up_write_all(sv[1], &d, sizeof(d)) ||
		      xd_up_write_all(sv[1], &x, sizeof(x)) ||
		      xd_up_write_all(sv[1], in, 16);
		x = (struct xcuda_up_ext){ 5000, 200, 200, 1 };
		memset(in, 0x72, 200);
		ret = ret || xd_up_write_all(sv[1], &x, sizeof(x)) ||
		      xd_up_write_all(sv[1], in, 200);
		for (i = 0; !ret && i < 2000 && a->slot[4].done != 11; i++)
			c.ops->hostfn_wait(&c, &a->slot[4].done, 0, 1000);
		CHECK_MSG(!ret && a->slot[4].done == 11 &&
			  c.arena[20000] == 0x71 && c.arena[20015] == 0x71 &&
			  c.arena[5095] == 0xab && c.arena[5096] == 0x72 &&
			  c.arena[5199] == 0x72, "tcp channel: a completion's "
			  "extents land before done, pending bytes kept",
			  "ret %d done %u", ret, a->slot[4].done);

		/* The pending bytes still go with the next answer. */
		raw_req(&req, 0x7caU, XCUDA_OP_GET_DEVICE_COUNT, NULL, 0);
		send_frame(sv[1], &req, 0, NULL, 0);
		ret = c.ops->next(&c, &got, 2000);
		if (ret == 1) {
			reply_ok(&c, &got, 0);
			ret = read_answer(sv[1], &f, e, 4, buf, sizeof(buf));
		}
		CHECK_MSG(!ret && f.magic == XCUDA_UP_RSP_MAGIC &&
			  f.nr_out == 1 && e[0].off == 4096 && buf[0] == 0xab,
			  "tcp channel: ... and still go with the next "
			  "synchronous answer", "ret %d nr_out %u", ret,
			  f.nr_out);
	}

	/* 6. A completion for a slot that does not exist ends the link. */
	send_done(sv[1], XCUDA_HOSTFN_SLOTS, 1, 0);
	CHECK_EQ(c.ops->next(&c, &got, 2000), -EPROTO,
		 "tcp channel: a completion for slot 64 is -EPROTO");
	CHECK(c.ops->peer_gone(&c) &&
	      c.ops->hostfn_publish(&c, 3, 0, 0) == -EPROTO,
	      "tcp channel: ... for good, and records no longer go");
	c.ops->close(&c);
	close(sv[1]);
}

/* ---- the server against hostile relays ---- */

/* The server's channel for a relay that names @origin and @domain. */
static uint64_t domain_of(const uint8_t *origin, uint64_t domain)
{
	struct xd_tcp_conf conf = { &key, 0 };
	struct hs h = { -1, -1, { 0, 0, 0 }, origin, domain };
	struct xd_chan c;
	uint64_t got = ~0ull;
	pthread_t th;
	int sv[2];

	memset(&c, 0, sizeof(c));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return got;
	h.fd = sv[1];
	pthread_create(&th, NULL, hs_relay, &h);
	if (!xd_tcp_accept(sv[0], &c, &conf, 0x1d0u)) {
		got = c.domain;
		c.ops->close(&c);
	} else {
		close(sv[0]);
	}
	pthread_join(th, NULL);
	close(sv[1]);
	return h.ret || h.w.status ? ~0ull : got;
}

/*
 * Whose guest a relayed session is: the relay's id and its domain, kept
 * apart from every other pair and from the server's own guests.
 */
static void check_domains(void)
{
	static const uint8_t o1[XCUDA_UP_ORIGIN] = { 1, 2, 3 };
	static const uint8_t o2[XCUDA_UP_ORIGIN] = { 1, 2, 4 };
	uint64_t a = domain_of(o1, XD_DOMAIN_XEN | 5);
	uint64_t b = domain_of(o1, XD_DOMAIN_XEN | 5);
	uint64_t c = domain_of(o1, XD_DOMAIN_XEN | 6);
	uint64_t d = domain_of(o2, XD_DOMAIN_XEN | 5);
	uint64_t z = domain_of(o1, 0);
	struct xd_up_key other = key;

	CHECK_MSG(a != ~0ull && a == b, "domains: one relay's domain is one "
		  "domain on the server", "%#llx %#llx",
		  (unsigned long long)a, (unsigned long long)b);
	CHECK_MSG((a & XD_DOMAIN_RELAYED) && a != c && a != d && c != d,
		  "domains: another domain or another relay is another domain",
		  "%#llx %#llx %#llx", (unsigned long long)a,
		  (unsigned long long)c, (unsigned long long)d);
	CHECK_MSG(z == 0, "domains: a relay that names none shares nothing",
		  "%#llx", (unsigned long long)z);
	CHECK(a == xd_up_domain(&key, o1, XD_DOMAIN_XEN | 5) &&
	      !xd_up_domain(&key, o1, 0),
	      "domains: the server's hash, as documented");
	other.bytes[0] ^= 1;
	CHECK(xd_up_domain(&other, o1, XD_DOMAIN_XEN | 5) != a,
	      "domains: keyed: another key, another domain");
}

static void check_bad_handshakes(void)
{
	struct xcuda_up_hello hlo = { 0x12345678, XCUDA_UP_VERSION, { 0 } };
	struct xcuda_up_welcome w;
	int fd, before;

	fd = tcp_connect(port);
	CHECK(fd >= 0 && !xd_up_write_all(fd, &hlo, sizeof(hlo)) && closes(fd),
	      "a hello with a bad magic: the server hangs up");
	if (fd >= 0)
		close(fd);
	CHECK(dlog_wait(&srv, "not an xcuda relay", 1, 5000),
	      "... and logs it");

	fd = tcp_connect(port);
	CHECK(fd >= 0 && !xd_up_write_all(fd, &hlo, 10) &&
	      !shutdown(fd, SHUT_WR) && closes(fd),
	      "a short hello: the server hangs up");
	if (fd >= 0)
		close(fd);
	CHECK(dlog_wait(&srv, "no hello", 1, 5000), "... and logs it");

	before = dlog_count(&srv, "wrong MAC");
	memset(&w, 0, sizeof(w));
	fd = tcp_connect(port);
	CHECK_MSG(fd >= 0 && !handshake(fd, 1u << 20, 1, &w) &&
		  w.status == -EACCES && !w.session && closes(fd),
		  "a wrong MAC: the welcome says -EACCES, the server hangs up",
		  "status %d", w.status);
	if (fd >= 0)
		close(fd);
	CHECK(dlog_wait(&srv, "relay 127.0.0.1:", 1, 5000) &&
	      dlog_wait(&srv, "wrong MAC", before + 1, 5000),
	      "... and logs the refusal with the peer's address");
}

/*
 * A PUT frame on @fd, @nr extents from @e with @bytes bytes after each
 * (0: width * rows), then a GRAPH_LAUNCH (unless @op is another).
 */
static int put_frame(int fd, uint32_t session, uint32_t nr,
		     const struct xcuda_up_ext *e, uint64_t bytes, uint16_t op)
{
	struct xcuda_graph_launch_args la = { 1, 0 };
	struct xcuda_up_put f = { XCUDA_UP_PUT_MAGIC, nr };
	static uint8_t in[8192];
	struct xcuda_request req;
	uint32_t i;
	int ret = xd_up_write_all(fd, &f, sizeof(f));

	for (i = 0; i < nr && !ret; i++) {
		ret = xd_up_write_all(fd, &e[i], sizeof(e[i]));
		if (!ret)
			ret = xd_up_write_all(fd, in, bytes ? bytes :
					      e[i].width * e[i].rows);
	}
	if (ret || !op)
		return ret;
	raw_req(&req, session, op, &la, sizeof(la));
	return send_frame(fd, &req, 0, NULL, 0);
}

/* Hostile PUT frames: 0 once sent. */
static int put_hostile(int fd, int kind, uint32_t session)
{
	struct xcuda_up_ext e[2] = { { 4096, 64, 64, 1 },
				     { (1u << 20) - 32, 64, 64, 1 } };

	switch (kind) {
	case 0:		/* no extents */
		return put_frame(fd, session, 0, e, 0, XCUDA_OP_GRAPH_LAUNCH);
	case 1: {	/* too many: the server stops at the count */
		struct xcuda_up_put f = { XCUDA_UP_PUT_MAGIC,
					  XCUDA_UP_GEXT_MAX + 1 };

		return xd_up_write_all(fd, &f, sizeof(f));
	}
	case 2:		/* an extent past the arena */
		return put_frame(fd, session, 2, e, 64, XCUDA_OP_GRAPH_LAUNCH);
	case 3:		/* rows under their pitch */
		e[0].rows = 2;
		e[0].pitch = 32;
		return put_frame(fd, session, 1, e, 0, XCUDA_OP_GRAPH_LAUNCH);
	case 4:		/* truncated */
		return put_frame(fd, session, 1, e, 10, 0) ||
		       shutdown(fd, SHUT_WR);
	case 5:		/* before another request */
		return put_frame(fd, session, 1, e, 0, XCUDA_OP_ECHO);
	default:	/* two in a row */
		return put_frame(fd, session, 1, e, 0, 0) ||
		       put_frame(fd, session, 1, e, 0, XCUDA_OP_GRAPH_LAUNCH);
	}
}

/* HOSTFN_SETUP on a raw session: 0 once the worker took the area. */
static int raw_hf_setup(int fd, uint32_t session)
{
	struct xcuda_hostfn_setup_args a = { HF_OFF, 4096 };
	struct xcuda_request req;
	struct xcuda_up_rsp f;
	struct xcuda_up_ext e;
	uint8_t b[64];

	raw_req(&req, session, XCUDA_OP_HOSTFN_SETUP, &a, sizeof(a));
	if (send_frame(fd, &req, 0, NULL, 0) ||
	    read_answer(fd, &f, &e, 1, b, sizeof(b)))
		return -1;
	return f.rsp.id == req.hdr.id ? f.rsp.status : -1;
}

/* One hostile frame after a correct handshake: the session must end. */
static void hostile(const char *name, int kind, const char *log_needle)
{
	struct xcuda_echo_args echo = { 0, 0, 0, 0 };
	struct xcuda_up_welcome w;
	struct xcuda_request req;
	struct xcuda_up_req f;
	static uint8_t in[8192];
	int fd, before = dlog_count(&srv, log_needle), ok = 0;

	fd = raw_session(1u << 20, &w);
	if (fd >= 0 && !raw_echo(fd, w.session, 0, 4096)) {
		raw_req(&req, w.session, XCUDA_OP_ECHO, &echo, sizeof(echo));
		req.hdr.data_off = 4096;
		req.hdr.data_len = 4096;
		f = (struct xcuda_up_req){ XCUDA_UP_REQ_MAGIC, 4096, req };
		switch (kind) {
		case 0:		/* bad magic */
			f.magic = 0xdeadbeef;
			ok = !xd_up_write_all(fd, &f, sizeof(f));
			break;
		case 1:		/* in_len is not the extent's */
			f.in_len = 4000;
			ok = !xd_up_write_all(fd, &f, sizeof(f)) &&
			     !xd_up_write_all(fd, in, 4000);
			break;
		case 2:		/* bytes for an extent past the arena */
			f.req.hdr.data_off = (1u << 20) - 100;
			ok = !xd_up_write_all(fd, &f, sizeof(f)) &&
			     !xd_up_write_all(fd, in, 4096);
			break;
		case 3:		/* half a header */
			ok = !xd_up_write_all(fd, &f, sizeof(f) / 2) &&
			     !shutdown(fd, SHUT_WR);
			break;
		case 4:		/* fewer bytes than in_len */
			ok = !xd_up_write_all(fd, &f, sizeof(f)) &&
			     !xd_up_write_all(fd, in, 1000) &&
			     !shutdown(fd, SHUT_WR);
			break;
		case 5:		/* a completion before any slot area */
			ok = !send_done(fd, 0, 1, 0);
			break;
		case 6:		/* a completion for slot 64 */
		case 7:		/* more extents than a frame carries */
		case 8:		/* half a completion */
			ok = !raw_hf_setup(fd, w.session);
			if (ok && kind == 8) {
				struct xcuda_up_done d = {
					XCUDA_UP_DONE_MAGIC, 0, 0, 0
				};

				ok = !xd_up_write_all(fd, &d, 8) &&
				     !shutdown(fd, SHUT_WR);
			} else if (ok) {
				ok = !send_done(fd, kind == 6 ?
						XCUDA_HOSTFN_SLOTS : 1, 1,
						kind == 7 ?
						XCUDA_UP_MAX_OUT + 1 : 0);
			}
			break;
		case 16: {	/* mapped bytes, nothing pinned */
			struct xcuda_up_ext x = { 4096, 64, 64, 1 };

			ok = !xmap_frame(fd, 1, &x, 0);
			break;
		}
		case 17: {	/* mapped bytes, no runs */
			struct xcuda_up_xmap x = { XCUDA_UP_XMAP_MAGIC, 0 };

			ok = !xd_up_write_all(fd, &x, sizeof(x));
			break;
		}
		default:	/* PUT frames (kind - 9: put_hostile) */
			ok = !put_hostile(fd, kind - 9, w.session);
			break;
		}
		ok = ok && closes(fd);
	}
	if (fd >= 0)
		close(fd);
	CHECK_MSG(ok && dlog_wait(&srv, log_needle, before + 1, 5000), name,
		  "ok %d, no \"%s\" in the server's log", ok, log_needle);
}

static void check_hostile_frames(void)
{
	struct xcuda_echo_args echo = { 0, 0, 0, 0 };
	struct xcuda_up_welcome w;
	struct xcuda_request req;
	struct xcuda_up_rsp f;
	struct xcuda_up_ext e;
	uint8_t b[64];
	int fd, ok;

	hostile("hostile frame, bad magic: that session ends", 0,
		"(bad magic)");
	hostile("hostile frame, in_len not the extents': that session ends",
		1, "not the request's extents");
	hostile("hostile frame, bytes for an extent past the arena: that "
		"session ends", 2, "not the request's extents");
	hostile("hostile frame, truncated header: that session ends", 3,
		"(a truncated request)");
	hostile("hostile frame, truncated bytes: that session ends", 4,
		"(a truncated request)");
	hostile("hostile completion before any HOSTFN_SETUP: that session "
		"ends", 5, "(a bad completion)");
	hostile("hostile completion for slot 64: that session ends", 6,
		"(a bad completion)");
	hostile("hostile completion with 4097 extents: that session ends", 7,
		"(a bad completion)");
	hostile("hostile completion cut short: that session ends", 8,
		"(a truncated completion)");

	/* A completion nobody waits for changes nothing else. */
	fd = raw_session(1u << 20, &w);
	ok = fd >= 0 && !raw_hf_setup(fd, w.session) &&
	     !send_done(fd, 5, 12345, 0) && !raw_echo(fd, w.session, 0, 4096);
	CHECK(ok, "a completion for a slot nobody waits on: the session "
	      "goes on");
	if (fd >= 0)
		close(fd);

	hostile("hostile PUT frame, no extents: that session ends", 9,
		"(a graph's bytes: bad count)");
	hostile("hostile PUT frame, more than XCUDA_UP_GEXT_MAX extents: that "
		"session ends", 10, "(a graph's bytes: bad count)");
	hostile("hostile PUT frame, an extent past the arena: that session "
		"ends", 11, "(a graph's bytes: an extent outside the arena)");
	hostile("hostile PUT frame, rows under their pitch: that session "
		"ends", 12, "(a graph's bytes: an extent outside the arena)");
	hostile("hostile PUT frame, truncated: that session ends", 13,
		"(a truncated graph's bytes)");
	hostile("hostile PUT frame, before a request other than GRAPH_LAUNCH: "
		"that session ends", 14, "(a graph's bytes without their launch)");
	hostile("hostile PUT frames, two in a row: that session ends", 15,
		"(a graph's bytes without their launch)");

	hostile("hostile XMAP frame, bytes outside any pinned extent: that "
		"session ends", 16, "(mapped bytes outside a pinned extent)");
	hostile("hostile XMAP frame, no runs: that session ends", 17,
		"(mapped bytes: bad count)");

	/* A well-formed PUT and its launch: answered, the session lives. */
	fd = raw_session(1u << 20, &w);
	ok = fd >= 0;
	if (ok) {
		struct xcuda_up_ext pe = { 4096, 100, 200, 3 };

		ok = !put_frame(fd, w.session, 1, &pe, 0,
				XCUDA_OP_GRAPH_LAUNCH) &&
		     !read_answer(fd, &f, &e, 1, b, sizeof(b)) &&
		     f.magic == XCUDA_UP_RSP_MAGIC &&
		     f.rsp.op == XCUDA_OP_GRAPH_LAUNCH &&
		     !raw_echo(fd, w.session, 0, 4096);
	}
	CHECK(ok, "a PUT frame before a GRAPH_LAUNCH: the launch is answered, "
	      "the session lives");
	if (fd >= 0)
		close(fd);

	/* Past the arena without bytes: the worker refuses the request. */
	fd = raw_session(1u << 20, &w);
	ok = fd >= 0;
	if (ok) {
		raw_req(&req, w.session, XCUDA_OP_ECHO, &echo, sizeof(echo));
		req.hdr.data_off = (1u << 20) - 100;
		req.hdr.data_len = 4096;
		ok = !send_frame(fd, &req, 0, NULL, 0) &&
		     !read_answer(fd, &f, &e, 1, b, sizeof(b)) &&
		     f.rsp.status == cudaErrorInvalidValue && !f.nr_out &&
		     !raw_echo(fd, w.session, 0, 4096);
	}
	CHECK(ok, "an extent past the arena, no bytes: the worker answers "
	      "cudaErrorInvalidValue, the session lives");
	if (fd >= 0)
		close(fd);
	fd = raw_session(1u << 20, &w);
	CHECK(fd >= 0 && !raw_echo(fd, w.session, 8192, 8192) &&
	      dmn_alive(&srv), "the server still serves new sessions");
	if (fd >= 0)
		close(fd);
}

/* ---- refusals ---- */

static void check_wrong_key(void)
{
	const char *args[] = { "--upstream", NULL, "--key", key2p, NULL };
	char addr[64];
	struct xc_transport t;
	struct xcuda_open_res r;
	long t0;
	int st, before = dlog_count(&srv, "hung up on our challenge");

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	args[1] = addr;
	REQUIRE_MSG(!dmn_start(&rel2, args, NULL), "relay with another key",
		    "did not start");
	t0 = now_ms();
	st = g_open(&t, &rel2) ? -1 : do_open(&t, &r);
	CHECK_MSG(st == cudaErrorDevicesUnavailable && now_ms() - t0 < FAIL_MS,
		  "relay with another key: the guest's session fails at once "
		  "(cudaErrorDevicesUnavailable)", "status %d after %ld ms",
		  st, now_ms() - t0);
	if (st != -1)
		t.ops->close(&t);
	CHECK(dlog_wait(&rel2, "the server does not know the key", 1, 5000),
	      "... the relay logs why");
	CHECK(dlog_wait(&srv, "hung up on our challenge", before + 1, 5000),
	      "... the server logs the refusal");
	dmn_stop(&rel2, SIGTERM);
}

struct fake {
	int lfd;
	int sent_open;	/* bytes the relay sent after our challenge */
	int ok;
};

/* A server without the key: a challenge with a MAC it cannot make. */
static void *fake_server(void *arg)
{
	struct fake *fk = arg;
	struct xcuda_up_hello h;
	struct xcuda_up_chal ch;
	struct pollfd p = { .fd = fk->lfd, .events = POLLIN };
	char b[64];
	ssize_t r;
	int fd;

	if (poll(&p, 1, 10000) != 1)
		return NULL;
	fd = accept(fk->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	if (!rd(fd, &h, sizeof(h))) {
		memset(&ch, 0x42, sizeof(ch));
		ch.magic = XCUDA_UP_MAGIC;
		ch.version = XCUDA_UP_VERSION;
		if (!xd_up_write_all(fd, &ch, sizeof(ch))) {
			p.fd = fd;
			if (poll(&p, 1, 5000) == 1) {
				r = recv(fd, b, sizeof(b), 0);
				fk->sent_open = r > 0 ? (int)r : 0;
				fk->ok = r == 0;
			}
		}
	}
	close(fd);
	return NULL;
}

static void check_keyless_server(void)
{
	struct fake fk = { -1, 0, 0 };
	struct xc_transport t;
	struct xcuda_open_res r;
	pthread_t th;
	int st;

	fk.lfd = relay_to_here(&rel3, "fake server", "relay to a fake server",
			       &fport);
	pthread_create(&th, NULL, fake_server, &fk);
	st = g_open(&t, &rel3) ? -1 : do_open(&t, &r);
	pthread_join(th, NULL);
	CHECK_MSG(st == cudaErrorDevicesUnavailable && fk.ok &&
		  !fk.sent_open, "a server without the key: the relay hangs "
		  "up on its challenge, sends nothing, the guest's session "
		  "fails", "status %d, relay sent %d bytes, ok %d", st,
		  fk.sent_open, fk.ok);
	if (st != -1)
		t.ops->close(&t);
	CHECK(dlog_wait(&rel3, "the server does not know the key", 1, 5000),
	      "... the relay logs why");
	close(fk.lfd);
	dmn_stop(&rel3, SIGTERM);
}

/* ---- graph extents from a server (a fake one with the key) ---- */

struct gfake {
	int lfd;
	int kind;	/* 0: well-formed; else a hostile GEXT frame */
	int ok;
	char why[160];
};

/* The server's half of the handshake, granting the arena asked for. */
static int gf_handshake(int fd)
{
	struct xcuda_up_welcome w = { 0, 0x5e5, 0 };
	struct xcuda_up_hello h;
	struct xcuda_up_chal ch;
	struct xcuda_up_open o;

	if (rd(fd, &h, sizeof(h)))
		return -1;
	memset(&ch, 0, sizeof(ch));
	ch.magic = XCUDA_UP_MAGIC;
	ch.version = XCUDA_UP_VERSION;
	if (xd_up_nonce(ch.nonce) ||
	    xd_up_mac(&key, XD_UP_LABEL_SERVER, h.nonce, ch.nonce, ch.mac) ||
	    xd_up_write_all(fd, &ch, sizeof(ch)) || rd(fd, &o, sizeof(o)) ||
	    !xd_up_mac_ok(&key, XD_UP_LABEL_RELAY, ch.nonce, h.nonce, o.mac))
		return -1;
	w.arena_size = o.arena_size;
	return xd_up_write_all(fd, &w, sizeof(w));
}

/* The rest of a request frame after its magic, its bytes skipped. */
static int gf_req_rest(int fd, struct xcuda_up_req *f)
{
	static uint8_t skip[4096];
	uint32_t n;
	int ret = rd(fd, (uint8_t *)f + 4, sizeof(*f) - 4);

	for (n = 0; !ret && n < f->in_len; n += sizeof(skip))
		ret = rd(fd, skip, f->in_len - n < sizeof(skip) ?
			 f->in_len - n : sizeof(skip));
	return ret;
}

static int gf_req(int fd, struct xcuda_up_req *f)
{
	int ret = rd(fd, &f->magic, 4);

	if (!ret && f->magic != XCUDA_UP_REQ_MAGIC)
		return -EPROTO;
	return ret ? ret : gf_req_rest(fd, f);
}

static int gf_answer(int fd, const struct xcuda_up_req *f)
{
	struct xcuda_up_rsp r;

	memset(&r, 0, sizeof(r));
	r.magic = XCUDA_UP_RSP_MAGIC;
	r.rsp.id = f->req.hdr.id;
	r.rsp.op = f->req.hdr.op;
	r.rsp.flags = f->req.hdr.flags;
	return xd_up_write_all(fd, &r, sizeof(r));
}

static int gf_gext(int fd, uint32_t exec, uint32_t nr, uint32_t rsvd,
		   const struct xcuda_up_ext *e, unsigned int ne)
{
	struct xcuda_up_gext g = { XCUDA_UP_GEXT_MAGIC, exec, nr, rsvd };
	uint8_t b[sizeof(g) + 2 * sizeof(*e)];

	/* One write: a relay that hangs up at the header fails no write. */
	if (ne > 2)
		return -1;
	memcpy(b, &g, sizeof(g));
	if (ne)
		memcpy(b + sizeof(g), e, ne * sizeof(*e));
	return xd_up_write_all(fd, b, sizeof(g) + ne * sizeof(*e)) ? -1 : 0;
}

/* The GRAPH_LAUNCH of exec @exec, in the frame read (op, args). */
static int gf_is_launch(const struct xcuda_up_req *f, uint32_t exec)
{
	struct xcuda_graph_launch_args la;

	memcpy(&la, f->req.args, sizeof(la));
	return f->req.hdr.op == XCUDA_OP_GRAPH_LAUNCH && la.graphExec == exec;
}

/*
 * After a hostile frame: OPEN's answer, which the relay, having hung up
 * already, may not take; then whether it closes.
 */
static int gf_end(int fd, const struct xcuda_up_req *f)
{
	(void)gf_answer(fd, f);
	return closes(fd);
}

#define GF_FAIL(...) do {						\
		snprintf(gf->why, sizeof(gf->why), __VA_ARGS__);		\
		goto out;						\
	} while (0)

static void *gext_server(void *arg)
{
	static const struct xcuda_up_ext ok2[2] = { { 4096, 100, 100, 1 },
						    { 8192, 16, 32, 4 } };
	struct gfake *gf = arg;
	struct pollfd p = { .fd = gf->lfd, .events = POLLIN };
	struct xcuda_up_ext e[2] = { ok2[0], ok2[1] }, x;
	struct xcuda_up_req f;
	struct xcuda_up_put pf;
	uint8_t row[128];
	unsigned int i, k;
	int fd = -1;

	if (poll(&p, 1, 10000) != 1 || (fd = accept(gf->lfd, NULL, NULL)) < 0)
		GF_FAIL("no connection");
	if (gf_handshake(fd) || gf_req(fd, &f) ||
	    f.req.hdr.op != XCUDA_OP_OPEN)
		GF_FAIL("handshake or OPEN");
	switch (gf->kind) {
	case 0:
		break;
	case 1:		/* past the arena */
		e[1].off = GARENA - 10;
		gf->ok = !gf_gext(fd, 5, 2, 0, e, 2) && gf_end(fd, &f);
		goto out;
	case 2:		/* too many */
		gf->ok = !gf_gext(fd, 5, XCUDA_UP_GEXT_MAX + 1, 0, e, 2) &&
			 closes(fd);
		goto out;
	case 3:		/* reserved bits */
		gf->ok = !gf_gext(fd, 5, 2, 1, e, 2) && gf_end(fd, &f);
		goto out;
	case 4:		/* rows under their pitch */
		e[1].pitch = 8;
		gf->ok = !gf_gext(fd, 5, 2, 0, e, 2) && gf_end(fd, &f);
		goto out;
	default:	/* truncated */
		gf->ok = !gf_gext(fd, 5, 2, 0, e, 1) &&
			 !shutdown(fd, SHUT_WR) && closes(fd);
		goto out;
	}
	/* Exec 5's spans, then OPEN's answer. */
	if (gf_gext(fd, 5, 2, 0, ok2, 2) || gf_answer(fd, &f))
		GF_FAIL("cannot answer");
	/* Its launch: a PUT with the guest's bytes first. */
	if (rd(fd, &pf, sizeof(pf)) || pf.magic != XCUDA_UP_PUT_MAGIC ||
	    pf.nr != 2)
		GF_FAIL("no PUT before the launch (magic %#x nr %u)", pf.magic,
			pf.nr);
	for (i = 0; i < 2; i++) {
		if (rd(fd, &x, sizeof(x)) || memcmp(&x, &ok2[i], sizeof(x)))
			GF_FAIL("PUT extent %u is not the one announced", i);
		for (k = 0; k < x.rows; k++) {
			if (rd(fd, row, x.width))
				GF_FAIL("PUT rows");
			if (row[0] != (uint8_t)(x.off + k * x.pitch) ||
			    row[x.width - 1] !=
			    (uint8_t)(x.off + k * x.pitch + x.width - 1))
				GF_FAIL("PUT extent %u row %u: not the guest's "
					"bytes", i, k);
		}
	}
	if (gf_req(fd, &f) || !gf_is_launch(&f, 5) || gf_answer(fd, &f))
		GF_FAIL("the launch does not follow its PUT");
	/* Another exec's launch: nothing before it; then 5 is forgotten. */
	if (gf_req(fd, &f) || !gf_is_launch(&f, 6))
		GF_FAIL("a PUT for an exec never announced");
	if (gf_gext(fd, 5, 0, 0, NULL, 0) || gf_answer(fd, &f))
		GF_FAIL("cannot answer");
	if (gf_req(fd, &f) || !gf_is_launch(&f, 5) || gf_answer(fd, &f))
		GF_FAIL("a PUT for an exec forgotten");
	/* CLOSE, or the relay hangs up. */
	if (!gf_req(fd, &f))
		gf_answer(fd, &f);
	gf->ok = 1;
out:
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int g_launch(struct xc_transport *t, uint32_t exec)
{
	struct xcuda_graph_launch_args la = { exec, 0 };

	return d_call(t, XCUDA_OP_GRAPH_LAUNCH, &la, sizeof(la), NULL, 0);
}

static void check_relay_graph(void)
{
	static const char *const names[] = {
		NULL, "an extent past the arena",
		"more than XCUDA_UP_GEXT_MAX extents", "reserved bits set",
		"rows under their pitch", "truncated",
	};
	struct gfake gf = { -1, 0, 0, "" };
	struct xcuda_open_res r;
	struct xc_transport t;
	pthread_t th;
	uint8_t *p;
	uint32_t i;
	int st, k, before, gport;

	gf.lfd = relay_to_here(&rel3, "fake server", "relay to a fake server",
			       &gport);

	pthread_create(&th, NULL, gext_server, &gf);
	st = g_open(&t, &rel3) ? -1 : do_open(&t, &r);
	if (!st) {
		p = (uint8_t *)t.arena;
		for (i = 0; i < 16384; i++)
			p[i] = (uint8_t)i;
		st = g_launch(&t, 5);
		st = st ? st : g_launch(&t, 6);
		st = st ? st : g_launch(&t, 5);
	}
	if (st != -1)
		t.ops->close(&t);
	pthread_join(th, NULL);
	CHECK_MSG(!st && gf.ok, "relay: a GRAPH_LAUNCH of an exec the server "
		  "announced is preceded by a PUT of the guest's bytes of its "
		  "extents; none for another exec, none once it is forgotten",
		  "status %d: %s", st, gf.why);

	for (k = 1; k <= 5; k++) {
		before = dlog_count(&rel3, "a graph's extents");
		gf.kind = k;
		gf.ok = 0;
		gf.why[0] = 0;
		pthread_create(&th, NULL, gext_server, &gf);
		st = g_open(&t, &rel3) ? -1 : do_open(&t, &r);
		if (st != -1)
			t.ops->close(&t);
		pthread_join(th, NULL);
		CHECK_MSG(st == cudaErrorDevicesUnavailable && gf.ok &&
			  dlog_wait(&rel3, "a graph's extents", before + 1,
				    5000) && dmn_alive(&rel3),
			  check_name("relay: a hostile GEXT frame (%s) ends "
				     "that session only, with a clear error",
				     names[k]),
			  "status %d ok %d %s", st, gf.ok, gf.why);
	}
	close(gf.lfd);
	dmn_stop(&rel3, SIGTERM);
}

/* ---- host functions through the relay ---- */

static int echo_status(struct xc_transport *t);

/* A server that knows the key and answers 0 to everything (scripted). */
struct hfsrv {
	int lfd;
	int bad;		/* after the completion: a record for slot 64 */
	/* atomic, for the test */
	int ready;		/* the record went */
	uint32_t got_slot, got_done, got_ext;
	uint64_t got_off, got_len;	/* its first extent */
	uint8_t got_byte;		/* ... the extent's first byte */
	int got;		/* a completion came */
	int copies;		/* MEMCPY requests seen */
};

#define HF_POFF	131072u

static int hf_send_rec(int fd, uint32_t slot, uint32_t seq)
{
	struct xcuda_up_rec r = { XCUDA_UP_REC_MAGIC, slot, 0xfeed, seq,
				  3, 0, 6, 6, HF_POFF };

	return xd_up_write_all(fd, &r, sizeof(r)) ||
	       xd_up_write_all(fd, "abcdef", 6);
}

static void *hf_server(void *arg)
{
	struct hfsrv *hs = arg;
	struct xcuda_up_hello h;
	struct xcuda_up_chal ch;
	struct xcuda_up_open o;
	struct xcuda_up_welcome w;
	struct xcuda_up_req f;
	struct xcuda_up_rsp rsp;
	struct pollfd p = { .fd = hs->lfd, .events = POLLIN };
	static uint8_t skip[1 << 16];
	int fd;

	if (poll(&p, 1, 10000) != 1)
		return NULL;
	fd = accept(hs->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	memset(&ch, 0, sizeof(ch));
	ch.magic = XCUDA_UP_MAGIC;
	ch.version = XCUDA_UP_VERSION;
	xd_up_nonce(ch.nonce);
	if (rd(fd, &h, sizeof(h)) ||
	    xd_up_mac(&key, XD_UP_LABEL_SERVER, h.nonce, ch.nonce, ch.mac) ||
	    xd_up_write_all(fd, &ch, sizeof(ch)) || rd(fd, &o, sizeof(o)))
		goto out;
	w = (struct xcuda_up_welcome){ 0, 0x4321, o.arena_size };
	if (xd_up_write_all(fd, &w, sizeof(w)))
		goto out;
	for (;;) {
		/* A completion is 16 bytes, a request's head longer. */
		if (xd_up_read_all(fd, &f, 16, xd_up_deadline(20000)))
			break;
		if (f.magic == XCUDA_UP_DONE_MAGIC) {
			struct xcuda_up_done d;
			struct xcuda_up_ext x;
			uint32_t i;

			memcpy(&d, &f, sizeof(d));
			for (i = 0; i < d.nr_ext; i++) {
				if (rd(fd, &x, sizeof(x)) ||
				    x.width * x.rows > sizeof(skip) ||
				    rd(fd, skip, x.width * x.rows))
					goto out;
				if (!i) {
					hs->got_off = x.off;
					hs->got_len = x.width * x.rows;
					hs->got_byte = skip[0];
				}
			}
			hs->got_ext = d.nr_ext;
			__atomic_store_n(&hs->got_slot, d.slot,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&hs->got_done, d.done,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&hs->got, 1, __ATOMIC_RELEASE);
			if (hs->bad && hf_send_rec(fd, XCUDA_HOSTFN_SLOTS, 6))
				break;
			continue;
		}
		if (f.magic != XCUDA_UP_REQ_MAGIC || f.in_len > sizeof(skip) ||
		    rd(fd, (uint8_t *)&f + 16, sizeof(f) - 16) ||
		    rd(fd, skip, f.in_len))
			break;
		memset(&rsp, 0, sizeof(rsp));
		rsp.magic = XCUDA_UP_RSP_MAGIC;
		rsp.rsp.id = f.req.hdr.id;
		rsp.rsp.op = f.req.hdr.op;
		rsp.rsp.flags = f.req.hdr.flags;
		if (xd_up_write_all(fd, &rsp, sizeof(rsp)))
			break;
		/*
		 * After the second copy (the first is before the enqueue), as
		 * a trampoline whose stream was busy.
		 */
		if (f.req.hdr.op == XCUDA_OP_MEMCPY && ++hs->copies == 2) {
			if (hf_send_rec(fd, 2, 5))
				break;
			__atomic_store_n(&hs->ready, 1, __ATOMIC_RELEASE);
		}
	}
out:
	close(fd);
	return NULL;
}

static int wait_flag(const int *f, long ms)
{
	long end = now_ms() + ms;

	while (!__atomic_load_n(f, __ATOMIC_ACQUIRE) && now_ms() < end)
		nap_ms(2);
	return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

static void check_relay_records(void)
{
	struct xcuda_hostfn_setup_args hf = { HF_OFF, 4096 };
	struct xcuda_host_func_launch_args fl = { 0xfeed, 0, 0 };
	struct xcuda_host_func_launch_res fr;
	struct xcuda_memcpy_args mc = { 0 };
	struct hfsrv hs;
	struct xcuda_hostfn_area *a;
	struct xcuda_open_res r;
	struct xc_transport t;
	pthread_t th;
	long t0;
	int st, ok, hport;

	memset(&hs, 0, sizeof(hs));
	hs.bad = 1;
	hs.lfd = relay_to_here(&rel4, "scripted server",
			       "relay to a scripted server", &hport);
	pthread_create(&th, NULL, hf_server, &hs);
	st = g_open(&t, &rel4) ? -1 : do_open(&t, &r);
	CHECK_MSG(!st, "relay to a scripted server: a session", "status %d",
		  st);
	if (st == -1)
		goto out;
	a = (struct xcuda_hostfn_area *)((uint8_t *)t.arena + HF_OFF);
	memset(a, 0, sizeof(*a));
	st = d_call(&t, XCUDA_OP_HOSTFN_SETUP, &hf, sizeof(hf), NULL, 0);
	/*
	 * A copy from the arena, the function's enqueue, a copy after it:
	 * the function's completion brings the second copy's bytes again.
	 */
	mc.dst = 0x7f0000000000ull;
	mc.src = HF_POFF + 8192;
	mc.count = 64;
	mc.dir = XCUDA_COPY_H2D;
	mc.flags = XCUDA_COPY_ASYNC;
	if (!st)
		st = d_call(&t, XCUDA_OP_MEMCPY, &mc, sizeof(mc), NULL, 0);
	if (!st)
		st = d_call(&t, XCUDA_OP_HOST_FUNC_LAUNCH, &fl, sizeof(fl), &fr,
			    sizeof(fr));
	mc.src = HF_POFF + 4096;
	memset((uint8_t *)t.arena + HF_POFF + 4096, 0x11, 64);
	if (!st)
		st = d_call(&t, XCUDA_OP_MEMCPY, &mc, sizeof(mc), NULL, 0);
	ok = !st && wait_flag(&hs.ready, 5000);
	t0 = now_ms();
	while (ok && !__atomic_load_n(&a->slot[2].seq, __ATOMIC_ACQUIRE) &&
	       now_ms() - t0 < 5000)
		nap_ms(1);
	CHECK_MSG(ok && a->slot[2].seq == 5 && a->slot[2].token == 0xfeed &&
		  a->slot[2].status == 3 && !a->slot[2].flags &&
		  a->slot[2].arg == 6 && !a->slot[2].done &&
		  __atomic_load_n(&a->wake, __ATOMIC_SEQ_CST) == 1 &&
		  !memcmp((uint8_t *)t.arena + HF_POFF, "abcdef", 6) &&
		  !a->slot[1].seq && !a->slot[3].seq,
		  "relay: a server's record lands in the guest's slot area "
		  "with its payload, and the wake word is bumped",
		  "setup %d seq %u token %llx wake %u", st, a->slot[2].seq,
		  (unsigned long long)a->slot[2].token, a->wake);
	/* Not the seq delivered: nothing goes back. */
	__atomic_store_n(&a->slot[2].done, 4, __ATOMIC_RELEASE);
	nap_ms(100);
	CHECK(!__atomic_load_n(&hs.got, __ATOMIC_ACQUIRE),
	      "relay: a done word that is not the record's seq is not sent");
	/* The function wrote the copy's source; the guest completes it. */
	memset((uint8_t *)t.arena + HF_POFF + 4096, 0x77, 64);
	__atomic_store_n(&a->slot[2].done, 5, __ATOMIC_RELEASE);
	syscall(SYS_futex, &a->slot[2].done, FUTEX_WAKE, INT_MAX, NULL, NULL,
		0);
	/* Before the message's arguments read what the server wrote. */
	ok = wait_flag(&hs.got, 5000);
	CHECK_MSG(ok && hs.got_slot == 2 &&
		  hs.got_done == 5, "relay: the guest's completion goes to "
		  "the server as an xdon frame", "got %d slot %u done %u",
		  hs.got, hs.got_slot, hs.got_done);
	CHECK_MSG(hs.got_ext == 1 && hs.got_off == HF_POFF + 4096 &&
		  hs.got_len == 64 && hs.got_byte == 0x77,
		  "relay: ... with the bytes of the copy sent after the "
		  "function's enqueue, as the function left them (not the "
		  "copy's before it)", "nr_ext %u off %llu len %llu byte %#x",
		  hs.got_ext, (unsigned long long)hs.got_off,
		  (unsigned long long)hs.got_len, hs.got_byte);
	/* The scripted server answers with a record for slot 64. */
	t0 = now_ms();
	st = echo_status(&t);
	CHECK_MSG(st == cudaErrorDevicesUnavailable ||
		  (st <= -1000 && now_ms() - t0 < FAIL_MS),
		  "relay: a record for slot 64 ends the session (the next "
		  "call fails)", "status %d after %ld ms", st, now_ms() - t0);
	CHECK(dlog_wait(&rel4, "a host function's record", 1, 5000),
	      "... the relay says why");
	t.ops->close(&t);
out:
	pthread_join(th, NULL);
	close(hs.lfd);
	dmn_stop(&rel4, SIGTERM);
}

/* ---- end to end, CUDA played by threads ---- */

#define E_AREA	(6u << 20)
#define E_SRC	(7u << 20)

static int e2e_runs;

/* The program's host function: slow, and it writes a copy's source. */
static void CUDART_CB e2e_fn(void *data)
{
	nap_ms(100);
	memset(data, 0x5c, 64);
	__atomic_add_fetch(&e2e_runs, 1, __ATOMIC_SEQ_CST);
}

struct e2e {
	int lfd;
	/* results, read after the join */
	int ok_sync;		/* the trampoline returned within the sync */
	int refreshed;		/* the copy's source was the function's */
	int requests;
};

static void *e2e_tramp(void *ud)
{
	xd_hostfn_trampoline(ud);
	return NULL;
}

/*
 * The GPU server's worker, without CUDA: OPEN and HOSTFN_SETUP as the
 * worker does them; HOST_FUNC_LAUNCH runs the trampoline on a thread of
 * its own, as CUDA would; STREAM_SYNCHRONIZE waits for it, as CUDA
 * would, with nobody else reading the socket; MEMCPY is only answered.
 */
static void *e2e_server(void *arg)
{
	struct e2e *e = arg;
	struct xd_tcp_conf conf = { &key, 0 };
	const struct xd_chan_ops *ops;
	struct xcuda_request req;
	struct xcuda_response rsp;
	struct pollfd p = { .fd = e->lfd, .events = POLLIN };
	struct xd_session s;
	struct xd_chan c;
	pthread_t th;
	void *ud = NULL;
	int fd, ret, tramp = 0, end = 0;

	if (poll(&p, 1, 10000) != 1)
		return NULL;
	fd = accept(e->lfd, NULL, NULL);
	if (fd < 0 || xd_tcp_accept(fd, &c, &conf, 0x77e2e))
		return NULL;
	/* No ops at init: a worker's session would take over our stdout. */
	ops = c.ops;
	c.ops = NULL;
	if (xd_session_init(&s, &c)) {
		ops->close(&c);
		return NULL;
	}
	c.ops = ops;
	while (!end && (ret = c.ops->next(&c, &req, 5000)) >= 0) {
		if (!ret)
			break;
		e->requests++;
		memset(&rsp, 0, sizeof(rsp));
		rsp.id = req.hdr.id;
		rsp.op = req.hdr.op;
		rsp.flags = req.hdr.flags;
		if (req.hdr.op == XCUDA_OP_HOST_FUNC_LAUNCH) {
			struct xcuda_host_func_launch_args a;

			memcpy(&a, req.args, sizeof(a));
			rsp.status = xd_hostfn_ctx_new(&s, a.token,
						       XD_HOSTFN_ONESHOT, &ud);
			if (!rsp.status)
				tramp = !pthread_create(&th, NULL, e2e_tramp,
							ud);
		} else if (req.hdr.op == XCUDA_OP_STREAM_SYNCHRONIZE) {
			if (tramp) {
				pthread_join(th, NULL);
				tramp = 0;
				e->ok_sync = __atomic_load_n(&e2e_runs,
						__ATOMIC_SEQ_CST) == 1;
				/* The copy queued behind it would run now. */
				e->refreshed = c.arena[E_SRC] == 0x5c &&
					       c.arena[E_SRC + 63] == 0x5c;
			}
		} else if (req.hdr.op == XCUDA_OP_MEMCPY) {
			/* Queued: it runs once the function returned. */
		} else {
			end = xd_handle(&s, &req, &rsp);
		}
		if (c.ops->reply(&c, &rsp, 0) < 0)
			break;
	}
	if (tramp)
		pthread_join(th, NULL);
	xd_session_fini(&s);
	c.ops->close(&c);
	return NULL;
}

static void check_e2e_hostfn(void)
{
	struct xcuda_hostfn_setup_args hf = { E_AREA, 4096 };
	struct xcuda_host_func_launch_args fl = { 0, 0, 0 };
	struct xcuda_host_func_launch_res fr;
	struct xcuda_stream_synchronize_args ss = { 0 };
	struct xcuda_memcpy_args mc = { 0 };
	uint8_t *src;
	struct xc_hostfn h = { .kind = XC_HOSTFN_HOST, .fn.host = e2e_fn };
	struct xcuda_open_res r;
	/* Kept for the runner thread (static: not a leak). */
	static struct xc_transport t;
	struct e2e e;
	pthread_t th;
	long t0, dt = 0;
	int st, sst = -1, mst = -1, eport;

	memset(&e, 0, sizeof(e));
	e.lfd = relay_to_here(&rel5, "in-process server",
			      "relay to this process", &eport);
	pthread_create(&th, NULL, e2e_server, &e);
	st = g_open(&t, &rel5) ? -1 : do_open(&t, &r);
	CHECK_MSG(!st, "end to end: a session through the relay to this "
		  "process", "status %d", st);
	if (st == -1)
		goto out;
	src = (uint8_t *)t.arena + E_SRC;
	memset((uint8_t *)t.arena + E_AREA, 0, 4096);
	h.data = src;
	st = d_call(&t, XCUDA_OP_HOSTFN_SETUP, &hf, sizeof(hf), NULL, 0);
	if (!st)
		st = xc_hostfn_serve((struct xcuda_hostfn_area *)
				     ((uint8_t *)t.arena + E_AREA),
				     !!(t.flags & XC_TRANSPORT_SHARED_FUTEX));
	if (!st)
		st = xc_hostfn_register(&h, 0, &fl.token);
	memset(src, 0x11, 64);
	if (!st)
		st = d_call(&t, XCUDA_OP_HOST_FUNC_LAUNCH, &fl, sizeof(fl), &fr,
			    sizeof(fr));
	/* A copy from the arena queued behind the function. */
	mc.dst = 0x7f0000000000ull;
	mc.src = E_SRC;
	mc.count = 64;
	mc.dir = XCUDA_COPY_H2D;
	mc.flags = XCUDA_COPY_ASYNC;
	t0 = now_ms();
	if (!st)
		mst = d_call(&t, XCUDA_OP_MEMCPY, &mc, sizeof(mc), NULL, 0);
	/* The "worker" blocks in the sync while the function runs. */
	if (!st)
		sst = d_call(&t, XCUDA_OP_STREAM_SYNCHRONIZE, &ss, sizeof(ss),
			     NULL, 0);
	dt = now_ms() - t0;
	/*
	 * The session ends, the transport stays: the runner thread serves
	 * its arena for the rest of the process.
	 */
	(void)d_call(&t, XCUDA_OP_CLOSE, NULL, 0, NULL, 0);
	pthread_join(th, NULL);
	CHECK_MSG(!st && !sst && __atomic_load_n(&e2e_runs,
						 __ATOMIC_SEQ_CST) == 1 &&
		  e.ok_sync && dt >= 80,
		  "end to end: the guest's runner runs the function while the "
		  "server's worker waits in a sync; the trampoline reads the "
		  "completion itself", "status %d sync %d runs %d ok %d "
		  "after %ld ms", st, sst, e2e_runs, e.ok_sync, dt);
	CHECK_MSG(!mst && e.refreshed, "end to end: ... a copy from the "
		  "arena sent after its enqueue, queued behind it, finds what "
		  "the function wrote", "memcpy %d refreshed %d", mst,
		  e.refreshed);
	goto done;
out:
	pthread_join(th, NULL);
done:
	close(e.lfd);
	dmn_stop(&rel5, SIGTERM);
}

/* ---- with a GPU: a host function through the chain ---- */

#define G_AREA	(4u << 20)
#define G_PIN	(8u << 20)	/* a pinned page: the copy's source */
#define G_BACK	(12u << 20)

/* The guest library's runner, for one record of @token. */
struct grun {
	struct xcuda_hostfn_area *a;
	uint8_t *src;
	uint64_t token;
	int ran;	/* atomic: 1 once completed, -1: no record came */
};

static void *grun_main(void *arg)
{
	struct grun *g = arg;
	long end = now_ms() + FAIL_MS;
	int i;

	while (now_ms() < end) {
		for (i = 0; i < XCUDA_HOSTFN_SLOTS; i++) {
			struct xcuda_hostfn_slot *sl = &g->a->slot[i];
			uint32_t seq = __atomic_load_n(&sl->seq,
						       __ATOMIC_ACQUIRE);

			if (seq == __atomic_load_n(&sl->done,
						   __ATOMIC_RELAXED) ||
			    sl->token != g->token)
				continue;
			/* The function: slow, and it writes the source. */
			nap_ms(50);
			memset(g->src, 0x5c, 256);
			__atomic_store_n(&sl->done, seq, __ATOMIC_RELEASE);
			syscall(SYS_futex, &sl->done, FUTEX_WAKE, INT_MAX,
				NULL, NULL, 0);
			__atomic_store_n(&g->ran, 1, __ATOMIC_RELEASE);
			return NULL;
		}
		nap_ms(1);
	}
	__atomic_store_n(&g->ran, -1, __ATOMIC_RELEASE);
	return NULL;
}

static void check_gpu_hostfn(void)
{
	struct xcuda_hostfn_setup_args hf = { G_AREA, 4096 };
	struct xcuda_stream_create_args sc = { cudaStreamNonBlocking, 0 };
	struct xcuda_stream_create_res sr = { 0 };
	struct xcuda_stream_synchronize_args ss = { 0 };
	struct xcuda_host_func_launch_args fl = { 0x4242, 0, 0 };
	struct xcuda_host_func_launch_res fr = { 0 };
	struct xcuda_arena_pin_args pa = { 0, 0 };
	struct xcuda_malloc_args ma = { 4096 };
	struct xcuda_malloc_res mr = { 0 };
	struct xcuda_memcpy_args mc = { 0 };
	struct xcuda_open_res r;
	struct xcuda_request req;
	struct xcuda_response rsp;
	struct xc_transport t;
	struct grun g;
	pthread_t th;
	uint8_t *back;
	long t0 = 0, t1 = 0;
	int st, started = 0, i, bad = 0;

	if (init_status || device_count <= 0) {
		SKIP("GPU: a host function through the relay",
		     "no usable GPU here");
		return;
	}
	REQUIRE_MSG(!g_open(&t, &rel) && !do_open(&t, &r), "GPU session",
		    "no session through the relay");
	memset((uint8_t *)t.arena + G_AREA, 0, 4096);
	st = d_call(&t, XCUDA_OP_HOSTFN_SETUP, &hf, sizeof(hf), NULL, 0);
	/* The guest library pins what cudaMallocHost gives. */
	req_init(&t, &req, XCUDA_OP_ARENA_PIN, &pa, sizeof(pa));
	req.hdr.data_off = G_PIN;
	req.hdr.data_len = 1u << 20;
	if (!st)
		st = rpc(&t, &req, &rsp) ? -1 : rsp.status;
	if (!st)
		st = d_call(&t, XCUDA_OP_STREAM_CREATE, &sc, sizeof(sc), &sr,
			    sizeof(sr));
	if (!st)
		st = d_call(&t, XCUDA_OP_MALLOC, &ma, sizeof(ma), &mr,
			    sizeof(mr));
	fl.stream = sr.handle;
	if (!st)
		st = d_call(&t, XCUDA_OP_HOST_FUNC_LAUNCH, &fl, sizeof(fl), &fr,
			    sizeof(fr));
	/* Queued behind the function, which writes its source first. */
	memset((uint8_t *)t.arena + G_PIN, 0x11, 256);
	mc.dst = mr.ptr;
	mc.src = G_PIN;
	mc.count = 256;
	mc.dir = XCUDA_COPY_H2D;
	mc.flags = XCUDA_COPY_ASYNC;
	mc.stream = sr.handle;
	if (!st)
		st = d_call(&t, XCUDA_OP_MEMCPY, &mc, sizeof(mc), NULL, 0);
	CHECK_MSG(!st && !fr.graph, "GPU: HOSTFN_SETUP, ARENA_PIN, a stream, "
		  "HOST_FUNC_LAUNCH and a copy queued behind it, through the "
		  "relay", "status %d", st);
	if (st)
		goto out;
	g = (struct grun){ (struct xcuda_hostfn_area *)((uint8_t *)t.arena +
							G_AREA),
			   (uint8_t *)t.arena + G_PIN, 0x4242, 0 };
	started = !pthread_create(&th, NULL, grun_main, &g);
	/* The server's worker blocks in cudaStreamSynchronize meanwhile. */
	t0 = now_ms();
	ss.stream = sr.handle;
	st = d_call(&t, XCUDA_OP_STREAM_SYNCHRONIZE, &ss, sizeof(ss), NULL,
		    0);
	t1 = now_ms();
	if (started)
		pthread_join(th, NULL);
	CHECK_MSG(!st && g.ran == 1 && t1 - t0 >= 40,
		  "GPU: the function runs in the guest, the stream waits for "
		  "it (the server's worker blocked in cudaStreamSynchronize)",
		  "status %d ran %d after %ld ms", st, g.ran, t1 - t0);
	back = (uint8_t *)t.arena + G_BACK;
	memset(back, 0, 256);
	mc.dst = G_BACK;
	mc.src = mr.ptr;
	mc.dir = XCUDA_COPY_D2H;
	mc.flags = 0;
	mc.stream = 0;
	st = d_call(&t, XCUDA_OP_MEMCPY, &mc, sizeof(mc), NULL, 0);
	for (i = 0; i < 256; i++)
		bad += back[i] != 0x5c;
	CHECK_MSG(!st && !bad, "GPU: the copy queued behind the function "
		  "read what the function wrote", "status %d, %d bytes not "
		  "0x5c (first %#x)", st, bad, back[0]);
out:
	t.ops->close(&t);
}

/* ---- a vanishing server ---- */

/* An ECHO on @t: the worker's status, or -1000 + the transport's error. */
static int echo_status(struct xc_transport *t)
{
	struct xcuda_echo_args a = { 0, 0, 0, 0 };
	struct xcuda_request req;
	struct xcuda_response rsp;
	int err;

	req_init(t, &req, XCUDA_OP_ECHO, &a, sizeof(a));
	req.hdr.data_off = 0;
	req.hdr.data_len = 4096;
	err = rpc(t, &req, &rsp);
	return err ? -1000 + err : rsp.status;
}

/* A session through the relay, and the server's worker serving it. */
static int lost_setup(struct xc_transport *t, pid_t *w)
{
	struct xcuda_open_res r;
	char why[200];
	int n = dlog_count(&srv, "started");

	if (g_open(t, &rel))
		return -1;
	if (do_open(t, &r) ||
	    echo_check(t, 0, 4096, 9, 1, 0x63, why, sizeof(why)) ||
	    !dlog_wait(&srv, "started", n + 1, 5000)) {
		t->ops->close(t);
		return -1;
	}
	*w = last_worker(&srv);
	return *w > 0 ? 0 : -1;
}

static void check_vanishing(void)
{
	struct xc_transport t;
	const char *args[] = { "--listen", NULL, "--key", keyp, NULL };
	char addr[64];
	long t0;
	pid_t w;
	int st, st2;

	/* A worker that stops answering: the relay's timeout (2 s here). */
	REQUIRE_MSG(!lost_setup(&t, &w), "lost session", "no session");
	kill(w, SIGSTOP);
	t0 = now_ms();
	st = echo_status(&t);
	st2 = echo_status(&t);
	CHECK_MSG(st == cudaErrorDevicesUnavailable && st2 == -1000 - EPIPE &&
		  now_ms() - t0 < FAIL_MS, "a server worker that stops "
		  "answering: the call fails after the relay's timeout "
		  "(cudaErrorDevicesUnavailable), the next finds the session "
		  "gone", "status %d then %d after %ld ms", st, st2,
		  now_ms() - t0);
	CHECK(dlog_wait(&rel, "no answer in time", 1, 5000),
	      "... the relay logs the lost link");
	kill(w, SIGKILL);
	kill(w, SIGCONT);
	t.ops->close(&t);

	/* A worker killed mid-session. */
	REQUIRE_MSG(!lost_setup(&t, &w), "lost session", "no session");
	kill(w, SIGKILL);
	t0 = now_ms();
	st = echo_status(&t);
	if (st == cudaErrorDevicesUnavailable)
		st = echo_status(&t);
	CHECK_MSG(st == -1000 - EPIPE && now_ms() - t0 < FAIL_MS,
		  "a server worker killed: the guest's next call fails "
		  "promptly", "status %d after %ld ms", st, now_ms() - t0);
	t.ops->close(&t);

	/* The whole server killed, with a session open. */
	REQUIRE_MSG(!lost_setup(&t, &w), "lost session", "no session");
	dmn_stop(&srv, SIGKILL);
	t0 = now_ms();
	st = echo_status(&t);
	if (st == cudaErrorDevicesUnavailable)
		st = echo_status(&t);
	CHECK_MSG(st == -1000 - EPIPE && now_ms() - t0 < FAIL_MS,
		  "the server killed: the guest's next call fails promptly",
		  "status %d after %ld ms", st, now_ms() - t0);
	t.ops->close(&t);
	kill(w, SIGKILL);	/* its workers die with it: to be sure */
	{
		struct xcuda_open_res r;

		t0 = now_ms();
		st = g_open(&t, &rel) ? -1 : do_open(&t, &r);
		CHECK_MSG(st == cudaErrorDevicesUnavailable &&
			  now_ms() - t0 < FAIL_MS && dmn_alive(&rel),
			  "no server: a new session fails at once, the relay "
			  "lives", "status %d after %ld ms", st,
			  now_ms() - t0);
		if (st != -1)
			t.ops->close(&t);
	}
	CHECK(dlog_wait(&rel, "cannot connect", 1, 5000),
	      "... and the relay logs why");

	/* A server back on the same port serves the relay again. */
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	args[1] = addr;
	REQUIRE_MSG(!dmn_start(&srv, args, NULL), "server again",
		    "did not start");
	{
		char why[200] = "";

		st = g_open(&t, &rel);
		if (!st) {
			struct xcuda_open_res r;

			st = do_open(&t, &r);
			if (!st)
				st = echo_check(&t, 4096, 1u << 20, 5, 1,
						0x5f, why, sizeof(why));
			t.ops->close(&t);
		}
		CHECK_MSG(!st, "the server restarted: sessions through the "
			  "relay work again", "status %d %s", st, why);
	}
}

/* Every worker of the chain that ended normally exited cleanly. */
static void check_logs(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(dmns) / sizeof(dmns[0]); i++) {
		char *log = check_slurp(dmns[i]->log, NULL);

		CHECK_MSG(log && !strstr(log, "AddressSanitizer") &&
			  !strstr(log, "ThreadSanitizer") &&
			  !strstr(log, "LeakSanitizer") &&
			  !strstr(log, "runtime error") &&
			  !strstr(log, "core dumped"),
			  check_name("the %s's log has no sanitizer report or "
				     "crash", dmns[i]->name),
			  "see the log below");
		free(log);
	}
}

int main(void)
{
	const char *sargs[] = { "--listen", NULL, "--key", keyp, NULL };
	const char *rargs[] = { "--upstream", NULL, "--key", keyp, NULL };
	char addr[64], why[160];
	unsigned int i;

	harness_setup();
	check_teardown(teardown);
	/* The channel tested here logs what it refuses: expected. */
	xd_log_setup(XD_LOG_ERROR, 0);
	snprintf(ctl, sizeof(ctl), "%s", xcudad);
	if (strrchr(ctl, '/'))
		strcpy(strrchr(ctl, '/') + 1, "xcudactl");
	else
		snprintf(ctl, sizeof(ctl), "xcudactl");
	for (i = 0; i < sizeof(dmns) / sizeof(dmns[0]); i++) {
		snprintf(dmns[i]->sock, sizeof(dmns[i]->sock), "%s/%s.sock",
			 dir, dmns[i]->name);
		snprintf(dmns[i]->log, sizeof(dmns[i]->log), "%s/%s.log", dir,
			 dmns[i]->name);
	}
	snprintf(keyp, sizeof(keyp), "%s/key", dir);
	snprintf(key2p, sizeof(key2p), "%s/key2", dir);
	snprintf(badkeyp, sizeof(badkeyp), "%s/key-open", dir);
	snprintf(shortkeyp, sizeof(shortkeyp), "%s/key-short", dir);
	REQUIRE_MSG(!write_key(keyp, 64, 0600, 1) &&
		    !write_key(key2p, 64, 0600, 2) &&
		    !write_key(badkeyp, 64, 0644, 1) &&
		    !write_key(shortkeyp, 16, 0600, 1) &&
		    !xd_up_key_load(keyp, &key, why, sizeof(why)),
		    "keys", "%s", why);

	check_key_checks();
	check_spans();
	check_gspans();
	check_chan();
	check_mapped();
	check_chan_mapped();
	check_domains();
	check_chan_hostfn();

	port = free_port();
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	sargs[1] = rargs[1] = addr;
	REQUIRE_MSG(port > 0 && !dmn_start(&srv, sargs, NULL), "server",
		    "did not start on %s", addr);
	CHECK(dlog_wait(&srv, "listening for relays on", 1, 5000),
	      "the server listens for relays");
	REQUIRE_MSG(!dmn_start(&rel, rargs, "2"), "relay", "did not start");

	check_echo_sizes();
	check_xcudactl();
	check_same_answers();
	check_refusals();
	check_graph_copies();
	check_bad_handshakes();
	check_hostile_frames();
	check_wrong_key();
	check_keyless_server();
	check_relay_graph();
	check_relay_records();
	check_e2e_hostfn();
	check_gpu_hostfn();
	check_vanishing();
	check_logs();
	CHECK_MSG(WIFEXITED(dmn_stop(&rel, SIGTERM)) &&
		  WIFEXITED(dmn_stop(&srv, SIGTERM)), "both daemons stop",
		  "wait statuses");
	xd_up_key_wipe(&key);
	return check_summary();
}
