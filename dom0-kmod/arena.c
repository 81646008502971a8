// SPDX-License-Identifier: GPL-2.0
/*
 * A session's arena: the worker's pages, pinned and granted to the guest,
 * and the read-only chain of directory pages that lists their grants
 * (the format is in xcuda/xen.h); and what each guest domain holds in
 * Dom0's grant table, against its budget.
 *
 * The guest can map any grant made to its domain without being told the
 * reference, so a grant ends only once gnttab_try_end_foreign_access()
 * says the guest no longer maps it, including on the failure path.  Until
 * then the page stays pinned (a directory page allocated) and the grant
 * charged to the domain: xcb_arena_end() tries, the session retries later
 * (session.c), and no page is ever freed while the guest can reach it.
 * gnttab_end_foreign_access() would defer such grants to a list of the
 * kernel's own, outside every limit of ours, which a guest that never
 * unmaps can fill until Dom0's grant table is full.
 */
#define pr_fmt(fmt) "xcuda-back: " fmt

#include <linux/err.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <xen/grant_table.h>
#include <xen/interface/grant_table.h>
#include <xen/page.h>

#include "common.h"

/* Pages pinned per call, then a chance to reschedule. */
#define XCB_PIN_CHUNK		512

/*
 * The grants one guest domain may hold at once, live or ended but still
 * mapped; 0 at load: three quarters of Dom0's grant table, so that one
 * domain alone cannot fill it.
 */
static unsigned int max_domain_grants;
module_param(max_domain_grants, uint, 0644);
MODULE_PARM_DESC(max_domain_grants,
		 "grants a guest domain may hold, live or ended but still mapped (default: 3/4 of Dom0's grant table)");

/* The domains with a device, and every count below. */
static DEFINE_SPINLOCK(xcb_grants_lock);
static LIST_HEAD(xcb_domains);
static unsigned long xcb_grants_total;
static unsigned long xcb_lingering_total;

void xcb_grants_init(void)
{
	unsigned long n;

	if (max_domain_grants)
		return;
	/* Linux uses version 1 entries unless frames lie above 16 TiB. */
	n = (unsigned long)gnttab_max_grant_frames() *
	    (XEN_PAGE_SIZE / sizeof(struct grant_entry_v1));
	max_domain_grants = min_t(unsigned long, n / 4 * 3, UINT_MAX);
}

/* The accounting of @domid, shared by its devices; NULL without memory. */
struct xcb_domain *xcb_domain_get(domid_t domid)
{
	struct xcb_domain *d, *fresh;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	spin_lock(&xcb_grants_lock);
	list_for_each_entry(d, &xcb_domains, node) {
		if (d->domid == domid) {
			d->users++;
			spin_unlock(&xcb_grants_lock);
			kfree(fresh);
			return d;
		}
	}
	d = fresh;
	if (d) {
		d->domid = domid;
		d->users = 1;
		list_add(&d->node, &xcb_domains);
	}
	spin_unlock(&xcb_grants_lock);
	return d;
}

void xcb_domain_put(struct xcb_domain *d)
{
	spin_lock(&xcb_grants_lock);
	if (--d->users) {
		spin_unlock(&xcb_grants_lock);
		return;
	}
	list_del(&d->node);
	spin_unlock(&xcb_grants_lock);
	/* Every session, and so every charge, went before its device. */
	WARN_ON(d->grants || d->lingering);
	kfree(d);
}

/* Charges @n grants to @d: 0, or -EDQUOT past its budget. */
int xcb_grants_charge(struct xcb_domain *d, unsigned long n)
{
	unsigned long budget = READ_ONCE(max_domain_grants);
	unsigned long held, lingering;

	spin_lock(&xcb_grants_lock);
	held = d->grants;
	lingering = d->lingering;
	if (held > budget || n > budget - held) {
		spin_unlock(&xcb_grants_lock);
		pr_warn_ratelimited("dom%u: session refused: it holds %lu grants (%lu of ended sessions it still maps), %lu more would pass its budget of %lu (max_domain_grants)\n",
				    d->domid, held, lingering, n, budget);
		return -EDQUOT;
	}
	d->grants += n;
	xcb_grants_total += n;
	spin_unlock(&xcb_grants_lock);
	return 0;
}

