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

int xd_user_drop(const struct xd_user *u)
{
	pid_t parent = getppid();
	uid_t r, e, s;
	gid_t gr, ge, gs;
	int sig = 0;

	if (!u->active)
		return 0;
	/* The kernel forgets the parent-death signal when ids change. */
	if (prctl(PR_GET_PDEATHSIG, &sig))
		sig = 0;
	if (setgroups((size_t)u->ngroups, u->groups) ||
	    setresgid(u->gid, u->gid, u->gid) ||
	    setresuid(u->uid, u->uid, u->uid)) {
		xd_log(XD_LOG_ERROR, "cannot become '%s': %s", u->name,
		       strerror(errno));
		return -1;
	}
	/* Root must be gone for good: real, effective and saved ids. */
	if (getresuid(&r, &e, &s) || getresgid(&gr, &ge, &gs) ||
	    r != u->uid || e != u->uid || s != u->uid || gr != u->gid ||
	    ge != u->gid || gs != u->gid || setuid(0) == 0 ||
	    seteuid(0) == 0 || setgid(0) == 0) {
		xd_log(XD_LOG_ERROR, "privilege drop to '%s' did not stick",
		       u->name);
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
