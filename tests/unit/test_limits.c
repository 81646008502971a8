// SPDX-License-Identifier: MIT
/*
 * The workers' resource limits (dom0-daemon/rlimits.c) and their cgroups
 * per domain (dom0-daemon/cgroup.c), through the built xcudad (env
 * XCUDAD) and sessions of the `local` transport:
 *  - a worker's /proc/PID/limits shows the defaults, the values given,
 *    and the daemon's own where a limit is off;
 *  - the data limit holds against a guest: a module upload larger than
 *    it is answered cudaErrorMemoryAllocation and the worker serves on,
 *    while under the default the same upload is taken;
 *  - --cgroup on a directory that is no cgroup v2 group keeps the daemon
 *    from starting, and so does a limit whose controller is missing;
 *  - with --cgroup in a cgroup v2 hierarchy (made here, beneath its
 *    root): each worker sits in its user's group, local-uid<UID>, whose
 *    memory.max, pids.max and cpu.max hold the values given, and which
 *    goes when its last worker does; past pids.max a worker's thread
 *    cannot start, past memory.max the worker is killed, and the daemon
 *    serves on; a daemon that sits in the directory moves to a leaf of
 *    its own.
 * Where no cgroup v2 hierarchy can be written here (not root, none
 * mounted) or it has no memory, pids or cpu controller (bound to cgroup
 * v1), those cases print SKIP lines saying so.
 */
#include <dirent.h>
#include <stdint.h>

#include "dom0-daemon/cgroup.h"
#include "dom0-daemon/rlimits.h"
#include "daemon_harness.h"

#define MIB		(1ull << 20)
#define GONE_MS		5000

/* ---- what /proc says ---- */

/*
 * The soft and hard limit named @name ("Max data size") of @pid, from
 * /proc/PID/limits; "unlimited" is UINT64_MAX.  0, or -1.
 */
static int proc_limit(pid_t pid, const char *name, uint64_t *soft,
		      uint64_t *hard)
{
	char path[64], line[256], a[32], b[32];
	size_t n = strlen(name);
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, n) || line[n] != ' ' ||
		    sscanf(line + n, "%31s %31s", a, b) != 2)
			continue;
		*soft = strcmp(a, "unlimited") ? strtoull(a, NULL, 10) :
						 UINT64_MAX;
		*hard = strcmp(b, "unlimited") ? strtoull(b, NULL, 10) :
						 UINT64_MAX;
		found = 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

