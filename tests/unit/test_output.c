// SPDX-License-Identifier: MIT
/*
 * Device output.  The worker's side in this process, through xd_handle():
 * capture, the XCUDA_RSPF_OUTPUT flag, OUTPUT_TAKE's extent, partial
 * takes, the order of the streams, the cap, the reset after a complete
 * take, the process's own stdio and log.  Then the guest library's side
 * against a worker in a child process: the real handler over the local
 * transport (output lands in the program's stdout and stderr, in order
 * with its own printf), or forged answers that must end the session.
 * Needs no GPU: the worker's output is written by the test.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest-lib/guest.h"
#include "dom0-daemon/log.h"
#include "dom0-daemon/output.h"
#include "dom0-daemon/transport_local.h"
#include "dom0-daemon/worker.h"
#include "check.h"
#include "cuda_asan.h"

#define SESSION		0x7e57c0deu
#define ARENA		(1u << 20)
#define CAP		(64u << 10)
#define BUF		4096u		/* where takes land in the arena */
#define FLOOD_LINES	200000

static struct xd_chan chan;
static struct xd_session sess;
static uint64_t next_id = 1;
static char dir[] = "/tmp/xcuda-output-XXXXXX";
static char logpath[300], sock_path[300], outpath[300], errpath[300];

/* ---- the worker, in this process ---- */

static void req_init(struct xcuda_request *req, uint16_t op, uint32_t off,
		     uint32_t len)
{
	memset(req, 0, sizeof(*req));
	req->hdr.op = op;
	req->hdr.session = SESSION;
	req->hdr.id = next_id++;
	req->hdr.data_off = off;
	req->hdr.data_len = len;
}

/* A request that writes no output: the flags of its answer. */
static uint16_t ping(void)
{
	struct xcuda_echo_args e = { 0, 0, 0, 0 };
	struct xcuda_request req;
	struct xcuda_response rsp;

	req_init(&req, XCUDA_OP_ECHO, 0, 16);
	req.hdr.len = sizeof(e);
	memcpy(req.args, &e, sizeof(e));
	xd_handle(&sess, &req, &rsp);
	return rsp.flags;
}

/* One OUTPUT_TAKE into [off, off + len): its status, result and flags. */
static int take(uint32_t off, uint32_t len, struct xcuda_output_take_res *r,
		uint16_t *flags)
{
	struct xcuda_request req;
	struct xcuda_response rsp;

	req_init(&req, XCUDA_OP_OUTPUT_TAKE, off, len);
	xd_handle(&sess, &req, &rsp);
	memset(r, 0, sizeof(*r));
	memcpy(r, rsp.out, rsp.len < sizeof(*r) ? rsp.len : sizeof(*r));
	if (flags)
		*flags = rsp.flags;
	return rsp.status;
}

/*
 * Takes everything, @len bytes a time, into @buf (NUL-ended): its length,
 * or (size_t)-1 if a take names another stream or it does not fit.
 */
static size_t take_stream(uint32_t stream, uint32_t len, char *buf,
			  size_t max)
{
	struct xcuda_output_take_res r;
	size_t n = 0;

	do {
		if (take(BUF, len, &r, NULL) || !r.bytes)
			break;
		if (r.stream != stream || n + r.bytes >= max)
			return (size_t)-1;
		memcpy(buf + n, chan.arena + BUF, r.bytes);
		n += r.bytes;
	} while (r.more);
	buf[n] = 0;
	return n;
}

static int wr(int fd, const char *s)
{
	return write(fd, s, strlen(s)) == (ssize_t)strlen(s);
}

