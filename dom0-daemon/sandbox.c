// SPDX-License-Identifier: MIT
/*
 * The worker's sandbox (sandbox.h).  Order matters: the bounding set is
 * emptied while CAP_SETPCAP may still be held, then the ids change (which
 * clears the other sets when leaving root), then whatever is left of
 * every set is cleared, whatever the euid; then no_new_privs, which the
 * seccomp filter needs without CAP_SYS_ADMIN, and the filter last.
 *
 * The filter is an allow-list.  The CUDA driver (libcuda.so.1) and
 * runtime are closed, and no GPU is here to trace them, so the list
 * starts from what is known to run CUDA: Docker's default seccomp
 * profile, under which the NVIDIA Container Toolkit runs every CUDA
 * program in a container without a profile of its own (the toolkit only
 * adds device nodes, libraries and mounts).  From it we take away what a
 * worker never needs and what lets a process reach outside itself:
 * exec, ptrace and other processes' memory, signals to other processes,
 * namespaces and mounts, the setuid family, keyrings, BPF, perf, module
 * and kexec loading, io_uring, and the like.  Those kill the process
 * (logged by the kernel's audit and by xcudad, "Bad system call");
 * anything else not listed fails with EPERM (clone3 with ENOSYS, so that
 * the C library falls back to clone, whose flags we can check).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "sandbox.h"

#if defined(__SANITIZE_ADDRESS__)
#define XD_LEAK_BUILD	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define XD_LEAK_BUILD	1
#endif
#endif
#ifdef XD_LEAK_BUILD
#include <sanitizer/lsan_interface.h>
#endif

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT			47
#define PR_CAP_AMBIENT_IS_SET		1
#define PR_CAP_AMBIENT_CLEAR_ALL	4
#endif

/* Empties the bounding set; -1 with errno EPERM without CAP_SETPCAP. */
static int xd_bounding_drop(void)
{
	int cap, err = 0;

	for (cap = 0; cap < 64; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (r < 0)
			break;		/* past the kernel's last capability */
		if (r && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
			err = errno;
	}
	errno = err;
	return err ? -1 : 0;
}

/* 1 while any capability is left in the bounding set. */
static int xd_bounding_any(void)
{
	int cap, r;

	for (cap = 0; cap < 64; cap++) {
		r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		if (r < 0)
			return 0;
		if (r)
			return 1;
	}
	return 0;
}

/* 1 if CAP_SETPCAP is effective: the bounding set can be emptied. */
static int xd_has_setpcap(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d))
		return 0;
	return !!(d[CAP_TO_INDEX(CAP_SETPCAP)].effective &
		  CAP_TO_MASK(CAP_SETPCAP));
}

int xd_sandbox_drop_caps(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	unsigned int i;
	int left = 0;

	/* Best effort: a non-root daemon without CAP_SETPCAP cannot. */
	if (xd_bounding_drop() && errno != EPERM) {
		xd_log(XD_LOG_ERROR, "cannot empty the bounding set: %s",
		       strerror(errno));
		return -1;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
	    errno != EINVAL) {
		xd_log(XD_LOG_ERROR, "cannot clear the ambient set: %s",
		       strerror(errno));
		return -1;
	}
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d)) {
		xd_log(XD_LOG_ERROR, "cannot drop capabilities: %s",
		       strerror(errno));
		return -1;
	}
	/* Proven, not assumed. */
	h.pid = 0;
	if (syscall(SYS_capget, &h, d))
		return -1;
	for (i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		left |= d[i].effective || d[i].permitted || d[i].inheritable;
	for (i = 0; i < 64 && !left; i++) {
		int r = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, i, 0, 0);

		if (r < 0)
			break;
		left = r;
	}
	if (left) {
		xd_log(XD_LOG_ERROR, "capabilities are left after the drop");
		return -1;
	}
	return 0;
}

/*
 * One rule of action @act for each call named in @names[@n]; a name not
 * of this architecture (e.g. epoll_wait_old) is skipped.  0, or -1 when
 * a rule cannot be added (@what says which kind, for the log).
 */
