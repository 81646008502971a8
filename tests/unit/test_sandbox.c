// SPDX-License-Identifier: MIT
/*
 * Hostile tests of the worker's sandbox (dom0-daemon/sandbox.c): forked
 * children enter it exactly as xcudad's workers do, xd_sandbox_enter(),
 * then try to reach outside.  Each attempt must fail, by an error or by
 * the filter killing the process.  As root the workers become 'nobody'
 * (or a uid of a --uid-range); not as root they keep our uid, and only
 * the sandbox keeps them apart: run both ways (tests/run-unit.sh runs
 * this program as root and again as 'nobody' where it can).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "dom0-daemon/log.h"
#include "dom0-daemon/privdrop.h"
#include "dom0-daemon/sandbox.h"

static struct xd_user user;
static struct xd_sandbox sb;
static char tmpdir[64] = "/tmp/xcuda-sandbox.XXXXXX";
static char device[128];	/* /dev/xcuda-back, or our stand-in */
static char cgdir[128];		/* a stand-in of the workers' cgroups */
static char cgfile[160];	/* a file in it: pids.max, say */
/*
 * What every worker here gets, as xcudad's do by default; no data limit
 * in sanitizer builds, whose shadow memory counts as data.
 */
#ifdef XD_SHADOW_BUILD
static const struct xd_rlimits limits = { XD_LIMIT_NONE, 100, 0 };
#else
static const struct xd_rlimits limits = { 1ull << 30, 100, 0 };
#endif
/* Shared with the attackers: set when every exec failed. */
static volatile int *exec_failed;

/* Exit codes of an attacker. */
enum { BLOCKED = 0, ESCAPED = 1, NO_SANDBOX = 2 };

/*
 * Forks a worker of domain @domid that enters the sandbox and then runs
 * @attack(@arg), which returns BLOCKED or ESCAPED.  The status.
 */
static int as_worker(long domid, int (*attack)(long), long arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (xd_sandbox_enter(&sb, domid))
			_exit(NO_SANDBOX);
		_exit(attack(arg));
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* Blocked: an error, or killed by the filter (SIGSYS). */
static int blocked(int status)
{
	return (WIFEXITED(status) && WEXITSTATUS(status) == BLOCKED) ||
	       (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);
}

static const char *how(int status)
{
	static char buf[64];

	if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "killed by signal %d",
			 WTERMSIG(status));
	else if (WIFEXITED(status) && WEXITSTATUS(status) == NO_SANDBOX)
		snprintf(buf, sizeof(buf), "the sandbox failed");
	else if (WIFEXITED(status) && WEXITSTATUS(status) == ESCAPED)
		snprintf(buf, sizeof(buf), "the attempt succeeded");
	else
		snprintf(buf, sizeof(buf), "status %#x", status);
	return buf;
}

/* ---- the attacks ---- */

static int attack_nothing(long arg)
{
	(void)arg;
	return BLOCKED;
}

/* Every capability set empty, no_new_privs, a filter, bounding empty. */
static int attack_keep_caps(long arg)
{
	char line[256];
	int bad = 0, seen = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return ESCAPED;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "CapInh: %llx", &v) == 1 ||
		    sscanf(line, "CapPrm: %llx", &v) == 1 ||
		    sscanf(line, "CapEff: %llx", &v) == 1 ||
		    sscanf(line, "CapAmb: %llx", &v) == 1) {
			bad |= v != 0;
			seen++;
		} else if (sscanf(line, "CapBnd: %llx", &v) == 1) {
			/* Emptied wherever CAP_SETPCAP allowed it. */
			bad |= arg && v != 0;
			seen++;
		} else if (sscanf(line, "NoNewPrivs: %llu", &v) == 1) {
			bad |= v != 1;
			seen++;
		} else if (sscanf(line, "Seccomp: %llu", &v) == 1) {
			bad |= v != 2;
			seen++;
		}
	}
	fclose(f);
	return bad || seen != 7 ? ESCAPED : BLOCKED;
}

/* Another worker (a process of the same uid), and the daemon. */
static int attack_signal(long victim)
{
	if (kill((pid_t)victim, SIGKILL) == 0 || kill(getppid(), 0) == 0 ||
	    kill(0, 0) == 0 || kill(-1, 0) == 0)
		return ESCAPED;
	return BLOCKED;
}