/* How often @needle is in the log. */
static int log_count(const char *needle)
{
	char buf[65536], *p;
	int fd = open(logpath, O_RDONLY), n = 0;
	ssize_t len;

	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -1;
	buf[len] = 0;
	for (p = buf; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_uncaptured(void)
{
	struct xcuda_output_take_res r;
	uint16_t fl = 0xffff;
	int st = take(BUF, 4096, &r, &fl);

	CHECK_MSG(!st && !r.bytes && !r.stream && !r.more &&
		  !(fl & XCUDA_RSPF_OUTPUT) && !(ping() & XCUDA_RSPF_OUTPUT),
		  "no capture: nothing to take, no flag",
		  "status %d bytes %u stream %u more %u flags %#x", st,
		  r.bytes, r.stream, r.more, fl);
	CHECK(!xd_output_waiting(),
	      "a session without a transport leaves stdio alone");
}

static void test_extent(void)
{
	struct xcuda_output_take_res r;

	CHECK_EQ(take(0, 0, &r, NULL), cudaErrorInvalidValue,
		 "take without an extent refused");
	CHECK_EQ(take(ARENA - 10, 11, &r, NULL), cudaErrorInvalidValue,
		 "take past the arena refused");
	CHECK_EQ(take(0xfffffff0u, 0x20, &r, NULL), cudaErrorInvalidValue,
		 "take with a wrapping extent refused");
}

static void test_basic(int fo)
{
	struct xcuda_output_take_res r;
	uint16_t fl = 0;
	uint16_t f0 = ping();
	int st;

	wr(fo, "hello\n");
	fl = ping();
	CHECK_MSG(!(f0 & XCUDA_RSPF_OUTPUT) && (fl & XCUDA_RSPF_OUTPUT) &&
		  xd_output_waiting() == 6, "output flags the answer",
		  "flags %#x then %#x, waiting %llu", f0, fl,
		  (unsigned long long)xd_output_waiting());
	st = take(BUF, 4096, &r, &fl);
	CHECK_MSG(!st && r.bytes == 6 && r.stream == 1 && !r.more &&
		  !(fl & XCUDA_RSPF_OUTPUT) &&
		  !memcmp(chan.arena + BUF, "hello\n", 6),
		  "take hands it over", "status %d bytes %u stream %u "
		  "more %u flags %#x", st, r.bytes, r.stream, r.more, fl);
	CHECK_EQ(lseek(fo, 0, SEEK_CUR), 0, "a complete take empties it");
	CHECK(!(ping() & XCUDA_RSPF_OUTPUT), "no flag once taken");
}

/* Posted answers are not flagged; the next synchronous one is. */
static void test_posted(int fo)
{
	struct xcuda_event_record_args a = { XCUDA_HANDLE_FIRST + 99, 0 };
	struct xcuda_output_take_res r;
	struct xcuda_request req;
	struct xcuda_response rsp;

	wr(fo, "posted\n");
	req_init(&req, XCUDA_OP_EVENT_RECORD, 0, 0);
	req.hdr.flags = XCUDA_RF_POSTED;
	req.hdr.len = sizeof(a);
	memcpy(req.args, &a, sizeof(a));
	xd_handle(&sess, &req, &rsp);
	CHECK_MSG(rsp.status == cudaErrorInvalidResourceHandle &&
		  rsp.flags == XCUDA_RF_POSTED, "a posted answer is not flagged",
		  "status %d flags %#x", rsp.status, rsp.flags);
	CHECK(ping() & XCUDA_RSPF_OUTPUT, "the next synchronous one is");
	take(BUF, 4096, &r, NULL);
	CHECK(r.bytes == 7 && !r.more, "and the output is there");
}

static void test_partial(int fo)
{
	struct xcuda_output_take_res r;
	char want[100], got[100];
	unsigned int i, n = 0, steps = 0, bad = 0;
	uint16_t fl;

	for (i = 0; i < sizeof(want); i++)
		want[i] = (char)('a' + i % 26);
	CHECK(write(fo, want, sizeof(want)) == sizeof(want), "write 100");
	ping();
	do {
		if (take(BUF, 30, &r, &fl) || !r.bytes || r.stream != 1 ||
		    n + r.bytes > sizeof(got))
			break;
		memcpy(got + n, chan.arena + BUF, r.bytes);
		n += r.bytes;
		steps++;
		/* The answer's flag says the same as `more`. */
		bad += !!(fl & XCUDA_RSPF_OUTPUT) != !!r.more;
		bad += r.bytes != (n < sizeof(want) ? 30u : 10u);
	} while (r.more);
	CHECK_MSG(n == sizeof(want) && steps == 4 && !bad &&
		  !memcmp(got, want, n), "takes of 30 bytes, in order",
		  "%u bytes in %u takes, %u bad", n, steps, bad);
}

static void test_order(int fo, int fe)
{
	char buf[64];
	struct xcuda_output_take_res r;

	wr(fe, "E1\n");
	ping();
	wr(fo, "O1\n");
	ping();
	take(BUF, 4096, &r, NULL);
	CHECK_MSG(r.stream == 2 && r.bytes == 3 && r.more &&
		  !memcmp(chan.arena + BUF, "E1\n", 3),
		  "the stream that began to wait first comes first",
		  "stream %u bytes %u more %u", r.stream, r.bytes, r.more);
	take(BUF, 4096, &r, NULL);
	CHECK_MSG(r.stream == 1 && r.bytes == 3 && !r.more &&
		  !memcmp(chan.arena + BUF, "O1\n", 3), "then the other",
		  "stream %u bytes %u more %u", r.stream, r.bytes, r.more);

	wr(fe, "E2\n");
	wr(fo, "O2\n");
	ping();
	take(BUF, 4096, &r, NULL);
	CHECK_MSG(r.stream == 1 && r.more, "stdout first within a request",
		  "stream %u more %u", r.stream, r.more);
	take(BUF, 4096, &r, NULL);
	CHECK_MSG(r.stream == 2 && !r.more, "stderr after it",
		  "stream %u more %u", r.stream, r.more);

	wr(fo, "a");
	ping();
	wr(fo, "b");
	ping();
	wr(fo, "c");
	CHECK_MSG(take_stream(1, 4096, buf, sizeof(buf)) == 3 &&
		  !strcmp(buf, "abc"), "one stream keeps its order",
		  "got '%s'", buf);
}

static void test_cap(int fo)
{
	char *big = malloc(CAP + 5000), *got = malloc(CAP + 5000);
	struct stat st;
	ssize_t n;
	size_t total;
	unsigned int i;

	REQUIRE(big && got, "cap: memory");
	for (i = 0; i < CAP + 5000; i++)
		big[i] = (char)(i * 7 + i / 251);
	n = write(fo, big, CAP + 5000);
	CHECK_EQ(n, (ssize_t)CAP, "a flood stops at the cap");
	errno = 0;
	n = write(fo, "x", 1);
	CHECK_MSG(n < 0 && errno == EPERM, "a full stream refuses writes",
		  "write %zd errno %d", n, errno);
	CHECK((ping() & XCUDA_RSPF_OUTPUT) && xd_output_overflows() == 1,
	      "the overflow is counted");
	CHECK_EQ(log_count("device output on stdout reached"), 1,
		 "the overflow is logged");
	total = take_stream(1, 16384, got, CAP + 5000);
	CHECK_MSG(total == CAP && !memcmp(got, big, CAP),
		  "what fitted is taken whole", "took %zu", total);
	CHECK_MSG(!fstat(fo, &st) && st.st_blocks == 0 &&
		  lseek(fo, 0, SEEK_CUR) == 0,
		  "a drained stream gives its pages back",
		  "blocks %lld", (long long)st.st_blocks);
	wr(fo, "after\n");
	ping();
	total = take_stream(1, 4096, got, CAP);
	CHECK_MSG(total == 6 && !strcmp(got, "after\n"),
		  "writes work again after the drain", "took %zu", total);

	CHECK(write(fo, big, CAP + 1) == (ssize_t)CAP, "overflow again");
	ping();
	CHECK_MSG(xd_output_overflows() == 2 &&
		  log_count("device output on stdout reached") == 1,
		  "counted again, logged once", "overflows %llu",
		  xd_output_overflows());
	take_stream(1, CAP, got, CAP + 5000);
	free(big);
	free(got);
}

/*
 * The process's own stdout and stderr, in a child: buffered printf, the
 * log staying out of the guest's output, and stdio after a reset.
 */
static void test_stdio(void)
{
	char why[256] = "", buf[256];
	int p[2], st, fd;
	pid_t pid;
	ssize_t n;

	REQUIRE(!pipe(p), "stdio: pipe");
	fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0, "stdio: file");
	fflush(NULL);
	pid = fork();
	if (!pid) {
		const char *w = "";
		struct xcuda_output_take_res r;

		close(p[0]);
		dup2(fd, STDOUT_FILENO);
		if (xd_output_capture(STDOUT_FILENO, STDERR_FILENO, CAP))
			w = "capture failed";
		/* No newline: buffered until the worker flushes. */
		printf("printf %d %s\npartial", 42, "x");
		fprintf(stderr, "assert message\n");
		xd_log(XD_LOG_ERROR, "worker log line");
		if (!*w && !(ping() & XCUDA_RSPF_OUTPUT))
			w = "no flag after printf";
		if (!*w && (take(BUF, 4096, &r, NULL) || r.stream != 1 ||
			    r.bytes != 19 || !r.more ||
			    memcmp(chan.arena + BUF, "printf 42 x\npartial",
				   19)))
			w = "printf output wrong";
		if (!*w && (take(BUF, 4096, &r, NULL) || r.stream != 2 ||
			    r.bytes != 15 || r.more ||
			    memcmp(chan.arena + BUF, "assert message\n", 15)))
			w = "stderr output wrong (or the log went there)";
		printf("again\n");
		ping();
		if (!*w && (take(BUF, 4096, &r, NULL) || r.stream != 1 ||
			    r.bytes != 6 ||
			    memcmp(chan.arena + BUF, "again\n", 6)))
			w = "stdout broken after the reset";
		xd_output_release();
		printf("restored\n");
		fflush(stdout);
		if (write(p[1], w, strlen(w)) < 0)
			_exit(2);
		_exit(0);
	}
	close(fd);
	close(p[1]);
	n = read(p[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	CHECK_MSG(WIFEXITED(st) && !WEXITSTATUS(st) && !why[0],
		  "printf and stderr of the worker process", "%s (status %#x)",
		  why, st);
	fd = open(outpath, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
	CHECK_MSG(!strcmp(buf, "restored\n"),
		  "the end of the session puts stdout back", "got '%s'", buf);
	CHECK_EQ(log_count("worker log line"), 1,
		 "the log stays on its own descriptor");
}

static void worker_tests(void)
{
	int fo = open("/dev/null", O_WRONLY), fe = open("/dev/null", O_WRONLY);
	struct xcuda_output_take_res r;
	struct stat st;

	chan.arena = calloc(1, ARENA);
	chan.arena_size = ARENA;
	chan.session = SESSION;
	REQUIRE_MSG(chan.arena && fo >= 0 && fe >= 0 &&
		    !xd_session_init(&sess, &chan), "setup", "out of memory");
	sess.opened = 1;	/* OPEN would start CUDA: not needed here */
	test_uncaptured();
	test_extent();
	test_stdio();
	REQUIRE(!xd_output_capture(fo, fe, CAP), "capture");
	CHECK_EQ(xd_output_capture(fo, fe, CAP), -EBUSY,
		 "one capture at a time");
	test_basic(fo);
	test_posted(fo);
	test_partial(fo);
	test_order(fo, fe);
	test_cap(fo);
	xd_output_release();
	CHECK(!fstat(fo, &st) && S_ISCHR(st.st_mode) && !xd_output_waiting(),
	      "release puts the descriptors back");
	CHECK(!take(BUF, 4096, &r, NULL) && !r.bytes, "nothing after release");
	xd_session_fini(&sess);
	close(fo);
	close(fe);
	free(chan.arena);
}

/* ---- the guest library against a worker in a child ---- */

enum fake { F_REAL, F_TOO_MANY, F_BAD_STREAM, F_MORE_EMPTY, F_REFUSE };
enum prog { P_SYNC, P_FLOOD, P_POSTED, P_EXIT };

/* What the fake worker's "kernels" print: per ECHO seed. */
static void fake_print(uint32_t seed)
{
	int i;

	if (seed == 1) {
		for (i = 0; i < 3; i++)
			printf("kernel line %d\n", i);
		fprintf(stderr, "device assert\n");
	} else if (seed == 2) {
		for (i = 0; i < FLOOD_LINES; i++)
			printf("flood %07d\n", i);
	}
}

/*
 * The worker: the real session and handlers (which capture this
 * process's stdout and stderr), except OPEN, posted requests and, as
 * told, OUTPUT_TAKE, which it answers itself.
 */
static void fake_worker(int conn, enum fake how)
{
	struct xd_local_limits lim = { 1u << 26, XCUDA_MAX_RING_ORDER };
	struct xcuda_request req;
	struct xcuda_response rsp;
	struct xd_session s;
	struct xd_chan c;

	if (xd_local_accept(conn, &c, &lim, 77) || xd_session_init(&s, &c))
		_exit(1);
	for (;;) {
		int n = c.ops->next(&c, &req, 5000);

		if (n <= 0)
			_exit(0);
		memset(&rsp, 0, sizeof(rsp));
		rsp.id = req.hdr.id;
		rsp.op = req.hdr.op;
		rsp.flags = req.hdr.flags;
		if (req.hdr.op == XCUDA_OP_OPEN) {
			struct xcuda_open_res r = { XCUDA_PROTO_VERSION, 0, 1,
						    0, 13000, 13000 };

			memcpy(rsp.out, &r, sizeof(r));
			rsp.len = sizeof(r);
			s.opened = 1;
		} else if (req.hdr.flags & XCUDA_RF_POSTED) {
			/* xcudad does not flag posted answers; others may. */
			printf("posted output\n");
			fflush(stdout);
			rsp.flags |= XCUDA_RSPF_OUTPUT;
		} else if (req.hdr.op == XCUDA_OP_OUTPUT_TAKE &&
			   how != F_REAL) {
			struct xcuda_output_take_res r = { 4, 1, 0, 0 };

			if (how == F_TOO_MANY)
				r.bytes = req.hdr.data_len + 1;
			if (how == F_BAD_STREAM)
				r.stream = 3;
			if (how == F_MORE_EMPTY)
				r = (struct xcuda_output_take_res){ 0, 0, 1,
								    0 };
			memcpy(rsp.out, &r, sizeof(r));
			rsp.len = sizeof(r);
			if (how == F_REFUSE) {
				rsp.status = cudaErrorNotSupported;
				memset(rsp.out, 0, sizeof(rsp.out));
			}
		} else {
			if (req.hdr.op == XCUDA_OP_ECHO) {
				struct xcuda_echo_args e;

				memcpy(&e, req.args, sizeof(e));
				fake_print(e.seed);
			}
			xd_handle(&s, &req, &rsp);
		}
		if (c.ops->reply(&c, &rsp, 0))
			_exit(1);
	}
}

/* An ECHO whose seed tells the worker what to print. */
static cudaError_t echo(struct xc_session *s, uint32_t seed)
{
	struct xcuda_echo_args e = { seed, 0, 0, 0 };
	struct xcuda_echo_res r;
	struct xcuda_request req;
	cudaError_t err = cudaErrorMemoryAllocation;
	uint64_t off, got;

	pthread_mutex_lock(&s->lock);
	off = xc_staging_get(s, 64, 64, &got);
	if (off != UINT64_MAX) {
		xc_req_echo(&req, &e);
		req.hdr.data_off = (uint32_t)off;
		req.hdr.data_len = 64;
		err = xc_call_locked(s, &req, &r, sizeof(r));
		xc_arena_release(s->staging, off);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* A posted request whose answer carries the flag, collected, no wait. */
static void posted(struct xc_session *s)
{
	struct xcuda_request req;
	unsigned int left;
	int i;

	pthread_mutex_lock(&s->lock);
	xc_req_init(&req, XCUDA_OP_DEVICE_SYNCHRONIZE, 0);
	xc_post_locked(s, &req, UINT64_MAX);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < 5000; i++) {
		xc_poll_latched();
		pthread_mutex_lock(&s->lock);
		left = s->inflight;
		pthread_mutex_unlock(&s->lock);
		if (!left)
			break;
		usleep(1000);
	}
}

struct guest_result {
	int err;	/* the output's call */
	int dead;	/* the session afterwards */
	int next;	/* a later call */
};

/* The guest program, its stdout and stderr in files. */
static void guest_main(enum prog prog, int res_fd)
{
	struct guest_result res = { -1, -1, -1 };
	struct xc_session *s;
	cudaError_t err;
	int fd;

	alarm(20);
	setenv("XCUDA_SOCKET", sock_path, 1);
	setenv("XCUDA_QUIET", "1", 1);
	fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		_exit(3);
	fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
		_exit(3);
	s = xc_session_get(&err);
	if (!s)
		_exit(4);
	switch (prog) {
	case P_SYNC:
		printf("host before\n");
		res.err = echo(s, 1);
		printf("host after\n");
		break;
	case P_FLOOD:
		res.err = echo(s, 2);
		printf("host after\n");
		break;
	case P_POSTED:
		posted(s);
		printf("between\n");
		res.err = echo(s, 3);
		printf("end\n");
		break;
	case P_EXIT:
		/* No call after it: the library's destructor takes it. */
		posted(s);
		printf("before exit\n");
		res.err = 0;
		res.next = 0;
		break;
	}
	res.dead = s->dead;
	if (prog != P_EXIT)
		res.next = echo(s, 3);
	if (write(res_fd, &res, sizeof(res)) != sizeof(res))
		_exit(2);
	exit(0);
}

static int guest_case(enum fake how, enum prog prog,
		      struct guest_result *res)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int lfd, p[2], st;
	pid_t g, w;

	strcpy(sa.sun_path, sock_path);
	unlink(sock_path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, 1) || pipe(p))
		return -1;
	fflush(NULL);
	w = fork();
	if (!w) {
		int conn = accept(lfd, NULL, NULL);

		close(p[0]);
		close(p[1]);
		close(lfd);
		fake_worker(conn, how);
		_exit(0);
	}
	g = fork();
	if (!g) {
		close(p[0]);
		close(lfd);
		guest_main(prog, p[1]);
	}
	close(p[1]);
	close(lfd);
	if (read(p[0], res, sizeof(*res)) != sizeof(*res))
		res->err = -3;
	close(p[0]);
	waitpid(g, &st, 0);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

static void guest_expect(const char *name, enum fake how, enum prog prog,
			 const char *want_out, const char *want_err)
{
	struct guest_result res = { -9, -9, -9 };
	int rc = guest_case(how, prog, &res);
	size_t lo = 0, le = 0;
	char *out = check_slurp(outpath, &lo), *err = check_slurp(errpath, &le);

	CHECK_MSG(!rc && !res.err && !res.dead && !res.next && out &&
		  !strcmp(out, want_out) && (!want_err ||
					     (err && !strcmp(err, want_err))),
		  name, "rc %d err %d dead %d next %d stdout '%.200s' "
		  "stderr '%.200s'", rc, res.err, res.dead, res.next,
		  out ? out : "(none)", err ? err : "(none)");
	free(out);
	free(err);
}

static void guest_flood(void)
{
	struct guest_result res = { -9, -9, -9 };
	int rc = guest_case(F_REAL, P_FLOOD, &res);
	size_t len = 0, at = 0, want = (size_t)FLOOD_LINES * 14 + 11;
	char *out = check_slurp(outpath, &len), line[32];
	int i, bad = 0;

	for (i = 0; out && len == want && i < FLOOD_LINES && !bad; i++) {
		snprintf(line, sizeof(line), "flood %07d\n", i);
		bad = memcmp(out + at, line, 14) != 0;
		at += 14;
	}
	CHECK_MSG(!rc && !res.err && out && len == want && !bad &&
		  !strcmp(out + at, "host after\n"),
		  "guest: a flood larger than one take arrives whole",
		  "rc %d err %d, %zu bytes (want %zu), bad line %d", rc,
		  res.err, len, want, bad ? i : -1);
	free(out);
}

static void guest_hostile(const char *name, enum fake how, int want_dead)
{
	struct guest_result res = { -9, -9, -9 };
	int rc = guest_case(how, P_SYNC, &res);
	size_t len = 0;
	char *out = check_slurp(outpath, &len);
	int want = want_dead ? cudaErrorDevicesUnavailable : 0;

	CHECK_MSG(!rc && !res.err && res.dead == want && res.next == want &&
		  out && !strcmp(out, "host before\nhost after\n"),
		  name, "rc %d err %d dead %d next %d stdout '%.200s'", rc,
		  res.err, res.dead, res.next, out ? out : "(none)");
	free(out);
}

static void guest_tests(void)
{
	guest_expect("guest: kernel output in order with the host's",
		     F_REAL, P_SYNC,
		     "host before\nkernel line 0\nkernel line 1\n"
		     "kernel line 2\nhost after\n", "device assert\n");
	guest_flood();
	guest_expect("guest: output flagged on a posted answer comes at "
		     "the next synchronous call", F_REAL, P_POSTED,
		     "between\nposted output\nend\n", NULL);
	guest_expect("guest: output flagged and never waited for comes "
		     "out at exit", F_REAL, P_EXIT,
		     "before exit\nposted output\n", NULL);
	guest_hostile("guest: more bytes than the extent end the session",
		      F_TOO_MANY, 1);
	guest_hostile("guest: an unknown stream ends the session",
		      F_BAD_STREAM, 1);
	guest_hostile("guest: 'more' with nothing ends the session",
		      F_MORE_EMPTY, 1);
	guest_hostile("guest: a refused take drops the output, the session "
		      "goes on", F_REFUSE, 0);
}

int main(void)
{
	int keep, lfd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	REQUIRE_MSG(mkdtemp(dir), "setup", "mkdtemp: %s", strerror(errno));
	snprintf(logpath, sizeof(logpath), "%s/log", dir);
	snprintf(sock_path, sizeof(sock_path), "%s/s", dir);
	snprintf(outpath, sizeof(outpath), "%s/out", dir);
	snprintf(errpath, sizeof(errpath), "%s/err", dir);
	/* The log keeps a copy of stderr as it is now: make that a file. */
	keep = dup(STDERR_FILENO);
	lfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	REQUIRE(keep >= 0 && lfd >= 0, "log file");
	dup2(lfd, STDERR_FILENO);
	xd_log_setup(XD_LOG_WARN, 0);
	dup2(keep, STDERR_FILENO);
	close(keep);
	close(lfd);
	signal(SIGPIPE, SIG_IGN);

	worker_tests();
	guest_tests();

	unlink(logpath);
	unlink(sock_path);
	unlink(outpath);
	unlink(errpath);
	rmdir(dir);
	return check_summary();
}
