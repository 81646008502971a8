// SPDX-License-Identifier: MIT
/*
 * cudaHostRegister'd memory shared with the worker (`local` transport):
 *
 * - the guest's remap: contents and addresses kept, pages outside the
 *   range untouched, the memfd sealed and shared, the way back; what it
 *   refuses to move (files, shared memory, holes, read-only memory,
 *   MADV_DONTFORK and MADV_WIPEONFORK ranges); mlock kept; fork() gives
 *   the child a private copy as of the fork;
 * - the descriptor channel: the memfd tagged for its request, stale
 *   messages dropped, a worker that did not keep the channel, hellos
 *   with the wrong descriptors refused;
 * - the worker's checks of HOST_REGISTER, HOST_UNREGISTER, HOST_MEMCPY
 *   and HOST_MEMCPY_2D (xd_handle() without a transport), that it keeps
 *   no descriptor and no mapping of a refused memfd, and its cleanup at
 *   unregistration and at the end of the session;
 * - the guest's registration through a real xcudad.
 *
 * What needs a region the worker registered needs a GPU: skipped without.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "daemon_harness.h"
#include "worker_harness.h"
#include "guest-lib/guest.h"
#include "dom0-daemon/log.h"
#include "dom0-daemon/transport_local.h"
#include "dom0-daemon/worker.h"
#include "xcuda/local.h"

#define PAGE		((size_t)sysconf(_SC_PAGESIZE))
#define WSESSION	0x4d0573edu

static int have_gpu;

/* ---- helpers ---- */

/* Byte @i of pattern @seed. */
static uint8_t pat(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 131 + seed * 7 + (i >> 12));
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pat(i, seed);
}

/* Index of the first byte that differs from pattern @seed, or -1. */
static long bad_byte(const uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pat(i, seed))
			return (long)i;
	return -1;
}

/* The line of /proc/self/maps that maps @addr, in @buf; 0 if none. */
static int maps_line(uintptr_t addr, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "re");
	uintptr_t s, e;
	int found = 0;

	if (!f)
		return 0;
	while (fgets(buf, (int)len, f))
		if (sscanf(buf, "%" SCNxPTR "-%" SCNxPTR, &s, &e) == 2 &&
		    addr >= s && addr < e) {
			found = 1;
			break;
		}
	fclose(f);
	return found;
}

/* Whether @addr lies in a mapping of one of our registration memfds. */
static int is_memfd(uintptr_t addr)
{
	char line[512];

	return maps_line(addr, line, sizeof(line)) &&
	       strstr(line, "/memfd:xcuda-hostreg");
}

/* Whether @addr lies in private anonymous memory (no file behind it). */
static int is_anon(uintptr_t addr)
{
	unsigned long long off, ino;
	char line[512], perms[8];
	unsigned int maj, mnr;

	return maps_line(addr, line, sizeof(line)) &&
	       sscanf(line, "%*x-%*x %7s %llx %x:%x %llu", perms, &off, &maj,
		      &mnr, &ino) == 5 && perms[3] == 'p' && !ino;
}

/* How many mappings of process @pid (0: ours) are of inode @ino; -1. */
static int maps_inode(pid_t pid, unsigned long long ino)
{
	unsigned long long off, i;
	char path[64], line[512];
	int found = 0;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		found += sscanf(line, "%*x-%*x %*s %llx %*x:%*x %llu", &off,
				&i) == 2 && i == ino && ino;
	fclose(f);
	return found;
}

/* The smaps VmFlags of the mapping at @addr contain @flag. */
static int vmflag(uintptr_t addr, const char *flag)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512], pad[8];
	uintptr_t s, e;
	int in = 0, hit = 0;

	snprintf(pad, sizeof(pad), " %s", flag);
	while (f && fgets(line, sizeof(line), f)) {
		/* A mapping's first line: hex, a dash, hex. */
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &s, &e) == 2 &&
		    strchr(line, '-') ==
		    line + strspn(line, "0123456789abcdef"))
			in = addr >= s && addr < e;
		else if (in && !strncmp(line, "VmFlags:", 8))
			hit = strstr(line, pad) != NULL;
	}
	if (f)
		fclose(f);
	return hit;
}

static void *anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The page-aligned span of [p, p + n), as xc_hostmem_register makes it. */
static struct xc_hostreg span(void *p, size_t n)
{
	struct xc_hostreg r = { 0 };
	uintptr_t v = (uintptr_t)p;

	r.ptr = v;
	r.size = n;
	r.base = v & ~(PAGE - 1);
	r.len = ((v + n + PAGE - 1) & ~(PAGE - 1)) - r.base;
	return r;
}

static int fd_closed(int fd)
{
	return fcntl(fd, F_GETFD) < 0 && errno == EBADF;
}

/* A memfd of @size bytes, filled with pattern @seed when @fill_it. */
static int make_memfd(size_t size, int seals, int fill_it, unsigned seed)
{
	int fd = memfd_create("test-hostreg", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	uint8_t *p;

	if (fd < 0 || ftruncate(fd, (off_t)size) < 0)
		goto fail;
	if (fill_it) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 0);
		if (p == MAP_FAILED)
			goto fail;
		fill(p, size, seed);
		munmap(p, size);
	}
	if (seals && fcntl(fd, F_ADD_SEALS, seals) < 0)
		goto fail;
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

static unsigned long long fd_ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (unsigned long long)st.st_ino;
}

static int send_int(int fd, int v)
{
	return send(fd, &v, sizeof(v), MSG_NOSIGNAL) == sizeof(v) ? 0 : -1;
}

