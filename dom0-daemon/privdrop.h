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
	/*
	 * --uid-range FIRST-LAST: the workers of Xen domain D run as uid
	 * FIRST + D (with the group and groups above) while FIRST + D <=
	 * LAST; the others as @uid.  range_last == 0: no range.
	 */
	uid_t range_first, range_last;
};

/* The largest domain id a guest can have (DOMID_FIRST_RESERVED - 1). */
#define XD_DOMID_MAX	0x7fefu

/* Parses "FIRST-LAST" (1 <= FIRST <= LAST): 0, or -1. */
int xd_uid_range_parse(const char *s, uid_t *first, uid_t *last);

/*
 * Resolves @name (falling back to "nobody" with a warning) if the daemon
 * runs as root; otherwise workers keep the daemon's ids.  Returns 0 or -1.
 */
int xd_user_resolve(struct xd_user *u, const char *name);
/*
 * The uid that a worker of Xen domain @domid (-1: a local or relayed
 * session, of no Xen domain here) runs as; *@shared set when it is the
 * one every such worker shares.
 */
uid_t xd_user_uid(const struct xd_user *u, long domid, int *shared);
/*
 * In a worker: becomes @u (the uid of @domid, xd_user_uid()) for good
 * and checks that root cannot return.  A no-op when the daemon is not
 * root.
 */
int xd_user_drop(const struct xd_user *u, long domid);
void xd_user_free(struct xd_user *u);

#endif /* XCUDAD_PRIVDROP_H */
