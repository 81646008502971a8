// SPDX-License-Identifier: MIT
/*
 * The IPC handle table and the worker's IPC commands, without a GPU: a
 * handle opens only in the domain it was recorded for (never in another,
 * never when absent, never in a session whose transport named no
 * domain), the table and each session's share of it are bounded, a
 * session's entries go when it ends, and xcudad's reaping of a worker
 * that died drops what it recorded.  Every refusal comes before CUDA.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "guest-lib/transport.h"
#include "dom0-daemon/ipc_table.h"
#include "dom0-daemon/transport_local.h"
#include "dom0-daemon/log.h"
#include "dom0-daemon/supervise.h"
#include "dom0-daemon/worker.h"
#include "check.h"
#include "cuda_asan.h"
#include "worker_harness.h"

#define DOM_A		(XD_DOMAIN_LOCAL | 1000)
#define DOM_B		(XD_DOMAIN_XEN | 1000)	/* same number, other kind */
#define SESSION_A	0x1111aaaau
#define SESSION_B	0x2222bbbbu
#define ARENA		(1u << 20)

static struct xd_chan chan_a, chan_b, chan_none;
static struct xd_session sa, sb, snone;

static void handle_bytes(uint8_t *h, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < XD_IPC_HANDLE; i++)
		h[i] = (uint8_t)(seed * 31 + i * 7);
}

static void test_table(void)
{
	uint8_t h[XD_IPC_HANDLE], g[XD_IPC_HANDLE];
	int i, e;

	CHECK_EQ(xd_ipc_record(DOM_A, SESSION_A, XD_IPC_MEM, h), -ENODEV,
		 "no table: nothing recorded");
	CHECK_EQ(xd_ipc_check(DOM_A, XD_IPC_MEM, h), -ENODEV,
		 "no table: nothing opens");
	REQUIRE_MSG(!xd_ipc_table_create(8), "table of 8", "create failed");

	handle_bytes(h, 1);
	CHECK_EQ(xd_ipc_record(DOM_A, SESSION_A, XD_IPC_MEM, h), 0,
		 "record in A");
	CHECK_EQ(xd_ipc_check(DOM_A, XD_IPC_MEM, h), 0, "A opens A's");
	CHECK_EQ(xd_ipc_check(DOM_B, XD_IPC_MEM, h), -EPERM,
		 "B refused A's");
	CHECK_EQ(xd_ipc_check(DOM_A, XD_IPC_EVENT, h), -ENOENT,
		 "the kind counts");
	memcpy(g, h, sizeof(g));
	g[63] ^= 1;
	CHECK_EQ(xd_ipc_check(DOM_A, XD_IPC_MEM, g), -ENOENT,
		 "one bit off: absent");
	CHECK_EQ(xd_ipc_record(DOM_A, SESSION_A, XD_IPC_MEM, h), 0,
		 "recorded again");
	CHECK_EQ(xd_ipc_live(), 1, "one entry for the same bytes");

	/* Fill it: 8 entries, the ninth refused. */
	for (i = 2, e = 0; i <= 8 && !e; i++) {
		handle_bytes(g, i);
		e = xd_ipc_record(DOM_B, SESSION_B, XD_IPC_EVENT, g);
	}
	CHECK_MSG(!e && xd_ipc_live() == 8, "table filled", "err %d live %u",
		  e, xd_ipc_live());
	handle_bytes(g, 99);
	CHECK_EQ(xd_ipc_record(DOM_A, SESSION_A, XD_IPC_MEM, g), -ENOSPC,
		 "full table refuses");
	CHECK_EQ(xd_ipc_check(DOM_A, XD_IPC_MEM, h), 0,
		 "full table still opens");
	xd_ipc_forget_session(SESSION_B);
	CHECK_EQ(xd_ipc_live(), 1, "B's entries gone");
	CHECK_EQ(xd_ipc_record(DOM_A, SESSION_A, XD_IPC_MEM, g), 0,
		 "room again");
	xd_ipc_forget_session(SESSION_A);
	CHECK_EQ(xd_ipc_check(DOM_A, XD_IPC_MEM, h), -ENOENT,
		 "A's entries gone");

	/* One domain's share is bounded below the table. */
	REQUIRE_MSG(!xd_ipc_table_create(XD_IPC_PER_DOMAIN + 4),
		    "larger table", "create failed");
	for (i = 0, e = 0; i < XD_IPC_PER_DOMAIN && !e; i++) {
		handle_bytes(g, 1000 + i);
		memcpy(g + 60, &i, sizeof(i));
		/* Spread over two sessions: the quota is the domain's. */
		e = xd_ipc_record(DOM_A, i & 1 ? SESSION_A : 0x4444, XD_IPC_MEM,
				  g);
	}
	CHECK_EQ(e, 0, "a domain's quota recorded");
	g[0] ^= 0xff;
	CHECK_EQ(xd_ipc_record(DOM_A, 0x5555, XD_IPC_MEM, g), -EDQUOT,
		 "over the domain's quota, even from a new session");
	CHECK_EQ(xd_ipc_record(DOM_B, SESSION_B, XD_IPC_MEM, g), 0,
		 "another domain still records");
	xd_ipc_forget_session(SESSION_A);
	xd_ipc_forget_session(0x4444);
	xd_ipc_forget_session(SESSION_B);
	CHECK_EQ(xd_ipc_live(), 0, "emptied");
}

