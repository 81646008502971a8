// SPDX-License-Identifier: MIT
/*
 * xcudad against a hostile guest.  Starts the built daemon (env XCUDAD,
 * default build/bin/xcudad) on a socket in a fresh temporary directory and
 * talks to it through the guest's own `local` transport:
 *  - two sessions open and answer ECHO of 1 B, 4 KiB and 16 MiB (with
 *    fill), checked against checksums computed here;
 *  - one of them sends every kind of malformed request: each gets exactly
 *    one error answer carrying its id, and both sessions live on;
 *  - its ring is then corrupted: its worker ends, the other session and
 *    new ones are unaffected;
 *  - a worker killed with SIGKILL: its guest sees -EPIPE promptly and the
 *    daemon serves on;
 *  - the session limit, and stopping (SIGTERM) or killing (SIGKILL) the
 *    daemon and starting it again.
 * The daemon's log is kept and checked: every worker that ended normally
 * exited with status 0 (sanitizer reports in workers would fail that).
 */
#include <dirent.h>

#include "xcuda/hash.h"
#include "daemon_harness.h"

static int do_open(struct xc_transport *t, struct xcuda_open_res *r)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, XCUDA_FEATURES_ALL,
				     0, 0 };
	struct xcuda_request req;
	struct xcuda_response rsp;
	int err;

	a.arena_size = t->arena_size;
	req_init(t, &req, XCUDA_OP_OPEN, &a, sizeof(a));
	err = rpc(t, &req, &rsp);
	if (err)
		return err;
	memcpy(r, rsp.out, sizeof(*r));
	return rsp.status;
}

/* OPEN asking for the arena at @addr: the features granted, or -1. */
static long open_at(struct xc_transport *t, uint64_t addr)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, XCUDA_FEATURES_ALL,
				     0, 0 };
	struct xcuda_open_res r;
	struct xcuda_request req;
	struct xcuda_response rsp;

	a.arena_size = t->arena_size;
	a.arena_addr = addr;
	req_init(t, &req, XCUDA_OP_OPEN, &a, sizeof(a));
	if (rpc(t, &req, &rsp) || rsp.status)
		return -1;
	memcpy(&r, rsp.out, sizeof(r));
	return r.features;
}

static void check_echo(struct xc_transport *t, const char *name)
{
	char why[200] = "";

	CHECK_MSG(!echo_check(t, 4096, 64, 11, 0, 0x3c, why, sizeof(why)),
		  name, "%s", why);
}

static void check_open(struct xc_transport *t, const char *name)
{
	struct xcuda_open_res r;
	int err = do_open(t, &r);

	CHECK_MSG(!err && r.version == XCUDA_PROTO_VERSION &&
		  r.init_status == init_status &&
		  r.device_count == (init_status ? -1 : device_count), name,
		  "err %d version %u init %d (want %d) count %d (want %d)", err,
		  r.version, r.init_status, init_status, r.device_count,
		  device_count);
}

/* ---- malformed requests ---- */

struct bad {
	const char *name;
	uint16_t op;
	uint16_t flags;
	uint16_t len;		/* 0xffff: the command's full size */
	uint32_t data_off;
	uint32_t data_len;
	int session_delta;
	uint32_t rsvd;
	int want;
	void (*args)(struct xc_transport *t, uint8_t *args);
};

static void args_unterminated_name(struct xc_transport *t, uint8_t *args)
{
	struct xcuda_func_get_args a = { .module = 16 };

	memset((uint8_t *)t->arena + 8192, 'x', 4096);
	memcpy(args, &a, sizeof(a));
}

static void args_module_too_big(struct xc_transport *t, uint8_t *args)
{
	struct xcuda_module_data_args a = {
		.total = XCUDA_MAX_MODULE + 1ull, .flags = XCUDA_MOD_FIRST
	};

	(void)t;
	memcpy(args, &a, sizeof(a));
}

static void args_memcpy_h2d_outside(struct xc_transport *t, uint8_t *args)
{
	struct xcuda_memcpy_args a = { 0 };

	a.dst = 0x7f0000000000ull;
	a.src = t->arena_size - 100;
	a.count = 4096;
	a.dir = XCUDA_COPY_H2D;
	memcpy(args, &a, sizeof(a));
}

