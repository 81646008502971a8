// SPDX-License-Identifier: GPL-2.0
/*
 * xcuda-front: the session's arena.
 *
 * The backend grants the arena's pages (Dom0 memory) to this guest and
 * lists their grants in a chain of read-only directory pages (xcuda/xen.h).
 * OPEN copies that list out once; mmap() maps the grants into the
 * process, all at once, writable.
 *
 * An auto-translated guest (PVH, HVM) maps each grant over a page of its
 * own physical address space and puts those pages in the VMA.  A PV guest
 * cannot put a foreign frame into a page table itself: the hypervisor
 * writes each grant straight into the user PTE (GNTMAP_contains_pte).
 * Xen kills a PV guest that clears such a PTE with an ordinary page-table
 * update, so the grants are unmapped through the grant table before the
 * kernel zaps the range: an mmu_interval_notifier on the VMA does it.
 *
 * Why not gntdev (/dev/xen/gntdev), which maps grants into processes too:
 * any process that can open it may map any grant reference offered to
 * this domain, so one guest process could map another's arena.  Here the
 * frontend owns each mapping's lifetime: it unmaps the grants through the
 * grant table before the process's page tables go (PV: the notifier
 * above; auto-translated: our own pages, when the last VMA closes), and
 * ends the session in the backend only after that (release() runs once
 * no VMA is left, and unmaps whatever a failed mmap() left first).  The
 * process never sees a grant reference: they stay in s->refs.
 */
#define pr_fmt(fmt) "xcuda-front: " fmt

#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <xen/features.h>
#include <xen/page.h>
#include <asm/xen/hypercall.h>

#include "common.h"

/* Grant operations per hypercall. */
#define XCF_BATCH	512u

/*
 * guest_avail0 lands in PTE bit 9, which Linux reads as _PAGE_SPECIAL:
 * the kernel then never looks for a struct page behind these PTEs.
 */
#define XCF_PV_FLAGS	(GNTMAP_host_map | GNTMAP_application_map | \
			 GNTMAP_contains_pte | (1 << _GNTMAP_guest_avail0))
#define XCF_HVM_FLAGS	GNTMAP_host_map
#define XCF_DIR_FLAGS	(GNTMAP_host_map | GNTMAP_readonly)

/*
 * Copies one directory page into @buf: maps it read-only, copies, unmaps.
 * On a failed unmap the page may still hold the foreign frame and must
 * not be reused: *pagep is then set to NULL (the page is leaked).
 */
static int xcf_copy_dir(struct page **pagep, grant_ref_t ref, domid_t domid,
			struct xcuda_page_directory *buf)
{
	struct page *page = *pagep;
	void *va = pfn_to_kaddr(page_to_pfn(page));
	struct gnttab_unmap_grant_ref uop;
	struct gnttab_map_grant_ref mop;
	int err;

	gnttab_set_map_op(&mop, (unsigned long)va, XCF_DIR_FLAGS, ref, domid);
	err = gnttab_map_refs(&mop, NULL, pagep, 1);
	if (err)
		return err;
	if (mop.status != GNTST_okay) {
		pr_warn_ratelimited("cannot map directory grant %u of domain %u (%d)\n",
				    ref, domid, mop.status);
		return -EPROTO;
	}
	memcpy(buf, va, sizeof(*buf));
	gnttab_set_unmap_op(&uop, (unsigned long)va, XCF_DIR_FLAGS, mop.handle);
	err = gnttab_unmap_refs(&uop, NULL, pagep, 1);
	if (err || uop.status != GNTST_okay) {
		pr_warn_ratelimited("cannot unmap directory grant %u (%d/%d); leaking a page\n",
				    ref, err, uop.status);
		*pagep = NULL;
		return -EIO;
	}
	return 0;
}

/*
 * Reads the directory chain that starts at @dir_ref: exactly
 * ceil(nr_pages / XCUDA_DIR_REFS) pages.  Returns the grant of every arena
 * page, in order (kvfree() it), or an ERR_PTR().  Whatever the backend
 * wrote is checked on a copy.
 *
 * Each directory page has the layout of struct xen_page_directory in
 * drivers/xen/xen-front-pgdir-shbuf.c: the next page's grant (0 ends the
 * chain), then 1023 grants.  That helper does not fit the other way
 * round, though: even for a buffer the backend allocates (be_alloc) it is
 * the frontend that allocates and grants the directory pages, for the
 * backend to fill in; and it maps the buffer into kernel pages.  Here the
 * backend writes and grants the directory (read-only), which is only
 * copied once, and the arena goes into a process.  The helper also trusts
 * what the other end wrote; this checks it all.
 */