/* The Xen backend's device: the daemon's, never a worker's. */
static int attack_open_device(long arg)
{
	int fd;

	(void)arg;
	fd = open(device, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		return ESCAPED;
	fd = open(device, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? ESCAPED : BLOCKED;
}

/*
 * The cgroup directory (--cgroup): readable, not writable, whatever the
 * daemon's uid (a non-root daemon's workers have it: Landlock).
 */
static int attack_write_cgroup(long arg)
{
	char c;
	int fd;

	(void)arg;
	fd = open(cgfile, O_WRONLY | O_CLOEXEC);
	if (fd >= 0)
		return ESCAPED;
	fd = open(cgfile, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, &c, 1) != 1)
		return ESCAPED;	/* here: what should work did not */
	close(fd);
	return BLOCKED;
}

/* Its limits are set, soft and hard, and cannot be raised again. */
static int attack_raise_limits(long arg)
{
	struct rlimit rl;

	(void)arg;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur != limits.nofile ||
	    rl.rlim_max != limits.nofile)
		return ESCAPED;
	if (limits.data != XD_LIMIT_NONE &&
	    (getrlimit(RLIMIT_DATA, &rl) || rl.rlim_cur != limits.data ||
	     rl.rlim_max != limits.data))
		return ESCAPED;
	if (getrlimit(RLIMIT_CORE, &rl) || rl.rlim_cur || rl.rlim_max)
		return ESCAPED;
	rl.rlim_cur = rl.rlim_max = 2 * limits.nofile;
	if (!setrlimit(RLIMIT_NOFILE, &rl))
		return ESCAPED;
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	if ((limits.data != XD_LIMIT_NONE && !setrlimit(RLIMIT_DATA, &rl)) ||
	    !setrlimit(RLIMIT_CORE, &rl))
		return ESCAPED;
	return BLOCKED;
}

/* A setuid binary: exec must not run at all. */
static int attack_exec(long arg)
{
	static const char *const bins[] = {
		"/usr/bin/passwd", "/bin/su", "/usr/bin/su", "/bin/true",
		"/usr/bin/true",
	};
	unsigned int i;

	(void)arg;
	for (i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		char *argv[] = { (char *)bins[i], "--help", NULL };

		if (access(bins[i], F_OK))
			continue;
		execv(bins[i], argv);
	}
	/* An exec that worked ends in that program's status: not here. */
	*exec_failed = 1;
	return BLOCKED;
}

/* ptrace of another worker, and of the daemon (SEIZE: nobody stops). */
static int attack_ptrace(long victim)
{
	if (ptrace(PTRACE_SEIZE, (pid_t)victim, NULL, NULL) == 0 ||
	    ptrace(PTRACE_SEIZE, getppid(), NULL, NULL) == 0)
		return ESCAPED;
	return BLOCKED;
}

/* What CUDA needs still works: threads' memory, a memfd through /proc. */
static int attack_still_works(long arg)
{
	char path[64];
	void *p;
	int fd, fd2;

	(void)arg;
	p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = memfd_create("xcuda-test", MFD_CLOEXEC);
	if (p == MAP_FAILED || fd < 0)
		return ESCAPED;
	/* As ops_graph.c hands cudaGraphDebugDotPrint a path. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	fd2 = open(path, O_WRONLY | O_CLOEXEC);
	if (fd2 < 0 || write(fd2, "x", 1) != 1)
		return ESCAPED;
	if (raise(0) != 0)	/* tgkill to itself */
		return ESCAPED;
	return BLOCKED;		/* here: "nothing went wrong" */
}

/* A worker that waits to be attacked, in the sandbox of @domid. */
static pid_t victim_start(long domid)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (xd_sandbox_enter(&sb, domid))
			_exit(NO_SANDBOX);
		for (;;)
			pause();
	}
	return pid;
}

/* 1 while @pid runs. */
static int alive(pid_t pid)
{
	int status;

	return waitpid(pid, &status, WNOHANG) == 0;
}

static void cleanup(void)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/xcuda-back", tmpdir);
	unlink(path);
	unlink(cgfile);
	rmdir(cgdir);
	rmdir(tmpdir);
}