static int xd_rules(scmp_filter_ctx ctx, uint32_t act,
		    const char *const *names, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);

		if (nr == __NR_SCMP_ERROR)
			continue;
		if (seccomp_rule_add(ctx, act, nr, 0)) {
			xd_log(XD_LOG_ERROR, "seccomp: cannot %s %s", what,
			       names[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * The first argument compared, every field named (libseccomp's SCMP_A0
 * leaves datum_b out where it has no use, which clang warns of).
 */
#define XD_A0_EQ(v) \
	((struct scmp_arg_cmp){ .arg = 0, .op = SCMP_CMP_EQ, \
				.datum_a = (v), .datum_b = 0 })
#define XD_A0_MASKED(mask, v) \
	((struct scmp_arg_cmp){ .arg = 0, .op = SCMP_CMP_MASKED_EQ, \
				.datum_a = (mask), .datum_b = (v) })

/* Rules that fail to add fail the filter: none may be left out. */
#define XD_RULE(ctx, act, name, ...) \
	do { \
		int nr_ = seccomp_syscall_resolve_name(#name); \
		if (nr_ != __NR_SCMP_ERROR && \
		    seccomp_rule_add(ctx, act, nr_, __VA_ARGS__)) { \
			xd_log(XD_LOG_ERROR, "seccomp: cannot add %s", \
			       #name); \
			goto fail; \
		} \
	} while (0)

/*
 * Allowed without conditions.  Docker's default profile, less what the
 * file comment names; commented where the reason is CUDA's.
 */
static const char *const xd_allowed[] = {
	/* files, descriptors, I/O */
	"read", "write", "readv", "writev", "pread64", "pwrite64",
	"preadv", "pwritev", "preadv2", "pwritev2", "open", "openat",
	"openat2", "creat", "close", "close_range", "dup", "dup2", "dup3",
	"lseek", "fcntl", "flock", "fsync", "fdatasync", "sync_file_range",
	"ftruncate", "truncate", "fallocate", "fadvise64", "readahead",
	"stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs",
	"access", "faccessat", "faccessat2", "readlink", "readlinkat",
	"getdents", "getdents64", "getcwd", "chdir", "fchdir", "mkdir",
	"mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat",
	"renameat2", "link", "linkat", "symlink", "symlinkat", "chmod",
	"fchmod", "fchmodat", "umask", "utime", "utimes", "utimensat",
	"futimesat", "getxattr", "lgetxattr", "fgetxattr", "listxattr",
	"llistxattr", "flistxattr", "sendfile", "splice", "tee", "vmsplice",
	"copy_file_range", "pipe", "pipe2", "memfd_create", "eventfd",
	"eventfd2", "timerfd_create", "timerfd_settime", "timerfd_gettime",
	"signalfd", "signalfd4", "inotify_init", "inotify_init1",
	"inotify_add_watch", "inotify_rm_watch", "io_setup", "io_destroy",
	"io_submit", "io_cancel", "io_getevents", "io_pgetevents",
	/* the GPU: ioctls on /dev/nvidia*, nvidia-uvm, nvidia-caps */
	"ioctl", "poll", "ppoll", "select", "pselect6", "epoll_create",
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	"epoll_pwait2",
	/* memory: the driver maps BARs, UVM ranges and pinned host memory */
	"mmap", "munmap", "mprotect", "mremap", "madvise", "mincore",
	"msync", "mlock", "mlock2", "munlock", "mlockall", "munlockall",
	"brk", "remap_file_pages", "membarrier", "pkey_alloc", "pkey_free",
	"pkey_mprotect",
	/* NUMA placement of pinned memory (cudaHostAlloc, UVM) */
	"mbind", "get_mempolicy", "set_mempolicy",
	"set_mempolicy_home_node",
	/* System V and POSIX IPC: CUDA IPC, MPS clients */
	"shmget", "shmat", "shmdt", "shmctl", "semget", "semop",
	"semtimedop", "semctl", "msgget", "msgsnd", "msgrcv", "msgctl",
	"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
	"mq_notify", "mq_getsetattr",
	/* threads and synchronisation */
	"futex", "futex_waitv", "set_robust_list", "get_robust_list",
	"set_tid_address", "rseq", "sched_yield", "sched_getaffinity",
	"sched_setaffinity", "sched_getparam", "sched_setparam",
	"sched_getscheduler", "sched_setscheduler", "sched_getattr",
	"sched_setattr", "sched_get_priority_max", "sched_get_priority_min",
	"sched_rr_get_interval", "getcpu", "arch_prctl", "exit",
	"exit_group", "wait4", "waitid",
	/* signals to itself */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending",
	"rt_sigsuspend", "rt_sigtimedwait", "sigaltstack", "pause",
	"restart_syscall",
	/* time */
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep",
	"gettimeofday", "time", "times", "alarm", "getitimer", "setitimer",
	"timer_create", "timer_settime", "timer_gettime",
	"timer_getoverrun", "timer_delete",
	/* who and where */
	"getpid", "getppid", "gettid", "getuid", "geteuid", "getgid",
	"getegid", "getresuid", "getresgid", "getgroups", "getpgid",
	"getpgrp", "getsid", "setsid", "getrusage", "getrlimit", "sysinfo",
	"uname", "getpriority", "setpriority", "ioprio_get", "ioprio_set",
	"capget", "getrandom", "prctl",
	/* sockets: the channel, the upstream link, syslog, MPS */
	"socket", "socketpair", "connect", "bind", "listen", "accept",
	"accept4", "shutdown", "getsockname", "getpeername", "getsockopt",
	"setsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg",
	"sendmmsg", "recvmmsg",
	/* a sandbox may sandbox itself further */
	"landlock_create_ruleset", "landlock_add_rule",
	"landlock_restrict_self",
};

/*
 * Forbidden outright: reaching outside the worker.  Killing the process
 * rather than failing the call: nothing the worker runs makes them.
 */
static const char *const xd_forbidden[] = {
	"execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv",
	"process_vm_writev", "process_madvise", "kcmp", "pidfd_open",
	"pidfd_getfd", "pidfd_send_signal", "tkill", "mount", "umount",
	"umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount",
	"fspick", "open_tree", "move_mount", "mount_setattr", "unshare",
	"setns", "setuid", "setgid", "setreuid", "setregid", "setresuid",
	"setresgid", "setfsuid", "setfsgid", "setgroups", "capset",
	"keyctl", "add_key", "request_key", "bpf", "perf_event_open",
	"userfaultfd", "init_module", "finit_module", "delete_module",
	"kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
	"acct", "quotactl", "quotactl_fd", "syslog", "sethostname",
	"setdomainname", "settimeofday", "clock_settime", "adjtimex",
	"clock_adjtime", "iopl", "ioperm", "modify_ldt", "uselib",
	"vhangup", "open_by_handle_at",
	"fanotify_init", "lookup_dcookie", "io_uring_setup",
	"io_uring_enter", "io_uring_register", "nfsservctl", "seccomp",
};

int xd_sandbox_seccomp(void)
{
	/* Namespaces are never made: CLONE_NEW* of clone(2). */
	const uint64_t ns = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC |
			    CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |
			    CLONE_NEWCGROUP | 0x00000080ULL /* NEWTIME */;
	const uint64_t self = (uint64_t)getpid();
	scmp_filter_ctx ctx;
	int err;

	ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx) {
		xd_log(XD_LOG_ERROR, "seccomp: cannot make a filter");
		return -1;
	}
	if (xd_rules(ctx, SCMP_ACT_ALLOW, xd_allowed,
		     sizeof(xd_allowed) / sizeof(xd_allowed[0]), "allow") ||
	    xd_rules(ctx, SCMP_ACT_KILL_PROCESS, xd_forbidden,
		     sizeof(xd_forbidden) / sizeof(xd_forbidden[0]), "forbid"))
		goto fail;
	/* Threads only, in no new namespace; fork is refused (EPERM). */
	XD_RULE(ctx, SCMP_ACT_ALLOW, clone, 1,
		XD_A0_MASKED(CLONE_THREAD | ns, CLONE_THREAD));
	XD_RULE(ctx, SCMP_ACT_KILL_PROCESS, clone, 1,
		XD_A0_MASKED(CLONE_NEWUSER, CLONE_NEWUSER));
	/* Its flags are in memory, out of the filter's sight. */
	XD_RULE(ctx, SCMP_ACT_ERRNO(ENOSYS), clone3, 0);
	/*
	 * Signals: CUDA and the C library signal their own threads
	 * (tgkill(getpid(), tid), raise, abort); nothing else.  Other
	 * processes, its process group (0) and everyone (-1) get EPERM.
	 */
	XD_RULE(ctx, SCMP_ACT_ALLOW, kill, 1, XD_A0_EQ(self));
	XD_RULE(ctx, SCMP_ACT_ALLOW, tgkill, 1, XD_A0_EQ(self));
	XD_RULE(ctx, SCMP_ACT_ALLOW, rt_sigqueueinfo, 1,
		XD_A0_EQ(self));
	XD_RULE(ctx, SCMP_ACT_ALLOW, rt_tgsigqueueinfo, 1,
		XD_A0_EQ(self));
	/* Its own limits only (0 is itself), never another process's. */
	XD_RULE(ctx, SCMP_ACT_ALLOW, prlimit64, 1, XD_A0_EQ(0));
	XD_RULE(ctx, SCMP_ACT_ALLOW, prlimit64, 1,
		XD_A0_EQ(self));
	XD_RULE(ctx, SCMP_ACT_ALLOW, setrlimit, 0);
	/* libnuma asks where its own pages are (move_pages, pid 0). */
	XD_RULE(ctx, SCMP_ACT_ALLOW, move_pages, 1, XD_A0_EQ(0));
	XD_RULE(ctx, SCMP_ACT_ALLOW, move_pages, 1,
		XD_A0_EQ(self));
	XD_RULE(ctx, SCMP_ACT_ALLOW, migrate_pages, 1,
		XD_A0_EQ(0));
	XD_RULE(ctx, SCMP_ACT_ALLOW, migrate_pages, 1,
		XD_A0_EQ(self));
	/* Linux personality queries and sets (Docker's values). */
	XD_RULE(ctx, SCMP_ACT_ALLOW, personality, 1,
		XD_A0_EQ(0));
	XD_RULE(ctx, SCMP_ACT_ALLOW, personality, 1,
		XD_A0_EQ(0xffffffffULL));
	/*
	 * A binary tree of syscall numbers, not a list: a call that the
	 * kernel's cache of always-allowed calls misses (the calls with
	 * argument rules, or a kernel before 5.11) runs a few comparisons.
	 */
	err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (err)
		xd_log(XD_LOG_DEBUG, "seccomp: filter as a list: %s",
		       strerror(-err));
	err = seccomp_load(ctx);
	if (err) {
		xd_log(XD_LOG_ERROR, "seccomp: cannot load the filter: %s",
		       strerror(-err));
		goto fail;
	}
	seccomp_release(ctx);
	return 0;
fail:
	seccomp_release(ctx);
	return -1;
}

#define XD_LL_RW	(LANDLOCK_ACCESS_FS_READ_FILE | \
			 LANDLOCK_ACCESS_FS_WRITE_FILE)

/* Allows reading and writing beneath every entry of @dir but @skip. */
static int xd_landlock_dir(int rs, const char *dir, const char *skip,
			   const struct stat *keep, unsigned int nkeep)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = XD_LL_RW };
	struct dirent *e;
	struct stat st;
	unsigned int i;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return -1;
	while (!err && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    !strcmp(e->d_name, skip))
			continue;
		/* Symbolic links are followed: the rule is on the target. */
		pb.parent_fd = openat(dirfd(d), e->d_name, O_PATH | O_CLOEXEC);
		if (pb.parent_fd < 0)
			continue;	/* dangling, or gone meanwhile */
		if (fstat(pb.parent_fd, &st))
			goto next;
		/* A link to the file or to a directory above it: no rule. */
		for (i = 0; i < nkeep; i++)
			if (st.st_dev == keep[i].st_dev &&
			    st.st_ino == keep[i].st_ino)
				goto next;
		if (syscall(SYS_landlock_add_rule, rs,
			    LANDLOCK_RULE_PATH_BENEATH, &pb, 0))
			err = -1;
next:
		close(pb.parent_fd);
	}
	closedir(d);
	return err;
}

