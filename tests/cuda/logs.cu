/* SPDX-License-Identifier: MIT */
/*
 * The driver's error log: cudaLogsCurrent, cudaLogsDumpToMemory (a whole
 * dump, a small buffer, NULL arguments, flags), cudaLogsDumpToFile into a
 * temporary file, a log callback around a failing call, and async
 * notification callbacks (registration results only).  The log's text
 * differs from run to run: only results, error names and whether sizes
 * agree are printed.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/xct.h"

static char big[32768];
/*
 * CUDA 13.0 answers the whole log's size for a small buffer and writes
 * the log past the size we name: give it room, so that the native run
 * survives to compare, and look at the text only when it fits.
 */
static char small[8 + 4096];

/* A call whose failure the driver may log. */
static void provoke(void)
{
	void *p = NULL;

	EXPECT(cudaErrorMemoryAllocation, cudaMalloc(&p, 1ull << 62));
	cudaGetLastError();
}

static void test_dump(void)
{
	cudaLogIterator it = 0, it2 = 0;
	size_t size;
	cudaError_t e;

	EXPECT(cudaSuccess, cudaLogsCurrent(&it, 0));
	SHOW(cudaLogsCurrent(&it2, 1));
	provoke();

	size = sizeof(big);
	memset(big, 'x', sizeof(big));
	EXPECT(cudaSuccess, cudaLogsDumpToMemory(&it, big, &size, 0));
	printf("dump from iterator: size < buffer: %s, terminated at size: "
	       "%s\n", xct_yes(size < sizeof(big)),
	       xct_yes(size < sizeof(big) && big[size] == '\0' &&
		       strlen(big) == size));

	size = sizeof(big);
	memset(big, 'x', sizeof(big));
	EXPECT(cudaSuccess, cudaLogsDumpToMemory(NULL, big, &size, 0));
	printf("dump of all: terminated at size: %s\n",
	       xct_yes(size < sizeof(big) && strlen(big) == size));

	size = 8;
	memset(small, 'x', sizeof(small));
	e = cudaLogsDumpToMemory(NULL, small, &size, 0);
	cudaGetLastError();
	/* Whether the log fits in 8 bytes depends on its text. */
	printf("small buffer: success or cudaErrorInvalidValue: %s, "
	       "terminated when it fits: %s\n",
	       xct_yes(e == cudaSuccess || e == cudaErrorInvalidValue),
	       xct_yes(e != cudaSuccess || size >= 8 ||
		       strlen(small) == size));
	if (e == cudaErrorInvalidValue)
		printf("small buffer refused: size 0: %s\n",
		       xct_yes(size == 0));

	size = sizeof(big);
	SHOW(cudaLogsDumpToMemory(NULL, big, &size, 1));
	size = 0;
	SHOW(cudaLogsDumpToMemory(NULL, big, &size, 0));
	printf("zero size: size stays 0: %s\n", xct_yes(size == 0));
}

static void test_file(void)
{
	char path[] = "/tmp/xct-logs-XXXXXX";
	cudaLogIterator it = 0;
	struct stat st;
	size_t size;
	int fd = mkstemp(path);

	REQUIRE(fd >= 0, "mkstemp");
	close(fd);
	unlink(path);
	size = sizeof(big);
	EXPECT(cudaSuccess, cudaLogsDumpToMemory(NULL, big, &size, 0));
	EXPECT(cudaSuccess, cudaLogsDumpToFile(NULL, path, 0));
	/* Whether an empty log makes a file is CUDA's business. */
	printf("file exists or the log is empty: %s\n",
	       xct_yes(stat(path, &st) == 0 || size == 0));
	printf("file size plausible: %s\n",
	       xct_yes(stat(path, &st) != 0 ||
		       (st.st_size >= 0 && st.st_size <= 65536)));
	unlink(path);

	EXPECT(cudaSuccess, cudaLogsCurrent(&it, 0));
	EXPECT(cudaSuccess, cudaLogsDumpToFile(&it, path, 0));
	printf("file from iterator plausible: %s\n",
	       xct_yes(stat(path, &st) != 0 || st.st_size <= 65536));
	unlink(path);
	SHOW(cudaLogsDumpToFile(NULL, path, 1));
	unlink(path);
}

struct log_seen {
	int calls;
	int bad;	/* a message not terminated at its length */
	int level_ok;
};

static void CUDART_CB log_cb(void *data, cudaLogLevel level, char *message,
			     size_t length)
{
	struct log_seen *ls = (struct log_seen *)data;

	__atomic_add_fetch(&ls->calls, 1, __ATOMIC_SEQ_CST);
	if (!message || strlen(message) > length + 1)
		ls->bad = 1;
	if (level == cudaLogLevelError || level == cudaLogLevelWarning)
		ls->level_ok = 1;
}

static void test_callback(void)
{
	struct log_seen ls = { 0, 0, 0 };
	cudaLogsCallbackHandle h = NULL, h2 = NULL;

	EXPECT(cudaSuccess, cudaLogsRegisterCallback(log_cb, &ls, &h));
	printf("handle given: %s\n", xct_yes(h != NULL));
	EXPECT(cudaSuccess, cudaLogsRegisterCallback(log_cb, &ls, NULL));
	provoke();
	CK(cudaDeviceSynchronize());
	printf("log callback ran: %s\n",
	       xct_yes(__atomic_load_n(&ls.calls, __ATOMIC_SEQ_CST) > 0));
	if (ls.calls)
		printf("messages terminated: %s, levels valid: %s\n",
		       xct_yes(!ls.bad), xct_yes(ls.level_ok));
	EXPECT(cudaSuccess, cudaLogsUnregisterCallback(h));
	EXPECT(cudaSuccess, cudaLogsRegisterCallback(log_cb, &ls, &h2));
	EXPECT(cudaSuccess, cudaLogsUnregisterCallback(h2));
}

static int async_calls;

static void async_cb(cudaAsyncNotificationInfo_t *info, void *data,
		     cudaAsyncCallbackHandle_t h)
{
	(void)info;
	(void)data;
	(void)h;
	__atomic_add_fetch(&async_calls, 1, __ATOMIC_SEQ_CST);
}

static void test_async(void)
{
	cudaAsyncCallbackHandle_t h = NULL;
	int n = 0;
	cudaError_t e;

	CK(cudaGetDeviceCount(&n));
	e = SHOW(cudaDeviceRegisterAsyncNotification(0, async_cb, NULL, &h));
	if (e == cudaSuccess) {
		printf("handle given: %s\n", xct_yes(h != NULL));
		/*
		 * Not on a wrong device first: CUDA 13.0's own unregistration
		 * on the right one then crashes the program.
		 */
		SHOW(cudaDeviceUnregisterAsyncNotification(0, h));
	}
	SHOW(cudaDeviceRegisterAsyncNotification(n, async_cb, NULL, &h));
	SHOW(cudaDeviceRegisterAsyncNotification(-1, async_cb, NULL, &h));
}

int main(void)
{
	CK(cudaSetDevice(0));
	CK(cudaFree(0));
	test_dump();
	test_file();
	test_callback();
	test_async();
	return xct_finish("logs");
}
