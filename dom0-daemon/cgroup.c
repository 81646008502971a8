// SPDX-License-Identifier: MIT
/*
 * The workers' cgroups (cgroup.h).  Only the daemon writes to the tree:
 * it makes and removes the groups and writes their limits; a worker only
 * moves itself in, while it still has the daemon's rights, through a
 * descriptor it closes at once.  The groups' limits hold whatever the
 * worker becomes afterwards, and a worker can neither write them (root
 * owns them, or Landlock keeps a non-root daemon's workers out: see
 * sandbox.c) nor leave its group.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "rlimits.h"

#define XD_CG_SELF	"xcudad"	/* the daemon's leaf, when it must move */
#define XD_CG_PROBE	"xcudad-probe"
#define XD_CG_NAME_MAX	40

struct xd_cg_group {
	char name[XD_CG_NAME_MAX];
	unsigned int refs;	/* live sessions in it */
	int made;		/* there, made by us (refs 0: to remove) */
};

struct xd_cg_sess {
	uint32_t session;
	unsigned int group;
	int used;
};

static struct {
	int on;
	char dir[PATH_MAX];
	struct xd_cgroup_conf conf;
	struct xd_cg_group *g;
	unsigned int ng;
	struct xd_cg_sess *s;
	unsigned int ns;
} xd_cg;

static const char *const xd_cg_ctl[] = { "memory", "pids", "cpu" };
#define XD_CG_NCTL	(sizeof(xd_cg_ctl) / sizeof(xd_cg_ctl[0]))

/* Whether controller @i has a limit to hold. */
static int xd_cg_needs(unsigned int i)
{
	switch (i) {
	case 0: return xd_cg.conf.memory != XD_LIMIT_NONE;
	case 1: return xd_cg.conf.pids != XD_LIMIT_NONE;
	default: return xd_cg.conf.cpu != 0;
	}
}