grant_ref_t *xcf_arena_fetch(domid_t domid, u32 dir_ref, u32 nr_pages)
{
	unsigned int ndir = DIV_ROUND_UP(nr_pages, XCUDA_DIR_REFS);
	unsigned int d, k, cnt, done = 0;
	struct xcuda_page_directory *dir;
	struct page *page = NULL;
	grant_ref_t *refs;
	u32 ref = dir_ref;
	int err;

	BUILD_BUG_ON(sizeof(*dir) != XEN_PAGE_SIZE);

	refs = kvmalloc_array(nr_pages, sizeof(*refs), GFP_KERNEL);
	dir = kmalloc(sizeof(*dir), GFP_KERNEL);
	if (!refs || !dir) {
		err = -ENOMEM;
		goto out;
	}
	err = gnttab_alloc_pages(1, &page);
	if (err) {
		page = NULL;
		goto out;
	}

	for (d = 0; d < ndir; d++) {
		err = -EPROTO;
		if (ref < GNTTAB_NR_RESERVED_ENTRIES)
			goto out;
		err = xcf_copy_dir(&page, ref, domid, dir);
		if (err)
			goto out;
		err = -EPROTO;
		cnt = min_t(unsigned int, nr_pages - done, XCUDA_DIR_REFS);
		for (k = 0; k < cnt; k++) {
			refs[done] = le32_to_cpu(dir->refs[k]);
			if (refs[done++] < GNTTAB_NR_RESERVED_ENTRIES)
				goto out;
		}
		/* Only the last page has unused entries: all zero. */
		for (; k < XCUDA_DIR_REFS; k++)
			if (dir->refs[k])
				goto out;
		/* A next page on all but the last: no loop, no tail. */
		ref = le32_to_cpu(dir->next);
		if ((d + 1 == ndir) != !ref)
			goto out;
		cond_resched();
	}
	err = 0;

out:
	if (page)
		gnttab_free_pages(1, &page);
	kfree(dir);
	if (err) {
		pr_warn_ratelimited("arena directory of session rejected (%d)\n",
				    err);
		kvfree(refs);
		return ERR_PTR(err);
	}
	return refs;
}

/*
 * PV: takes the grants out of the user PTEs, which the hypervisor clears;
 * a->lock held.
 */
static void xcf_unmap_pv_locked(struct xcf_arena *a, unsigned int nr)
{
	struct gnttab_unmap_grant_ref *u;
	unsigned int off, n, i;

	lockdep_assert_held(&a->lock);
	for (off = 0; off < nr && a->live; off += n) {
		n = min(nr - off, XCF_BATCH);
		if (HYPERVISOR_grant_table_op(GNTTABOP_unmap_grant_ref,
					      a->unmap + off, n))
			pr_warn_ratelimited("grant unmap hypercall failed\n");
		for (i = 0; i < n; i++) {
			u = &a->unmap[off + i];
			if (u->handle == INVALID_GRANT_HANDLE)
				continue;
			if (u->status != GNTST_okay)
				pr_warn_ratelimited("cannot unmap arena page %u (%d)\n",
						    off + i, u->status);
			u->handle = INVALID_GRANT_HANDLE;
			a->live--;
		}
		cond_resched();
	}
}

/*
 * Auto-translated: unmaps the grants from our pages, waiting for any
 * page reference beyond ours to go, and frees the pages.  A page whose
 * grant stays mapped is never given back.  a->lock held.
 */
static void xcf_unmap_hvm_locked(struct xcf_arena *a, unsigned int nr)
{
	struct gntab_unmap_queue_data q = {
		.unmap_ops = a->unmap,
		.pages = a->pages,
		.count = nr,
	};
	bool leak = false;
	unsigned int i;

	lockdep_assert_held(&a->lock);
	if (a->live && gnttab_unmap_refs_sync(&q))
		leak = true;
	for (i = 0; i < nr; i++) {
		if (a->unmap[i].handle == INVALID_GRANT_HANDLE)
			continue;
		if (a->unmap[i].status != GNTST_okay)
			leak = true;
		a->unmap[i].handle = INVALID_GRANT_HANDLE;
	}
	a->live = 0;
	if (leak)
		pr_warn_ratelimited("arena grants did not unmap; leaking %u pages\n",
				    nr);
	else
		gnttab_free_pages(nr, a->pages);
	kvfree(a->pages);
	a->pages = NULL;
}