/*
 * Landlock: the worker may open for reading or writing everything but
 * the @n paths of @paths (and what is created after this in the
 * directories above them); beneath those whose @ro is set, it may still
 * read.  0, 1 when the kernel has no Landlock, -1 on failure.
 */
static int xd_landlock_deny(const char *const *paths, const int *ro,
			    unsigned int n)
{
	struct landlock_ruleset_attr ra = { .handled_access_fs = XD_LL_RW };
	struct landlock_path_beneath_attr pb = {
		.allowed_access = LANDLOCK_ACCESS_FS_READ_FILE,
	};
	char dir[PATH_MAX], comp[NAME_MAX + 1];
	struct stat keep[64];
	unsigned int nkeep = 0, k;
	size_t i, len, c;
	int rs, err = 0;

	if (syscall(SYS_landlock_create_ruleset, NULL, 0,
		    LANDLOCK_CREATE_RULESET_VERSION) < 1)
		return 1;
	/* The directories above each path, and the path, as they are now. */
	for (k = 0; k < n; k++) {
		const char *path = paths[k];

		len = strlen(path);
		if (path[0] != '/' || len >= sizeof(dir) ||
		    strstr(path, "/.") || strstr(path, "//"))
			return -1;
		for (i = 0; i <= len && nkeep < 63; i++) {
			if (path[i] != '/' && path[i])
				continue;
			memcpy(dir, path, i ? i : 1);
			dir[i ? i : 1] = 0;
			if (!stat(dir, &keep[nkeep]))
				nkeep++;
		}
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof(ra), 0);
	if (rs < 0)
		return -1;
	/*
	 * Every entry of each directory above, but those on the way to any
	 * of the paths (the same rules again for a directory above two).
	 */
	for (k = 0; k < n && !err; k++) {
		const char *path = paths[k];

		len = strlen(path);
		for (i = 0; i < len && !err; i++) {
			if (path[i] != '/')
				continue;
			c = strcspn(path + i + 1, "/");
			if (!c || c > NAME_MAX)
				continue;
			memcpy(comp, path + i + 1, c);
			comp[c] = 0;
			memcpy(dir, path, i ? i : 1);
			dir[i ? i : 1] = 0;
			err = xd_landlock_dir(rs, dir, comp, keep, nkeep);
		}
		if (err || !ro[k])
			continue;
		pb.parent_fd = open(path, O_PATH | O_CLOEXEC);
		if (pb.parent_fd < 0 ||
		    syscall(SYS_landlock_add_rule, rs,
			    LANDLOCK_RULE_PATH_BENEATH, &pb, 0))
			err = -1;
		if (pb.parent_fd >= 0)
			close(pb.parent_fd);
	}
	if (!err && syscall(SYS_landlock_restrict_self, rs, 0))
		err = -1;
	close(rs);
	return err;
}