static int recv_int(int fd, int *v)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, TIMEOUT_MS) != 1)
		return -1;
	return recv(fd, v, sizeof(*v), MSG_WAITALL) == sizeof(*v) ? 0 : -1;
}

/* ---- the guest's remap ---- */

static void test_move(void)
{
	const size_t total = 16 * PAGE;
	uint8_t *m = anon(total), *ptr, *view = MAP_FAILED;
	struct xc_hostreg r;
	int fd = -1, seals;
	struct stat st;

	EXPECT(m, "mmap: %s", strerror(errno));
	fill(m, total, 1);
	/* Unaligned start and size: pages 2 to 8 move. */
	ptr = m + 2 * PAGE + 100;
	r = span(ptr, 5 * PAGE + 37);
	EXPECT(r.base == (uintptr_t)m + 2 * PAGE && r.len == 6 * PAGE,
	       "span %#lx+%zu", (unsigned long)r.base, r.len);
	EXPECT(!xc_hostmem_move(&r, &fd), "move: %s", strerror(errno));
	EXPECT(fd >= 0 && bad_byte(m, total, 1) < 0,
	       "contents changed at %ld", bad_byte(m, total, 1));
	EXPECT(is_memfd(r.base) && is_memfd(r.base + r.len - 1),
	       "the range is not on the memfd");
	EXPECT(is_anon(r.base - 1) && is_anon(r.base + r.len),
	       "pages outside the range moved");
	EXPECT(!fstat(fd, &st) && (size_t)st.st_size == r.len &&
	       (unsigned long long)st.st_ino == r.ino, "memfd size or inode");
	seals = fcntl(fd, F_GET_SEALS);
	EXPECT(seals >= 0 && (seals & F_SEAL_SHRINK) && (seals & F_SEAL_SEAL),
	       "seals %#x", seals);
	/* Shared: what the program writes is what the worker maps. */
	view = mmap(NULL, r.len, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT(view != MAP_FAILED, "mmap memfd: %s", strerror(errno));
	ptr[0] = 0xa5;
	EXPECT(view[ptr - (uint8_t *)r.base] == 0xa5,
	       "a write is not seen through the memfd");
	ptr[0] = pat(ptr - m, 1);
	EXPECT(!xc_hostmem_unmove(&r), "unmove failed");
	EXPECT(is_anon(r.base) && is_anon(r.base + r.len - 1),
	       "not private anonymous memory again");
	EXPECT(bad_byte(m, total, 1) < 0, "contents changed on the way back");
	ptr[0] = 0x11;
	EXPECT(view[ptr - (uint8_t *)r.base] != 0x11,
	       "still shared after moving back");
	EXPECT(maps_inode(0, r.ino) == 1, "only our view maps the memfd");
out:
	check_case("move: contents and address kept, and back");
	if (view != MAP_FAILED)
		munmap(view, r.len);
	if (fd >= 0)
		close(fd);
	if (m)
		munmap(m, total);
}

/* xc_hostmem_move() must refuse @p and leave it as it was. */
static void refuse(const char *what, void *p, size_t len, int check_data)
{
	struct xc_hostreg r = span(p, len);
	int fd = -1, ret;

	if (check_data)
		fill(p, len, 5);
	ret = xc_hostmem_move(&r, &fd);
	CHECK_MSG(ret < 0 && fd < 0 && !is_memfd((uintptr_t)p) &&
		  (!check_data || bad_byte(p, len, 5) < 0),
		  check_name("move refuses %s", what), "ret %d fd %d", ret,
		  fd);
	if (fd >= 0)
		close(fd);
}

static void test_refusals(void)
{
	const size_t len = 4 * PAGE;
	char tmpl[] = "/tmp/xcuda-hostmem.XXXXXX";
	uint8_t *p;
	int fd;

	fd = mkstemp(tmpl);
	if (fd >= 0) {
		unlink(tmpl);
		if (!ftruncate(fd, (off_t)len)) {
			p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
				 fd, 0);
			if (p != MAP_FAILED) {
				refuse("a private file mapping", p, len, 1);
				munmap(p, len);
			}
		}
		close(fd);
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		refuse("shared anonymous memory", p, len, 1);
		munmap(p, len);
	}
	p = anon(len);
	if (p) {
		munmap(p + PAGE, PAGE);
		refuse("a range with a hole", p, len, 0);
		munmap(p, len);
	}
	p = anon(len);
	if (p) {
		mprotect(p, len, PROT_READ);
		refuse("read-only memory", p, len, 0);
		munmap(p, len);
	}
	p = anon(len);
	if (p) {
		if (!madvise(p, len, MADV_DONTFORK))
			refuse("MADV_DONTFORK memory", p, len, 1);
		munmap(p, len);
	}
	p = anon(len);
	if (p) {
		if (!madvise(p, len, MADV_WIPEONFORK))
			refuse("MADV_WIPEONFORK memory", p, len, 1);
		munmap(p, len);
	}
	refuse("the main stack", &p, sizeof(p), 0);
}