void xcb_grants_uncharge(struct xcb_domain *d, unsigned long n)
{
	spin_lock(&xcb_grants_lock);
	d->grants -= n;
	xcb_grants_total -= n;
	spin_unlock(&xcb_grants_lock);
}

/* @delta grants of @d's ended sessions became, or stopped being, mapped. */
void xcb_grants_linger(struct xcb_domain *d, long delta)
{
	spin_lock(&xcb_grants_lock);
	d->lingering += delta;
	xcb_lingering_total += delta;
	spin_unlock(&xcb_grants_lock);
}

/* For sysfs: what @d holds (all domains when NULL), and how much lingers. */
void xcb_grants_read(struct xcb_domain *d, unsigned long *held,
		     unsigned long *lingering)
{
	spin_lock(&xcb_grants_lock);
	*held = d ? d->grants : xcb_grants_total;
	*lingering = d ? d->lingering : xcb_lingering_total;
	spin_unlock(&xcb_grants_lock);
}

/* The grants of a session's shared memory of @size bytes: pages, directory. */
unsigned long xcb_arena_grants(u64 size)
{
	unsigned long pages = size >> PAGE_SHIFT;

	return pages + DIV_ROUND_UP(pages, XCUDA_DIR_REFS);
}

/* Frees @a, whose grants have all ended (or were never made). */
void xcb_arena_free(struct xcb_arena *a)
{
	unsigned int d;

	if (WARN_ON(a->nr_left))
		return;		/* leaked: the guest may still reach it */
	for (d = 0; a->dir_pages && d < a->nr_dir; d++)
		if (a->dir_pages[d])
			__free_page(a->dir_pages[d]);
	/* The guest may have written them behind the page tables' back. */
	unpin_user_pages_dirty_lock(a->pages, a->nr_pinned, true);
	kvfree(a->pages);
	kvfree(a->refs);
	kfree(a->dir_pages);
	kfree(a->dir_refs);
	kfree(a);
}

/*
 * Ends every grant of @a that the guest no longer maps; 0 stands for a
 * grant that has ended.  Returns how many are left (also a->nr_left).
 */
unsigned long xcb_arena_end(struct xcb_arena *a)
{
	unsigned long i, left = 0;
	unsigned int d;

	for (d = 0; d < a->nr_dir; d++) {
		if (!a->dir_refs[d])
			continue;
		if (gnttab_try_end_foreign_access(a->dir_refs[d]))
			a->dir_refs[d] = 0;
		else
			left++;
	}
	for (i = 0; i < a->nr_granted; i++) {
		if (!a->refs[i])
			continue;
		if (gnttab_try_end_foreign_access(a->refs[i]))
			a->refs[i] = 0;
		else
			left++;
		if (!(i % XCB_PIN_CHUNK))
			cond_resched();
	}
	a->nr_left = left;
	return left;
}

/*
 * The module goes and the guest still maps some of @a: hand each of those
 * grants, with a reference to its page, to the grant table's own deferred
 * list, which frees the page once the guest lets go; then free the rest.
 */
void xcb_arena_abandon(struct xcb_arena *a)
{
	unsigned long i;
	unsigned int d;

	for (d = 0; d < a->nr_dir; d++) {
		if (!a->dir_refs[d])
			continue;
		/* Our reference to the page goes with it. */
		gnttab_end_foreign_access(a->dir_refs[d], a->dir_pages[d]);
		a->dir_refs[d] = 0;
		a->dir_pages[d] = NULL;
	}
	for (i = 0; i < a->nr_granted; i++) {
		if (!a->refs[i])
			continue;
		/* A reference of the grant's own; the pin goes below. */
		get_page(a->pages[i]);
		gnttab_end_foreign_access(a->refs[i], a->pages[i]);
		a->refs[i] = 0;
	}
	a->nr_left = 0;
	xcb_arena_free(a);
}

