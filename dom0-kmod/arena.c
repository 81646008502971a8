// SPDX-License-Identifier: GPL-2.0
/*
 * A session's arena: the worker's pages, pinned and granted to the guest,
 * and the read-only chain of directory pages that lists their grants
 * (the format is in xcuda/xen.h).
 *
 * The guest can map any grant made to its domain without being told the
 * reference, so every grant is ended the safe way, including on the
 * failure path: gnttab_end_foreign_access() takes a page reference of its
 * own and keeps the page until the guest has unmapped it.  The pin only
 * keeps the worker's pages in place while the grants stand.
 */
#define pr_fmt(fmt) "xcuda-back: " fmt

#include <linux/err.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <xen/grant_table.h>
#include <xen/page.h>

#include "common.h"

/* Pages pinned per call, then a chance to reschedule. */
#define XCB_PIN_CHUNK		512

void xcb_arena_free(struct xcb_arena *a)
{
	unsigned long i;
	unsigned int d;

	/*
	 * Directory pages are granted from the last one down; ending the
	 * grant frees the page once the guest has let go of it.
	 */
	for (d = 0; a->dir_pages && d < a->nr_dir; d++) {
		if (!a->dir_pages[d])
			continue;
		if (d >= a->nr_dir - a->nr_dir_granted)
			gnttab_end_foreign_access(a->dir_refs[d],
						  a->dir_pages[d]);
		else
			__free_page(a->dir_pages[d]);
	}
	for (i = 0; i < a->nr_granted; i++) {
		/* The grant's own reference, dropped when it really ends. */
		get_page(a->pages[i]);
		gnttab_end_foreign_access(a->refs[i], a->pages[i]);
		if (!(i % XCB_PIN_CHUNK))
			cond_resched();
	}
	/* The guest may have written them behind the page tables' back. */
	unpin_user_pages_dirty_lock(a->pages, a->nr_pinned, true);
	kvfree(a->pages);
	kvfree(a->refs);
	kfree(a->dir_pages);
	kfree(a->dir_refs);
	kfree(a);
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
		a->nr_dir_granted++;
		next = ref;
	}
	return 0;
}

/*
 * Pins the worker's [addr, addr + size) and grants it to @domid; size is
 * a non-zero multiple of the page size.  An ERR_PTR() on failure, with
 * everything undone.
 */
struct xcb_arena *xcb_arena_grant(domid_t domid, u64 addr, u64 size)
{
	struct xcb_arena *a;
	int err;

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
	err = -ENOMEM;
	if (!a->pages || !a->refs || !a->dir_pages || !a->dir_refs)
		goto fail;

	err = xcb_arena_pin(a, addr);
	if (err)
		goto fail;
	err = xcb_arena_grant_pages(a, domid);
	if (err)
		goto fail;
	err = xcb_arena_grant_dir(a, domid);
	if (err)
		goto fail;
	return a;

fail:
	xcb_arena_free(a);
	return ERR_PTR(err);
}