static bool xcf_invalidate(struct mmu_interval_notifier *mn,
			   const struct mmu_notifier_range *range,
			   unsigned long cur_seq)
{
	struct xcf_arena *a = container_of(mn, struct xcf_arena, notifier);
	struct xcf_session *s = container_of(a, struct xcf_session, arena);

	/* Soft-dirty tracking skips VM_PFNMAP ranges: no PTE changes. */
	if (range->event == MMU_NOTIFY_SOFT_DIRTY)
		return true;
	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&a->lock);
	/* Any change of the range loses the whole arena. */
	if (a->live)
		xcf_unmap_pv_locked(a, s->nr_pages);
	mutex_unlock(&a->lock);
	return true;
}

static const struct mmu_interval_notifier_ops xcf_mn_ops = {
	.invalidate = xcf_invalidate,
};

/* Takes the final unmap: the last VMA is gone, so are its PTEs. */
static void xcf_arena_unmap(struct xcf_session *s)
{
	struct xcf_arena *a = &s->arena;

	mutex_lock(&a->lock);
	if (a->pages)
		xcf_unmap_hvm_locked(a, s->nr_pages);
	else if (a->live)
		xcf_unmap_pv_locked(a, s->nr_pages);
	mutex_unlock(&a->lock);
	if (a->notifier_on) {
		mmu_interval_notifier_remove(&a->notifier);
		a->notifier_on = false;
	}
	kvfree(a->unmap);
	a->unmap = NULL;
}

static void xcf_vm_open(struct vm_area_struct *vma)
{
	struct xcf_session *s = vma->vm_private_data;

	/* mremap() copies the VMA before it drops the old one. */
	mutex_lock(&s->arena.lock);
	s->arena.vmas++;
	mutex_unlock(&s->arena.lock);
}

static void xcf_vm_close(struct vm_area_struct *vma)
{
	struct xcf_session *s = vma->vm_private_data;
	bool last;

	mutex_lock(&s->arena.lock);
	last = !--s->arena.vmas;
	mutex_unlock(&s->arena.lock);
	if (last)
		xcf_arena_unmap(s);
}

static int xcf_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static int xcf_vm_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static int xcf_vm_mprotect(struct vm_area_struct *vma, unsigned long start,
			   unsigned long end, unsigned long newflags)
{
	return -EINVAL;
}

static const struct vm_operations_struct xcf_vm_ops = {
	.open = xcf_vm_open,
	.close = xcf_vm_close,
	.may_split = xcf_vm_may_split,
	.mremap = xcf_vm_mremap,
	.mprotect = xcf_vm_mprotect,
};

/* Notes the machine address of each PTE the grants will go into. */
static int xcf_find_pte(pte_t *pte, unsigned long addr, void *data)
{
	struct xcf_arena *a = data;
	unsigned long i = (addr - a->start) >> PAGE_SHIFT;

	gnttab_set_unmap_op(&a->unmap[i], arbitrary_virt_to_machine(pte).maddr,
			    XCF_PV_FLAGS, INVALID_GRANT_HANDLE);
	return 0;
}

/* Auto-translated: the kernel address that page @i is known by. */
static unsigned long xcf_page_addr(struct xcf_arena *a, unsigned int i)
{
	return (unsigned long)pfn_to_kaddr(page_to_pfn(a->pages[i]));
}

static int xcf_map_batch(struct xcf_session *s, unsigned int off,
			 unsigned int n, struct gnttab_map_grant_ref *mop)
{
	struct xcf_arena *a = &s->arena;
	bool pv = !a->pages;
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		if (pv)
			gnttab_set_map_op(&mop[i], a->unmap[off + i].host_addr,
					  XCF_PV_FLAGS, s->refs[off + i],
					  s->domid);
		else
			gnttab_set_map_op(&mop[i], xcf_page_addr(a, off + i),
					  XCF_HVM_FLAGS, s->refs[off + i],
					  s->domid);
	}
	if (pv)
		err = HYPERVISOR_grant_table_op(GNTTABOP_map_grant_ref, mop, n);
	else
		err = gnttab_map_refs(mop, NULL, a->pages + off, n);
	for (i = 0; i < n; i++) {
		if (mop[i].status != GNTST_okay) {
			if (!err)
				err = mop[i].status == GNTST_no_device_space ?
					-ENOMEM : -EIO;
			continue;
		}
		a->unmap[off + i].handle = mop[i].handle;
		a->live++;
	}
	if (err)
		pr_warn_ratelimited("cannot map arena grants %u.. of domain %u (%d)\n",
				    off, s->domid, err);
	return err;
}