/* The table is shared with workers forked after it was made. */
static int body_record_and_die(void *arg, uint32_t session)
{
	uint8_t h[XD_IPC_HANDLE];

	(void)arg;
	handle_bytes(h, 7);
	if (xd_ipc_record(DOM_A, session, XD_IPC_MEM, h))
		return 3;
	raise(SIGKILL);		/* no session teardown runs */
	return 4;
}

static void test_reaped_worker(void)
{
	struct xd_super sv;
	uint8_t h[XD_IPC_HANDLE];
	int i;

	REQUIRE_MSG(!xd_super_init(&sv, 2), "supervisor", "no memory");
	sv.gone = xd_ipc_forget_session;
	handle_bytes(h, 7);
	CHECK_MSG(xd_super_spawn(&sv, 0x77, body_record_and_die, NULL) > 0,
		  "worker forked", "fork failed");
	for (i = 0; i < 500 && sv.live; i++) {
		if (xd_ipc_live())
			break;
		usleep(10000);
	}
	CHECK_EQ(xd_ipc_check(DOM_A, XD_IPC_MEM, h), 0,
		 "the worker's record is seen by the parent");
	for (i = 0; i < 500 && sv.live; i++) {
		usleep(10000);
		xd_super_reap(&sv);
	}
	CHECK_MSG(!sv.live && xd_ipc_check(DOM_A, XD_IPC_MEM, h) == -ENOENT,
		  "a killed worker's records go when it is reaped",
		  "live %u", sv.live);
	xd_super_fini(&sv);
}