int xd_sandbox_enter(const struct xd_sandbox *sb, long domid)
{
	const char *env = getenv(XD_NO_SECCOMP_ENV);
	int no_seccomp = sb->no_seccomp || (env && !strcmp(env, "1"));

	/* While root may still raise a hard limit. */
	if (sb->rlimits && xd_rlimits_apply(sb->rlimits))
		return -1;
	/* While root may still hold CAP_SETPCAP. */
	if (xd_bounding_drop() && errno != EPERM) {
		xd_log(XD_LOG_ERROR, "cannot empty the bounding set: %s",
		       strerror(errno));
		return -1;
	}
	if (xd_user_drop(sb->user, domid) || xd_sandbox_drop_caps())
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		xd_log(XD_LOG_ERROR, "cannot set no_new_privs: %s",
		       strerror(errno));
		return -1;
	}
	/*
	 * No controlling terminal (TIOCSTI needs one), and no process
	 * group shared with the daemon.  Not dumpable: another process of
	 * the same uid can neither ptrace it nor open its /proc/PID/mem.
	 */
	if (setsid() < 0 && getsid(0) != getpid()) {
		xd_log(XD_LOG_ERROR, "setsid: %s", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		xd_log(XD_LOG_ERROR, "cannot become undumpable: %s",
		       strerror(errno));
		return -1;
	}
	/*
	 * Not root: the worker has the daemon's uid, so file modes do not
	 * keep it out of the daemon's device (/dev/xcuda-back), nor from
	 * its cgroup's limits; Landlock does.  As root, its own uid and no
	 * capability do.
	 */
	if (!sb->user->active && (sb->deny || sb->deny_write)) {
		const char *paths[2];
		int ro[2], r;
		unsigned int n = 0;

		if (sb->deny) {
			ro[n] = 0;
			paths[n++] = sb->deny;
		}
		if (sb->deny_write) {
			ro[n] = 1;
			paths[n++] = sb->deny_write;
		}
		r = xd_landlock_deny(paths, ro, n);
		if (r < 0) {
			xd_log(XD_LOG_ERROR, "Landlock: cannot keep the worker "
			       "out of %s%s%s", sb->deny ? sb->deny : "",
			       sb->deny && sb->deny_write ? " and " : "",
			       sb->deny_write ? sb->deny_write : "");
			return -1;
		}
		if (r > 0)
			xd_log_ratelimited(XD_LOG_WARN, "no Landlock in this "
					   "kernel: a worker of the daemon's "
					   "uid may open %s%s%s",
					   sb->deny ? sb->deny : "",
					   sb->deny && sb->deny_write ?
					   " and write beneath " : "",
					   sb->deny_write ? sb->deny_write :
					   "");
	}
	if (no_seccomp) {
		xd_log(XD_LOG_WARN, "no seccomp filter (--no-seccomp or "
		       XD_NO_SECCOMP_ENV "=1: for debugging only)");
		return 0;
	}
#ifdef XD_LEAK_BUILD
	/*
	 * LeakSanitizer stops the process with a traced clone that is no
	 * thread, which the filter refuses: a sanitizer build's worker
	 * checks for leaks now, while it may, and not at its exit.
	 */
	__lsan_do_leak_check();
#endif
	return xd_sandbox_seccomp();
}