/* Opens @dir/@file with @flags (and O_CLOEXEC): the fd, or -errno. */
static int xd_cg_open(const char *dir, const char *file, int flags)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Writes @val to @dir/@file in one write(): 0 or -errno. */
static int xd_cg_write(const char *dir, const char *file, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, err = 0;

	fd = xd_cg_open(dir, file, O_WRONLY);
	if (fd < 0)
		return fd;
	n = write(fd, val, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

/* @dir/@file's first @len - 1 bytes, NUL-ended: 0 or -errno. */
static int xd_cg_read(const char *dir, const char *file, char *buf,
		      size_t len)
{
	ssize_t n;
	int fd;

	fd = xd_cg_open(dir, file, O_RDONLY);
	if (fd < 0)
		return fd;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* Whether the word @word is in @dir/@file (cgroup.controllers). */
static int xd_cg_listed(const char *dir, const char *file, const char *word)
{
	char buf[512], *tok, *save;

	if (xd_cg_read(dir, file, buf, sizeof(buf)))
		return 0;
	for (tok = strtok_r(buf, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, word))
			return 1;
	return 0;
}

/* Whether the pid @pid is in @dir/cgroup.procs. */
static int xd_cg_holds(const char *dir, pid_t pid)
{
	int fd = xd_cg_open(dir, "cgroup.procs", O_RDONLY), found = 0;
	FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
	long v;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (!found && fscanf(f, "%ld", &v) == 1)
		found = v == (long)pid;
	fclose(f);
	return found;
}

static int xd_cg_path(char *path, size_t len, const char *name)
{
	return snprintf(path, len, "%s/%s", xd_cg.dir, name) >= (int)len ?
	       -1 : 0;
}

/*
 * Writes a group's limits: those held, and "max" where a controller is
 * on (the operator's, or an earlier daemon's) without a limit of ours,
 * so that no value is left over.  0, or -1 (logged).
 */
static int xd_cg_limits(const char *path)
{
	char v[64];
	unsigned int i;
	int err;

	for (i = 0; i < XD_CG_NCTL; i++) {
		int need = xd_cg_needs(i);
		const char *file = i == 0 ? "memory.max" : i == 1 ?
				   "pids.max" : "cpu.max";

		if (!need)
			snprintf(v, sizeof(v), "max");
		else if (i == 0)
			snprintf(v, sizeof(v), "%llu",
				 (unsigned long long)xd_cg.conf.memory);
		else if (i == 1)
			snprintf(v, sizeof(v), "%llu",
				 (unsigned long long)xd_cg.conf.pids);
		else
			snprintf(v, sizeof(v), "%llu 100000",
				 (unsigned long long)xd_cg.conf.cpu * 1000);
		err = xd_cg_write(path, file, v);
		/* Not ours to hold: reset where the file is, else nothing. */
		if (err && need) {
			xd_log(XD_LOG_ERROR, "cgroup %s: cannot write %s %s: "
			       "%s", path, file, v, strerror(-err));
			return -1;
		}
		if (i)
			continue;
		/* Swap is no way around memory.max (absent: no swap). */
		err = xd_cg_write(path, "memory.swap.max", need ? "0" : "max");
		if (err && err != -ENOENT && need) {
			xd_log(XD_LOG_ERROR, "cgroup %s: cannot write "
			       "memory.swap.max 0: %s", path, strerror(-err));
			return -1;
		}
	}
	return 0;
}

/* Removes group @g when empty; a busy one stays, to try again later. */
static void xd_cg_remove(struct xd_cg_group *g)
{
	char path[PATH_MAX];

	if (!g->made || g->refs)
		return;
	if (xd_cg_path(path, sizeof(path), g->name) || !rmdir(path) ||
	    errno == ENOENT) {
		g->made = 0;
		return;
	}
	if (errno == EBUSY)
		return;
	xd_log(XD_LOG_WARN, "cgroup: cannot remove %s: %s", path,
	       strerror(errno));
	g->made = 0;
}

/* Tries again the groups that were still busy. */
static void xd_cg_sweep(void)
{
	unsigned int i;

	for (i = 0; i < xd_cg.ng; i++)
		xd_cg_remove(&xd_cg.g[i]);
}

/* A slot of group @name, made or not; NULL when out of memory. */
static struct xd_cg_group *xd_cg_group(const char *name)
{
	struct xd_cg_group *g, *free_slot = NULL;
	unsigned int i;

	for (i = 0; i < xd_cg.ng; i++) {
		g = &xd_cg.g[i];
		if (g->made && !strcmp(g->name, name))
			return g;
		if (!g->made && !free_slot)
			free_slot = g;
	}
	if (!free_slot) {
		g = realloc(xd_cg.g, (xd_cg.ng + 8) * sizeof(*g));
		if (!g)
			return NULL;
		memset(g + xd_cg.ng, 0, 8 * sizeof(*g));
		xd_cg.g = g;
		free_slot = &g[xd_cg.ng];
		xd_cg.ng += 8;
	}
	snprintf(free_slot->name, sizeof(free_slot->name), "%s", name);
	free_slot->refs = 0;
	return free_slot;
}

static struct xd_cg_sess *xd_cg_sess_slot(void)
{
	struct xd_cg_sess *s;
	unsigned int i;

	for (i = 0; i < xd_cg.ns; i++)
		if (!xd_cg.s[i].used)
			return &xd_cg.s[i];
	s = realloc(xd_cg.s, (xd_cg.ns + 16) * sizeof(*s));
	if (!s)
		return NULL;
	memset(s + xd_cg.ns, 0, 16 * sizeof(*s));
	xd_cg.s = s;
	xd_cg.ns += 16;
	return &s[xd_cg.ns - 16];
}

int xd_cgroup_prepare(const char *name, uint32_t session)
{
	struct xd_cg_group *g;
	struct xd_cg_sess *s;
	char path[PATH_MAX];
	int fd;

	if (!xd_cg.on)
		return XD_CGROUP_OFF;
	xd_cg_sweep();
	g = xd_cg_group(name);
	s = g ? xd_cg_sess_slot() : NULL;
	if (!s || xd_cg_path(path, sizeof(path), name)) {
		xd_log(XD_LOG_ERROR, "cgroup %s: out of memory", name);
		return XD_CGROUP_FAILED;
	}
	if (!g->made) {
		/* An earlier daemon's is taken over, its limits rewritten. */
		if (mkdir(path, 0755) && errno != EEXIST) {
			xd_log(XD_LOG_ERROR, "cgroup: cannot create %s: %s",
			       path, strerror(errno));
			return XD_CGROUP_FAILED;
		}
		g->made = 1;
		if (xd_cg_limits(path)) {
			xd_cg_remove(g);
			return XD_CGROUP_FAILED;
		}
	}
	fd = xd_cg_open(path, "cgroup.procs", O_WRONLY);
	if (fd < 0) {
		xd_log(XD_LOG_ERROR, "cgroup: cannot open %s/cgroup.procs: %s",
		       path, strerror(-fd));
		xd_cg_remove(g);
		return XD_CGROUP_FAILED;
	}
	g->refs++;
	s->used = 1;
	s->session = session;
	s->group = (unsigned int)(g - xd_cg.g);
	return fd;
}

int xd_cgroup_join(int fd)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	int ok = write(fd, buf, (size_t)n) == n;

	if (!ok)
		xd_log(XD_LOG_ERROR, "cannot join the worker's cgroup: %s",
		       strerror(errno));
	close(fd);
	return ok ? 0 : -1;
}

void xd_cgroup_forget_session(uint32_t session)
{
	unsigned int i;

	if (!xd_cg.on)
		return;
	for (i = 0; i < xd_cg.ns; i++) {
		struct xd_cg_sess *s = &xd_cg.s[i];

		if (!s->used || s->session != session)
			continue;
		s->used = 0;
		if (xd_cg.g[s->group].refs)
			xd_cg.g[s->group].refs--;
		break;
	}
	xd_cg_sweep();
}

const char *xd_cgroup_dir(void)
{
	return xd_cg.on ? xd_cg.dir : NULL;
}

/* Whether @name is a group this daemon makes: dom7, local-uid0, relay. */
static int xd_cg_ours(const char *name)
{
	const char *p = NULL;

	if (!strcmp(name, "relay") || !strcmp(name, XD_CG_PROBE))
		return 1;
	if (!strncmp(name, "dom", 3))
		p = name + 3;
	else if (!strncmp(name, "local-uid", 9))
		p = name + 9;
	if (!p || !*p)
		return 0;
	return strspn(p, "0123456789") == strlen(p);
}

/* Removes the empty groups an earlier daemon left (killed, say). */
static void xd_cg_clear_stale(void)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(xd_cg.dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || !xd_cg_ours(e->d_name) ||
		    xd_cg_path(path, sizeof(path), e->d_name))
			continue;
		if (rmdir(path) && errno != ENOENT)
			xd_log(XD_LOG_WARN, "cgroup: %s is left from an "
			       "earlier daemon and cannot be removed: %s",
			       path, strerror(errno));
	}
	closedir(d);
}

