/* SPDX-License-Identifier: MIT */
/*
 * The worker's sandbox, as libxl's dm_restrict does for QEMU: a uid of
 * its domain (privdrop.h), no capability in any set whatever the euid,
 * no new privileges, no controlling terminal, not dumpable, and a
 * seccomp allow-list (libseccomp) that still lets the CUDA driver work.
 * docs/security.md ("Sandbox") says why each syscall is allowed.
 */
#ifndef XCUDAD_SANDBOX_H
#define XCUDAD_SANDBOX_H

#include "privdrop.h"
#include "rlimits.h"

/* Environment: set to 1, the same as --no-seccomp (debugging only). */
#define XD_NO_SECCOMP_ENV	"XCUDAD_NO_SECCOMP"

struct xd_sandbox {
	const struct xd_user *user;	/* whom workers become (privdrop.h) */
	int no_seccomp;			/* --no-seccomp: debugging only */
	/*
	 * A file that a worker of the daemon's own uid (a non-root
	 * daemon) must not open: the Xen backend's device.  Landlock keeps
	 * it out; NULL: none.
	 */
	const char *deny;
	/*
	 * A directory that such a worker may read beneath but not write:
	 * the workers' cgroups (--cgroup), whose limits and cgroup.procs
	 * the daemon's uid owns.  NULL: none.
	 */
	const char *deny_write;
	/* Its resource limits (rlimits.h); NULL: the daemon's. */
	const struct xd_rlimits *rlimits;
};

/*
 * In a freshly forked worker, before it reads a byte from its guest:
 * sets its resource limits (while it may still raise a hard one),
 * becomes the user of domain @domid (-1: not a Xen domain, the shared
 * user), drops every capability (bounding, effective, permitted,
 * inheritable, ambient), sets PR_SET_NO_NEW_PRIVS, leaves the daemon's
 * session and terminal, becomes undumpable, is kept out of @sb->deny
 * and from writing beneath @sb->deny_write by Landlock when it keeps the
 * daemon's uid, and loads the seccomp filter.  Returns 0, or -1
 * (logged) when any step failed: the worker must then end without
 * serving.
 */
int xd_sandbox_enter(const struct xd_sandbox *sb, long domid);

/* Steps of it, for tests: each returns 0 or -1 (logged). */
int xd_sandbox_drop_caps(void);
int xd_sandbox_seccomp(void);

/*
 * In the daemon, once at start: logs what workers will get here (which
 * user, which uid range, whether the bounding set can be emptied, and
 * whether seccomp is on).
 */
void xd_sandbox_describe(const struct xd_sandbox *sb);

#endif /* XCUDAD_SANDBOX_H */