static int xcb_arena_pin(struct xcb_arena *a, unsigned long addr)
{
	int n, got;

	while (a->nr_pinned < a->nr_pages) {
		n = min_t(unsigned long, a->nr_pages - a->nr_pinned,
			  XCB_PIN_CHUNK);
		/* LONGTERM: the guest holds them for the session's life. */
		got = pin_user_pages_fast(addr + (a->nr_pinned << PAGE_SHIFT),
					  n, FOLL_WRITE | FOLL_LONGTERM,
					  a->pages + a->nr_pinned);
		if (got <= 0)
			return got ? got : -EFAULT;
		a->nr_pinned += got;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

static int xcb_arena_grant_pages(struct xcb_arena *a, domid_t domid)
{
	unsigned long gfn;
	int ref;

	while (a->nr_granted < a->nr_pages) {
		gfn = xen_page_to_gfn(a->pages[a->nr_granted]);
		ref = gnttab_grant_foreign_access(domid, gfn, 0);
		if (ref < 0)
			return ref;	/* -ENOSPC: the grant table is full */
		a->refs[a->nr_granted++] = ref;
		if (!(a->nr_granted % XCB_PIN_CHUNK))
			cond_resched();
	}
	return 0;
}

/*
 * Fills and grants the directory, last page first, so each knows the next.
 *
 * Each page is a struct xcuda_page_directory, which has the layout of
 * struct xen_page_directory in drivers/xen/xen-front-pgdir-shbuf.c: the
 * next page's grant first (0 ends the chain), then 1023 grants.  That
 * helper cannot build it for us: there the frontend owns the directory
 * pages and grants them to the backend (which, for a buffer of its own,
 * fills in the grants), while here the backend owns the buffer and the
 * directory alike and grants both to the guest; the directory pages are
 * read-only to the guest so that it cannot rewrite the list it walks.
 */
static int xcb_arena_grant_dir(struct xcb_arena *a, domid_t domid)
{
	struct xcuda_page_directory *dir;
	unsigned long first, i, cnt, gfn;
	grant_ref_t next = 0;
	unsigned int d;
	int ref;

	for (d = a->nr_dir; d-- > 0;) {
		a->dir_pages[d] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!a->dir_pages[d])
			return -ENOMEM;
		dir = page_address(a->dir_pages[d]);
		dir->next = cpu_to_le32(next);
		first = (unsigned long)d * XCUDA_DIR_REFS;
		cnt = min_t(unsigned long, a->nr_pages - first, XCUDA_DIR_REFS);
		for (i = 0; i < cnt; i++)
			dir->refs[i] = cpu_to_le32(a->refs[first + i]);
		gfn = xen_page_to_gfn(a->dir_pages[d]);
		ref = gnttab_grant_foreign_access(domid, gfn, 1);
		if (ref < 0)
			return ref;
		a->dir_refs[d] = ref;
		next = ref;
	}
	return 0;
}

/*
 * An arena of @size bytes, a non-zero multiple of the page size, with
 * nothing pinned or granted yet; an ERR_PTR() without memory.
 */
struct xcb_arena *xcb_arena_alloc(u64 size)
{
	struct xcb_arena *a;

	BUILD_BUG_ON(PAGE_SIZE != XCUDA_PAGE_SIZE);
	BUILD_BUG_ON(sizeof(struct xcuda_page_directory) != XCUDA_PAGE_SIZE);

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return ERR_PTR(-ENOMEM);
	a->nr_pages = size >> PAGE_SHIFT;
	a->nr_dir = DIV_ROUND_UP(a->nr_pages, XCUDA_DIR_REFS);
	a->pages = kvcalloc(a->nr_pages, sizeof(*a->pages), GFP_KERNEL);
	a->refs = kvcalloc(a->nr_pages, sizeof(*a->refs), GFP_KERNEL);
	a->dir_pages = kcalloc(a->nr_dir, sizeof(*a->dir_pages), GFP_KERNEL);
	a->dir_refs = kcalloc(a->nr_dir, sizeof(*a->dir_refs), GFP_KERNEL);
	if (!a->pages || !a->refs || !a->dir_pages || !a->dir_refs) {
		xcb_arena_free(a);
		return ERR_PTR(-ENOMEM);
	}
	return a;
}

/*
 * Pins the worker's [addr, addr + size of @a) and grants it, and the
 * directory, to @domid.  On failure what was granted stays granted: the
 * caller ends it like any arena's grants (xcb_arena_end()).
 */
int xcb_arena_grant(struct xcb_arena *a, domid_t domid, u64 addr)
{
	int err;

	err = xcb_arena_pin(a, addr);
	if (err)
		return err;
	err = xcb_arena_grant_pages(a, domid);
	if (err)
		return err;
	return xcb_arena_grant_dir(a, domid);
}
