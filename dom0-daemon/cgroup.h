/* SPDX-License-Identifier: MIT */
/*
 * A cgroup v2 group per domain for the workers (xcudad --cgroup DIR):
 * DIR/dom<ID> for a Xen domain's, DIR/local-uid<UID> for a local user's,
 * DIR/relay for the sessions relays forward to this GPU server.  Each
 * group gets memory.max (and memory.swap.max 0), pids.max and cpu.max
 * as configured; the daemon enables those controllers in DIR's
 * cgroup.subtree_control, so it never sits in DIR itself when it must
 * (cgroup v2's "no internal processes"): it moves itself to DIR/xcudad.
 *
 * The daemon makes a group before it forks the group's first worker and
 * removes it once the last one is reaped.  A forked worker moves itself
 * into its group (xd_cgroup_join) before it reads a byte of its guest,
 * through a descriptor the daemon opened for it, and closes it.
 * docs/security.md ("Session limits", "What an operator must set").
 */
#ifndef XCUDAD_CGROUP_H
#define XCUDAD_CGROUP_H

#include <stdint.h>

struct xd_cgroup_conf {
	const char *dir;	/* --cgroup; NULL: no cgroups */
	uint64_t memory;	/* memory.max, bytes; XD_LIMIT_NONE: none */
	uint64_t pids;		/* pids.max; XD_LIMIT_NONE: none */
	unsigned int cpu;	/* cpu.max, percent of one CPU; 0: none */
};

/*
 * A group's tasks (threads): a CUDA worker has 3 after initialisation on
 * one GPU, more with more GPUs and its own threads; 1024 leaves 32 to
 * each of the 32 sessions a domain may hold by default.
 */
#define XD_CGROUP_PIDS_DEFAULT	1024u

/* xd_cgroup_prepare(): cgroups are off, or the group failed. */
#define XD_CGROUP_OFF		(-1)
#define XD_CGROUP_FAILED	(-2)

/*
 * At start, before any worker: makes DIR if it is missing (one level,
 * enabling the controllers it needs in its parent), checks that it is a
 * cgroup v2 directory with those controllers, enables them for its
 * children, moves the daemon out of DIR when it sits there, removes the
 * empty groups an earlier daemon left, and proves that a forked process
 * can join a group with the limits.  0, or -1 (logged): the daemon must
 * not start.  Nothing is done without @conf->dir.
 */
int xd_cgroup_setup(const struct xd_cgroup_conf *conf);
/* DIR, resolved (no link, absolute), or NULL when cgroups are off. */
const char *xd_cgroup_dir(void);

/*
 * Before forking @session's worker: group @name made with its limits
 * when it is not there, the session counted in it, and a descriptor
 * (close-on-exec) of its cgroup.procs for the worker to join through.
 * XD_CGROUP_OFF when cgroups are off; XD_CGROUP_FAILED (logged) when the
 * group cannot be made: the session must be refused.  The caller closes
 * the descriptor after the fork.
 */
int xd_cgroup_prepare(const char *name, uint32_t session);

/*
 * In a forked worker, first: moves it into the group of @fd (from
 * xd_cgroup_prepare) and closes @fd, whose opener's rights it must not
 * keep.  0, or -1 (logged): the worker must end without serving.
 */
int xd_cgroup_join(int fd);

/*
 * In the daemon: @session's worker is gone, or was never started.  Its
 * group is removed when it was the last (a group still busy is tried
 * again later).
 */
void xd_cgroup_forget_session(uint32_t session);

/* At exit, after every worker is reaped: removes what groups are left. */
void xd_cgroup_fini(void);

#endif /* XCUDAD_CGROUP_H */