static void args_memcpy_d2h_outside(struct xc_transport *t, uint8_t *args)
{
	struct xcuda_memcpy_args a = { 0 };

	(void)t;
	a.dst = ~0ull - 10;
	a.src = 0x7f0000000000ull;
	a.count = 4096;
	a.dir = XCUDA_COPY_D2H;
	memcpy(args, &a, sizeof(a));
}

static void args_launch_bogus(struct xc_transport *t, uint8_t *args)
{
	struct xcuda_launch_args a;

	(void)t;
	memset(&a, 0, sizeof(a));
	a.func = 0xdead;
	a.grid[0] = a.grid[1] = a.grid[2] = 1;
	a.block[0] = a.block[1] = a.block[2] = 1;
	memcpy(args, &a, sizeof(a));
}

static void args_stream_unknown(struct xc_transport *t, uint8_t *args)
{
	/* STREAM_SYNCHRONIZE's, and EVENT_QUERY's: the same layout. */
	struct xcuda_stream_synchronize_args a = { .stream = 12345 };

	_Static_assert(sizeof(struct xcuda_stream_synchronize_args) ==
		       sizeof(struct xcuda_event_query_args) &&
		       offsetof(struct xcuda_event_query_args, event) == 0,
		       "handle args");
	(void)t;
	memcpy(args, &a, sizeof(a));
}

static void args_echo(struct xc_transport *t, uint8_t *args)
{
	struct xcuda_echo_args a = { 0, 1, 0, 0 };

	(void)t;
	memcpy(args, &a, sizeof(a));
}

#define EINVAL_	cudaErrorInvalidValue
#define FULL	0xffff

static const struct bad bads[] = {
	{ "opcode 0", 0, 0, 0, 0, 0, 0, 0, cudaErrorNotSupported, NULL },
	{ "opcode gap 5", 5, 0, 0, 0, 0, 0, 0, cudaErrorNotSupported, NULL },
	{ "opcode OP_MAX", XCUDA_OP_MAX, 0, 0, 0, 0, 0, 0,
	  cudaErrorNotSupported, NULL },
	{ "opcode 0xffff", 0xffff, 0, 0, 0, 0, 0, 0, cudaErrorNotSupported,
	  NULL },
	{ "echo offset at the arena's end", XCUDA_OP_ECHO, 0, FULL,
	  (uint32_t)ARENA, 1, 0, 0, EINVAL_, args_echo },
	{ "echo offset past the arena", XCUDA_OP_ECHO, 0, FULL,
	  (uint32_t)ARENA + 4096, 16, 0, 0, EINVAL_, args_echo },
	{ "echo length past the arena", XCUDA_OP_ECHO, 0, FULL, 4096,
	  (uint32_t)ARENA, 0, 0, EINVAL_, args_echo },
	{ "echo extent wraps", XCUDA_OP_ECHO, 0, FULL, 0xffffffffu,
	  0xffffffffu, 0, 0, EINVAL_, args_echo },
	{ "echo empty extent", XCUDA_OP_ECHO, 0, FULL, 0, 0, 0, 0, EINVAL_,
	  args_echo },
	{ "wrong session id", XCUDA_OP_ECHO, 0, FULL, 0, 16, 1, 0, EINVAL_,
	  args_echo },
	{ "nonzero rsvd", XCUDA_OP_ECHO, 0, FULL, 0, 16, 0, 7, EINVAL_,
	  args_echo },
	{ "unknown request flag", XCUDA_OP_ECHO, 4, FULL, 0, 16, 0, 0,
	  EINVAL_, args_echo },
	{ "truncated echo", XCUDA_OP_ECHO, 0, 8, 0, 16, 0, 0, EINVAL_,
	  args_echo },
	{ "truncated memcpy", XCUDA_OP_MEMCPY, 0, 8, 0, 0, 0, 0, EINVAL_,
	  args_memcpy_h2d_outside },
	{ "oversized len", XCUDA_OP_DEVICE_SYNCHRONIZE, 0, 200, 0, 0, 0, 0,
	  EINVAL_, NULL },
	{ "len past the slot", XCUDA_OP_ECHO, 0, XCUDA_REQ_INLINE + 1, 0, 16,
	  0, 0, EINVAL_, args_echo },
	{ "posted non-postable", XCUDA_OP_MALLOC, XCUDA_RF_POSTED, FULL, 0, 0,
	  0, 0, EINVAL_, NULL },
	{ "posted echo", XCUDA_OP_ECHO, XCUDA_RF_POSTED, FULL, 0, 16, 0, 0,
	  EINVAL_, args_echo },
	{ "extent on a NONE command", XCUDA_OP_MALLOC, 0, FULL, 0, 16, 0, 0,
	  EINVAL_, NULL },
	{ "unterminated FUNC_GET name", XCUDA_OP_FUNC_GET, 0, FULL, 8192,
	  4096, 0, 0, EINVAL_, args_unterminated_name },
	{ "MODULE_DATA total over the limit", XCUDA_OP_MODULE_DATA, 0, FULL,
	  8192, 4096, 0, 0, EINVAL_, args_module_too_big },
	{ "MEMCPY h2d outside the arena", XCUDA_OP_MEMCPY, 0, FULL, 0, 0, 0,
	  0, EINVAL_, args_memcpy_h2d_outside },
	{ "MEMCPY d2h outside the arena, posted", XCUDA_OP_MEMCPY,
	  XCUDA_RF_POSTED, FULL, 0, 0, 0, 0, EINVAL_,
	  args_memcpy_d2h_outside },
	{ "LAUNCH bogus func", XCUDA_OP_LAUNCH, XCUDA_RF_POSTED, FULL, 0, 0, 0,
	  0, cudaErrorInvalidResourceHandle, args_launch_bogus },
	{ "unknown stream handle", XCUDA_OP_STREAM_SYNCHRONIZE, 0, FULL, 0, 0,
	  0, 0, cudaErrorInvalidResourceHandle, args_stream_unknown },
	{ "unknown event handle", XCUDA_OP_EVENT_QUERY, 0, FULL, 0, 0, 0, 0,
	  cudaErrorInvalidResourceHandle, args_stream_unknown },
};