void xd_sandbox_describe(const struct xd_sandbox *sb)
{
	const struct xd_user *u = sb->user;
	const char *env = getenv(XD_NO_SECCOMP_ENV);

	if (!u->active)
		xd_log(XD_LOG_WARN, "not root: every worker keeps uid %u "
		       "(--uid-range ignored); they are kept apart by no "
		       "capabilities, no_new_privs and seccomp alone",
		       (unsigned int)u->uid);
	else if (u->range_last)
		xd_log(XD_LOG_INFO, "workers of Xen domain D run as uid %u+D "
		       "(up to %u), group %u; the others as '%s'",
		       (unsigned int)u->range_first,
		       (unsigned int)u->range_last, (unsigned int)u->gid,
		       u->name);
	else
		xd_log(XD_LOG_INFO, "no --uid-range: the workers of every "
		       "domain share '%s' (uid %u)", u->name,
		       (unsigned int)u->uid);
	if (!u->active && !xd_has_setpcap() && xd_bounding_any())
		xd_log(XD_LOG_INFO, "without CAP_SETPCAP the workers' "
		       "bounding set stays as it is (no_new_privs keeps "
		       "exec from using it, and exec is refused)");
	if (sb->no_seccomp || (env && !strcmp(env, "1")))
		xd_log(XD_LOG_WARN, "workers run without their seccomp "
		       "filter: for debugging only");
}