static void test_commands(void)
{
	struct xcuda_ipc_open_mem_handle_args om;
	struct xcuda_ipc_open_event_handle_args oe;
	struct xcuda_ipc_get_mem_handle_args gm;
	struct xcuda_ipc_get_event_handle_args ge;
	uint8_t h[XD_IPC_HANDLE];
	unsigned int before;

	handle_bytes(h, 42);
	REQUIRE_MSG(!xd_ipc_record(DOM_A, SESSION_A, XD_IPC_MEM, h) &&
		    !xd_ipc_record(DOM_A, SESSION_A, XD_IPC_EVENT, h),
		    "records", "table");

	memset(&om, 0, sizeof(om));
	memcpy(om.handle, h, sizeof(h));
	CHECK_EQ(call(&sb, XCUDA_OP_IPC_OPEN_MEM_HANDLE, &om, sizeof(om), 0,
		      0), cudaErrorInvalidValue,
		 "memory of another domain refused");
	CHECK_EQ(call(&snone, XCUDA_OP_IPC_OPEN_MEM_HANDLE, &om, sizeof(om),
		      0, 0), cudaErrorInvalidValue,
		 "no domain: nothing opens");
	om.rsvd = 1;
	CHECK_EQ(call(&sa, XCUDA_OP_IPC_OPEN_MEM_HANDLE, &om, sizeof(om), 0,
		      0), cudaErrorInvalidValue, "reserved bits refused");
	om.rsvd = 0;
	om.handle[5] ^= 0x10;
	CHECK_EQ(call(&sa, XCUDA_OP_IPC_OPEN_MEM_HANDLE, &om, sizeof(om), 0,
		      0), cudaErrorInvalidValue, "unrecorded memory refused");

	memset(&oe, 0, sizeof(oe));
	memcpy(oe.handle, h, sizeof(h));
	CHECK_EQ(call(&sb, XCUDA_OP_IPC_OPEN_EVENT_HANDLE, &oe, sizeof(oe),
		      0, 0), cudaErrorInvalidValue,
		 "event of another domain refused");
	oe.handle[0] ^= 1;
	CHECK_EQ(call(&sa, XCUDA_OP_IPC_OPEN_EVENT_HANDLE, &oe, sizeof(oe),
		      0, 0), cudaErrorInvalidValue, "unrecorded event refused");

	memset(&gm, 0, sizeof(gm));
	gm.handle = (struct xcuda_extent){ 0, 32 };
	CHECK_EQ(call(&sa, XCUDA_OP_IPC_GET_MEM_HANDLE, &gm, sizeof(gm), 0,
		      0), cudaErrorInvalidValue, "short handle extent");
	gm.handle = (struct xcuda_extent){ ARENA - 32, 64 };
	CHECK_EQ(call(&sa, XCUDA_OP_IPC_GET_MEM_HANDLE, &gm, sizeof(gm), 0,
		      0), cudaErrorInvalidValue, "extent past the arena");
	memset(&ge, 0, sizeof(ge));
	ge.handle = (struct xcuda_extent){ 0, 64 };
	ge.event = XCUDA_HANDLE_FIRST + 9;
	CHECK_EQ(call(&sa, XCUDA_OP_IPC_GET_EVENT_HANDLE, &ge, sizeof(ge), 0,
		      0), cudaErrorInvalidResourceHandle, "unknown event");

	/* A's end drops A's records; B's stay. */
	handle_bytes(h, 43);
	REQUIRE_MSG(!xd_ipc_record(DOM_B, SESSION_B, XD_IPC_MEM, h), "B",
		    "table");
	before = xd_ipc_live();
	xd_session_fini(&sa);
	/* Two of A's from here, two from test_pool_commands(). */
	CHECK_MSG(xd_ipc_live() == before - 4 &&
		  !xd_ipc_check(DOM_B, XD_IPC_MEM, h), "session end forgets",
		  "live %u (was %u)", xd_ipc_live(), before);
}

/*
 * Pool export: every refusal comes before CUDA.  There is no broker
 * channel here (test_fd_broker tests the broker): a token import fails.
 */
