// SPDX-License-Identifier: MIT
/*
 * xcudad's log sink.  Each line is formatted into one buffer and written
 * with a single write(2), so lines of the daemon and its workers, which
 * share stderr, never interleave mid-line.
 *
 * The lines go to a private duplicate of stderr taken when the log is set
 * up: a worker points fds 1 and 2 at its guest's device output
 * (output.c), and its log must not follow them there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"

static int xd_level = XD_LOG_INFO;
static int xd_syslog;
static uint32_t xd_session;
/* stderr as it was at xd_log_setup(); -1 if it could not be kept. */
static int xd_log_fd = STDERR_FILENO;
static int xd_log_fd_saved;

static const char *const xd_level_names[] = {
	[XD_LOG_ERROR] = "error",
	[XD_LOG_WARN] = "warn",
	[XD_LOG_INFO] = "info",
	[XD_LOG_DEBUG] = "debug",
};

static const int xd_level_prio[] = {
	[XD_LOG_ERROR] = LOG_ERR,
	[XD_LOG_WARN] = LOG_WARNING,
	[XD_LOG_INFO] = LOG_INFO,
	[XD_LOG_DEBUG] = LOG_DEBUG,
};

int xd_log_parse_level(const char *s)
{
	unsigned int i;

	if (!s)
		return -1;
	for (i = 0; i < sizeof(xd_level_names) / sizeof(xd_level_names[0]);
	     i++)
		if (!strcasecmp(s, xd_level_names[i]))
			return (int)i;
	if (!strcasecmp(s, "warning"))
		return XD_LOG_WARN;
	return -1;
}

void xd_log_setup(int level, int use_syslog)
{
	if (level < XD_LOG_ERROR)
		level = XD_LOG_ERROR;
	if (level > XD_LOG_DEBUG)
		level = XD_LOG_DEBUG;
	xd_level = level;
	if (!xd_log_fd_saved) {
		xd_log_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		xd_log_fd_saved = 1;
	}
	if (use_syslog && !xd_syslog)
		openlog("xcudad", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	xd_syslog = use_syslog;
}

int xd_log_get_level(void)
{
	return xd_level;
}

void xd_log_set_session(uint32_t session)
{
	xd_session = session;
}

static void xd_vlog(int level, const char *fmt, va_list ap)
{
	char buf[1024];
	size_t n = 0;
	int r, saved = errno;

	if (level < XD_LOG_ERROR)
		level = XD_LOG_ERROR;
	if (level > xd_level)
		return;
	if (!xd_syslog) {
		r = snprintf(buf, sizeof(buf), "xcudad[%d]: %s: ",
			     (int)getpid(), xd_level_names[level]);
		n = r > 0 ? (size_t)r : 0;
	}
	if (xd_session && n < sizeof(buf)) {
		r = snprintf(buf + n, sizeof(buf) - n, "session %08x: ",
			     xd_session);
		n += r > 0 ? (size_t)r : 0;
	}
	if (n < sizeof(buf)) {
		r = vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
		n += r > 0 ? (size_t)r : 0;
	}
	/* Truncated lines keep their newline. */
	if (n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	if (xd_syslog) {
		buf[n] = 0;
		syslog(xd_level_prio[level], "%s", buf);
	} else {
		buf[n++] = '\n';
		/* Best effort: a log line is never worth failing for. */
		if (write(xd_log_fd, buf, n) < 0)
			(void)0;
	}
	errno = saved;
}

void xd_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xd_vlog(level, fmt, ap);
	va_end(ap);
}

void xd_log_rl(struct xd_ratelimit *rl, int level, const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	if (level > xd_level)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!rl->start || ts.tv_sec - rl->start >= XD_RL_INTERVAL) {
		if (rl->missed)
			xd_log(level, "%u similar messages suppressed",
			       rl->missed);
		rl->start = ts.tv_sec ? ts.tv_sec : 1;
		rl->printed = 0;
		rl->missed = 0;
	}
	if (rl->printed >= XD_RL_BURST) {
		rl->missed++;
		return;
	}
	rl->printed++;
	va_start(ap, fmt);
	xd_vlog(level, fmt, ap);
	va_end(ap);
}