/*
 * Enables controller @ctl for DIR's children.  cgroup v2 refuses while
 * DIR holds processes: if the daemon is one (systemd's Delegate= puts
 * it there), it moves to a leaf of its own first.  0 or -1 (logged).
 */
static int xd_cg_enable(const char *ctl)
{
	char plus[32], leaf[PATH_MAX], pid[24];
	int err;

	snprintf(plus, sizeof(plus), "+%s", ctl);
	err = xd_cg_write(xd_cg.dir, "cgroup.subtree_control", plus);
	if (err == -EBUSY && xd_cg_holds(xd_cg.dir, getpid())) {
		snprintf(pid, sizeof(pid), "%ld", (long)getpid());
		if (xd_cg_path(leaf, sizeof(leaf), XD_CG_SELF) ||
		    (mkdir(leaf, 0755) && errno != EEXIST)) {
			err = -errno;
		} else {
			err = xd_cg_write(leaf, "cgroup.procs", pid);
			if (!err) {
				xd_log(XD_LOG_INFO, "cgroup: the daemon moved "
				       "to %s", leaf);
				err = xd_cg_write(xd_cg.dir,
						  "cgroup.subtree_control",
						  plus);
			}
		}
	}
	if (!err)
		return 0;
	if (err == -EBUSY)
		xd_log(XD_LOG_ERROR, "cgroup: %s holds processes, so the %s "
		       "controller cannot be enabled for its groups (cgroup "
		       "v2: no processes in a group with controlled "
		       "children): give --cgroup a group of its own",
		       xd_cg.dir, ctl);
	else
		xd_log(XD_LOG_ERROR, "cgroup: cannot enable the %s controller "
		       "in %s/cgroup.subtree_control: %s", ctl, xd_cg.dir,
		       strerror(-err));
	return -1;
}