/* @pid's cgroup v2 path ("0::PATH"), in @buf: 0, or -1. */
static int proc_cgroup(pid_t pid, char *buf, size_t len)
{
	char path[64], line[512];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(buf, len, "%s", line + 3);
		found = 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

/* ---- sessions ---- */

/* OPEN on @t: its status, or -1000 + the transport's error. */
static int open_call(struct xc_transport *t)
{
	struct xcuda_open_args a = { .version = XCUDA_PROTO_VERSION };
	struct xcuda_open_res r;

	a.arena_size = t->arena_size;
	return d_call(t, XCUDA_OP_OPEN, &a, sizeof(a), &r, sizeof(r));
}

/* A session, opened: its worker's pid, or -1 (the session closed). */
static pid_t session(struct xc_transport *t)
{
	pid_t pid;

	if (sess_open(t))
		return -1;
	pid = worker_pid(t->session);
	if (open_call(t) || pid <= 0) {
		t->ops->close(t);
		return -1;
	}
	return pid;
}

/*
 * The first piece (@piece bytes at the arena's start) of a module of
 * @total bytes: the worker keeps a copy of @total bytes.  Its status, or
 * -1000 + the transport's error.
 */
static int module_first(struct xc_transport *t, uint64_t total,
			uint32_t piece)
{
	struct xcuda_module_data_args a = {
		.total = total, .flags = XCUDA_MOD_FIRST,
	};
	struct xcuda_request req;
	struct xcuda_response rsp;
	int err;

	memset(t->arena, 0x5a, piece);
	req_init(t, &req, XCUDA_OP_MODULE_DATA, &a, sizeof(a));
	req.hdr.data_off = 0;
	req.hdr.data_len = piece;
	err = rpc(t, &req, &rsp);
	return err ? -1000 + err : rsp.status;
}

/* The next piece, at @offset. */
static int module_next(struct xc_transport *t, uint64_t total,
		       uint64_t offset, uint32_t piece)
{
	struct xcuda_module_data_args a = {
		.total = total, .offset = offset,
	};
	struct xcuda_request req;
	struct xcuda_response rsp;
	int err;

	req_init(t, &req, XCUDA_OP_MODULE_DATA, &a, sizeof(a));
	req.hdr.data_off = 0;
	req.hdr.data_len = piece;
	err = rpc(t, &req, &rsp);
	return err ? -1000 + err : rsp.status;
}

static int echo_ok(struct xc_transport *t)
{
	char why[200];

	return !echo_check(t, 4096, 4096, 7, 0, 0, why, sizeof(why));
}

/* ---- options ---- */

/* xcudad with @opt @val alone: its exit status (2: a bad option). */
static int run_with(const char *opt, const char *val)
{
	int status = -1, fd;
	pid_t pid = fork();

	if (pid == 0) {
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(xcudad, xcudad, "--socket", sock, opt, val, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_bad_values(void)
{
	static const char *const bad[][2] = {
		{ "--worker-data-limit", "12X" },
		{ "--worker-data-limit", "-1" },
		{ "--worker-nofile", "4K" },
		{ "--worker-nofile", "many" },
		{ "--cgroup-memory", "1.5G" },
		{ "--cgroup-pids", "" },
		{ "--cgroup-cpu", "200000" },
		{ "--cgroup", "" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECKF(run_with(bad[i][0], bad[i][1]) == 2,
		       "%s '%s' is refused", bad[i][0], bad[i][1]);
}

/* ---- resource limits ---- */

struct want {
	uint64_t data, nofile, core;
};

/* Soft and hard limits of @pid are @w's; else why, in the case. */
static void expect_limits(pid_t pid, const struct want *w)
{
	static const char *const names[] = {
		"Max data size", "Max open files", "Max core file size",
	};
	const uint64_t want[] = { w->data, w->nofile, w->core };
	uint64_t soft, hard;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		if (proc_limit(pid, names[i], &soft, &hard)) {
			CHECK_WHY("no \"%s\" in /proc/%d/limits", names[i],
				  (int)pid);
			return;
		}
		if (soft != want[i] || hard != want[i]) {
			CHECK_WHY("%s: %llu/%llu, want %llu", names[i],
				  (unsigned long long)soft,
				  (unsigned long long)hard,
				  (unsigned long long)want[i]);
			return;
		}
	}
}

static void test_default_limits(void)
{
	struct want w = { XD_RLIMIT_DATA_DEFAULT, XD_RLIMIT_NOFILE_DEFAULT,
			  0 };
	struct xc_transport t;
	pid_t pid;
	int st;

#ifdef XD_SHADOW_BUILD
	w.data = UINT64_MAX;	/* the shadow memory counts as data */
#endif
	REQUIRE_MSG(!start_daemon("8"), "setup", "xcudad did not start");
	pid = session(&t);
	REQUIRE_MSG(pid > 0, "setup", "no session");
	expect_limits(pid, &w);
	check_case("a worker's limits are the defaults: data 16 GiB (none "
		   "under a sanitizer), 4096 files, no core");
	st = module_first(&t, 256 * MIB, 4096);
	CHECK_MSG(st == 0 && echo_ok(&t), "under the default data limit a "
		  "256 MiB module upload is taken", "status %d", st);
	check_close(&t, "CLOSE is answered", "the worker exits", TIMEOUT_MS);
	t.ops->close(&t);
	check_daemon_stops("the daemon stops");
}

static void test_given_limits(void)
{
	const char *extra[] = { "--worker-data-limit", "192M",
				"--worker-nofile", "777", NULL };
	struct want w = { 192 * MIB, 777, 0 };
	struct xc_transport t;
	pid_t pid;
	int st;

#ifdef XD_SHADOW_BUILD
	w.data = UINT64_MAX;
#endif
	REQUIRE_MSG(!start_daemon_with("8", extra), "setup",
		    "xcudad did not start");
	pid = session(&t);
	REQUIRE_MSG(pid > 0, "setup", "no session");
	expect_limits(pid, &w);
	check_case("--worker-data-limit 192M --worker-nofile 777: the "
		   "worker's soft and hard limits");
#ifdef XD_SHADOW_BUILD
	SKIP("a 256 MiB upload past a 192 MiB data limit is refused",
	     "sanitizer build: no RLIMIT_DATA");
#else
	st = module_first(&t, 256 * MIB, 4096);
	CHECK_MSG(st == cudaErrorMemoryAllocation, "a 256 MiB module upload "
		  "past a 192 MiB data limit is answered "
		  "cudaErrorMemoryAllocation", "status %d", st);
#endif
	st = module_first(&t, 8 * MIB, 4096);
	CHECK_MSG(st == 0 && echo_ok(&t), "the worker serves on: an 8 MiB "
		  "upload is taken, ECHO answers", "status %d", st);
	check_close(&t, "CLOSE is answered", "the worker exits", TIMEOUT_MS);
	t.ops->close(&t);
	check_daemon_stops("the daemon stops");
}

static void test_limits_off(void)
{
	const char *extra[] = { "--worker-data-limit", "off",
				"--worker-nofile", "0", "--worker-core-dumps",
				NULL };
	static const char *const names[] = {
		"Max data size", "Max open files", "Max core file size",
	};
	uint64_t ws, wh, ds, dh;
	struct xc_transport t;
	unsigned int i;
	pid_t pid;

	REQUIRE_MSG(!start_daemon_with("8", extra), "setup",
		    "xcudad did not start");
	pid = session(&t);
	REQUIRE_MSG(pid > 0, "setup", "no session");
	for (i = 0; i < 3; i++) {
		EXPECT(!proc_limit(pid, names[i], &ws, &wh) &&
		       !proc_limit(daemon_pid, names[i], &ds, &dh),
		       "cannot read %s", names[i]);
		EXPECT(ws == ds && wh == dh, "%s: worker %llu/%llu, daemon "
		       "%llu/%llu", names[i], (unsigned long long)ws,
		       (unsigned long long)wh, (unsigned long long)ds,
		       (unsigned long long)dh);
	}
out:
	check_case("off, 0 and --worker-core-dumps: the worker keeps the "
		   "daemon's limits");
	check_close(&t, "CLOSE is answered", "the worker exits", TIMEOUT_MS);
	t.ops->close(&t);
	check_daemon_stops("the daemon stops");
}

/* ---- cgroups ---- */

static char cg_mnt[256];	/* the cgroup v2 mount */
static char cg_dir[400];	/* --cgroup: cg_mnt/xcuda-test.PID */
static char cg_rel[128];	/* its path in the hierarchy */

/* The first cgroup2 mount of /proc/self/mountinfo, whose root is "/". */
static int find_cgroup2(char *why, size_t len)
{
	char line[1024], root[256], mnt[256];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	if (!f) {
		snprintf(why, len, "no /proc/self/mountinfo");
		return -1;
	}
	while (!found && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - ");

		if (!dash || strncmp(dash, " - cgroup2 ", 11) ||
		    sscanf(line, "%*s %*s %*s %255s %255s", root, mnt) != 2 ||
		    strcmp(root, "/"))
			continue;
		snprintf(cg_mnt, sizeof(cg_mnt), "%s", mnt);
		found = 1;
	}
	fclose(f);
	if (!found)
		snprintf(why, len, "no cgroup2 file system is mounted");
	return found ? 0 : -1;
}

static int cg_file_has(const char *cg, const char *file, const char *word)
{
	char path[512], *text, *tok, *save;
	int found = 0;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	text = check_slurp(path, NULL);
	for (tok = text ? strtok_r(text, " \n", &save) : NULL; tok && !found;
	     tok = strtok_r(NULL, " \n", &save))
		found = !strcmp(tok, word);
	free(text);
	return found;
}

/* @cg/@file's first line, in @buf (empty when unreadable). */
static const char *cg_read(const char *cg, const char *file, char *buf,
			   size_t len)
{
	char path[512], *text;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	text = check_slurp(path, NULL);
	snprintf(buf, len, "%s", text ? text : "");
	buf[strcspn(buf, "\n")] = 0;
	free(text);
	return buf;
}

/* The value of "KEY N" in @cg/@file (memory.events), or -1. */
static long cg_key(const char *cg, const char *file, const char *key)
{
	char path[512], *text, *p;
	size_t n = strlen(key);
	long v = -1;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	text = check_slurp(path, NULL);
	for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 :
						      NULL) {
		if (!strncmp(p, key, n) && p[n] == ' ') {
			v = strtol(p + n + 1, NULL, 10);
			break;
		}
	}
	free(text);
	return v;
}

static void group_path(char *buf, size_t len)
{
	snprintf(buf, len, "%s/local-uid%u", cg_dir, (unsigned int)getuid());
}

/* Waits for @path to go; 1 if it did. */
static int gone(const char *path, long ms)
{
	long end = now_ms() + ms;

	while (!access(path, F_OK) && now_ms() < end)
		nap_ms(20);
	return access(path, F_OK) != 0;
}

/* Removes what the cases left of cg_dir. */
static void cg_cleanup(void)
{
	char path[700];
	struct dirent *e;
	DIR *d;

	if (!cg_dir[0])
		return;
	d = opendir(cg_dir);
	while (d && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", cg_dir, e->d_name);
		rmdir(path);
	}
	if (d)
		closedir(d);
	rmdir(cg_dir);
}

/* Where a directory is no cgroup v2 group, the daemon refuses to start. */
static void test_cgroup_not_v2(void)
{
	char notcg[300];
	const char *extra[] = { "--cgroup", notcg, NULL };

	snprintf(notcg, sizeof(notcg), "%s/not-a-cgroup", dir);
	CHECK_MSG(start_daemon_with("8", extra) && daemon_pid < 0 &&
		  wait_log("is not a cgroup v2 directory", 1000) &&
		  access(notcg, F_OK), "--cgroup on a plain directory: the "
		  "daemon refuses to start, and removes the directory it "
		  "made", "started, or no such line in the log");
	if (daemon_pid > 0)
		stop_daemon(SIGKILL, 5000);
}

/*
 * The worker of @t (@pid) sits in the group of its user, with @want's
 * files ("memory.max=100663296"); "" for none to check.
 */
static void expect_group(pid_t pid, const char *const *want)
{
	char group[512], have[512], rel[300], v[128];

	group_path(group, sizeof(group));
	snprintf(rel, sizeof(rel), "%s/local-uid%u", cg_rel,
		 (unsigned int)getuid());
	if (proc_cgroup(pid, have, sizeof(have))) {
		CHECK_WHY("no cgroup v2 line in /proc/%d/cgroup", (int)pid);
		return;
	}
	if (strcmp(have, rel)) {
		CHECK_WHY("the worker is in %s, not %s", have, rel);
		return;
	}
	for (; want && *want; want++) {
		const char *eq = strchr(*want, '=');
		char file[64];

		snprintf(file, sizeof(file), "%.*s", (int)(eq - *want), *want);
		if (strcmp(cg_read(group, file, v, sizeof(v)), eq + 1)) {
			CHECK_WHY("%s/%s is \"%s\", want \"%s\"", group, file,
				  v, eq + 1);
			return;
		}
	}
}

/* Placement and removal alone: no controller needed. */
static void test_cgroup_placement(void)
{
	const char *extra[] = { "--cgroup", cg_dir, "--cgroup-pids", "off",
				NULL };
	char group[512];
	struct xc_transport t, u;
	pid_t pid, pid2;

	group_path(group, sizeof(group));
	REQUIRE_MSG(!start_daemon_with("8", extra), "setup", "xcudad did not "
		    "start with --cgroup %s and no limits", cg_dir);
	pid = session(&t);
	pid2 = session(&u);
	REQUIRE_MSG(pid > 0 && pid2 > 0, "setup", "no sessions");
	expect_group(pid, NULL);
	expect_group(pid2, NULL);
	check_case("two workers of one user sit in its group, local-uid<UID>");
	check_close(&t, "CLOSE is answered", "the first worker exits",
		    TIMEOUT_MS);
	t.ops->close(&t);
	CHECK(!access(group, F_OK) && echo_ok(&u), "the group stays while "
	      "a worker of it is left, which serves on");
	check_close(&u, "CLOSE is answered", "the last worker exits",
		    TIMEOUT_MS);
	u.ops->close(&u);
	CHECK_MSG(gone(group, GONE_MS), "the empty group is removed",
		  "%s is still there", group);
	check_daemon_stops("the daemon stops");
}

/* A limit whose controller this hierarchy lacks: no start. */
static void test_cgroup_no_controller(void)
{
	const char *extra[] = { "--cgroup", cg_dir, "--cgroup-pids", "64",
				NULL };

	if (cg_file_has(cg_mnt, "cgroup.controllers", "pids")) {
		SKIP("a limit without its controller keeps the daemon from "
		     "starting", "%s has the pids controller", cg_mnt);
		return;
	}
	CHECK_MSG(start_daemon_with("8", extra) && daemon_pid < 0 &&
		  wait_log("no pids controller", 1000), "--cgroup-pids without "
		  "a pids controller: the daemon refuses to start, and says "
		  "why", "started, or no such line in the log");
	if (daemon_pid > 0)
		stop_daemon(SIGKILL, 5000);
}

static void test_cgroup_limits(void)
{
	const char *extra[] = { "--cgroup", cg_dir, "--cgroup-memory", "96M",
				"--cgroup-pids", "64", "--cgroup-cpu", "50",
				NULL };
	const char *want[] = { "memory.max=100663296", "pids.max=64",
			       "cpu.max=50000 100000", NULL };
	char group[512], swap[64];
	struct xc_transport t;
	pid_t pid;

	group_path(group, sizeof(group));
	REQUIRE_MSG(!start_daemon_with("8", extra), "setup",
		    "xcudad did not start with --cgroup %s", cg_dir);
	CHECK(cg_file_has(cg_dir, "cgroup.subtree_control", "memory") &&
	      cg_file_has(cg_dir, "cgroup.subtree_control", "pids") &&
	      cg_file_has(cg_dir, "cgroup.subtree_control", "cpu"),
	      "the daemon enables memory, pids and cpu for its groups");
	pid = session(&t);
	REQUIRE_MSG(pid > 0, "setup", "no session");
	expect_group(pid, want);
	cg_read(group, "memory.swap.max", swap, sizeof(swap));
	if (*swap && strcmp(swap, "0"))
		CHECK_WHY("memory.swap.max is %s, want 0", swap);
	check_case("the group's memory.max, memory.swap.max, pids.max and "
		   "cpu.max hold --cgroup-memory 96M --cgroup-pids 64 "
		   "--cgroup-cpu 50");
	CHECK(echo_ok(&t), "the worker serves in its group");
	check_close(&t, "CLOSE is answered", "the worker exits", TIMEOUT_MS);
	t.ops->close(&t);
	CHECK_MSG(gone(group, GONE_MS), "the empty group is removed",
		  "%s is still there", group);
	check_daemon_stops("the daemon stops");
}

static void test_cgroup_pids_max(void)
{
	const char *extra[] = { "--cgroup", cg_dir, "--cgroup-pids", "1",
				"--request-deadline", "600", NULL };
	char group[512];
	struct xc_transport t;
	pid_t pid;
	long hits;

	group_path(group, sizeof(group));
	REQUIRE_MSG(!start_daemon_with("8", extra), "setup",
		    "xcudad did not start with --cgroup-pids 1");
	pid = session(&t);
	REQUIRE_MSG(pid > 0, "setup", "no session");
	hits = cg_key(group, "pids.events", "max");
	CHECK_MSG(wait_log("no watch over long requests", TIMEOUT_MS) && hits >= 1,
		  "past pids.max 1 the worker's watchdog thread cannot start",
		  "pids.events max %ld", hits);
	CHECK(echo_ok(&t) && daemon_alive(), "the worker serves on without "
	      "it, the daemon too");
	check_close(&t, "CLOSE is answered", "the worker exits", TIMEOUT_MS);
	t.ops->close(&t);
	check_daemon_stops("the daemon stops");
}

static void test_cgroup_memory_max(void)
{
	const char *extra[] = { "--cgroup", cg_dir, "--cgroup-memory", "32M",
				NULL };
	const uint32_t piece = 16 * MIB;
	const uint64_t total = 160 * MIB;
	char group[512], needle[96];
	struct xc_transport t, u;
	uint64_t off;
	long kills;
	pid_t pid;
	int st;

	group_path(group, sizeof(group));
	REQUIRE_MSG(!start_daemon_with("8", extra), "setup",
		    "xcudad did not start with --cgroup-memory 32M");
	REQUIRE_MSG(!sess_open(&t), "setup", "no session");
	pid = worker_pid(t.session);
	/* CUDA with a GPU may not even start in 32 MiB: OPEN may die. */
	st = open_call(&t);
	if (!st)
		st = module_first(&t, total, piece);
	for (off = piece; !st && off < total; off += piece)
		st = module_next(&t, total, off, piece);
	snprintf(needle, sizeof(needle), "worker %d killed by signal 9",
		 (int)pid);
	kills = cg_key(cg_dir, "memory.events", "oom_kill");
	CHECK_MSG(st != 0 && wait_log(needle, TIMEOUT_MS) && kills >= 1,
		  "a worker that copies 160 MiB past memory.max 32M is killed",
		  "status %d, oom_kill %ld", st, kills);
	t.ops->close(&t);
	CHECK_MSG(gone(group, GONE_MS), "its group is removed", "%s is still "
		  "there", group);
	pid = session(&u);
	CHECK(pid > 0 && daemon_alive() && echo_ok(&u), "the daemon serves "
	      "on: a new session in a new group answers");
	if (pid > 0) {
		check_close(&u, "CLOSE is answered", "the worker exits",
			    TIMEOUT_MS);
		u.ops->close(&u);
	}
	check_daemon_stops("the daemon stops");
}

/* In the daemon's process: into cg_dir, as systemd's Delegate= does. */
static void enter_cg_dir(void)
{
	char path[512], pid[24];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg_dir);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		_exit(126);
	close(fd);
}

static void test_cgroup_daemon_inside(void)
{
	const char *extra[] = { "--cgroup", cg_dir, "--cgroup-memory", "1G",
				NULL };
	char have[512], want[300];
	struct xc_transport t;
	pid_t pid;
	int ok;

	REQUIRE_MSG(!mkdir(cg_dir, 0755) || errno == EEXIST, "setup",
		    "mkdir %s: %s", cg_dir, strerror(errno));
	daemon_pre_exec = enter_cg_dir;
	ok = !start_daemon_with("8", extra);
	daemon_pre_exec = NULL;
	REQUIRE_MSG(ok, "setup", "xcudad did not start inside %s", cg_dir);
	snprintf(want, sizeof(want), "%s/xcudad", cg_rel);
	CHECK_MSG(!proc_cgroup(daemon_pid, have, sizeof(have)) &&
		  !strcmp(have, want), "a daemon that sits in --cgroup's "
		  "directory moves to its leaf, xcudad", "it is in %s", have);
	pid = session(&t);
	REQUIRE_MSG(pid > 0, "setup", "no session");
	expect_group(pid, NULL);
	check_case("its workers sit in their user's group");
	check_close(&t, "CLOSE is answered", "the worker exits", TIMEOUT_MS);
	t.ops->close(&t);
	check_daemon_stops("the daemon stops");
}

static void test_cgroups(void)
{
	static const char *const ctl[] = { "memory", "pids", "cpu" };
	char why[256];
	unsigned int i;

	if (geteuid()) {
		SKIP("cgroups", "not root: no cgroup v2 group can be made "
		     "here");
		return;
	}
	if (find_cgroup2(why, sizeof(why))) {
		SKIP("cgroups", "%s", why);
		return;
	}
	snprintf(cg_rel, sizeof(cg_rel), "/xcuda-test.%d", (int)getpid());
	snprintf(cg_dir, sizeof(cg_dir), "%s%s", cg_mnt, cg_rel);
	if (mkdir(cg_dir, 0755) || rmdir(cg_dir)) {
		SKIP("cgroups", "cannot make a group in %s: %s", cg_mnt,
		     strerror(errno));
		cg_dir[0] = 0;
		return;
	}
	printf("# cgroup v2 at %s; --cgroup %s\n", cg_mnt, cg_dir);
	/*
	 * Each daemon makes the directory afresh, and so enables in its
	 * parent the controllers it needs (systemd may not have).
	 */
	test_cgroup_placement();
	cg_cleanup();
	test_cgroup_no_controller();
	cg_cleanup();
	for (i = 0; i < 3; i++) {
		if (!cg_file_has(cg_mnt, "cgroup.controllers", ctl[i])) {
			SKIP("cgroup limits", "the cgroup v2 hierarchy at %s "
			     "has no %s controller (bound to cgroup v1 "
			     "here?)", cg_mnt, ctl[i]);
			return;
		}
	}
	test_cgroup_limits();
	cg_cleanup();
	test_cgroup_pids_max();
	cg_cleanup();
	test_cgroup_memory_max();
	cg_cleanup();
	test_cgroup_daemon_inside();
	cg_cleanup();
}

static void teardown(void)
{
	harness_teardown();
	cg_cleanup();
}

int main(void)
{
	harness_setup();
	check_teardown(teardown);
	test_bad_values();
	test_default_limits();
	test_given_limits();
	test_limits_off();
	test_cgroup_not_v2();
	test_cgroups();
	cg_cleanup();
	return check_summary();
}