static void test_mlock(void)
{
	const size_t len = 4 * PAGE;
	uint8_t *p = anon(len);
	struct xc_hostreg r;
	int fd = -1;

	/* ASan makes mlock() a no-op that succeeds: look at the flags. */
	if (!p || mlock(p, len) || !vmflag((uintptr_t)p, "lo")) {
		SKIP("move keeps mlock", "cannot mlock here");
		if (p)
			munmap(p, len);
		return;
	}
	fill(p, len, 9);
	r = span(p, len);
	EXPECT(!xc_hostmem_move(&r, &fd), "move failed");
	EXPECT(r.locked && vmflag(r.base, "lo"), "moved pages not locked");
	EXPECT(!xc_hostmem_unmove(&r) && vmflag(r.base, "lo") &&
	       is_anon(r.base), "pages moved back not locked");
	EXPECT(bad_byte(p, len, 9) < 0, "contents changed");
out:
	check_case("move keeps mlock");
	if (fd >= 0)
		close(fd);
	munlock(p, len);
	munmap(p, len);
}

/*
 * fork(): the child gets a private copy as of the fork, in both
 * directions, even of what the parent writes right after fork returns.
 */
static void test_fork(void)
{
	const size_t len = 8 * PAGE;
	uint8_t *p = anon(len);
	struct xc_hostreg r = { 0 }, out_r;
	int sv[2] = { -1, -1 }, fd = -1, v = -1, st;
	pid_t pid = -1;

	EXPECT(p, "mmap");
	fill(p, len, 3);
	r = span(p, len);
	EXPECT(!xc_hostmem_move(&r, &fd), "move failed");
	r.region = 0x7e57;
	EXPECT(!xc_hostmem_track(&r), "track failed");
	EXPECT(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
	       "socketpair");
	fflush(stdout);
	pid = fork();
	EXPECT(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		int code = 0;

		/* What the parent wrote after fork() returned is not here. */
		if (bad_byte(p, len, 3) >= 0)
			code |= 1;
		if (is_memfd(r.base) || !is_anon(r.base))
			code |= 2;
		fill(p, len, 4);
		send_int(sv[1], code);
		_exit(0);
	}
	/* Right after fork: the child must not see this. */
	fill(p, len, 6);
	EXPECT(!recv_int(sv[0], &v), "the child said nothing");
	EXPECT(!(v & 1), "the child saw the parent's writes after fork");
	EXPECT(!(v & 2), "the child still maps the memfd");
	EXPECT(bad_byte(p, len, 6) < 0, "the parent sees the child's writes");
	EXPECT(is_memfd(r.base), "the parent's range is no longer shared");
	EXPECT(!xc_hostmem_untrack(r.ptr, &out_r) && out_r.region == 0x7e57,
	       "untrack");
	EXPECT(!xc_hostmem_unmove(&r) && bad_byte(p, len, 6) < 0,
	       "moving back after fork");
out:
	check_case("fork: the child gets a private copy as of the fork");
	if (pid > 0)
		waitpid(pid, &st, 0);
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	if (fd >= 0)
		close(fd);
	xc_hostmem_untrack(r.ptr, &out_r);
	if (p)
		munmap(p, len);
}

static void test_table(void)
{
	struct xc_hostreg a = { 0 }, b, out_r;
	uint64_t off = 0;
	uint32_t reg = 0;

	a.ptr = 0x100010;
	a.size = 0x2000;
	a.base = 0x100000;
	a.len = 0x3000;
	a.region = 20;
	b = a;
	b.ptr = b.base = 0x200000;
	b.region = 20;
	CHECK(!xc_hostmem_track(&a), "table: track");
	CHECK(xc_hostmem_track(&b) == -EEXIST,
	      "table: a region id the worker answered twice is refused");
	CHECK(xc_hostmem_find((void *)0x100010, 0x2000, &reg, &off) &&
	      reg == 20 && off == 0x10, "table: find the whole range");
	CHECK(!xc_hostmem_find((void *)0x100008, 8, &reg, &off),
	      "table: same page, before the range");
	CHECK(!xc_hostmem_find((void *)0x101000, 0x1011, &reg, &off),
	      "table: past the end of the range");
	CHECK(xc_hostmem_untrack(0x100000, &out_r) == -ENOENT,
	      "table: untrack needs the registered pointer");
	CHECK(!xc_hostmem_untrack(0x100010, &out_r) && out_r.region == 20 &&
	      !xc_hostmem_find((void *)0x100010, 1, &reg, &off),
	      "table: untrack");
}

/* ---- the descriptor channel ---- */

static int guest_connect(struct xc_transport *t)
{
	struct xc_transport_opts o = { 0 };

	memset(t, 0, sizeof(*t));
	o.path = lsock;
	o.arena_size = 1 << 20;
	return xc_local_open(t, &o);
}

/* A worker that takes the channel: the memfd tagged 9, not 7's. */
static int chan_worker(int side)
{
	struct xd_chan c;
	char buf[4];
	int conn, fd, v, ret = 0;

	conn = accept(lfd, NULL, NULL);
	if (conn < 0 || xd_local_accept(conn, &c, NULL, WSESSION))
		return 2;
	if (recv_int(side, &v))
		ret = 3;
	fd = ret ? -1 : c.ops->take_fd(&c, 9);
	if (!ret && fd < 0)
		ret = 4;
	if (!ret && (pread(fd, buf, 4, 0) != 4 || memcmp(buf, "nine", 4)))
		ret = 5;
	if (fd >= 0)
		close(fd);
	if (!ret && c.ops->take_fd(&c, 9) != -ENOENT)
		ret = 6;
	c.ops->close(&c);
	return ret;
}

