/* SPDX-License-Identifier: MIT */
/*
 * xcudad's log: stderr with a "xcudad[pid]: level: " prefix, or syslog.
 * Workers inherit the settings across fork and tag their lines with their
 * session.  Anything a guest can trigger at will goes through the
 * rate-limited variant, so a hostile guest cannot flood the log.
 */
#ifndef XCUDAD_LOG_H
#define XCUDAD_LOG_H

#include <stdint.h>
#include <time.h>

enum xd_log_level {
	XD_LOG_ERROR = 0,
	XD_LOG_WARN,
	XD_LOG_INFO,
	XD_LOG_DEBUG,
};

/* Parses "error", "warn", "info" or "debug"; -1 if none of them. */
int xd_log_parse_level(const char *s);
/* Sets the threshold and the sink; also opens syslog when asked. */
void xd_log_setup(int level, int use_syslog);
int xd_log_get_level(void);
/* Tags every later line of this process with "session %08x: "; 0 clears. */
void xd_log_set_session(uint32_t session);

void xd_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* At most XD_RL_BURST lines per XD_RL_INTERVAL seconds per call site. */
#define XD_RL_BURST	10
#define XD_RL_INTERVAL	5

struct xd_ratelimit {
	time_t start;
	unsigned int printed;
	unsigned int missed;
};

void xd_log_rl(struct xd_ratelimit *rl, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* xd_log_ratelimited(level, fmt, ...): one limit per call site. */
#define xd_log_ratelimited(...)						\
	do {								\
		static struct xd_ratelimit xd_rl_;			\
		xd_log_rl(&xd_rl_, __VA_ARGS__);			\
	} while (0)

#endif /* XCUDAD_LOG_H */