static void test_pool_commands(void)
{
	struct xcuda_mem_pool_export_shareable_args ex;
	struct xcuda_mem_pool_import_shareable_args im;
	struct xcuda_mem_pool_import_pointer_args ip;
	struct xcuda_mem_pool_export_pointer_args ep;
	struct xcuda_mem_pool_create_args pc;
	uint8_t h[XD_IPC_HANDLE];

	memset(&ex, 0, sizeof(ex));
	ex.pool = XCUDA_HANDLE_FIRST + 3;
	ex.type = cudaMemHandleTypePosixFileDescriptor;
	ex.out = (struct xcuda_extent){ 0, 64 };
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_EXPORT_SHAREABLE, &ex,
		      sizeof(ex), 0, 0), cudaErrorInvalidValue,
		 "pool export: unknown pool");
	ex.out.len = 32;
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_EXPORT_SHAREABLE, &ex,
		      sizeof(ex), 0, 0), cudaErrorInvalidValue,
		 "pool export: short extent");
	ex.out = (struct xcuda_extent){ ARENA - 32, 64 };
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_EXPORT_SHAREABLE, &ex,
		      sizeof(ex), 0, 0), cudaErrorInvalidValue,
		 "pool export: extent past the arena");
	ex.out = (struct xcuda_extent){ 0, 64 };
	ex.rsvd = 1;
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_EXPORT_SHAREABLE, &ex,
		      sizeof(ex), 0, 0), cudaErrorInvalidValue,
		 "pool export: reserved bits");
	ex.rsvd = 0;
	CHECK_EQ(call(&snone, XCUDA_OP_MEM_POOL_EXPORT_SHAREABLE,
		      &ex, sizeof(ex), 0, 0), cudaErrorInvalidValue,
		 "pool export: no domain, no export");

	memset(&im, 0, sizeof(im));
	im.type = cudaMemHandleTypePosixFileDescriptor;
	handle_bytes(im.handle, 50);
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_IMPORT_SHAREABLE,
		      &im, sizeof(im), 0, 0), cudaErrorInvalidValue,
		 "pool import: no broker, no descriptor");
	handle_bytes(h, 51);
	REQUIRE_MSG(!xd_ipc_record(DOM_A, SESSION_A, XD_IPC_POOL_FABRIC, h),
		    "record", "table");
	im.type = cudaMemHandleTypeFabric;
	memcpy(im.handle, h, sizeof(h));
	CHECK_EQ(call(&sb, XCUDA_OP_MEM_POOL_IMPORT_SHAREABLE,
		      &im, sizeof(im), 0, 0), cudaErrorInvalidValue,
		 "pool import: a fabric handle of another domain");
	CHECK_EQ(call(&snone, XCUDA_OP_MEM_POOL_IMPORT_SHAREABLE,
		      &im, sizeof(im), 0, 0), cudaErrorInvalidValue,
		 "pool import: no domain, no import");
	im.handle[9] ^= 4;
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_IMPORT_SHAREABLE,
		      &im, sizeof(im), 0, 0), cudaErrorInvalidValue,
		 "pool import: an unrecorded fabric handle");
	im.type = cudaMemHandleTypeWin32;
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_IMPORT_SHAREABLE,
		      &im, sizeof(im), 0, 0), cudaErrorInvalidValue,
		 "pool import: a Windows handle");

	memset(&ep, 0, sizeof(ep));
	ep.out = (struct xcuda_extent){ 0, 16 };
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_EXPORT_POINTER, &ep, sizeof(ep),
		      0, 0), cudaErrorInvalidValue,
		 "pointer export: short extent");
	memset(&ip, 0, sizeof(ip));
	ip.pool = XCUDA_HANDLE_FIRST + 3;
	handle_bytes(h, 52);
	REQUIRE_MSG(!xd_ipc_record(DOM_A, SESSION_A, XD_IPC_POOL_PTR, h),
		    "record", "table");
	memcpy(ip.data, h, sizeof(h));
	CHECK_EQ(call(&sb, XCUDA_OP_MEM_POOL_IMPORT_POINTER, &ip, sizeof(ip),
		      0, 0), cudaErrorInvalidValue,
		 "pointer import: export data of another domain");
	ip.rsvd = 1;
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_IMPORT_POINTER, &ip, sizeof(ip),
		      0, 0), cudaErrorInvalidValue,
		 "pointer import: reserved bits");
	ip.rsvd = 0;
	ip.data[1] ^= 1;
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_IMPORT_POINTER, &ip, sizeof(ip),
		      0, 0), cudaErrorInvalidValue,
		 "pointer import: unrecorded export data");
	ip.data[1] ^= 1;
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_IMPORT_POINTER, &ip, sizeof(ip),
		      0, 0), cudaErrorInvalidValue,
		 "pointer import: a pool that is not the session's");

	memset(&pc, 0, sizeof(pc));
	pc.poolProps.allocType = cudaMemAllocationTypePinned;
	pc.poolProps.location.type = cudaMemLocationTypeDevice;
	pc.poolProps.handleTypes = cudaMemHandleTypeWin32;
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_CREATE, &pc, sizeof(pc), 0, 0),
		 cudaErrorInvalidValue, "pool create: Windows handles");
	pc.poolProps.handleTypes = cudaMemHandleTypePosixFileDescriptor;
	pc.poolProps.win32SecurityAttributes = (void *)0x1000;
	CHECK_EQ(call(&sa, XCUDA_OP_MEM_POOL_CREATE, &pc, sizeof(pc), 0, 0),
		 cudaErrorInvalidValue,
		 "pool create: a pointer into the guest");
}

