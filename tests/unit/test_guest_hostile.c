// SPDX-License-Identifier: MIT
/*
 * The guest library against a hostile or dying peer: a fake worker speaks
 * the local transport and answers with forged ids, oversized results,
 * impossible statuses or a bad OPEN, or just goes away.  Every case must
 * end in a clean CUDA error, never a crash or a hang.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest-lib/guest.h"
#include "dom0-daemon/transport.h"
#include "dom0-daemon/transport_local.h"
#include "check.h"

enum fake { F_GOOD, F_BAD_ID, F_BAD_LEN, F_BAD_STATUS, F_BAD_OP,
	    F_BAD_VERSION, F_OLD_VERSION, F_VANISH, F_SILENT_EXIT };

static char sock_path[108];

/* The fake worker: answers OPEN properly, then misbehaves as told. */
static void fake_worker(int conn, enum fake how)
{
	struct xd_local_limits lim = { 1u << 26, XCUDA_MAX_RING_ORDER };
	struct xcuda_request req;
	struct xcuda_response rsp;
	struct xd_chan c;

	if (xd_local_accept(conn, &c, &lim, 77))
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

			if (how == F_BAD_VERSION)
				r.version = 99;
			if (how == F_OLD_VERSION)
				r.version = XCUDA_PROTO_MIN_VERSION - 1;
			memcpy(rsp.out, &r, sizeof(r));
			rsp.len = sizeof(r);
			c.ops->reply(&c, &rsp, 0);
			continue;
		}
		switch (how) {
		case F_BAD_ID:
			rsp.id += 1000;
			break;
		case F_BAD_LEN:
			rsp.len = 4096;
			break;
		case F_BAD_STATUS:
			rsp.status = -5000;	/* below every -errno */
			break;
		case F_BAD_OP:
			rsp.op = XCUDA_OP_MALLOC;
			break;
		case F_VANISH:
			_exit(0);
		case F_SILENT_EXIT:
			kill(getpid(), SIGKILL);
			break;
		default:
			break;
		}
		c.ops->reply(&c, &rsp, 0);
	}
}

/* Runs the guest side in a child so that each case gets a new session. */
static int guest_case(enum fake how, cudaError_t *out)
{
	int lfd, p[2], st;
	pid_t g, w;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	strcpy(sa.sun_path, sock_path);
	unlink(sock_path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, 1) || pipe(p))
		return -1;
	w = fork();
	if (!w) {
		int conn = accept(lfd, NULL, NULL);

		fake_worker(conn, how);
		_exit(0);
	}
	g = fork();
	if (!g) {
		struct xcuda_request req;
		struct xc_session *s;
		cudaError_t err;

		alarm(10);
		setenv("XCUDA_SOCKET", sock_path, 1);
		setenv("XCUDA_QUIET", "1", 1);
		s = xc_session_get(&err);
		if (s) {
			xc_req_init(&req, XCUDA_OP_DEVICE_SYNCHRONIZE, 0);
			err = xc_call(s, &req, NULL, 0);
			if (!err && how != F_GOOD)
				err = (cudaError_t)-1;
			/* A dead session keeps answering, quickly. */
			if (s->dead) {
				xc_req_init(&req, XCUDA_OP_DEVICE_SYNCHRONIZE,
					    0);
				if ((int)xc_call(s, &req, NULL, 0) != s->dead)
					err = (cudaError_t)-2;
			}
		}
		if (write(p[1], &err, sizeof(err)) != sizeof(err))
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	close(lfd);
	if (read(p[0], out, sizeof(*out)) != sizeof(*out))
		*out = (cudaError_t)-3;
	close(p[0]);
	waitpid(g, &st, 0);
	kill(w, SIGKILL);
	waitpid(w, NULL, 0);
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

int main(void)
{
	static const struct { enum fake how; const char *name;
			      cudaError_t want; } cases[] = {
		{ F_GOOD, "honest-worker-answers", cudaSuccess },
		{ F_BAD_ID, "forged-answer-id-ends-session",
		  cudaErrorDevicesUnavailable },
		{ F_BAD_LEN, "oversized-result-ends-session",
		  cudaErrorDevicesUnavailable },
		{ F_BAD_STATUS, "status-below-errno-range-ends-session",
		  cudaErrorDevicesUnavailable },
		{ F_BAD_OP, "answer-for-another-op-ends-session",
		  cudaErrorDevicesUnavailable },
		{ F_OLD_VERSION, "version-below-minimum-refused",
		  cudaErrorDevicesUnavailable },
		{ F_BAD_VERSION, "impossible-version-refused",
		  cudaErrorDevicesUnavailable },
		{ F_VANISH, "worker-exit-mid-call-is-an-error",
		  cudaErrorDevicesUnavailable },
		{ F_SILENT_EXIT, "worker-killed-mid-call-is-an-error",
		  cudaErrorDevicesUnavailable },
	};
	char dir[] = "/tmp/xcuda-hostile-XXXXXX";
	size_t i;

	REQUIRE_MSG(mkdtemp(dir), "setup", "mkdtemp: %s", strerror(errno));
	snprintf(sock_path, sizeof(sock_path), "%s/s", dir);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cudaError_t got = (cudaError_t)-9;
		int rc = guest_case(cases[i].how, &got);

		CHECK_MSG(!rc && got == cases[i].want, cases[i].name,
			  "got %d, want %d, rc %d", got, cases[i].want, rc);
	}
	unlink(sock_path);
	rmdir(dir);
	return check_summary();
}
