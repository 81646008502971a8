/* SPDX-License-Identifier: MIT */
/*
 * Memory pools shared between two processes: the program forks before
 * any CUDA call; the parent creates a pool exportable as a POSIX file
 * descriptor, allocates from it and fills the allocation, exports the
 * pool's descriptor and the allocation's export data, and sends both
 * over a Unix socket (the descriptor as SCM_RIGHTS, as programs do).  The
 * child imports the pool and the pointer, checks the data with a kernel,
 * adds 1000 to every element, reads it back with cudaMemcpyDefault and
 * frees its import; the parent then checks what the child wrote.
 * Errors: exporting a pool made without a handle type, exporting memory
 * that is not a pool's, a second import of the same pool.  Only one
 * process prints at a time: each waits for the other's message.
 */
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/xct.h"

#define N 65536

struct msg {
	int status;		/* 0: the exports are good */
	struct cudaMemPoolPtrExportData data;
};

__global__ void fill(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = i * 5 + 2;
}

__global__ void check_and_add(int *p, int n, unsigned int *bad)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		if (p[i] != i * 5 + 2)
			atomicAdd(bad, 1u);
		p[i] += 1000;
	}
}

/* One message, with @fd attached unless it is negative. */
static int send_msg(int sock, const void *p, size_t n, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)p, n };
	struct msghdr m;
	struct cmsghdr *cm;

	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	if (fd >= 0) {
		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return sendmsg(sock, &m, 0) == (ssize_t)n ? 0 : -1;
}

/* One message of @n bytes; *@fd gets the descriptor it carried, or -1. */
static int recv_msg(int sock, void *p, size_t n, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { p, n };
	struct msghdr m;
	struct cmsghdr *cm;

	*fd = -1;
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	if (recvmsg(sock, &m, MSG_WAITALL) != (ssize_t)n)
		return -1;
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return 0;
}

static int child(int sock)
{
	cudaMemPool_t pool = NULL, again = NULL;
	int *p = NULL, done = 1, fd;
	unsigned int *dbad, bad = 0;
	cudaStream_t st;
	struct msg m;
	static int h[N];

	if (recv_msg(sock, &m, sizeof(m), &fd) || m.status || fd < 0) {
		printf("child: no exports from the parent\n");
		fflush(stdout);
		return 1;
	}
	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CK(cudaMalloc(&dbad, sizeof(*dbad)));
	CK(cudaMemset(dbad, 0, sizeof(*dbad)));
	EXPECT(cudaSuccess, cudaMemPoolImportFromShareableHandle(
		&pool, (void *)(uintptr_t)fd,
		cudaMemHandleTypePosixFileDescriptor, 0));
	printf("child: pool imported: %s\n", xct_yes(pool != NULL));
	EXPECT(cudaSuccess, cudaMemPoolImportPointer((void **)&p, pool,
						     &m.data));
	printf("child: pointer imported: %s\n", xct_yes(p != NULL));
	if (!p) {
		fflush(stdout);
		send_msg(sock, &done, sizeof(done), -1);
		return 1;
	}

	check_and_add<<<N / 256, 256, 0, st>>>(p, N, dbad);
	CKLAUNCH();
	CK(cudaStreamSynchronize(st));
	CK(cudaMemcpy(&bad, dbad, sizeof(bad), cudaMemcpyDeviceToHost));
	printf("child: mismatches in the parent's data: %u\n", bad);
	CK(cudaMemcpy(h, p, sizeof(h), cudaMemcpyDefault));
	printf("child: read back (default kind): sum=%llu\n",
	       (unsigned long long)xct_sum(h, sizeof(h)));
	cudaPointerAttributes pa;
	CK(cudaPointerGetAttributes(&pa, p));
	printf("child: pointer type: %d\n", (int)pa.type);

	/* The same descriptor imported again. */
	if (SHOW(cudaMemPoolImportFromShareableHandle(
		    &again, (void *)(uintptr_t)fd,
		    cudaMemHandleTypePosixFileDescriptor, 0)) == cudaSuccess)
		printf("child: second import, same pool: %s\n",
		       xct_yes(again == pool));
	close(fd);

	EXPECT(cudaSuccess, cudaFreeAsync(p, st));
	CK(cudaStreamSynchronize(st));
	EXPECT(cudaSuccess, cudaMemPoolDestroy(pool));
	CK(cudaFree(dbad));
	CK(cudaStreamDestroy(st));
	printf("child: done\n");
	fflush(stdout);
	if (send_msg(sock, &done, sizeof(done), -1))
		return 1;
	return xct_failures ? 1 : 0;
}