/* An older worker: reads the hello without a control buffer. */
static int legacy_worker(void)
{
	struct xcuda_local_hello h;
	struct xcuda_local_welcome w = { 0 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 3)];
	} ctl;
	struct iovec iov = { .iov_base = &w, .iov_len = sizeof(w) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	int conn, fds[3], mfd;
	size_t arena = 1 << 20;
	void *base;
	char c;

	conn = accept(lfd, NULL, NULL);
	if (conn < 0 || recv(conn, &h, sizeof(h), MSG_WAITALL) != sizeof(h))
		return 2;
	mfd = memfd_create("legacy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0 || ftruncate(mfd, (off_t)(XCUDA_PAGE_SIZE + arena)) ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))
		return 3;
	base = mmap(NULL, XCUDA_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		    mfd, 0);
	if (base == MAP_FAILED)
		return 4;
	SHARED_RING_INIT((xcuda_sring_t *)base);
	fds[0] = mfd;
	fds[1] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	fds[2] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	w.magic = XCUDA_LOCAL_MAGIC;
	w.version = XCUDA_LOCAL_VERSION;
	w.arena_size = arena;
	w.session = WSESSION;
	memset(&ctl, 0, sizeof(ctl));
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	if (sendmsg(conn, &mh, MSG_NOSIGNAL) != sizeof(w))
		return 5;
	/* Until the guest hangs up. */
	while (recv(conn, &c, 1, 0) > 0)
		;
	return 0;
}

static pid_t spawn_worker(int legacy, int *side)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		close(sv[0]);
		_exit(legacy ? legacy_worker() : chan_worker(sv[1]));
	}
	close(sv[1]);
	*side = sv[0];
	return pid;
}

static int reap_status(pid_t pid)
{
	long end = now_ms() + TIMEOUT_MS;
	int st;

	while (now_ms() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		nap_ms(5);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static void test_channel(void)
{
	struct xc_transport t = { 0 };
	int side = -1, f7 = -1, f9 = -1, st;
	pid_t pid;

	pid = spawn_worker(0, &side);
	EXPECT(pid > 0, "fork");
	EXPECT(!guest_connect(&t), "handshake failed");
	EXPECT(t.ops->send_fd, "no send_fd on local");
	f7 = make_memfd(PAGE, 0, 0, 0);
	f9 = make_memfd(PAGE, 0, 0, 0);
	EXPECT(f7 >= 0 && f9 >= 0 && pwrite(f7, "seven", 5, 0) == 5 &&
	       pwrite(f9, "nine", 4, 0) == 4, "memfds");
	/* 7's request never came: the worker drops its message. */
	EXPECT(!t.ops->send_fd(&t, f7, 7), "send 7");
	EXPECT(!t.ops->send_fd(&t, f9, 9), "send 9");
	send_int(side, 1);
	st = reap_status(pid);
	pid = -1;
	EXPECT(st == 0, "worker status %d", st);
out:
	check_case("channel: the memfd with the request's tag, stale ones "
		   "dropped");
	if (t.ops)
		t.ops->close(&t);
	if (pid > 0)
		reap_status(pid);
	if (side >= 0)
		close(side);
	if (f7 >= 0)
		close(f7);
	if (f9 >= 0)
		close(f9);
}

static void test_channel_legacy(void)
{
	struct xc_transport t = { 0 };
	int side = -1, f = -1, ret, st;
	pid_t pid;

	pid = spawn_worker(1, &side);
	EXPECT(pid > 0, "fork");
	EXPECT(!guest_connect(&t), "handshake with an older worker failed");
	f = make_memfd(PAGE, 0, 0, 0);
	ret = t.ops->send_fd(&t, f, 1);
	EXPECT(ret == -ENOTCONN, "send_fd = %d, want -ENOTCONN", ret);
	t.ops->close(&t);
	t.ops = NULL;
	st = reap_status(pid);
	pid = -1;
	EXPECT(st == 0, "legacy worker status %d", st);
out:
	check_case("channel: an older worker drops it, the guest does "
		   "without");
	if (t.ops)
		t.ops->close(&t);
	if (pid > 0)
		reap_status(pid);
	if (side >= 0)
		close(side);
	if (f >= 0)
		close(f);
}

/* A hello with @n descriptors attached must be refused with -EINVAL. */
static void bad_channel(const char *what, const int *fds, int n)
{
	struct xcuda_local_hello h = {
		XCUDA_LOCAL_MAGIC, XCUDA_LOCAL_VERSION, 0, 0, 1 << 20,
	};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} ctl;
	struct xcuda_local_welcome w;
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = CMSG_SPACE(sizeof(int) * n),
	};
	struct cmsghdr *cm;
	int conn = -1, fd = -1, ret = 1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct xd_chan c;

		conn = accept(lfd, NULL, NULL);
		_exit(xd_local_accept(conn, &c, NULL, WSESSION) == -EINVAL ?
		      0 : 1);
	}
	memset(&ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	strcpy(sa.sun_path, lsock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	EXPECT(pid > 0 && fd >= 0 &&
	       !connect(fd, (struct sockaddr *)&sa, sizeof(sa)), "connect");
	EXPECT(sendmsg(fd, &mh, MSG_NOSIGNAL) == sizeof(h), "send hello");
	EXPECT(recv(fd, &w, sizeof(w), MSG_WAITALL) == sizeof(w) &&
	       w.status == -EINVAL, "%s: no -EINVAL welcome", what);
	ret = reap_status(pid);
	pid = -1;
	EXPECT(!ret, "%s: xd_local_accept() did not refuse", what);
out:
	if (pid > 0)
		reap_status(pid);
	if (fd >= 0)
		close(fd);
}

static void test_bad_channels(void)
{
	int p[2] = { -1, -1 }, st[2] = { -1, -1 }, sp[2] = { -1, -1 };
	int two[2];

	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, st) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp)) {
		CHECK_WHY("pipe or socketpair: %s", strerror(errno));
		goto out;
	}
	bad_channel("a pipe", p, 1);
	if (check_case_ok())
		bad_channel("a stream socket", st, 1);
	two[0] = sp[1];
	two[1] = p[1];
	if (check_case_ok())
		bad_channel("two descriptors", two, 2);
