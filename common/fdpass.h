/* SPDX-License-Identifier: MIT */
/*
 * Descriptors passed over Unix sockets (SCM_RIGHTS), for the local
 * transport's handshake on both sides and for xcudad's descriptor broker.
 */
#ifndef XCUDA_COMMON_FDPASS_H
#define XCUDA_COMMON_FDPASS_H

#include <sys/socket.h>
#include <sys/types.h>

/* The most descriptors one message carries. */
#define XCUDA_FDPASS_MAX	4

/*
 * Sends @len bytes of @buf with @nfds descriptors of @fds (none when 0),
 * with @flags and MSG_NOSIGNAL, again after EINTR.  Returns the bytes
 * sent, or -errno (-EINVAL for more than XCUDA_FDPASS_MAX descriptors).
 */
ssize_t xcuda_send_fds(int sock, const void *buf, size_t len, const int *fds,
		       unsigned int nfds, int flags);

/*
 * Appends the descriptors a received @mh carries to @fds (*@n of them so
 * far, at most @max); closes any beyond.  Returns 1 if there were more
 * than @max, or the control data was cut short (MSG_CTRUNC), else 0.
 */
int xcuda_take_fds(struct msghdr *mh, int *fds, int *n, int max);

#endif /* XCUDA_COMMON_FDPASS_H */
