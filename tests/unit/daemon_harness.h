/* SPDX-License-Identifier: MIT */
/*
 * Shared by the tests that run the real xcudad: a daemon started on a
 * socket in a fresh temporary directory with its log kept there, and a
 * guest session through the guest library's own `local` transport.
 * Cases report through check.h; the daemon's teardown runs from
 * check_summary().  Each test is one translation unit; not every one
 * uses every helper.
 */
#ifndef XCUDA_TEST_DAEMON_HARNESS_H
#define XCUDA_TEST_DAEMON_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "xcuda/calls.h"
#include "xcuda/hash.h"
#include "guest-lib/transport.h"
#include "check.h"
#include "cuda_asan.h"

#define ARENA		(64ull << 20)
#define TIMEOUT_MS	20000

static char dir[256], sock[320], logpath[320];
static const char *xcudad;
static pid_t daemon_pid = -1;
static uint64_t next_id = 1;
static int init_status, device_count;
/* Optional: runs in the daemon's process just before it execs. */
static void (*daemon_pre_exec)(void);

static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* ---- the daemon ---- */

static inline char *read_log(void)
{
	return check_slurp(logpath, NULL);
}

/* Waits for @needle in the daemon's log; 1 if it came. */
static inline int wait_log(const char *needle, long ms)
{
	long end = now_ms() + ms;

	do {
		char *log = read_log();
		int found = log && strstr(log, needle);

		free(log);
		if (found)
			return 1;
		nap_ms(20);
	} while (now_ms() < end);
	return 0;
}

static inline int count_log(const char *needle)
{
	char *log = read_log(), *p;
	int n = 0;

	for (p = log; p && (p = strstr(p, needle)); p++)
		n++;
	free(log);
	return n;
}

static inline void dump_log(void)
{
	char *log = read_log();

	printf("--- xcudad log ---\n%s--- end of log ---\n",
	       log ? log : "(none)\n");
	free(log);
}

/* xcudad with --max-sessions @max_sessions and up to 8 more @extra. */
static inline int start_daemon_with(const char *max_sessions,
				    const char *const *extra)
{
	long end = now_ms() + TIMEOUT_MS;
	int fd, before = count_log("listening on");
	const char *argv[16];
	struct stat st;
	unsigned int n = 0;
	pid_t pid;

	argv[n++] = xcudad;
	argv[n++] = "--socket";
	argv[n++] = sock;
	argv[n++] = "--max-sessions";
	argv[n++] = max_sessions;
	argv[n++] = "-v";
	while (extra && *extra && n < 15)
		argv[n++] = *extra++;
	argv[n] = NULL;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 2);
			dup2(fd, 1);
		}
		if (daemon_pre_exec)
			daemon_pre_exec();
		execv(xcudad, (char *const *)argv);
		perror("exec xcudad");
		_exit(127);
	}
	daemon_pid = pid;
	while (now_ms() < end) {
		int status;

		if (waitpid(pid, &status, WNOHANG) == pid) {
			daemon_pid = -1;
			return -1;
		}
		if (!stat(sock, &st) && S_ISSOCK(st.st_mode) &&
		    count_log("listening on") > before)
			return 0;
		nap_ms(20);
	}
	return -1;
}

static inline int start_daemon(const char *max_sessions)
{
	return start_daemon_with(max_sessions, NULL);
}

/* Signals the daemon and waits for it; returns its wait status or -1. */
static inline int stop_daemon(int sig, long ms)
{
	long end = now_ms() + ms;
	int status;

	if (daemon_pid < 0)
		return -1;
	kill(daemon_pid, sig);
	while (now_ms() < end) {
		if (waitpid(daemon_pid, &status, WNOHANG) == daemon_pid) {
			daemon_pid = -1;
			return status;
		}
		nap_ms(20);
	}
	kill(daemon_pid, SIGKILL);
	waitpid(daemon_pid, &status, 0);
	daemon_pid = -1;
	return -1;
}