out:
	check_case("channel: hellos with the wrong descriptors refused");
	for (int i = 0; i < 2; i++) {
		if (p[i] >= 0)
			close(p[i]);
		if (st[i] >= 0)
			close(st[i]);
		if (sp[i] >= 0)
			close(sp[i]);
	}
}

/* ---- the worker's checks, without a transport ---- */

static struct xd_chan wchan;
static struct xd_session wsess;
static int tk_fd = -1;

static int fake_take_fd(struct xd_chan *c, uint32_t tag)
{
	int fd = tk_fd;

	(void)c;
	(void)tag;
	tk_fd = -1;
	return fd >= 0 ? fd : -ENOENT;
}

static const struct xd_chan_ops fake_ops = {
	.name = "fake",
	.take_fd = fake_take_fd,
};
static const struct xd_chan_ops nofd_ops = { .name = "nofd" };

static int wcall(uint16_t op, const void *args, uint16_t len, void *res,
		 size_t res_len)
{
	return call_res(&wsess, op, args, len, 0, 0, res, res_len);
}

/* HOST_REGISTER with @fd (consumed) as the channel's message. */
static int wregister(int fd, uint64_t size, uint64_t addr, uint32_t flags,
		     uint32_t tag, struct xcuda_host_register_res *r)
{
	struct xcuda_host_register_args a = { size, addr, flags, tag };
	struct xcuda_host_register_res dummy;

	tk_fd = fd;
	return wcall(XCUDA_OP_HOST_REGISTER, &a, sizeof(a), r ? r : &dummy,
		     sizeof(dummy));
}

/*
 * A HOST_REGISTER the worker must refuse with @want: it closes the
 * descriptor and keeps no mapping of it.
 */
static void wrefuse(const char *what, int fd, uint64_t size, uint64_t addr,
		    uint32_t flags, uint32_t tag, int want)
{
	unsigned long long ino = fd >= 0 ? fd_ino(fd) : 0;
	int got = wregister(fd, size, addr, flags, tag, NULL);
	/* Tag 0 names no message: nothing is taken. */
	int taken = tk_fd < 0, gone = fd < 0 || (taken && fd_closed(fd));

	CHECK_MSG(got == want && taken == !!tag && (!tag || gone) &&
		  maps_inode(0, ino) == 0,
		  check_name("worker refuses %s", what),
		  "status %d (want %d), fd %s, mapped %d", got, want,
		  gone ? "closed" : "open", maps_inode(0, ino));
	if (!taken)
		close(tk_fd);
	tk_fd = -1;
}

static void test_worker_checks(void)
{
	const int good = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	const size_t sz = 4 * PAGE;
	struct xcuda_host_unregister_args u = { 12345, 0 };
	struct xcuda_host_memcpy_args c;
	struct xcuda_host_memcpy_2d_args c2;
	int p[2], got;

	wchan.ops = &nofd_ops;
	got = wregister(-1, sz, 0, 0, 1, NULL);
	CHECK_EQ(got, cudaErrorNotSupported,
		 "worker: HOST_REGISTER without a descriptor channel");
	wchan.ops = &fake_ops;

	wrefuse("no message with the tag", -1, sz, 0, 0, 1,
		cudaErrorInvalidValue);
	wrefuse("tag 0", make_memfd(sz, good, 1, 0), sz, 0, 0, 0,
		cudaErrorInvalidValue);
	wrefuse("an unsealed memfd", make_memfd(sz, 0, 1, 0), sz, 0, 0, 1,
		cudaErrorInvalidValue);
	wrefuse("a memfd sealed only against growing",
		make_memfd(sz, F_SEAL_GROW, 1, 0), sz, 0, 0, 1,
		cudaErrorInvalidValue);
	wrefuse("a memfd sealed against writes",
		make_memfd(sz, good | F_SEAL_WRITE, 1, 0), sz, 0, 0, 1,
		cudaErrorInvalidValue);
	wrefuse("a memfd smaller than claimed", make_memfd(sz, good, 1, 0),
		2 * sz, 0, 0, 1, cudaErrorInvalidValue);
	wrefuse("a memfd larger than claimed", make_memfd(sz, good, 1, 0),
		sz - PAGE, 0, 0, 1, cudaErrorInvalidValue);
	if (!pipe(p)) {
		close(p[1]);
		wrefuse("a pipe", p[0], sz, 0, 0, 1, cudaErrorInvalidValue);
	}
	wrefuse("size 0", make_memfd(sz, good, 1, 0), 0, 0, 0, 1,
		cudaErrorInvalidValue);
	wrefuse("a size that is not whole pages", make_memfd(sz, good, 1, 0),
		sz - 1, 0, 0, 1, cudaErrorInvalidValue);
	wrefuse("an unaligned address", make_memfd(sz, good, 1, 0), sz, 123,
		0, 1, cudaErrorInvalidValue);
	wrefuse("cudaHostRegisterIoMemory", make_memfd(sz, good, 1, 0), sz,
		0, cudaHostRegisterIoMemory, 1, cudaErrorInvalidValue);
	wrefuse("an unknown flag", make_memfd(sz, good, 1, 0), sz, 0, 0x100,
		1, cudaErrorInvalidValue);
	wrefuse("pages that are not resident", make_memfd(sz, good, 0, 0),
		sz, 0, 0, 1, cudaErrorMemoryAllocation);

	CHECK_EQ(wcall(XCUDA_OP_HOST_UNREGISTER, &u, sizeof(u), NULL, 0),
		 cudaErrorHostMemoryNotRegistered,
		 "worker: HOST_UNREGISTER of an unknown region");
	u.rsvd = 1;
	CHECK_EQ(wcall(XCUDA_OP_HOST_UNREGISTER, &u, sizeof(u), NULL, 0),
		 cudaErrorInvalidValue, "worker: HOST_UNREGISTER rsvd");
	memset(&c, 0, sizeof(c));
	c.region = XCUDA_HANDLE_FIRST;
	c.dir = XCUDA_COPY_H2D;
	c.count = 1;
	CHECK_EQ(wcall(XCUDA_OP_HOST_MEMCPY, &c, sizeof(c), NULL, 0),
		 cudaErrorInvalidValue, "worker: HOST_MEMCPY unknown region");
	memset(&c2, 0, sizeof(c2));
	c2.region = 3;
	c2.dir = XCUDA_COPY_D2H;
	c2.width = c2.height = c2.hpitch = 1;
	CHECK_EQ(wcall(XCUDA_OP_HOST_MEMCPY_2D, &c2, sizeof(c2), NULL, 0),
		 cudaErrorInvalidValue,
		 "worker: HOST_MEMCPY_2D unknown region");
}