#define NBADS	(sizeof(bads) / sizeof(bads[0]))

static uint16_t full_len(uint16_t op)
{
	const struct xcuda_call_info *c = xcuda_call(op);

	return c ? c->args_size : 0;
}

static void make_bad(struct xc_transport *t, const struct bad *b,
		     struct xcuda_request *req)
{
	uint8_t args[XCUDA_REQ_INLINE] = { 0 };

	if (b->args)
		b->args(t, args);
	req_init(t, req, b->op, args, 0);
	memcpy(req->args, args, sizeof(args));
	req->hdr.len = b->len == FULL ? full_len(b->op) : b->len;
	req->hdr.flags = b->flags;
	req->hdr.data_off = b->data_off;
	req->hdr.data_len = b->data_len;
	req->hdr.session = t->session + (uint32_t)b->session_delta;
	req->hdr.rsvd = b->rsvd;
}

static void test_malformed(struct xc_transport *t)
{
	struct xcuda_request req;
	struct xcuda_response rsp;
	char name[160];
	unsigned int i;
	int err;

	for (i = 0; i < NBADS; i++) {
		make_bad(t, &bads[i], &req);
		err = rpc(t, &req, &rsp);
		snprintf(name, sizeof(name), "malformed: %s", bads[i].name);
		CHECK_MSG(!err && rsp.status == bads[i].want, name,
			  "transport %d, status %d, want %d", err,
			  err ? 0 : rsp.status, bads[i].want);
	}
}

/* All of them at once, in one batch: one answer each, by id. */
static void test_malformed_batch(struct xc_transport *t)
{
	unsigned int n = t->ring_slots < NBADS ? t->ring_slots : NBADS;
	struct xcuda_request req[NBADS];
	struct xcuda_response rsp[NBADS];
	unsigned int i, got = 0, seen[NBADS] = { 0 }, wrong = 0;
	long end = now_ms() + TIMEOUT_MS;
	int r;

	for (i = 0; i < n; i++)
		make_bad(t, &bads[i], &req[i]);
	r = t->ops->submit(t, req, n);
	while (!r && got < n && now_ms() < end) {
		r = t->ops->receive(t, rsp + got, n - got, 1000);
		if (r < 0)
			break;
		got += (unsigned int)r;
		r = 0;
	}
	for (i = 0; i < got; i++) {
		uint64_t k = rsp[i].id - req[0].hdr.id;

		if (k >= n || seen[k]++ || rsp[i].status != bads[k].want ||
		    rsp[i].op != req[k].hdr.op)
			wrong++;
	}
	CHECK_MSG(!r && got == n && !wrong,
		  "malformed batch answered once each",
		  "transport %d, %u of %u answers, %u wrong", r, got, n, wrong);
}

/* ---- ring corruption ---- */