/* A forked process joins a group of DIR, as every worker will. */
static int xd_cg_probe(void)
{
	int fd = xd_cgroup_prepare(XD_CG_PROBE, 0), status = 0;
	pid_t pid;

	if (fd < 0)
		return -1;
	pid = fork();
	if (pid == 0)
		_exit(xd_cgroup_join(fd) ? 1 : 0);
	close(fd);
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	xd_cgroup_forget_session(0);
	if (pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	xd_log(XD_LOG_ERROR, "cgroup: a process cannot join a group of %s%s",
	       xd_cg.dir, pid < 0 ? " (fork failed)" : "");
	return -1;
}

static void xd_cg_describe(void)
{
	char mem[32] = "none", pids[32] = "none", cpu[32] = "none";

	if (xd_cg_needs(0))
		snprintf(mem, sizeof(mem), "%llu MiB",
			 (unsigned long long)(xd_cg.conf.memory >> 20));
	if (xd_cg_needs(1))
		snprintf(pids, sizeof(pids), "%llu",
			 (unsigned long long)xd_cg.conf.pids);
	if (xd_cg_needs(2))
		snprintf(cpu, sizeof(cpu), "%u%% of a CPU", xd_cg.conf.cpu);
	xd_log(XD_LOG_INFO, "cgroup: workers in %s/dom<ID>, local-uid<UID> "
	       "and relay, each group with memory %s, tasks %s, CPU %s",
	       xd_cg.dir, mem, pids, cpu);
}

static int xd_cg_setup(const struct xd_cgroup_conf *conf, int *made);

int xd_cgroup_setup(const struct xd_cgroup_conf *conf)
{
	int made = 0;

	if (!conf->dir)
		return 0;
	if (!xd_cg_setup(conf, &made))
		return 0;
	/* Left as it was (a directory the daemon moved into stays). */
	if (made)
		rmdir(conf->dir);
	return -1;
}

static int xd_cg_setup(const struct xd_cgroup_conf *conf, int *made)
{
	char parent[PATH_MAX], *slash;
	struct statfs sf;
	unsigned int i;

	xd_cg.conf = *conf;
	if (!mkdir(conf->dir, 0755))
		*made = 1;
	else if (errno != EEXIST) {
		xd_log(XD_LOG_ERROR, "cgroup: cannot create %s: %s",
		       conf->dir, strerror(errno));
		return -1;
	}
	if (!realpath(conf->dir, xd_cg.dir)) {
		xd_log(XD_LOG_ERROR, "cgroup: %s: %s", conf->dir,
		       strerror(errno));
		return -1;
	}
	if (statfs(xd_cg.dir, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		xd_log(XD_LOG_ERROR, "cgroup: %s is not a cgroup v2 directory "
		       "(cgroup2 is mounted at /sys/fs/cgroup on a unified "
		       "system)", xd_cg.dir);
		return -1;
	}
	snprintf(parent, sizeof(parent), "%s", xd_cg.dir);
	slash = strrchr(parent, '/');
	if (slash)
		*(slash == parent ? slash + 1 : slash) = 0;
	for (i = 0; i < XD_CG_NCTL; i++) {
		char plus[32];

		if (!xd_cg_needs(i) ||
		    xd_cg_listed(xd_cg.dir, "cgroup.controllers",
				 xd_cg_ctl[i]))
			continue;
		/* Made here: the controllers it needs are ours to ask for. */
		snprintf(plus, sizeof(plus), "+%s", xd_cg_ctl[i]);
		if (*made)
			xd_cg_write(parent, "cgroup.subtree_control", plus);
		if (xd_cg_listed(xd_cg.dir, "cgroup.controllers",
				 xd_cg_ctl[i]))
			continue;
		xd_log(XD_LOG_ERROR, "cgroup: no %s controller in %s: enable "
		       "it in %s/cgroup.subtree_control (systemd: "
		       "Delegate=yes), or give --cgroup-%s off",
		       xd_cg_ctl[i], xd_cg.dir, parent, xd_cg_ctl[i]);
		return -1;
	}
	xd_cg_clear_stale();
	for (i = 0; i < XD_CG_NCTL; i++)
		if (xd_cg_needs(i) && xd_cg_enable(xd_cg_ctl[i]))
			return -1;
	xd_cg.on = 1;
	if (xd_cg_probe()) {
		xd_cg.on = 0;
		return -1;
	}
	xd_cg_describe();
	return 0;
}

void xd_cgroup_fini(void)
{
	if (xd_cg.on)
		xd_cg_sweep();
	free(xd_cg.g);
	free(xd_cg.s);
	memset(&xd_cg, 0, sizeof(xd_cg));
}