/* With a GPU: a real region, its copies, their checks and its cleanup. */
static void test_worker_region(void)
{
	const int good = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	const size_t sz = 4 * PAGE;
	struct xcuda_host_register_res r, r2;
	struct xcuda_host_unregister_args u = { 0, 0 };
	struct xcuda_host_memcpy_args c;
	struct xcuda_host_memcpy_2d_args c2;
	unsigned long long ino, ino2;
	uint8_t *h = NULL, *v = NULL;
	void *d = NULL;
	int fd, got;

	fd = make_memfd(sz, good, 1, 21);
	ino = fd_ino(fd);
	got = wregister(dup(fd), sz, 0, cudaHostRegisterPortable, 1, &r);
	if (!have_gpu) {
		/* CUDA's own refusal, and nothing left behind. */
		CHECK_MSG(got != 0 && got != cudaErrorInvalidValue &&
			  maps_inode(0, ino) == 0,
			  "worker: a good memfd reaches cudaHostRegister",
			  "status %d", got);
		SKIP("worker: region copies, checks and cleanup",
		     "no GPU here");
		close(fd);
		return;
	}
	h = malloc(sz);
	v = malloc(sz);
	EXPECT(!got && r.region >= XCUDA_HANDLE_FIRST && r.device_ptr,
	       "HOST_REGISTER status %d region %u", got, r.region);
	EXPECT(maps_inode(0, ino) > 0, "the worker does not map the memfd");
	EXPECT(h && v && !cudaMalloc(&d, sz), "setup");

	memset(&c, 0, sizeof(c));
	c.region = r.region;
	c.dir = XCUDA_COPY_H2D;
	c.dev = (uintptr_t)d;
	c.off = sz;
	c.count = 1;
	EXPECT(wcall(XCUDA_OP_HOST_MEMCPY, &c, sizeof(c), NULL, 0) ==
	       cudaErrorInvalidValue, "offset at the end accepted");
	c.off = 0;
	c.count = sz + 1;
	EXPECT(wcall(XCUDA_OP_HOST_MEMCPY, &c, sizeof(c), NULL, 0) ==
	       cudaErrorInvalidValue, "count past the end accepted");
	c.off = UINT64_MAX - 1;
	c.count = 4;
	EXPECT(wcall(XCUDA_OP_HOST_MEMCPY, &c, sizeof(c), NULL, 0) ==
	       cudaErrorInvalidValue, "wrapping offset accepted");
	c.off = 0;
	c.count = sz;
	c.dir = XCUDA_COPY_D2D;
	EXPECT(wcall(XCUDA_OP_HOST_MEMCPY, &c, sizeof(c), NULL, 0) ==
	       cudaErrorInvalidMemcpyDirection, "D2D accepted");
	c.dir = XCUDA_COPY_H2D;
	c.flags = XCUDA_COPY_STAGED;
	EXPECT(wcall(XCUDA_OP_HOST_MEMCPY, &c, sizeof(c), NULL, 0) ==
	       cudaErrorInvalidValue, "unknown copy flag accepted");
	c.flags = XCUDA_COPY_ASYNC;
	c.stream = 5;
	EXPECT(wcall(XCUDA_OP_HOST_MEMCPY, &c, sizeof(c), NULL, 0) ==
	       cudaErrorInvalidResourceHandle, "unknown stream accepted");

	memset(&c2, 0, sizeof(c2));
	c2.region = r.region;
	c2.dir = XCUDA_COPY_H2D;
	c2.dev = (uintptr_t)d;
	c2.hpitch = c2.dpitch = PAGE;
	c2.width = PAGE + 1;
	c2.height = 2;
	EXPECT(wcall(XCUDA_OP_HOST_MEMCPY_2D, &c2, sizeof(c2), NULL, 0) ==
	       cudaErrorInvalidValue, "2D width past the pitch accepted");
	c2.width = PAGE;
	c2.height = 5;
	EXPECT(wcall(XCUDA_OP_HOST_MEMCPY_2D, &c2, sizeof(c2), NULL, 0) ==
	       cudaErrorInvalidValue, "2D extent past the end accepted");
	c2.height = UINT64_MAX / 2;
	EXPECT(wcall(XCUDA_OP_HOST_MEMCPY_2D, &c2, sizeof(c2), NULL, 0) ==
	       cudaErrorInvalidValue, "2D extent that overflows accepted");

	/* Both ways, synchronous and on a stream, 1D and 2D. */
	c.flags = 0;
	c.stream = 0;
	EXPECT(!wcall(XCUDA_OP_HOST_MEMCPY, &c, sizeof(c), NULL, 0),
	       "H2D copy failed");
	EXPECT(!cudaMemcpy(h, d, sz, cudaMemcpyDeviceToHost) &&
	       bad_byte(h, sz, 21) < 0, "H2D copied the wrong bytes");
	fill(h, sz, 22);
	EXPECT(!cudaMemcpy(d, h, sz, cudaMemcpyHostToDevice), "setup copy");
	c.dir = XCUDA_COPY_D2H;
	c.flags = XCUDA_COPY_ASYNC;
	EXPECT(!wcall(XCUDA_OP_HOST_MEMCPY, &c, sizeof(c), NULL, 0) &&
	       !cudaDeviceSynchronize() &&
	       pread(fd, v, sz, 0) == (ssize_t)sz && bad_byte(v, sz, 22) < 0,
	       "async D2H copy");
	c2.height = 4;
	c2.dir = XCUDA_COPY_H2D;
	fill(v, sz, 23);
	EXPECT(pwrite(fd, v, sz, 0) == (ssize_t)sz, "pwrite");
	EXPECT(!wcall(XCUDA_OP_HOST_MEMCPY_2D, &c2, sizeof(c2), NULL, 0) &&
	       !cudaMemcpy(h, d, sz, cudaMemcpyDeviceToHost) &&
	       bad_byte(h, sz, 23) < 0, "2D H2D copy");

	u.region = r.region;
	EXPECT(!wcall(XCUDA_OP_HOST_UNREGISTER, &u, sizeof(u), NULL, 0),
	       "HOST_UNREGISTER failed");
	EXPECT(maps_inode(0, ino) == 0, "the worker still maps the memfd");
	EXPECT(wcall(XCUDA_OP_HOST_UNREGISTER, &u, sizeof(u), NULL, 0) ==
	       cudaErrorHostMemoryNotRegistered, "unregistered twice");
	c.dir = XCUDA_COPY_H2D;
	c.flags = 0;
	EXPECT(wcall(XCUDA_OP_HOST_MEMCPY, &c, sizeof(c), NULL, 0) ==
	       cudaErrorInvalidValue, "copy from an unregistered region");

	/* Left registered: the end of the session cleans it up. */
	close(fd);
	fd = make_memfd(sz, good, 1, 24);
	ino2 = fd_ino(fd);
	EXPECT(!wregister(fd, sz, 0, 0, 2, &r2), "second HOST_REGISTER");
	fd = -1;
	EXPECT(maps_inode(0, ino2) > 0, "second region not mapped");
	xd_session_fini(&wsess);
	EXPECT(maps_inode(0, ino2) == 0, "session end left a mapping");
	wchan.ops = NULL;
	got = xd_session_init(&wsess, &wchan);
	wchan.ops = &fake_ops;
	EXPECT(!got, "session init");
out:
	check_case("worker: region copies, checks and cleanup");
	if (fd >= 0)
		close(fd);
	free(h);
	free(v);
	if (d)
		cudaFree(d);
}

