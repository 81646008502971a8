// SPDX-License-Identifier: MIT
/*
 * Managed memory without a GPU: the chunk states and the fault handler
 * of guest-lib/managed.c driven on ordinary memory, with a fake device
 * (a buffer) behind a fake copy; and the worker's managed-memory
 * handlers refusing bad arguments before CUDA sees them.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest-lib/guest.h"
#include "dom0-daemon/ops.h"
#include "check.h"

#define SIZE	(3 * XC_MG_CHUNK + 12345)

enum { DEVICE, CLEAN, DIRTY };

static uint8_t *fake_dev;	/* the device copy */
static uintptr_t fake_base;	/* its device address */
static size_t fake_size;
static int pushes, pulls;
static uint64_t pushed_bytes, pulled_bytes;

static cudaError_t fake_copy(struct xc_session *s, int to_dev, void *host,
			     uint64_t dev, size_t len)
{
	(void)s;
	if (dev < fake_base || dev + len > fake_base + fake_size)
		return cudaErrorInvalidValue;
	if (to_dev) {
		memcpy(fake_dev + (dev - fake_base), host, len);
		pushes++;
		pushed_bytes += len;
	} else {
		memcpy(host, fake_dev + (dev - fake_base), len);
		pulls++;
		pulled_bytes += len;
	}
	return cudaSuccess;
}