/*
 * Finds the shared ring of @t: the mapping at offset 0 of the memfd that
 * holds the arena, read from /proc/self/maps.
 */
static void *find_ring(struct xc_transport *t)
{
	unsigned long a = (unsigned long)t->arena, lo, hi, off, ino;
	unsigned long arena_ino = 0, ring = 0;
	char line[512], dev[32];
	FILE *f;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		f = fopen("/proc/self/maps", "r");
		if (!f)
			return NULL;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%lx-%lx %*s %lx %31s %lu", &lo, &hi,
				   &off, dev, &ino) != 5 || !ino)
				continue;
			if (!pass && a >= lo && a < hi)
				arena_ino = ino;
			if (pass && ino == arena_ino && off == 0)
				ring = lo;
		}
		fclose(f);
		if (!arena_ino)
			return NULL;
	}
	return (void *)ring;
}

/* Rings every eventfd doorbell this process holds: spurious ones are
 * harmless, and the corrupted session's worker must look at its ring. */
static void ring_all_doorbells(void)
{
	char path[300], target[128];
	struct dirent *de;
	uint64_t one = 1;
	DIR *d = opendir("/proc/self/fd");
	ssize_t n;

	if (!d)
		return;
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strstr(target, "eventfd") &&
		    write(atoi(de->d_name), &one, sizeof(one)) < 0)
			(void)0;
	}
	closedir(d);
}

static int wait_epipe(struct xc_transport *t, long ms, long *took)
{
	struct xcuda_response rsp;
	long start = now_ms(), end = start + ms;
	int r = 0;

	while (now_ms() < end) {
		r = t->ops->receive(t, &rsp, 1, 200);
		if (r < 0)
			break;
	}
	*took = now_ms() - start;
	return r;
}

static void test_corrupt(struct xc_transport *a, struct xc_transport *b)
{
	struct xcuda_sring *sr = find_ring(a);
	char needle[96];
	long took;
	int r;

	CHECK_MSG(sr != NULL, "found the shared ring",
		  "not in /proc/self/maps");
	if (!sr)
		return;
	__atomic_store_n(&sr->req_prod, sr->req_prod + 3 * a->ring_slots + 5,
			 __ATOMIC_RELEASE);
	ring_all_doorbells();
	snprintf(needle, sizeof(needle), "session %08x: guest broke the ring",
		 a->session);
	CHECK_MSG(wait_log(needle, TIMEOUT_MS), "corrupted ring: worker warns",
		  "no \"%s\" in the log", needle);
	snprintf(needle, sizeof(needle), "session %08x: worker", a->session);
	r = wait_epipe(a, 5000, &took);
	CHECK_MSG(r == -EPIPE, "corrupted ring: guest sees the worker gone",
		  "receive gave %d after %ld ms", r, took);
	check_echo(b, "other session unaffected by the corruption");
}

/* ---- the whole story ---- */

static void count_clean_exits(const char *name)
{
	/* Worker failures, daemon errors, sanitizer reports. */
	int bad = count_log("exited with status") + count_log("]: error: ") +
		  count_log("ERROR") + count_log("runtime error");

	CHECK_MSG(!bad, name, "%d failures in the log", bad);
}