static void worker_setup(void)
{
	struct xcuda_open_args a = { XCUDA_PROTO_VERSION, 0, 1 << 20, 0 };
	struct xcuda_open_res r;

	wchan.arena = calloc(1, 1 << 20);
	wchan.arena_size = 1 << 20;
	wchan.session = WSESSION;
	/* No ops at init: a worker's session would take over our stdout. */
	REQUIRE_MSG(wchan.arena && !xd_session_init(&wsess, &wchan),
		    "worker setup", "out of memory");
	wchan.ops = &fake_ops;
	REQUIRE_MSG(!wcall(XCUDA_OP_OPEN, &a, sizeof(a), &r, sizeof(r)),
		    "worker setup", "OPEN failed");
}

/* ---- through a real xcudad ---- */

static void test_daemon(void)
{
	const int good = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	const size_t sz = 16 * PAGE;
	struct xcuda_open_args oa = { XCUDA_PROTO_VERSION, 0, ARENA, 0 };
	struct xcuda_host_register_args a = { sz, 0, 0, 1 };
	struct xcuda_host_register_res r;
	struct xcuda_host_memcpy_args c;
	struct xcuda_open_res o;
	struct xc_transport t = { 0 };
	unsigned long long ino;
	int fd = -1, got;
	pid_t wpid;

	EXPECT(!start_daemon("4"), "xcudad did not start");
	EXPECT(!sess_open(&t), "session");
	EXPECT(!d_call(&t, XCUDA_OP_OPEN, &oa, sizeof(oa), &o, sizeof(o)),
	       "OPEN");
	EXPECT(t.ops->send_fd, "no send_fd");
	fd = make_memfd(sz, 0, 1, 31);
	EXPECT(!t.ops->send_fd(&t, fd, 1), "the worker took no channel");
	close(fd);
	got = d_call(&t, XCUDA_OP_HOST_REGISTER, &a, sizeof(a), &r,
		     sizeof(r));
	EXPECT(got == cudaErrorInvalidValue, "unsealed memfd: status %d", got);
	a.tag = 2;
	got = d_call(&t, XCUDA_OP_HOST_REGISTER, &a, sizeof(a), &r,
		     sizeof(r));
	EXPECT(got == cudaErrorInvalidValue, "no memfd sent: status %d", got);
	fd = make_memfd(sz, good, 1, 32);
	ino = fd_ino(fd);
	a.tag = 3;
	EXPECT(!t.ops->send_fd(&t, fd, 3), "send");
	close(fd);
	got = d_call(&t, XCUDA_OP_HOST_REGISTER, &a, sizeof(a), &r,
		     sizeof(r));
	if (!have_gpu) {
		EXPECT(got > 0 && got != cudaErrorInvalidValue,
		       "a good memfd: status %d", got);
	} else {
		EXPECT(!got && r.region >= XCUDA_HANDLE_FIRST,
		       "a good memfd: status %d", got);
		memset(&c, 0, sizeof(c));
		c.region = r.region;
		c.dir = XCUDA_COPY_D2H;
		c.off = sz - 8;
		c.count = 9;
		got = d_call(&t, XCUDA_OP_HOST_MEMCPY, &c, sizeof(c), NULL, 0);
		EXPECT(got == cudaErrorInvalidValue, "copy past the end: %d",
		       got);
		/* Where we may read its maps: the worker maps the memfd. */
		wpid = worker_pid(t.session);
		got = wpid > 0 ? maps_inode(wpid, ino) : -1;
		EXPECT(got != 0, "the worker does not map the memfd");
	}
	/* Left registered: the worker's end of session must clean up. */
	check_close(&t, "daemon: CLOSE with a region left",
		    "daemon: the worker exits cleanly", TIMEOUT_MS);
	t.ops->close(&t);
	t.ops = NULL;
out:
	check_case("daemon: HOST_REGISTER through xcudad");
	if (t.ops)
		t.ops->close(&t);
}

