// SPDX-License-Identifier: MIT
/*
 * Worker processes.  The parent never touches CUDA (its state does not
 * survive fork): each session gets a fresh process that initialises CUDA
 * itself, so a crash, a leak or a wedged context ends one session only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "supervise.h"

static int xd_worker_chan = -1;

int xd_super_chan(void)
{
	return xd_worker_chan;
}

void xd_super_set_chan(int fd)
{
	xd_worker_chan = fd;
}

int xd_super_init(struct xd_super *sv, unsigned int max_sessions)
{
	memset(sv, 0, sizeof(*sv));
	sv->kids = calloc(max_sessions, sizeof(*sv->kids));
	if (!sv->kids)
		return -1;
	sv->max = max_sessions;
	sv->parent = getpid();
	sigemptyset(&sv->child_mask);
	return 0;
}

void xd_super_fini(struct xd_super *sv)
{
	free(sv->kids);
	sv->kids = NULL;
}

void xd_super_parent_fd(struct xd_super *sv, int fd)
{
	if (sv->nfds < XD_SUPER_MAX_FDS)
		sv->parent_fds[sv->nfds++] = fd;
}

void xd_super_forget_fd(struct xd_super *sv, int fd)
{
	unsigned int i;

	for (i = 0; i < sv->nfds; i++)
		if (sv->parent_fds[i] == fd)
			sv->parent_fds[i--] = sv->parent_fds[--sv->nfds];
}

static int xd_session_live(const struct xd_super *sv, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < sv->max; i++)
		if (sv->kids[i].pid && sv->kids[i].session == id)
			return 1;
	return 0;
}

uint32_t xd_super_new_session(const struct xd_super *sv)
{
	static uint32_t counter;
	struct timespec ts;
	uint32_t id;

	do {
		if (getrandom(&id, sizeof(id), GRND_NONBLOCK) !=
		    (ssize_t)sizeof(id)) {
			/* No entropy yet: ids need only be unique. */
			clock_gettime(CLOCK_MONOTONIC, &ts);
			id = (uint32_t)ts.tv_nsec * 2654435761u ^
			     (uint32_t)getpid() ^ ++counter;
		}
	} while (!id || xd_session_live(sv, id));
	return id;
}

static void xd_worker_setup(struct xd_super *sv, int chan)
{
	unsigned int i;

	for (i = 0; i < sv->nfds; i++)
		close(sv->parent_fds[i]);
	/* Other workers' channels are the parent's alone. */
	for (i = 0; i < sv->max; i++)
		if (sv->kids[i].pid && sv->kids[i].chan >= 0)
			close(sv->kids[i].chan);
	xd_worker_chan = chan;
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_SETMASK, &sv->child_mask, NULL);
	/* A worker does not outlive the daemon that answers for it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != sv->parent)
		_exit(1);
}

pid_t xd_super_spawn(struct xd_super *sv, uint32_t session,
		     int (*body)(void *arg, uint32_t session), void *arg)
{
	int sp[2] = { -1, -1 };
	unsigned int i;
	pid_t pid;

	for (i = 0; i < sv->max; i++)
		if (!sv->kids[i].pid)
			break;
	if (i == sv->max)
		return -1;
	/* Without a channel the worker runs, only unable to share pools. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp))
		xd_log(XD_LOG_WARN, "socketpair: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		xd_log(XD_LOG_ERROR, "fork: %s", strerror(errno));
		if (sp[0] >= 0) {
			close(sp[0]);
			close(sp[1]);
		}
		return -1;
	}
	if (pid == 0) {
		if (sp[0] >= 0)
			close(sp[0]);
		xd_worker_setup(sv, sp[1]);
		xd_log_set_session(session);
		exit(body(arg, session));
	}
	if (sp[1] >= 0)
		close(sp[1]);
	sv->kids[i].pid = pid;
	sv->kids[i].session = session;
	sv->kids[i].chan = sp[0];
	sv->kids[i].owner = 0;
	sv->live++;
	xd_log(XD_LOG_INFO, "session %08x: worker %d started", session,
	       (int)pid);
	return pid;
}

static void xd_log_end(const struct xd_super *sv, const struct xd_child *k,
		       int status)
{
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		xd_log(XD_LOG_INFO, "session %08x: worker %d exited",
		       k->session, (int)k->pid);
	else if (WIFEXITED(status))
		xd_log(XD_LOG_WARN, "session %08x: worker %d exited with "
		       "status %d", k->session, (int)k->pid,
		       WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		xd_log(sv->stopping ? XD_LOG_INFO : XD_LOG_WARN,
		       "session %08x: worker %d killed by signal %d (%s)%s",
		       k->session, (int)k->pid,
		       WTERMSIG(status), strsignal(WTERMSIG(status)),
		       WCOREDUMP(status) ? ", core dumped" : "");
}

void xd_super_set_owner(struct xd_super *sv, pid_t pid, uint64_t owner)
{
	unsigned int i;

	for (i = 0; i < sv->max; i++)
		if (sv->kids[i].pid == pid)
			sv->kids[i].owner = owner;
}

unsigned int xd_super_kill_owner(struct xd_super *sv, uint64_t owner)
{
	unsigned int i, n = 0;

	for (i = 0; owner && i < sv->max; i++) {
		if (!sv->kids[i].pid || sv->kids[i].owner != owner)
			continue;
		kill(sv->kids[i].pid, SIGKILL);
		/* Once: a later reap frees the slot. */
		sv->kids[i].owner = 0;
		n++;
	}
	return n;
}

unsigned int xd_super_count(const struct xd_super *sv, uint64_t mask,
			    uint64_t value)
{
	unsigned int i, n = 0;

	for (i = 0; i < sv->max; i++)
		n += sv->kids[i].pid && (sv->kids[i].owner & mask) == value;
	return n;
}

void xd_super_reap(struct xd_super *sv)
{
	unsigned int i;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < sv->max; i++)
			if (sv->kids[i].pid == pid)
				break;
		if (i == sv->max)
			continue;
		xd_log_end(sv, &sv->kids[i], status);
		if (sv->kids[i].chan >= 0)
			close(sv->kids[i].chan);
		sv->kids[i].chan = -1;
		if (sv->gone)
			sv->gone(sv->kids[i].session);
		sv->kids[i].pid = 0;
		sv->live--;
	}
}

void xd_super_stop_all(struct xd_super *sv, int grace_ms)
{
	struct timespec nap = { 0, 10 * 1000 * 1000 };
	unsigned int i;
	int waited;

	sv->stopping = 1;
	for (i = 0; i < sv->max; i++)
		if (sv->kids[i].pid)
			kill(sv->kids[i].pid, SIGTERM);
	for (waited = 0; sv->live && waited < grace_ms; waited += 10) {
		nanosleep(&nap, NULL);
		xd_super_reap(sv);
	}
	for (i = 0; i < sv->max; i++)
		if (sv->kids[i].pid)
			kill(sv->kids[i].pid, SIGKILL);
	/* Bounded: a worker stuck in the kernel must not hang shutdown. */
	for (waited = 0; sv->live && waited < 5000; waited += 10) {
		nanosleep(&nap, NULL);
		xd_super_reap(sv);
	}
	if (sv->live)
		xd_log(XD_LOG_WARN, "%u workers did not die", sv->live);
}