/* An address range that nothing maps: a reservation given back. */
static uintptr_t free_range(size_t len)
{
	void *p = mmap(NULL, len + XC_MG_CHUNK, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 0;
	munmap(p, len + XC_MG_CHUNK);
	return ((uintptr_t)p + XC_MG_CHUNK - 1) & ~(uintptr_t)(XC_MG_CHUNK - 1);
}

static void request(struct xcuda_request *req, uint16_t op, const void *a,
		    size_t len)
{
	memset(req, 0, sizeof(*req));
	req->hdr.op = op;
	req->hdr.len = (uint16_t)len;
	memcpy(req->args, a, len);
}

static void launch(void)
{
	struct xcuda_request req;
	uint8_t none[8] = { 0 };

	request(&req, XCUDA_OP_LAUNCH, none, sizeof(none));
	xc_managed_before_send(NULL, &req);
}

static void test_allocation(void)
{
	struct xcuda_memset_args ms = { 0 };
	struct xcuda_memcpy_args mc = { 0 };
	struct xcuda_request req;
	volatile uint8_t *p;
	uint64_t sum = 0;
	size_t i;
	int ret;

	fake_size = SIZE;
	fake_dev = calloc(1, SIZE);
	fake_base = free_range(SIZE);
	REQUIRE(fake_dev && fake_base, "managed: setup");
	ret = xc_managed_map(NULL, fake_base, SIZE, 0, 0, 0);
	REQUIRE(ret == 0, "managed: map a new allocation");
	p = (volatile uint8_t *)fake_base;
	CHECK(xc_managed_any(), "managed: xc_managed_any once mapped");
	CHECK_EQ(xc_managed_state(fake_base), CLEAN,
		 "managed: a new allocation is CLEAN (zeros both sides)");
	CHECK_EQ(p[100] + p[SIZE - 1], 0, "managed: it reads as zeros");
	CHECK_EQ(pulls, 0, "managed: reading a CLEAN chunk pulls nothing");
	p[5] = 42;
	CHECK_EQ(xc_managed_state(fake_base), DIRTY,
		 "managed: a write fault makes the chunk DIRTY");
	CHECK_EQ(xc_managed_state(fake_base + XC_MG_CHUNK), CLEAN,
		 "managed: the other chunks stay CLEAN");

	launch();
	CHECK_EQ(pushes, 1, "managed: a launch pushes the DIRTY chunk only");
	CHECK_EQ(fake_dev[5], 42, "managed: the device sees the host's write");
	CHECK_EQ(xc_managed_state(fake_base), DEVICE,
		 "managed: after a launch the chunk is DEVICE");
	CHECK_EQ(xc_managed_state(fake_base + 3 * XC_MG_CHUNK), DEVICE,
		 "managed: so is the last, partial chunk");

	/* "The kernel" writes; the host reads after it. */
	fake_dev[5] = 7;
	fake_dev[SIZE - 1] = 9;
	CHECK_EQ(p[5], 7, "managed: a read fault pulls the kernel's result");
	CHECK_EQ(pulls, 1, "managed: one pull for the chunk");
	CHECK_EQ(pulled_bytes, XC_MG_CHUNK, "managed: a whole chunk pulled");
	CHECK_EQ(p[SIZE - 1], 9, "managed: the last chunk's device bytes");
	CHECK_EQ(pulled_bytes, XC_MG_CHUNK + (SIZE - 3 * XC_MG_CHUNK),
		 "managed: only the allocation's bytes of the last chunk");
	CHECK_EQ(xc_managed_state(fake_base), CLEAN,
		 "managed: pulled chunks are CLEAN");

	/* A copy from managed memory: pushes, keeps the host copy. */
	p[6] = 1;
	mc.src = fake_base;
	mc.dst = 0x1000;
	mc.count = 16;
	mc.dir = XCUDA_COPY_D2H;
	request(&req, XCUDA_OP_MEMCPY, &mc, sizeof(mc));
	xc_managed_before_send(NULL, &req);
	CHECK_EQ(fake_dev[6], 1, "managed: a copy from it pushes first");
	CHECK_EQ(xc_managed_state(fake_base), CLEAN,
		 "managed: a copy that reads leaves the host copy valid");

	/* A memset of the last chunk only takes that chunk away. */
	ms.ptr = fake_base + 3 * XC_MG_CHUNK;
	ms.count = 10;
	request(&req, XCUDA_OP_MEMSET, &ms, sizeof(ms));
	xc_managed_before_send(NULL, &req);
	CHECK_EQ(xc_managed_state(fake_base + 3 * XC_MG_CHUNK), DEVICE,
		 "managed: a memset invalidates the chunks it writes");
	CHECK_EQ(xc_managed_state(fake_base), CLEAN,
		 "managed: and no other");

	/* A copy to unrelated memory touches nothing. */
	pushes = 0;
	mc.src = 0x1000;
	mc.dst = 0x2000;
	mc.dir = XCUDA_COPY_D2D;
	request(&req, XCUDA_OP_MEMCPY, &mc, sizeof(mc));
	xc_managed_before_send(NULL, &req);
	CHECK_EQ(xc_managed_state(fake_base), CLEAN,
		 "managed: a copy elsewhere leaves managed memory alone");

	/* Prefetch to the host pulls everything now. */
	launch();
	memset(fake_dev, 3, SIZE);
	pulls = 0;
	CHECK_EQ(xc_managed_prefetch_host(NULL, fake_base, SIZE), 0,
		 "managed: prefetch to the host");
	CHECK_EQ(pulls, 4, "managed: prefetch pulls every chunk");
	for (i = 0; i < SIZE; i += 4096)
		sum += p[i];
	CHECK_EQ(pulls, 4, "managed: reading after prefetch pulls nothing");
	CHECK_EQ(sum, 3 * ((SIZE + 4095) / 4096),
		 "managed: the host sees the device's contents");

	/* The address is ours now: a second mapping there is refused. */
	CHECK_EQ(xc_managed_map(NULL, fake_base + 4096, 4096, 0, 0, 0),
		 -EEXIST, "managed: an address already mapped is refused");
	CHECK_EQ(xc_managed_fault(fake_base + SIZE + XC_MG_CHUNK), -1,
		 "managed: an address outside is not ours");

	CHECK(xc_managed_is((void *)(fake_base - 10), 11),
	      "managed: a buffer ending in managed memory touches it");
	CHECK(!xc_managed_is((void *)(fake_base - 10), 10),
	      "managed: one ending just before does not");
	CHECK(!xc_managed_is((void *)fake_base, 0),
	      "managed: an empty buffer does not");
	CHECK_EQ(xc_managed_unmap(NULL, fake_base, 0), 0, "managed: unmap");
	CHECK_EQ(xc_managed_state(fake_base), -1, "managed: forgotten");
	CHECK(!xc_managed_any(), "managed: nothing left");
	CHECK_EQ(xc_managed_unmap(NULL, fake_base, 0), -1,
		 "managed: unmapping twice finds nothing");
	free(fake_dev);
}

/* __managed__ variables: not page aligned, initial values pulled. */
static void test_variables(void)
{
	volatile int *x;
	int ret;

	fake_size = 3 * 4096;
	fake_dev = calloc(1, fake_size);
	fake_base = free_range(fake_size);
	REQUIRE(fake_dev && fake_base, "managed vars: setup");
	((int *)fake_dev)[4096 / 4 + 3] = 1234;
	pulls = 0;
	pulled_bytes = 0;
	ret = xc_managed_map(NULL, fake_base + 4096 + 12, 8, 1, 0, 0);
	REQUIRE(ret == 0, "managed vars: map");
	x = (volatile int *)(fake_base + 4096 + 12);
	CHECK_EQ(xc_managed_state((uintptr_t)x), DEVICE,
		 "managed vars: variables start on the device");
	CHECK_EQ(*x, 1234, "managed vars: the initial value is pulled");
	CHECK_EQ(pulled_bytes, 8, "managed vars: only the variables' bytes");
	*x = 99;
	launch();
	CHECK_EQ(((int *)fake_dev)[4096 / 4 + 3], 99,
		 "managed vars: a host write reaches the device");
	/* Another module's variables in the same pages join the region. */
	((int *)fake_dev)[4096 / 4 + 100] = 77;
	CHECK_EQ(xc_managed_map(NULL, fake_base + 4096 + 400, 4, 1, 0, 0), 0,
		 "managed vars: a second module's variables in the same page");
	CHECK_EQ(xc_managed_state((uintptr_t)x), DEVICE,
		 "managed vars: the region went back to the device");
	CHECK_EQ(((int *)fake_dev)[4096 / 4 + 3], 99,
		 "managed vars: with the host's writes pushed");
	CHECK_EQ(*(volatile int *)(fake_base + 4096 + 400), 77,
		 "managed vars: the new variable's initial value is pulled");
	CHECK_EQ(*x, 99, "managed vars: the first keeps its value");
	CHECK_EQ(xc_managed_map(NULL, fake_base + 4096 + 4000, 200, 1, 0, 0),
		 -EEXIST, "managed vars: one past the pages is refused");
	CHECK_EQ(xc_managed_unmap(NULL, fake_base + 4096 + 12, 0), -1,
		 "managed vars: cudaFree's unmap does not take variables");
	CHECK_EQ(xc_managed_unmap(NULL, fake_base + 4096 + 12, 1), 0,
		 "managed vars: unmap");
	free(fake_dev);
}

static sigjmp_buf jump;
static volatile sig_atomic_t theirs;

static void their_handler(int sig)
{
	(void)sig;
	theirs++;
	siglongjmp(jump, 1);
}

/* A fault that is not ours goes to the handler that was there before. */
static void test_chained(void)
{
	struct sigaction sa, old;
	uint8_t *q;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = their_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old);
	fake_size = 4096;
	fake_dev = calloc(1, fake_size);
	fake_base = free_range(fake_size);
	q = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(fake_dev && fake_base && q != MAP_FAILED,
		"managed chain: setup");
	/* The first mapping installs our handler over theirs. */
	REQUIRE(xc_managed_map(NULL, fake_base, 4096, 0, 0, 0) == 0,
		"managed chain: map");
	if (!sigsetjmp(jump, 1))
		(void)*(volatile uint8_t *)q;
	CHECK_EQ(theirs, 1, "managed chain: a foreign fault reaches the "
		 "program's own handler");
	*(volatile uint8_t *)fake_base = 1;
	CHECK_EQ(theirs, 1, "managed chain: our faults do not");
	xc_managed_forget_all(NULL);
	CHECK(!xc_managed_any(), "managed chain: forget all");
	munmap(q, 4096);
	free(fake_dev);
}

