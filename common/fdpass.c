// SPDX-License-Identifier: MIT
/* Descriptors over Unix sockets (fdpass.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fdpass.h"

ssize_t xcuda_send_fds(int sock, const void *buf, size_t len, const int *fds,
		       unsigned int nfds, int flags)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * XCUDA_FDPASS_MAX)];
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t r;

	if (nfds > XCUDA_FDPASS_MAX)
		return -EINVAL;
	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do
		r = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

int xcuda_take_fds(struct msghdr *mh, int *fds, int *n, int max)
{
	struct cmsghdr *cm;
	int extra = 0;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t k, cnt;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < cnt; k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int),
			       sizeof(fd));
			if (*n < max) {
				fds[(*n)++] = fd;
			} else {
				close(fd);
				extra = 1;
			}
		}
	}
	return extra || (mh->msg_flags & MSG_CTRUNC);
}