/* The parent could not make its exports: tell the child, reap it. */
static int parent_give_up(int sock, pid_t pid)
{
	struct msg m;
	int status = 0;

	memset(&m, 0, sizeof(m));
	m.status = 1;
	fflush(stdout);
	send_msg(sock, &m, sizeof(m), -1);
	waitpid(pid, &status, 0);
	printf("parent: child exit status %d\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 1;
}

#define PCK(call)							\
	do {								\
		cudaError_t e_ = (call);				\
		if (e_ != cudaSuccess) {				\
			printf("FAILED %s: %s\n", #call,		\
			       cudaGetErrorName(e_));			\
			return parent_give_up(sock, pid);		\
		}							\
	} while (0)

static int parent(int sock, pid_t pid)
{
	cudaMemPool_t pool, plain;
	cudaMemPoolProps props;
	int *d, *other, done = 0, status = 0, ok = 1, fd = -1, dummy;
	int supported = 0;
	cudaStream_t st;
	struct msg m;
	struct cudaMemPoolPtrExportData junk;
	static int h[N];

	memset(&m, 0, sizeof(m));
	PCK(cudaSetDevice(0));
	PCK(cudaDeviceGetAttribute(&supported,
				   cudaDevAttrMemoryPoolSupportedHandleTypes,
				   0));
	printf("parent: POSIX descriptors supported: %s\n",
	       xct_yes(supported & cudaMemHandleTypePosixFileDescriptor));
	PCK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	memset(&props, 0, sizeof(props));
	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = 0;
	props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
	PCK(cudaMemPoolCreate(&pool, &props));
	PCK(cudaMallocFromPoolAsync((void **)&d, sizeof(h), pool, st));
	fill<<<N / 256, 256, 0, st>>>(d, N);
	PCK(cudaGetLastError());
	PCK(cudaStreamSynchronize(st));
	PCK(cudaMemPoolExportToShareableHandle(
		&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
	PCK(cudaMemPoolExportPointer(&m.data, d));
	printf("parent: exports made, a descriptor: %s\n", xct_yes(fd >= 0));

	/* Errors: a pool without a handle type; memory of no pool. */
	props.handleTypes = cudaMemHandleTypeNone;
	PCK(cudaMemPoolCreate(&plain, &props));
	SHOW(cudaMemPoolExportToShareableHandle(
		&dummy, plain, cudaMemHandleTypePosixFileDescriptor, 0));
	PCK(cudaMemPoolDestroy(plain));
	PCK(cudaMalloc(&other, 4096));
	SHOW(cudaMemPoolExportPointer(&junk, other));
	PCK(cudaFree(other));
	fflush(stdout);

	if (send_msg(sock, &m, sizeof(m), fd) ||
	    recv_msg(sock, &done, sizeof(done), &dummy))
		done = 0;
	close(fd);
	printf("parent: child done: %s\n", xct_yes(done == 1));
	PCK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		if (h[i] != i * 5 + 2 + 1000)
			ok = 0;
	printf("parent: child's writes seen: %s sum=%llu\n", xct_yes(ok),
	       (unsigned long long)xct_sum(h, sizeof(h)));
	waitpid(pid, &status, 0);
	printf("parent: child exit status %d\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	PCK(cudaFreeAsync(d, st));
	PCK(cudaStreamSynchronize(st));
	PCK(cudaMemPoolDestroy(pool));
	PCK(cudaStreamDestroy(st));
	if (!ok || !WIFEXITED(status) || WEXITSTATUS(status))
		xct_failures++;
	return xct_finish("pool_ipc");
}

int main(void)
{
	int sp[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp)) {
		printf("socketpair failed\n");
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("fork failed\n");
		return 1;
	}
	if (pid == 0) {
		close(sp[0]);
		int r = child(sp[1]);
		fflush(stdout);
		_exit(r);
	}
	close(sp[1]);
	return parent(sp[0], pid);
}