static int xcf_map_all(struct xcf_session *s)
{
	struct gnttab_map_grant_ref *mop;
	unsigned int off, n;
	int err = 0;

	mop = kmalloc_array(XCF_BATCH, sizeof(*mop), GFP_KERNEL);
	if (!mop)
		return -ENOMEM;
	mutex_lock(&s->arena.lock);
	for (off = 0; off < s->nr_pages && !err; off += n) {
		n = min(s->nr_pages - off, XCF_BATCH);
		err = xcf_map_batch(s, off, n, mop);
		cond_resched();
	}
	mutex_unlock(&s->arena.lock);
	kfree(mop);
	return err;
}

static int xcf_mmap_pv(struct xcf_session *s, struct vm_area_struct *vma)
{
	struct xcf_arena *a = &s->arena;
	unsigned long size = vma->vm_end - vma->vm_start;
	int err;

	/* No struct page behind the PTEs: nothing may pin them. */
	vma->vm_flags |= VM_PFNMAP;
	err = mmu_interval_notifier_insert_locked(&a->notifier, vma->vm_mm,
						  vma->vm_start, size,
						  &xcf_mn_ops);
	if (err)
		return err;
	a->notifier_on = true;
	/* The mmap lock is held: the PTEs found here stay. */
	err = apply_to_page_range(vma->vm_mm, vma->vm_start, size,
				  xcf_find_pte, a);
	if (!err)
		err = xcf_map_all(s);
	if (err) {
		/* mmap() fails; the core then zaps the range without close. */
		xcf_arena_unmap(s);
	}
	return err;
}

static int xcf_mmap_hvm(struct xcf_session *s, struct vm_area_struct *vma)
{
	struct xcf_arena *a = &s->arena;
	unsigned int i;
	int err;

	a->pages = kvcalloc(s->nr_pages, sizeof(*a->pages), GFP_KERNEL);
	if (!a->pages)
		return -ENOMEM;
	err = gnttab_alloc_pages(s->nr_pages, a->pages);
	if (err) {
		kvfree(a->pages);
		a->pages = NULL;
		return err;
	}
	for (i = 0; i < s->nr_pages; i++)
		gnttab_set_unmap_op(&a->unmap[i], xcf_page_addr(a, i),
				    XCF_HVM_FLAGS, INVALID_GRANT_HANDLE);
	err = xcf_map_all(s);
	if (!err)
		err = vm_map_pages(vma, a->pages, s->nr_pages);
	if (err && !a->live) {
		xcf_arena_unmap(s);
		return err;
	}
	/*
	 * Pages already in the VMA keep their grants until release(): the
	 * core zaps them only after mmap() returned the error.
	 */
	return err;
}

int xcf_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct xcf_session *s = file->private_data;
	struct xcf_arena *a = &s->arena;
	int err;

	mutex_lock(&s->lock);
	err = -EINVAL;
	if (s->state != XCF_S_OPEN)
		goto out;
	err = -EBUSY;
	if (s->mmapped)
		goto out;
	err = -EINVAL;
	if (vma->vm_pgoff || vma->vm_end - vma->vm_start != s->map_size)
		goto out;
	/* Shared, writable, never executable: no fault can happen on it. */
	if (!(vma->vm_flags & VM_SHARED) || !(vma->vm_flags & VM_WRITE) ||
	    (vma->vm_flags & VM_EXEC))
		goto out;
	err = -ENOMEM;
	a->unmap = kvcalloc(s->nr_pages, sizeof(*a->unmap), GFP_KERNEL);
	if (!a->unmap)
		goto out;

	s->mmapped = true;
	a->start = vma->vm_start;
	a->vmas = 1;
	vma->vm_flags |= VM_IO | VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_private_data = s;
	vma->vm_ops = &xcf_vm_ops;

	if (xen_feature(XENFEAT_auto_translated_physmap))
		err = xcf_mmap_hvm(s, vma);
	else
		err = xcf_mmap_pv(s, vma);
out:
	mutex_unlock(&s->lock);
	return err;
}

/* The file is closed: no VMA is left, nor any PTE of the arena. */
void xcf_arena_release(struct xcf_session *s)
{
	if (s->arena.unmap)
		xcf_arena_unmap(s);
	kvfree(s->refs);
	s->refs = NULL;
}