/*
 * The domain of a local session is the kernel's word on who connected
 * (SO_PEERCRED), whatever the guest says: a guest child connects, as
 * @uid when that is not ours (root only), and the worker end looks.
 */
static uint64_t local_domain_of(const char *path, int lfd, uid_t uid)
{
	struct xd_chan c;
	uint64_t dom = 1;
	pid_t g;
	int conn;

	g = fork();
	if (!g) {
		struct xc_transport t;
		struct xc_transport_opts o = { path, 1u << 20, 0 };

		alarm(10);
		if (uid != getuid() && setuid(uid))
			_exit(2);
		_exit(xc_local_open(&t, &o) ? 3 : 0);
	}
	conn = accept(lfd, NULL, NULL);
	if (conn >= 0 && !xd_local_accept(conn, &c, NULL, 0x55)) {
		dom = c.domain;
		c.ops->close(&c);
	} else if (conn >= 0) {
		close(conn);
	}
	waitpid(g, NULL, 0);
	return dom;
}

static void test_local_domain(void)
{
	char dir[] = "/tmp/xcuda-ipc-XXXXXX", path[128];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	uint64_t d;
	int lfd;

	REQUIRE_MSG(mkdtemp(dir), "temporary directory", "mkdtemp");
	snprintf(path, sizeof(path), "%s/s", dir);
	strcpy(sun.sun_path, path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE_MSG(lfd >= 0 && !bind(lfd, (struct sockaddr *)&sun,
				     sizeof(sun)) && !listen(lfd, 2),
		    "listening socket", "%s", strerror(errno));
	chmod(dir, 0755);
	chmod(path, 0777);
	d = local_domain_of(path, lfd, getuid());
	CHECK_MSG(d == (XD_DOMAIN_LOCAL | getuid()), "local domain is the "
		  "peer's uid", "domain %#llx", (unsigned long long)d);
	if (getuid() == 0) {
		d = local_domain_of(path, lfd, 65534);
		CHECK_MSG(d == (XD_DOMAIN_LOCAL | 65534), "another uid is "
			  "another domain", "domain %#llx",
			  (unsigned long long)d);
	} else {
		SKIP("another uid is another domain", "not root");
	}
	close(lfd);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	xd_log_setup(XD_LOG_ERROR, 0);
	test_table();
	test_reaped_worker();
	test_local_domain();
	open_session(&sa, &chan_a, SESSION_A, DOM_A);
	open_session(&sb, &chan_b, SESSION_B, DOM_B);
	open_session(&snone, &chan_none, 0x3333cccc, 0);
	test_pool_commands();
	test_commands();
	xd_session_fini(&sb);
	xd_session_fini(&snone);
	free(chan_a.arena);
	free(chan_b.arena);
	free(chan_none.arena);
	xd_ipc_table_destroy();
	return check_summary();
}