int main(void)
{
	struct xc_transport a, b, c, d, e, m[4];
	struct xcuda_open_res r;
	char why[200] = "";
	int err, status, i;
	long took;
	pid_t pid;

	harness_setup();

	CHECK_MSG(!start_daemon("8"), "daemon starts", "see the log");
	if (daemon_pid < 0)
		goto out;

	err = sess_open(&a);
	CHECK_MSG(!err && a.session && a.arena_size == ARENA && a.ring_slots,
		  "session A opens", "err %d session %08x arena %llu", err,
		  a.session, (unsigned long long)a.arena_size);
	err |= sess_open(&b);
	CHECK_MSG(!err && b.session != a.session, "session B opens",
		  "err %d, sessions %08x %08x", err, a.session, b.session);
	if (err)
		goto stop;
	check_open(&a, "OPEN A reports the runtime's init status");
	check_open(&b, "OPEN B reports the runtime's init status");

	CHECK_MSG(!echo_check(&b, 0, 1, 0, 0, 0x3c, why, sizeof(why)),
		  "ECHO 1 B", "%s", why);
	CHECK_MSG(!echo_check(&b, 12345, 4096, 77, 0, 0x3c, why,
			      sizeof(why)),
		  "ECHO 4 KiB", "%s", why);
	CHECK_MSG(!echo_check(&b, 1 << 20, 16 << 20, 9, 1, 0x3c, why,
			      sizeof(why)),
		  "ECHO 16 MiB with fill", "%s", why);
	CHECK_MSG(!echo_check(&b, ARENA - 4096, 4096, 3, 1, 0x3c, why,
			      sizeof(why)),
		  "ECHO at the arena's end", "%s", why);

	/*
	 * The arena at a guest-chosen address: never low in the worker
	 * (its image, its heap, a stray small pointer), however aligned.
	 */
	{
		static const uint64_t low[] = { 0x10000, 0x400000,
						0xfffff000 };
		struct xc_transport v;
		unsigned int k;
		long f;

		for (k = 0; k < 3; k++) {
			f = sess_open(&v) ? -2 : open_at(&v, low[k]);
			CHECK_MSG(f >= 0 && !(f & XCUDA_FEAT_SAME_VA),
				  "OPEN asking for the arena at a low address: "
				  "no SAME_VA", "address %#llx: features %ld",
				  (unsigned long long)low[k], f);
			if (f > -2) {
				check_echo(&v, "and the session works");
				v.ops->close(&v);
			}
		}
		f = sess_open(&v) ? -2 : open_at(&v, (uintptr_t)v.arena);
		CHECK_MSG(f >= 0 && (f & XCUDA_FEAT_SAME_VA),
			  "OPEN asking for the arena at the guest's own "
			  "address: SAME_VA", "features %ld", f);
		if (f > -2)
			v.ops->close(&v);
	}

	test_malformed(&a);
	test_malformed_batch(&a);
	check_echo(&a, "A answers after the malformed requests");
	check_echo(&b, "B answers after A's malformed requests");

	test_corrupt(&a, &b);
	a.ops->close(&a);
	err = sess_open(&c);
	CHECK_EQ(err, 0, "session C opens after A's end");
	if (err)
		goto stop_b;
	check_open(&c, "OPEN C");
	check_echo(&c, "C answers");

	/* SIGKILL of a worker ends its session only. */
	pid = worker_pid(c.session);
	CHECK_MSG(pid > 0 && !kill(pid, SIGKILL), "kill -9 C's worker",
		  "no pid for session %08x", c.session);
	err = wait_epipe(&c, 5000, &took);
	CHECK_MSG(err == -EPIPE && took < 3000,
		  "C's guest sees -EPIPE promptly",
		  "receive gave %d after %ld ms", err, took);
	c.ops->close(&c);
	CHECK_MSG(daemon_alive() && wait_log("killed by signal 9", 5000),
		  "daemon logs the killed worker and stays up",
		  "daemon alive %d", daemon_alive());
	check_echo(&b, "B answers after C's worker was killed");
	err = sess_open(&d);
	CHECK_EQ(err, 0, "session D opens after the kill");
	if (!err) {
		check_open(&d, "OPEN D");
		check_echo(&d, "D answers");
	}

	/* CLOSE: answered, then the worker exits cleanly. */
	if (!err) {
		check_close(&d, "CLOSE is answered",
			    "CLOSE ends the worker cleanly", 5000);
		d.ops->close(&d);
	}

stop_b:
	/* SIGTERM: workers go, the socket goes, the daemon exits 0. */
	check_daemon_stops("SIGTERM stops the daemon with status 0");
	CHECK_MSG(access(sock, F_OK) && errno == ENOENT,
		  "SIGTERM removes the socket", "socket still there");
	err = wait_epipe(&b, 5000, &took);
	CHECK_EQ(err, -EPIPE, "B's guest sees -EPIPE when the daemon stops");
	b.ops->close(&b);

	/* Restarted, with a session limit of 3. */
	CHECK_MSG(!start_daemon("3"), "daemon restarts", "see the log");
	if (daemon_pid < 0)
		goto out;
	for (i = 0; i < 3; i++) {
		err = sess_open(&m[i]);
		if (!err)
			err = do_open(&m[i], &r);
		if (err)
			break;
	}
	CHECK_MSG(i == 3, "three sessions within the limit", "session %d: %d",
		  i, err);
	if (i == 3) {
		err = sess_open(&m[3]);
		CHECK_MSG(err < 0, "a fourth session is refused", "err %d",
			  err);
		if (!err)
			m[3].ops->close(&m[3]);
		m[0].ops->close(&m[0]);
		/* The freed place comes back once the worker is reaped. */
		for (took = now_ms() + 5000; now_ms() < took;) {
			err = sess_open(&m[0]);
			if (!err)
				break;
			nap_ms(50);
		}
		CHECK_EQ(err, 0, "a session opens once one has closed");
		if (!err) {
			check_open(&m[0], "OPEN after the limit");
			check_echo(&m[0], "ECHO after the limit");
			m[0].ops->close(&m[0]);
		}
		m[1].ops->close(&m[1]);
		m[2].ops->close(&m[2]);
	}

	/*
	 * Pools: the local socket may not take the sessions kept for Xen
	 * guests, nor one user more than its share.
	 */
	status = stop_daemon(SIGTERM, TIMEOUT_MS);
	{
		static const char *const pools[] = {
			"--max-local-sessions", "3", "--max-uid-sessions", "2",
			NULL
		};

		CHECK_MSG(!start_daemon_with("8", pools), "daemon restarts "
			  "with pools", "see the log");
	}
	if (daemon_pid < 0)
		goto out;
	CHECK(wait_log("(3 from this socket, 2 a user, 4 a domain)", 2000),
	      "the log says the pools");
	for (i = 0; i < 3; i++) {
		err = sess_open(&m[i]);
		if (!err)
			err = do_open(&m[i], &r);
		if (err)
			break;
	}
	CHECK_MSG(i == 2 && err < 0 &&
		  wait_log("has 2 sessions (--max-uid-sessions): refusing",
			   2000),
		  "one user's third session is refused", "session %d: %d", i,
		  err);
	for (took = i, i = 0; i < (int)took; i++)
		m[i].ops->close(&m[i]);
	status = stop_daemon(SIGTERM, TIMEOUT_MS);
	{
		static const char *const pools[] = {
			"--max-local-sessions", "2", NULL
		};

		CHECK_MSG(!start_daemon_with("8", pools), "daemon restarts "
			  "with a local pool of 2", "see the log");
	}
	if (daemon_pid < 0)
		goto out;
	for (i = 0; i < 3; i++) {
		err = sess_open(&m[i]);
		if (!err)
			err = do_open(&m[i], &r);
		if (err)
			break;
	}
	CHECK_MSG(i == 2 && err < 0 &&
		  wait_log("kept for Xen guests: refusing", 2000),
		  "the local socket's third session is refused: the other six "
		  "are kept for Xen guests", "session %d: %d", i, err);
	for (took = i, i = 0; i < (int)took; i++)
		m[i].ops->close(&m[i]);

	/* A user that churns sessions faster than the rate is turned away. */
	status = stop_daemon(SIGTERM, TIMEOUT_MS);
	{
		static const char *const rate[] = {
			"--max-session-rate", "1", NULL
		};

		CHECK_MSG(!start_daemon_with("8", rate), "daemon restarts "
			  "with a session rate of 1 a second", "see the log");
	}
	if (daemon_pid < 0)
		goto out;
	for (i = 0; i < 4; i++) {
		err = sess_open(&m[0]);
		if (err)
			break;
		m[0].ops->close(&m[0]);
	}
	CHECK_MSG(i >= 2 && i < 4 && err < 0 &&
		  wait_log("faster than --max-session-rate 1 a second", 2000),
		  "sessions opened and closed at once: the burst of 2 passes, "
		  "then they are refused", "session %d: %d", i, err);
	nap_ms(1100);
	err = sess_open(&m[0]);
	CHECK_EQ(err, 0, "a second later, one more opens");
	if (!err)
		m[0].ops->close(&m[0]);

	/* SIGKILL leaves a stale socket; the next start clears it. */
	status = stop_daemon(SIGKILL, TIMEOUT_MS);
	CHECK_MSG(status >= 0 && WIFSIGNALED(status), "daemon killed with -9",
		  "wait status %#x", status);
	CHECK_MSG(!start_daemon("8"), "daemon restarts over a stale socket",
		  "see the log");
	if (daemon_pid < 0)
		goto out;
	err = sess_open(&e);
	CHECK_EQ(err, 0, "session E opens after the restart");
	if (!err) {
		check_open(&e, "OPEN E");
		check_echo(&e, "E answers");
		e.ops->close(&e);
	}

stop:
	check_daemon_stops("daemon stops cleanly at the end");
	count_clean_exits("no worker failed and nothing went wrong in the log");
out:
	return check_summary();
}
