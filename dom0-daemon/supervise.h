/* SPDX-License-Identifier: MIT */
/*
 * The parent's bookkeeping of workers: session ids, forking one worker
 * per session, reaping them and stopping them all.  It knows nothing of
 * transports: whoever accepts a session (the local socket today, the Xen
 * backend later) hands a body function to xd_super_spawn().
 */
#ifndef XCUDAD_SUPERVISE_H
#define XCUDAD_SUPERVISE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct xd_child {
	pid_t pid;		/* 0: free slot */
	uint32_t session;
	int chan;		/* the parent's end of its channel, or -1 */
	uint64_t owner;		/* whose session (xd_super_set_owner), or 0 */
};

#define XD_SUPER_MAX_FDS	8

struct xd_super {
	struct xd_child *kids;
	unsigned int max;
	unsigned int live;
	int stopping;		/* workers killed on purpose now */
	pid_t parent;
	sigset_t child_mask;	/* the signal mask workers start with */
	int parent_fds[XD_SUPER_MAX_FDS];	/* closed in every worker */
	unsigned int nfds;
	/* Optional: a reaped worker's session is gone, however it ended. */
	void (*gone)(uint32_t session);
};

int xd_super_init(struct xd_super *sv, unsigned int max_sessions);
void xd_super_fini(struct xd_super *sv);
/* Registers a parent-only descriptor that workers must not inherit. */
void xd_super_parent_fd(struct xd_super *sv, int fd);
/*
 * @fd is about to be closed: workers must not close it any more, since
 * its number may be given again, to a descriptor a worker needs.
 */
void xd_super_forget_fd(struct xd_super *sv, int fd);

static inline int xd_super_full(const struct xd_super *sv)
{
	return sv->live >= sv->max;
}

/* A fresh random-ish session id: nonzero, unlike every live one. */
uint32_t xd_super_new_session(const struct xd_super *sv);

/*
 * Forks a worker for @session that runs @body(@arg, @session) and exits
 * with its return value.  Returns the pid, or -1.
 */
pid_t xd_super_spawn(struct xd_super *sv, uint32_t session,
		     int (*body)(void *arg, uint32_t session), void *arg);

/*
 * In a worker: its end of the SOCK_SEQPACKET channel to the parent
 * (fd_broker.h), or -1.  Tests set it by hand.
 */
int xd_super_chan(void);
void xd_super_set_chan(int fd);

/* Reaps every ended worker and logs how it ended. */
/*
 * Tags worker @pid with @owner (not 0): a guest's device, say, whose
 * workers all go when it does (xd_super_kill_owner).
 */
void xd_super_set_owner(struct xd_super *sv, pid_t pid, uint64_t owner);
/*
 * SIGKILLs every worker of @owner, wherever it is (one blocked in CUDA on
 * a kernel that never ends included), and says how many; they are reaped
 * as any other.
 */
unsigned int xd_super_kill_owner(struct xd_super *sv, uint64_t owner);
/* The live workers whose owner, masked with @mask, is @value. */
unsigned int xd_super_count(const struct xd_super *sv, uint64_t mask,
			    uint64_t value);
void xd_super_reap(struct xd_super *sv);
/* SIGTERM to all workers, SIGKILL after @grace_ms, then reaps them. */
void xd_super_stop_all(struct xd_super *sv, int grace_ms);

#endif /* XCUDAD_SUPERVISE_H */