/* The guest's whole registration path, against the real worker. */
static void test_guest_register(void)
{
	struct xcuda_open_args oa = { XCUDA_PROTO_VERSION, 0, ARENA, 0 };
	struct xc_session *s = calloc(1, sizeof(*s));
	const size_t len = 64 * PAGE;
	uint8_t *m = anon(len), *ptr;
	uint64_t devptr = 0, off;
	uint32_t reg;
	int moved = -1, found = 0;
	cudaError_t err;

	EXPECT(s && m, "out of memory");
	pthread_mutex_init(&s->lock, NULL);
	EXPECT(!sess_open(&s->t), "session");
	EXPECT(!d_call(&s->t, XCUDA_OP_OPEN, &oa, sizeof(oa), NULL, 0),
	       "OPEN");
	s->next_id = next_id;
	s->pending = calloc(s->t.ring_slots, sizeof(*s->pending));
	EXPECT(s->pending, "out of memory");
	for (unsigned int i = 0; i < s->t.ring_slots; i++)
		s->pending[i].staging = UINT64_MAX;
	fill(m, len, 41);
	ptr = m + PAGE + 5;
	err = xc_hostmem_register(s, ptr, 10 * PAGE, 0, &devptr, &moved);
	if (!have_gpu) {
		/* Refused by CUDA in the worker: the pages came back. */
		EXPECT(err && !moved && is_anon((uintptr_t)ptr) &&
		       bad_byte(m, len, 41) < 0,
		       "err %d moved %d", err, moved);
		goto out;
	}
	EXPECT(!err && moved && devptr, "register: err %d moved %d", err,
	       moved);
	EXPECT(is_memfd((uintptr_t)ptr) && bad_byte(m, len, 41) < 0,
	       "not moved, or contents changed");
	EXPECT(xc_hostmem_find(ptr, 10 * PAGE, &reg, &off) && off == 5,
	       "find");
	err = xc_hostmem_register(s, ptr + 2 * PAGE, PAGE, 0, &devptr,
				  &moved);
	EXPECT(!err && !moved, "overlapping pages moved again");
	err = xc_hostmem_unregister(s, ptr, &found);
	EXPECT(!err && found && is_anon((uintptr_t)ptr) &&
	       bad_byte(m, len, 41) < 0, "unregister: err %d", err);
	err = xc_hostmem_unregister(s, ptr, &found);
	EXPECT(!err && !found, "unregistered twice");
out:
	check_case("guest: cudaHostRegister's move through xcudad");
	if (s && s->t.ops)
		s->t.ops->close(&s->t);
	if (s)
		free(s->pending);
	free(s);
	if (m)
		munmap(m, len);
}

int main(void)
{
	harness_setup();
	xd_log_setup(XD_LOG_ERROR, 0);
	have_gpu = !init_status && device_count > 0;
	test_move();
	test_refusals();
	test_mlock();
	test_fork();
	test_table();
	REQUIRE_MSG(!listen_on("chan.sock"), "setup", "listen: %s", strerror(errno));
	test_channel();
	test_channel_legacy();
	test_bad_channels();
	close(lfd);
	unlink(lsock);
	worker_setup();
	test_worker_checks();
	test_worker_region();
	xd_session_fini(&wsess);
	free(wchan.arena);
	test_daemon();
	if (daemon_alive())
		test_guest_register();
	return check_summary();
}
