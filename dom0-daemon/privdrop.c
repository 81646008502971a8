// SPDX-License-Identifier: MIT
/*
 * Privilege drop.  The user and its groups are looked up in the parent
 * (NSS lookups are best kept out of freshly forked workers); the worker
 * only calls setgroups/setgid/setuid and then proves that it can no
 * longer become root.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "log.h"
#include "privdrop.h"

static int xd_user_fill(struct xd_user *u, const struct passwd *pw)
{
	int n = 16;

	/* Copied first: the group lookup may reuse getpwnam's buffer. */
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	for (;;) {
		gid_t *g = realloc(u->groups, (size_t)n * sizeof(*g));
		int want = n;

		if (!g)
			return -1;
		u->groups = g;
		if (getgrouplist(u->name, u->gid, g, &want) >= 0) {
			u->ngroups = want;
			break;
		}
		if (want <= n || want > 65536)
			return -1;
		n = want;
	}
	return 0;
}

int xd_user_resolve(struct xd_user *u, const char *name)
{
	struct passwd *pw;

	memset(u, 0, sizeof(*u));
	if (geteuid() != 0) {
		/* Workers keep the daemon's ids: the sandbox alone parts them. */
		u->uid = geteuid();
		u->gid = getegid();
		snprintf(u->name, sizeof(u->name), "uid %d", (int)geteuid());
		return 0;
	}
	u->active = 1;
	errno = 0;
	pw = getpwnam(name);
	if (!pw) {
		xd_log(XD_LOG_WARN, "user '%s' does not exist: workers run "
		       "as 'nobody'", name);
		pw = getpwnam("nobody");
	}
	if (!pw) {
		xd_log(XD_LOG_ERROR, "neither '%s' nor 'nobody' exists", name);
		return -1;
	}
	if (pw->pw_uid == 0 || pw->pw_gid == 0) {
		xd_log(XD_LOG_ERROR, "refusing to run workers as '%s': it "
		       "is root", pw->pw_name);
		return -1;
	}
	if (xd_user_fill(u, pw)) {
		xd_log(XD_LOG_ERROR, "cannot list the groups of '%s'",
		       pw->pw_name);
		return -1;
	}
	return 0;
}

int xd_uid_range_parse(const char *s, uid_t *first, uid_t *last)
{
	unsigned long a, b;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	a = strtoul(s, &end, 10);
	if (errno || *end != '-' || end[1] < '0' || end[1] > '9')
		return -1;
	b = strtoul(end + 1, &end, 10);
	/* uid_t is 32-bit; (uid_t)-1 is "no change" to setresuid. */
	if (errno || *end || !a || a > b || b >= 0xffffffffUL)
		return -1;
	*first = (uid_t)a;
	*last = (uid_t)b;
	return 0;
}

uid_t xd_user_uid(const struct xd_user *u, long domid, int *shared)
{
	*shared = 1;
	if (!u->range_last || domid < 0 || domid > (long)XD_DOMID_MAX ||
	    (unsigned long)domid > (unsigned long)(u->range_last -
						    u->range_first))
		return u->uid;
	*shared = 0;
	return u->range_first + (uid_t)domid;
}

int xd_user_drop(const struct xd_user *u, long domid)
{
	pid_t parent = getppid();
	uid_t r, e, s, uid;
	gid_t gr, ge, gs;
	int sig = 0, shared;

	if (!u->active)
		return 0;
	uid = xd_user_uid(u, domid, &shared);
	if (shared && u->range_last && domid >= 0)
		/* Logged by the worker, which names its session. */
		xd_log(XD_LOG_WARN, "domain %ld is beyond --uid-range "
		       "%u-%u: its worker runs as the shared '%s' (uid %u)",
		       domid, (unsigned int)u->range_first,
		       (unsigned int)u->range_last, u->name,
		       (unsigned int)u->uid);
	/* The kernel forgets the parent-death signal when ids change. */
	if (prctl(PR_GET_PDEATHSIG, &sig))
		sig = 0;
	if (setgroups((size_t)u->ngroups, u->groups) ||
	    setresgid(u->gid, u->gid, u->gid) ||
	    setresuid(uid, uid, uid)) {
		xd_log(XD_LOG_ERROR, "cannot become uid %u ('%s'): %s",
		       (unsigned int)uid, u->name, strerror(errno));
		return -1;
	}
	/* Root must be gone for good: real, effective and saved ids. */
	if (getresuid(&r, &e, &s) || getresgid(&gr, &ge, &gs) ||
	    r != uid || e != uid || s != uid || gr != u->gid ||
	    ge != u->gid || gs != u->gid || setuid(0) == 0 ||
	    seteuid(0) == 0 || setgid(0) == 0) {
		xd_log(XD_LOG_ERROR, "privilege drop to uid %u did not stick",
		       (unsigned int)uid);
		return -1;
	}
	if (sig && (prctl(PR_SET_PDEATHSIG, sig) || getppid() != parent))
		return -1;	/* the parent died meanwhile */
	return 0;
}

void xd_user_free(struct xd_user *u)
{
	free(u->groups);
	u->groups = NULL;
}