static inline int daemon_alive(void)
{
	int status;

	return daemon_pid > 0 && waitpid(daemon_pid, &status, WNOHANG) == 0;
}

/* The worker pid the daemon logged for @session, or -1. */
static inline pid_t worker_pid(uint32_t session)
{
	char needle[64], *log, *p;
	pid_t pid = -1;

	snprintf(needle, sizeof(needle), "session %08x: worker ", session);
	if (!wait_log(needle, TIMEOUT_MS))
		return -1;
	log = read_log();
	p = log ? strstr(log, needle) : NULL;
	if (p)
		pid = (pid_t)atoi(p + strlen(needle));
	free(log);
	return pid;
}

/* ---- a socket of the test's own, beside the daemon's ---- */

static char lsock[400];
static int lfd = -1;

/* Listens on @name in the test's directory: lsock and lfd; 0 or -1. */
static inline int listen_on(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(lsock, sizeof(lsock), "%s/%s", dir, name);
	strcpy(sa.sun_path, lsock);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, 8))
		return -1;
	return 0;
}

/* ---- guest side ---- */

static inline int sess_open(struct xc_transport *t)
{
	struct xc_transport_opts o = { 0 };

	memset(t, 0, sizeof(*t));
	o.path = sock;
	o.arena_size = ARENA;
	return xc_local_open(t, &o);
}

static inline void req_init(struct xc_transport *t,
			    struct xcuda_request *req, uint16_t op,
			    const void *args, uint16_t len)
{
	memset(req, 0, sizeof(*req));
	req->hdr.op = op;
	req->hdr.len = len;
	req->hdr.session = t->session;
	req->hdr.id = next_id++;
	if (len)
		memcpy(req->args, args, len);
}

/*
 * Sends @req and waits for its one answer; any other answer fails.
 * Returns 0, -ETIMEDOUT, -EPROTO (a wrong answer) or the transport's error.
 */
static inline int rpc(struct xc_transport *t,
		      const struct xcuda_request *req,
		      struct xcuda_response *rsp)
{
	int n = t->ops->submit(t, req, 1);

	if (n < 0)
		return n;
	n = t->ops->receive(t, rsp, 1, TIMEOUT_MS);
	if (n < 0)
		return n;
	if (n == 0)
		return -ETIMEDOUT;
	if (rsp->id != req->hdr.id || rsp->op != req->hdr.op ||
	    rsp->flags != req->hdr.flags)
		return -EPROTO;
	return 0;
}

/*
 * ECHO of @len bytes at @off of @t's arena, written first in a pattern of
 * @seed: 0 if the worker's checksum, byte count and answer length are
 * right and, with @fill, every byte came back as @fill_byte; else -1,
 * with what was wrong in @why.
 */
static inline int echo_check(struct xc_transport *t, uint64_t off,
			     uint32_t len, uint32_t seed, int fill,
			     uint8_t fill_byte, char *why, size_t whylen)
{
	struct xcuda_echo_args a = { seed, (uint32_t)!!fill, fill_byte, 0 };
	uint8_t *p = (uint8_t *)t->arena + off;
	struct xcuda_request req;
	struct xcuda_response rsp;
	struct xcuda_echo_res r;
	uint64_t want;
	uint32_t i;
	int err;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 131 + seed + (i >> 13));
	want = xcuda_fnv1a64(seed, p, len);
	req_init(t, &req, XCUDA_OP_ECHO, &a, sizeof(a));
	req.hdr.data_off = (uint32_t)off;
	req.hdr.data_len = len;
	err = rpc(t, &req, &rsp);
	if (err) {
		snprintf(why, whylen, "transport error %d", err);
		return -1;
	}
	memcpy(&r, rsp.out, sizeof(r));
	if (rsp.status || rsp.len != sizeof(r) || r.checksum != want ||
	    r.bytes != len) {
		snprintf(why, whylen, "status %d len %u sum %llx want %llx "
			 "bytes %llu", rsp.status, rsp.len,
			 (unsigned long long)r.checksum,
			 (unsigned long long)want,
			 (unsigned long long)r.bytes);
		return -1;
	}
	for (i = 0; fill && i < len; i++) {
		if (p[i] != fill_byte) {
			snprintf(why, whylen, "byte %u not filled back", i);
			return -1;
		}
	}
	return 0;
}

