/* SPDX-License-Identifier: MIT */
/*
 * CUDA IPC between two processes: the program forks before any CUDA
 * call; the parent allocates and fills device memory, records an
 * interprocess event after the fill and sends both handles over a pipe;
 * the child opens them, waits on the event, checks the data with a
 * kernel, reads it back (with an explicit kind and with
 * cudaMemcpyDefault), adds 1000 to every element and closes; the parent
 * then checks what the child wrote.  Errors: a handle opened twice in one
 * process (CUDA counts the opens), a third close, closing memory never
 * opened, an event that is not interprocess, opening one's own handle.
 * Only one process prints at a time: each waits for the other's message.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "common/xct.h"

#define N 65536

struct msg {
	int status;		/* 0: the handles are good */
	cudaIpcMemHandle_t mem;
	cudaIpcEventHandle_t ev;
};

__global__ void fill(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = i * 3 + 1;
}

__global__ void check_and_add(int *p, int n, unsigned int *bad)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		if (p[i] != i * 3 + 1)
			atomicAdd(bad, 1u);
		p[i] += 1000;
	}
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *b = (const char *)p;

	while (n) {
		ssize_t w = write(fd, b, n);
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	char *b = (char *)p;

	while (n) {
		ssize_t r = read(fd, b, n);
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int child(int in, int out)
{
	struct msg m;
	int *p = NULL, *p2 = NULL, *mine = NULL, done = 1;
	unsigned int *dbad, bad = 0;
	cudaEvent_t ev = NULL;
	cudaStream_t st;
	static int h[N];

	if (read_all(in, &m, sizeof(m)) || m.status) {
		printf("child: no handles from the parent\n");
		fflush(stdout);
		return 1;
	}
	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	CK(cudaMalloc(&dbad, sizeof(*dbad)));
	CK(cudaMemset(dbad, 0, sizeof(*dbad)));
	EXPECT(cudaSuccess, cudaIpcOpenMemHandle((void **)&p, m.mem,
						 cudaIpcMemLazyEnablePeerAccess));
	EXPECT(cudaSuccess, cudaIpcOpenEventHandle(&ev, m.ev));
	printf("child: opened memory and event\n");

	/* Memory opened once more: CUDA counts it, same address. */
	SHOW(cudaIpcOpenMemHandle((void **)&p2, m.mem,
				  cudaIpcMemLazyEnablePeerAccess));
	printf("child: second open, same address: %s\n", xct_yes(p2 == p));

	/* The fill is ordered before the check by the parent's event. */
	EXPECT(cudaSuccess, cudaStreamWaitEvent(st, ev, 0));
	check_and_add<<<N / 256, 256, 0, st>>>(p, N, dbad);
	CKLAUNCH();
	CK(cudaStreamSynchronize(st));
	CK(cudaMemcpy(&bad, dbad, sizeof(bad), cudaMemcpyDeviceToHost));
	printf("child: mismatches in the parent's data: %u\n", bad);

	CK(cudaMemcpy(h, p, sizeof(h), cudaMemcpyDeviceToHost));
	printf("child: read back (device to host): sum=%llu\n",
	       (unsigned long long)xct_sum(h, sizeof(h)));
	memset(h, 0, sizeof(h));
	CK(cudaMemcpy(h, p + N / 2, sizeof(int) * (N / 2), cudaMemcpyDefault));
	printf("child: read back (default kind): h[0]=%d h[last]=%d\n", h[0],
	       h[N / 2 - 1]);
	cudaPointerAttributes pa;
	CK(cudaPointerGetAttributes(&pa, p));
	printf("child: pointer type: %d\n", (int)pa.type);

	/* Errors: closing what was never opened; one close too many. */
	CK(cudaMalloc(&mine, 4096));
	SHOW(cudaIpcCloseMemHandle(mine));
	if (p2)
		SHOW(cudaIpcCloseMemHandle(p2));
	EXPECT(cudaSuccess, cudaIpcCloseMemHandle(p));
	SHOW(cudaIpcCloseMemHandle(p));
	EXPECT(cudaSuccess, cudaEventDestroy(ev));
	CK(cudaFree(mine));
	CK(cudaFree(dbad));
	CK(cudaStreamDestroy(st));
	printf("child: done\n");
	fflush(stdout);
	if (write_all(out, &done, sizeof(done)))
		return 1;
	return xct_failures ? 1 : 0;
}

/* The parent could not make its handles: tell the child, reap it. */
static int parent_give_up(int out, pid_t pid)
{
	struct msg m;
	int status = 0;

	memset(&m, 0, sizeof(m));
	m.status = 1;
	fflush(stdout);
	write_all(out, &m, sizeof(m));
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
			return parent_give_up(out, pid);		\
		}							\
	} while (0)

static int parent(int in, int out, pid_t pid)
{
	struct msg m;
	int *d, *self = NULL, done = 0, status = 0, ok = 1;
	cudaEvent_t ev, plain;
	cudaStream_t st;
	cudaIpcEventHandle_t eh;
	static int h[N];

	memset(&m, 0, sizeof(m));
	PCK(cudaSetDevice(0));
	int ipc = 0;
	PCK(cudaDeviceGetAttribute(&ipc, cudaDevAttrIpcEventSupport, 0));
	printf("parent: IPC event support: %s\n", xct_yes(ipc));
	PCK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	PCK(cudaMalloc(&d, sizeof(h)));
	PCK(cudaEventCreateWithFlags(&ev, cudaEventInterprocess |
					      cudaEventDisableTiming));
	PCK(cudaEventCreate(&plain));
	fill<<<N / 256, 256, 0, st>>>(d, N);
	PCK(cudaGetLastError());
	PCK(cudaEventRecord(ev, st));
	PCK(cudaIpcGetMemHandle(&m.mem, d));
	PCK(cudaIpcGetEventHandle(&m.ev, ev));
	printf("parent: handles made\n");

	/* Errors: an event that is not interprocess; one's own handle. */
	SHOW(cudaIpcGetEventHandle(&eh, plain));
	if (SHOW(cudaIpcOpenMemHandle((void **)&self, m.mem,
				      cudaIpcMemLazyEnablePeerAccess)) ==
	    cudaSuccess)
		cudaIpcCloseMemHandle(self);
	fflush(stdout);

	if (write_all(out, &m, sizeof(m)) || read_all(in, &done, sizeof(done)))
		done = 0;
	printf("parent: child done: %s\n", xct_yes(done == 1));
	PCK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		if (h[i] != i * 3 + 1 + 1000)
			ok = 0;
	printf("parent: child's writes seen: %s sum=%llu\n", xct_yes(ok),
	       (unsigned long long)xct_sum(h, sizeof(h)));
	waitpid(pid, &status, 0);
	printf("parent: child exit status %d\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	PCK(cudaEventDestroy(ev));
	PCK(cudaEventDestroy(plain));
	PCK(cudaStreamDestroy(st));
	PCK(cudaFree(d));
	if (!ok || !WIFEXITED(status) || WEXITSTATUS(status))
		xct_failures++;
	return xct_finish("ipc");
}

int main(void)
{
	int to_child[2], to_parent[2];
	pid_t pid;

	if (pipe(to_child) || pipe(to_parent)) {
		printf("pipe failed\n");
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("fork failed\n");
		return 1;
	}
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		int r = child(to_child[0], to_parent[1]);
		fflush(stdout);
		_exit(r);
	}
	close(to_child[0]);
	close(to_parent[1]);
	return parent(to_parent[0], to_child[1], pid);
}