int main(void)
{
	int root = geteuid() == 0, st, fd;
	pid_t victim;

	xd_log_setup(XD_LOG_INFO, 0);
	printf("# running as uid %d\n", (int)geteuid());
	REQUIRE(!xd_user_resolve(&user, "nobody"), "resolve the user");
	if (root) {
		/* One uid per domain, as xcudad --uid-range F-L does. */
		user.range_first = 3800000;
		user.range_last = 3800000 + XD_DOMID_MAX;
	}
	sb.user = &user;
	REQUIRE(mkdtemp(tmpdir) != NULL, "a temporary directory");
	check_teardown(cleanup);
	/* The real device where xcuda-back.ko is loaded, else a stand-in. */
	if (!access("/dev/xcuda-back", F_OK)) {
		snprintf(device, sizeof(device), "/dev/xcuda-back");
	} else {
		snprintf(device, sizeof(device), "%s/xcuda-back", tmpdir);
		fd = open(device, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		REQUIRE(fd >= 0, "the stand-in device");
		close(fd);
	}
	sb.deny = device;
	/*
	 * Made before the sandbox, as xcudad makes its groups; a worker of
	 * another uid may pass through the directory (as root).
	 */
	REQUIRE(!chmod(tmpdir, 0711), "the temporary directory's mode");
	snprintf(cgdir, sizeof(cgdir), "%s/cgroup", tmpdir);
	snprintf(cgfile, sizeof(cgfile), "%s/pids.max", cgdir);
	REQUIRE(!mkdir(cgdir, 0755), "a stand-in cgroup directory");
	fd = open(cgfile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	REQUIRE(fd >= 0 && write(fd, "max\n", 4) == 4, "a stand-in file");
	close(fd);
	sb.deny_write = cgdir;
	sb.rlimits = &limits;
	exec_failed = mmap(NULL, sizeof(*exec_failed), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	REQUIRE(exec_failed != MAP_FAILED, "a shared page");

	st = as_worker(7, attack_nothing, 0);
	REQUIRE_MSG(WIFEXITED(st) && WEXITSTATUS(st) == BLOCKED,
		    "a worker enters the sandbox", "%s", how(st));
	CHECK_EQ(xd_user_uid(&user, 7, &st), root ? 3800007u : geteuid(),
		 "domain 7's worker has its own uid (as root)");
	CHECK_EQ(xd_user_uid(&user, -1, &st), user.uid,
		 "a local session's worker has the shared uid");

	st = as_worker(7, attack_keep_caps, root);
	CHECK_MSG(blocked(st), "no capability, no_new_privs, seccomp on",
		  "%s", how(st));

	st = as_worker(7, attack_still_works, 0);
	CHECK_MSG(blocked(st), "memory, memfd through /proc, own signals "
		  "still work", "%s", how(st));

	/* The same domain: the same uid, the hardest case. */
	victim = victim_start(7);
	REQUIRE(victim > 0, "a victim worker");
	usleep(100 * 1000);
	st = as_worker(7, attack_signal, victim);
	CHECK_MSG(blocked(st) && alive(victim), "a worker cannot signal "
		  "another worker, the daemon or its group", "%s%s", how(st),
		  alive(victim) ? "" : ", and the victim died");

	st = as_worker(7, attack_ptrace, victim);
	CHECK_MSG(blocked(st) && alive(victim), "a worker cannot ptrace "
		  "another worker or the daemon", "%s", how(st));
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);

	st = as_worker(7, attack_open_device, 0);
	CHECK_MSG(blocked(st), check_name("a worker cannot open %s", device),
		  "%s", how(st));

	st = as_worker(7, attack_write_cgroup, 0);
	CHECK_MSG(blocked(st), "a worker can read its cgroup's files, not "
		  "write them", "%s", how(st));

	st = as_worker(7, attack_raise_limits, 0);
	CHECK_MSG(blocked(st), "a worker has its resource limits, and cannot "
		  "raise them", "%s", how(st));

	*exec_failed = 0;
	st = as_worker(7, attack_exec, 0);
	CHECK_MSG((WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) ||
		  (blocked(st) && *exec_failed), "a worker cannot exec "
		  "(setuid or not)", "%s%s", how(st),
		  *exec_failed ? "" : ", after an exec that worked");
	return check_summary();
}