/* The worker's handlers check what CUDA would not see. */
static void test_worker(void)
{
	struct xcuda_mem_prefetch_args pa = { 0 };
	struct xcuda_mem_advise_args aa = { 0 };
	struct xd_session *s = calloc(1, sizeof(*s));

	REQUIRE(s, "managed worker: setup");
	aa.ptr = 0x1000;
	aa.count = 4096;
	aa.rsvd = 1;
	CHECK_EQ(xd_op_mem_advise(s, &aa, NULL), cudaErrorInvalidValue,
		 "managed worker: MEM_ADVISE with rsvd set");
	pa.ptr = 0x1000;
	pa.count = 4096;
	pa.loc_type = cudaMemLocationTypeHost;
	pa.stream = 0x12345;
	CHECK_EQ(xd_op_mem_prefetch(s, &pa, NULL),
		 cudaErrorInvalidResourceHandle,
		 "managed worker: MEM_PREFETCH on an unknown stream");
	pa.stream = 0;
	pa.count = 0;
	CHECK_EQ(xd_op_mem_prefetch(s, &pa, NULL), cudaErrorInvalidValue,
		 "managed worker: MEM_PREFETCH to the host of 0 bytes");
	free(s);
}

int main(void)
{
	xc_managed_set_copy(fake_copy);
	/* First: the program's handler must be there before ours. */
	test_chained();
	test_allocation();
	test_variables();
	test_worker();
	return check_summary();
}