/*
 * One request through @t, up to @res_len result bytes into @res: the
 * worker's status, or -1000 + the transport's error, apart from any status.
 */
static inline int d_call(struct xc_transport *t, uint16_t op,
			 const void *args, uint16_t len, void *res,
			 size_t res_len)
{
	struct xcuda_request req;
	struct xcuda_response rsp;
	int err;

	req_init(t, &req, op, args, len);
	err = rpc(t, &req, &rsp);
	if (err)
		return -1000 + err;
	if (res)
		memcpy(res, rsp.out, res_len);
	return rsp.status;
}

/*
 * CLOSE on @t: @answered, it is answered; @exited, the worker then exits
 * cleanly (its log line within @ms).
 */
static inline void check_close(struct xc_transport *t, const char *answered,
			       const char *exited, long ms)
{
	struct xcuda_request req;
	struct xcuda_response rsp;
	char needle[80];
	int err;

	req_init(t, &req, XCUDA_OP_CLOSE, NULL, 0);
	err = rpc(t, &req, &rsp);
	CHECK_MSG(!err && !rsp.status, answered, "err %d", err);
	snprintf(needle, sizeof(needle), "session %08x: worker %d exited\n",
		 t->session, (int)worker_pid(t->session));
	CHECK_MSG(wait_log(needle, ms), exited, "no \"%s\" in the log",
		  needle);
}

/* SIGTERM: the daemon must exit with status 0. */
static inline void check_daemon_stops(const char *name)
{
	int status = stop_daemon(SIGTERM, TIMEOUT_MS);

	CHECK_MSG(status >= 0 && WIFEXITED(status) && !WEXITSTATUS(status),
		  name, "wait status %#x", status);
}

/*
 * From check_summary(): stops a daemon still running, shows its log if
 * anything failed and cleans up (XCUDAD_TEST_KEEP=1 keeps the directory).
 */
static inline void harness_teardown(void)
{
	if (check_failed)
		dump_log();
	if (daemon_pid > 0)
		stop_daemon(SIGKILL, 5000);
	if (getenv("XCUDAD_TEST_KEEP")) {
		printf("kept %s\n", dir);
	} else if (!check_failed) {
		unlink(logpath);
		unlink(sock);
		*strrchr(sock, '/') = 0;
		rmdir(sock);
		rmdir(dir);
	}
}

/*
 * Finds xcudad (env XCUDAD, default build/bin/xcudad) and makes the
 * temporary directory; the socket's own directory is left for xcudad to
 * create.  Without them the test stops (a failure, and the summary).
 * check_summary() then runs harness_teardown().
 */
static inline void harness_setup(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	xcudad = getenv("XCUDAD");
	if (!xcudad || !*xcudad)
		xcudad = "build/bin/xcudad";
	REQUIRE_MSG(!access(xcudad, X_OK), "setup", "no xcudad at %s",
		    xcudad);
	snprintf(dir, sizeof(dir), "/tmp/xcudad-test.XXXXXX");
	REQUIRE_MSG(mkdtemp(dir), "setup", "mkdtemp: %s", strerror(errno));
	snprintf(sock, sizeof(sock), "%s/run/xcudad.sock", dir);
	snprintf(logpath, sizeof(logpath), "%s/xcudad.log", dir);
	check_teardown(harness_teardown);
	init_status = cudaGetDeviceCount(&device_count);
	cudaGetLastError();
}

#endif /* XCUDA_TEST_DAEMON_HARNESS_H */
