/* SPDX-License-Identifier: MIT */
/*
 * Dropping root in workers.  The daemon resolves the user once, at start,
 * in the parent; each forked worker then gives up root for good before it
 * reads a byte from its guest.
 */
#ifndef XCUDAD_PRIVDROP_H
#define XCUDAD_PRIVDROP_H

#include <sys/types.h>

struct xd_user {
	int active;		/* started as root: workers must drop */
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int ngroups;
	char name[64];
};

/*
 * Resolves @name (falling back to "nobody" with a warning) if the daemon
 * runs as root; otherwise workers keep the daemon's ids.  Returns 0 or -1.
 */
int xd_user_resolve(struct xd_user *u, const char *name);
/* In a worker: becomes @u for good and checks that root cannot return. */
int xd_user_drop(const struct xd_user *u);
void xd_user_free(struct xd_user *u);

#endif /* XCUDAD_PRIVDROP_H */
