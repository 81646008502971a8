/* SPDX-License-Identifier: MIT */
/*
 * Internals of the guest library: the session with xcudad, the arena
 * allocator, per-thread state and the registries of fatbinaries, kernels,
 * variables and memory ranges.  The exported CUDA API (api_*.c) is built
 * on these.
 */
#ifndef XCUDA_GUEST_H
#define XCUDA_GUEST_H

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "xcuda/calls.h"
#include "xcuda/launch.h"
#include "transport.h"

/* ---- errors (errors.c) ---- */

const char *xc_error_name(int err);
/* The CUDA error for an errno that xcuda-back answered (negative). */
cudaError_t xc_errno_to_cuda(int err);
/* Whether @err leaves the context unusable until a device reset. */
int xc_error_sticky(cudaError_t err);
const char *xc_error_string(int err);
/* Records @err as the calling thread's last error unless it is success. */
cudaError_t xc_ret(cudaError_t err);
cudaError_t xc_last_error(int reset);
/* Sets the thread's last error as it was (the driver API's runtime calls). */
void xc_set_last_error(cudaError_t err);

/* Logs once per @key (a static flag) to stderr unless XCUDA_QUIET=1. */
void xc_warn_once(int *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void xc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the arena (arena.c) ---- */

struct xc_arena;

struct xc_arena *xc_arena_new(uint64_t base, uint64_t size);
void xc_arena_free_all(struct xc_arena *a);
/* Returns an offset, or UINT64_MAX when nothing fits. */
uint64_t xc_arena_alloc(struct xc_arena *a, uint64_t size, uint64_t align);
/* Frees the block at @off; returns its size, or 0 if none starts there. */
uint64_t xc_arena_release(struct xc_arena *a, uint64_t off);
/* The size of the block that contains @off, its start in *start. */
uint64_t xc_arena_find(struct xc_arena *a, uint64_t off, uint64_t *start);

/* ---- the session (session.c) ---- */

#define XC_STAGING_DEFAULT	(32u << 20)
#define XC_CHUNK_DEFAULT	(4u << 20)
/* Arena buffers one generated call may name. */
#define XC_XFER_MAX		8

struct xc_pending {
	uint64_t id;
	uint16_t op;
	uint8_t state;		/* XC_P_* */
	uint8_t posted;
	uint64_t staging;	/* arena offset to free on answer, or ~0 */
	struct xcuda_response rsp;
};

enum { XC_P_FREE, XC_P_WAIT, XC_P_DONE };

struct xc_session {
	struct xc_transport t;
	pthread_mutex_t lock;		/* the ring, ids, pending[] */
	uint64_t next_id;
	unsigned int inflight;
	struct xc_pending *pending;	/* ring_slots entries, by id */
	int dead;			/* cudaError_t once the peer is gone */
	cudaError_t latched;		/* first failed posted call */
	cudaError_t sticky;		/* the context is broken: this error */
	struct xc_arena *staging;	/* [0, staging_size) */
	struct xc_arena *heap;		/* pinned host allocations */
	uint64_t staging_size;
	uint64_t chunk;
	struct xcuda_open_res info;
	/* Registered memory's twins in the arena (hostreg_twin.c). */
	struct xc_twin *twins;
	unsigned int ntwins, captwins;
};

/*
 * Returns the session, opening it on first use; NULL with *err set when
 * xcudad cannot be reached (then every call answers *err).
 */
struct xc_session *xc_session_get(cudaError_t *err);
/*
 * How many runtime calls this thread made (each binds its device's
 * primary context, natively): the driver API compares two counts.
 */
unsigned int xc_runtime_called(void);
/*
 * Epochs that other guest libraries compare to know their copies of
 * some state current: a primary context's (changed by a reset or its
 * flags), and the streams' (one destroyed: its handle may come back).
 */
void xc_ctx_changed(void);
unsigned int xc_ctx_epoch(void);
void xc_stream_gone(void);
unsigned int xc_stream_epoch(void);
/* The session if one is open; never opens one. */
struct xc_session *xc_session_peek(void);

/*
 * One round trip for @op: @args_len argument bytes, up to @res_len result
 * bytes; records a failure as the thread's last error.  Code calls the
 * typed xc_call_<op>() of xcuda/guest_calls.h rather than this.
 */
cudaError_t xc_forward(uint16_t op, const void *args, size_t args_len,
		       void *res, size_t res_len);
/* Posts @op without waiting; its error comes back later. */
cudaError_t xc_post(uint16_t op, const void *args, size_t args_len);

/* A buffer that travels through the arena with a generated call. */
enum {
	XC_XFER_IN = 1,
	XC_XFER_OUT = 2,
	XC_XFER_INOUT = 3,
	XC_XFER_KEEP = 4,	/* copied back even when CUDA fails */
};

struct xc_xfer {
	void *ptr;		/* the caller's buffer; NULL travels as NULL */
	uint64_t len;		/* bytes; 0 is NULL, UINT64_MAX is too long */
	int dir;		/* XC_XFER_* */
	struct xcuda_extent *ext;	/* in the arguments: filled here */
};

/*
 * xc_forward() for a call whose arguments name arena extents: stages
 * each buffer in the arena (copying it in unless it is only an output),
 * fills its extent in @args, and copies outputs back on success.
 */
cudaError_t xc_forward_xfer(uint16_t op, void *args, size_t args_len,
			    void *res, size_t res_len, struct xc_xfer *x,
			    unsigned int n);
/*
 * The driver API's round trips (guest-lib/driver/): the call's own
 * status as the worker answered it, a CUresult, with nothing recorded as
 * the runtime's last error; a session that cannot be reached answers
 * the runtime's code for it (xc_drv_result() maps it).
 */
int xc_drv_forward(uint16_t op, const void *args, size_t args_len,
		   void *res, size_t res_len);
int xc_drv_forward_xfer(uint16_t op, void *args, size_t args_len,
			void *res, size_t res_len, struct xc_xfer *x,
			unsigned int n);
/* Bytes of @s with its NUL, 0 for NULL, UINT64_MAX if over @max. */
uint64_t xc_strsize(const char *s, uint64_t max);
/* Bytes of a buffer of @len, at most @max; 0 for NULL or len <= 0. */
uint64_t xc_bufsize(const void *p, long long len, uint64_t max);
/*
 * Bytes of an array of @count elements of @size: 0 for NULL or none,
 * UINT64_MAX when over @max (the call then fails as invalid).
 */
uint64_t xc_arraysize(const void *p, long long count, size_t size,
		      uint64_t max);
/* Folds answers already in and any latched error into the last error. */
void xc_poll_latched(void);
/*
 * The session, and the error every GPU call must answer now: the peer is
 * gone, or the worker's CUDA runtime failed to initialise.
 */
cudaError_t xc_ready(struct xc_session **s);

/* Fills the common header of @req for @op, with @len argument bytes. */
void xc_req_init(struct xcuda_request *req, uint16_t op, uint16_t len);

/*
 * Synchronous call: sends @req and waits for its answer, copying up to
 * @res_len result bytes to @res.  Returns the call's status, or an error
 * latched from an earlier posted call if the call itself succeeded.
 */
cudaError_t xc_call(struct xc_session *s, struct xcuda_request *req,
		    void *res, size_t res_len);
/*
 * One round trip with the lock held, copying up to @res_len result bytes
 * (zeros past a short answer): the call's own status, which leaves an
 * error latched from an earlier posted call latched.
 */
cudaError_t xc_round_trip_locked(struct xc_session *s,
				 struct xcuda_request *req, void *res,
				 size_t res_len);
/* Same with the session lock already held. */
cudaError_t xc_call_locked(struct xc_session *s, struct xcuda_request *req,
			   void *res, size_t res_len);
/*
 * Posts @req without waiting; @staging (or ~0) is freed when its answer
 * comes.  Lock held.  Returns an error only when the session is dead.
 */
cudaError_t xc_post_locked(struct xc_session *s, struct xcuda_request *req,
			   uint64_t staging);
/*
 * Submits without waiting and returns the id; xc_wait_locked() then fills
 * @rsp with its answer (its status is the call's) or fails when the
 * session is gone.
 */
cudaError_t xc_send_locked(struct xc_session *s, struct xcuda_request *req,
			   uint64_t staging, uint64_t *id);
cudaError_t xc_wait_locked(struct xc_session *s, uint64_t id,
			   struct xcuda_response *rsp);
/* Takes the latched asynchronous error, if any.  Lock held. */
cudaError_t xc_take_latched(struct xc_session *s);

/* ---- device output (output.c) ---- */

/* An answer carried XCUDA_RSPF_OUTPUT.  Lock held; no round trip. */
void xc_output_note(struct xc_session *s);
/*
 * At the end of a synchronous call: takes the device output the worker
 * holds and writes it to stdout and stderr.  Lock held.
 */
void xc_output_drain_locked(struct xc_session *s);

/*
 * A staging block of at most @want bytes (at least @min), waiting for
 * answers to free one if needed.  Lock held.  Returns the offset or ~0.
 */
uint64_t xc_staging_get(struct xc_session *s, uint64_t want, uint64_t min,
			uint64_t *got);

/*
 * memcpy, split over the helper threads of copy_pool.c when @len is
 * large enough to pay for them.
 */
void xc_par_memcpy(void *dst, const void *src, size_t len);

static inline void *xc_arena_ptr(struct xc_session *s, uint64_t off)
{
	return (uint8_t *)s->t.arena + off;
}

/* True if [p, p+len) lies in the arena; its offset in *off. */
int xc_in_arena(struct xc_session *s, const void *p, size_t len,
		uint64_t *off);

/* ---- per-thread state (thread.c) ---- */

int xc_cur_device(void);
void xc_set_cur_device(int dev);

struct xc_launch_cfg {
	dim3 grid, block;
	size_t shmem;
	cudaStream_t stream;
};

int xc_cfg_push(const struct xc_launch_cfg *cfg);
int xc_cfg_pop(struct xc_launch_cfg *cfg);

/* ---- handles ---- */

/* A guest cudaStream_t/cudaEvent_t is the wire handle as a pointer. */
int xc_stream_handle(cudaStream_t s, int per_thread, uint32_t *h);
int xc_event_handle(cudaEvent_t e, uint32_t *h);
/*
 * Any other object the worker holds for us (spec: "handle") is its wire
 * handle as a pointer too; NULL travels as 0, which the worker refuses.
 */
int xc_handle_in(const void *p, uint32_t *h);
/* A device reset destroyed the per-thread streams made for threads. */
void xc_pt_streams_reset(int dev);
/*
 * The worker's handle of the kernel @func, resolving it if needed; a
 * pointer that is no kernel answers @unknown (CUDA's answer differs from
 * call to call), NULL cudaErrorInvalidDeviceFunction.
 */
cudaError_t xc_func_handle(const void *func, uint32_t *h,
			   cudaError_t unknown);
/*
 * CUDA 13's answer for @func when it names no kernel: NULL
 * cudaErrorInvalidDeviceFunction, any other pointer (taken for a
 * cudaKernel_t) cudaErrorInvalidResourceHandle.
 */
cudaError_t xc_func_unknown(const void *func);

/* ---- arrays (api_arrays.c) ---- */

/*
 * Bytes of one element of @arr (cudaArrayGetInfo), and its width in
 * elements when @width is not NULL.
 */
cudaError_t xc_array_elem_size(cudaArray_const_t arr, uint64_t *es,
			       uint64_t *width);

/* ---- launches (api_launch.c) ---- */

struct xc_func;

/*
 * The configuration errors CUDA reports at the call, from the device's
 * cached limits, and with @f (resolved; may be NULL) its own limits.
 */
/*
 * Launch attributes (api_launch_ex.c): a configuration's as wire records
 * at @w (events as the session's handles), and the node handles the
 * worker answered back into the program's.  The driver's
 * CUlaunchAttribute is laid out as cudaLaunchAttribute.
 */
cudaError_t xc_attrs_out(const cudaLaunchAttribute *attrs, unsigned int n,
			 struct xcuda_launch_attr *w);
void xc_attrs_in(cudaLaunchAttribute *attrs, unsigned int n,
		 const struct xcuda_launch_attr *w);
cudaError_t xc_launch_check(const struct xc_func *f, dim3 g, dim3 b,
			    size_t shmem);
/*
 * Packs @args by the resolved @f's layout (lock held): into @inl when
 * args_size fits in @cap, else into a staging block named by @req's
 * data_off/data_len, whose offset goes to *@blk (else ~0), for the
 * caller to post with or release.
 */
cudaError_t xc_args_pack(struct xc_session *s, const struct xc_func *f,
			 void **args, struct xcuda_request *req,
			 uint8_t *inl, size_t cap, uint64_t *blk);
/*
 * The LAUNCH-layout request @op for @f (lock held): resolved, checked
 * against its limits, arguments packed as xc_args_pack() does.
 */
cudaError_t xc_launch_req(struct xc_session *s, struct xc_func *f,
			  uint16_t op, uint32_t sh, dim3 g, dim3 b,
			  size_t shmem, void **args,
			  struct xcuda_request *req, uint64_t *blk);

/* ---- device properties cache (api_device.c) ---- */

cudaError_t xc_props(int dev, const struct cudaDeviceProp **p);

/* Whether a stream capture may be under way (api_graph.c). */
int xc_capture_maybe(void);

/* ---- memory ranges (ranges.c) ---- */

enum xc_range_kind { XC_R_DEVICE, XC_R_HOST_PINNED, XC_R_HOST_REGISTERED,
		     XC_R_MANAGED };

struct xc_range {
	uintptr_t start;
	size_t size;
	int kind;
	int device;
	uint64_t arena_off;	/* pinned: offset in the arena */
	uint64_t devptr;	/* pinned+mapped: device address */
	unsigned int flags;
};

int xc_range_add(const struct xc_range *r);
/* Removes the range starting exactly at @start of @kind; 0 if found. */
int xc_range_del(uintptr_t start, int kind, struct xc_range *out);
/* Finds the range containing @p; 0 if found. */
int xc_range_find(uintptr_t p, struct xc_range *out);
void xc_range_drop_kind(int kind);
/*
 * Whether [p, p + len) is a non-empty part of one device allocation that
 * this process made: only then may an asynchronous call on it be posted.
 * CUDA checks device pointers at the call, so any other extent goes as a
 * synchronous call, to return CUDA's own answer where CUDA returns it.
 */
int xc_range_dev_extent(uintptr_t p, uint64_t len);
/* Bytes a pitched region spans; 0 if empty, malformed or overflowing. */
uint64_t xc_extent_2d(uint64_t pitch, uint64_t width, uint64_t height);

/* ---- copies (copy.c) ---- */

cudaError_t xc_memcpy(void *dst, const void *src, size_t count,
		      enum cudaMemcpyKind kind, cudaStream_t stream,
		      int async, int per_thread);
cudaError_t xc_memcpy2d(void *dst, size_t dpitch, const void *src,
			size_t spitch, size_t width, size_t height,
			enum cudaMemcpyKind kind, cudaStream_t stream,
			int async, int per_thread);
/* Host-ness of src and dst for a kind: 1 host, 0 device, -1 look. */
int xc_kind_sides(enum cudaMemcpyKind kind, int *src, int *dst);

/* ---- twins of registered memory the worker cannot map (hostreg_twin.c) ---- */

/*
 * The device address of registered memory [@start, @start + @size) that
 * was only recorded: that of a twin in the arena, made now.
 */
cudaError_t xc_twin_devptr(struct xc_session *s, uintptr_t start, size_t size,
			   uint64_t *devptr);
/* cudaHostUnregister: the twin of @start, if any, goes. */
void xc_twin_drop(struct xc_session *s, uintptr_t start);
/* Before a request: the program's changes into the twins. */
void xc_twin_push_locked(struct xc_session *s);
/* After an answer: the device's changes in the twins back. */
void xc_twin_pull_locked(struct xc_session *s);

/* ---- registered memory shared with the worker (hostmem.c) ---- */

/* Pages cudaHostRegister moved onto a memfd that the worker maps. */
struct xc_hostreg {
	uintptr_t ptr;		/* what the program registered */
	size_t size;
	uintptr_t base;		/* the pages moved: [base, base + len) */
	size_t len;
	uint32_t region;	/* the worker's id; 0: none (kept for fork) */
	uint64_t devptr;	/* the device address of base */
	uint64_t dev, ino;	/* the memfd, to tell its mappings by */
	int locked;		/* the pages were mlocked */
};

/*
 * cudaHostRegister's part: moves the pages of [ptr, ptr + size) onto a
 * memfd and registers it with the worker (HOST_REGISTER).  *@moved 0
 * with cudaSuccess: not moved (another transport, memory that cannot
 * move, no room in the worker): record the range, copies are staged.
 * Otherwise *@devptr is @ptr's device address.
 */
cudaError_t xc_hostmem_register(struct xc_session *s, void *ptr,
				size_t size, unsigned int flags,
				uint64_t *devptr, int *moved);
/* HOST_UNREGISTER and the pages back to private memory; *@found 0: none. */
cudaError_t xc_hostmem_unregister(struct xc_session *s, void *ptr,
				  int *found);
/*
 * Whether [p, p + len) lies in one registered region: its id and @p's
 * offset in it.  Copies call it with the session lock held.
 */
int xc_hostmem_find(const void *p, uint64_t len, uint32_t *region,
		    uint64_t *off);
/*
 * The steps, for tests: move @r's pages ([base, base + len), page
 * aligned) onto a new sealed memfd (*@memfd, the caller's to close),
 * filling dev, ino and locked; 0, or -errno with nothing changed.
 */
int xc_hostmem_move(struct xc_hostreg *r, int *memfd);
/* Back onto private anonymous memory, what is still mapped of it. */
int xc_hostmem_unmove(const struct xc_hostreg *r);
/* The table of moved ranges: 0, -EEXIST (region id taken), -ENOMEM. */
int xc_hostmem_track(const struct xc_hostreg *r);
/* Takes the entry registered at exactly @ptr out of it; 0 if found. */
int xc_hostmem_untrack(uintptr_t ptr, struct xc_hostreg *out);

/* ---- managed memory (managed.c, docs/managed-memory.md) ---- */

/* The unit of coherence of managed memory, bytes of host pages. */
#define XC_MG_CHUNK	(2u << 20)

/*
 * Copies @len bytes between the library's own @host mapping of managed
 * memory and @dev, synchronously; no latched error is taken.  Session
 * lock held.  copy.c's is the real one; tests put in their own.
 */
typedef cudaError_t (*xc_mg_copy_fn)(struct xc_session *s, int to_dev,
				     void *host, uint64_t dev, size_t len);
cudaError_t xc_copy_managed_locked(struct xc_session *s, int to_dev,
				   void *host, uint64_t dev, size_t len);
void xc_managed_set_copy(xc_mg_copy_fn fn);
/* Whether any managed range exists (copies then look them up). */
int xc_managed_any(void);
/* Whether [p, p + len) touches managed memory. */
int xc_managed_is(const void *p, size_t len);
/*
 * Maps host pages over [start, start + size) and tracks them: 0, or
 * -EEXIST when the address is taken in this process, -errno otherwise.
 * @var: __managed__ variables (pulled on first access) rather than a new
 * allocation (zeros on both sides); variables in pages that earlier
 * variables mapped join their region.  @s may be NULL (tests).
 */
int xc_managed_map(struct xc_session *s, uintptr_t start, size_t size,
		   int var, int device, unsigned int flags);
/* Unmaps and forgets the range mapped at @start; 0 if there was one. */
int xc_managed_unmap(struct xc_session *s, uintptr_t start, int var);
void xc_managed_forget_all(struct xc_session *s);
/* In xc_send_locked(), before @req goes: pushes and invalidates. */
void xc_managed_before_send(struct xc_session *s,
			    const struct xcuda_request *req);
/* The fault handler's work for @addr: 0 handled, -1 not managed memory. */
int xc_managed_fault(uintptr_t addr);
/* Pulls every chunk [p, p + len) touches that the host does not hold. */
cudaError_t xc_managed_prefetch_host(struct xc_session *s, uint64_t p,
				     uint64_t len);
/* The state of @p's chunk (0 DEVICE, 1 CLEAN, 2 DIRTY), -1 if none. */
int xc_managed_state(uintptr_t p);
/* __cudaRegisterManagedVar and __cudaInitModule. */
void xc_managed_reg_var(void **mod, void **hostp, const char *name,
			size_t size);
int xc_managed_init_module(void **mod);
/* cudaFree's part (api_managed.c): 0 if @p was managed, now unmapped. */
int xc_managed_free(struct xc_session *s, void *p);

/* ---- fatbinaries, kernels and variables (registry.c) ---- */

struct xc_module;

struct xc_func {
	uint32_t magic;
	struct xc_module *mod;
	const void *host_fun;
	char *name;
	uint32_t handle;	/* 0 until resolved with the worker */
	uint32_t nparams;
	uint32_t args_size;
	struct xcuda_param *params;
	int max_dyn_smem;	/* cached limit, -1 unknown */
	int max_threads;	/* threads per block it allows, -1 unknown */
};

#define XC_FUNC_MAGIC 0x78636b66u

struct xc_var {
	struct xc_module *mod;
	const void *host_var;
	char *name;
	size_t size;
	uint64_t dptr;		/* 0 until resolved */
};

void **xc_reg_fatbin(void *wrapper);
void xc_reg_func(void **mod, const char *host_fun, const char *name);
void xc_reg_var(void **mod, const char *host_var, const char *name,
		size_t size);
void xc_unreg_fatbin(void **mod);
/* After cudaDeviceReset: kernels and variables are looked up again. */
void xc_reg_device_reset(void);

/* Finds a kernel by host stub address, or by its cudaKernel_t. */
struct xc_func *xc_func_by_host(const void *host_fun);
struct xc_func *xc_func_by_kernel(const void *kernel);
/* Either: a host stub or a cudaKernel_t we handed out. */
struct xc_func *xc_func_lookup(const void *func);
/* The resolved kernel the worker calls @h, or NULL. */
struct xc_func *xc_func_by_handle(uint32_t h);
/* Uploads its module and learns its layout, once.  Lock held. */
cudaError_t xc_func_resolve(struct xc_session *s, struct xc_func *f);
/* Finds a variable by host shadow address and resolves it. */
cudaError_t xc_var_resolve(struct xc_session *s, const void *host_var,
			   struct xc_var **out);

/*
 * Libraries the program loads (cudaLibrary_t is the struct xc_module).
 * xc_image_unwrap: the fatbinary in nvcc's wrapper, or the image itself;
 * xc_image_size: the bytes of a fatbinary, cubin or PTX image; 0 if it is
 * malformed or over XCUDA_MAX_MODULE.  xc_lib_new copies the image;
 * xc_lib_get finds a live library; xc_lib_kernel gives the one
 * cudaKernel_t of a name (resolved lazily, as registered kernels are);
 * xc_lib_drop forgets a library the caller unloaded.  Loads and lookups
 * hold the session lock.
 */
const void *xc_image_unwrap(const void *image);
uint64_t xc_image_size(const void *image);
struct xc_module *xc_lib_new(const void *image, uint64_t size);
struct xc_module *xc_lib_get(const void *lib);
cudaError_t xc_lib_load(struct xc_session *s, struct xc_module *m);
uint32_t xc_lib_handle(const struct xc_module *m);
void xc_lib_drop(struct xc_module *m);
struct xc_func *xc_lib_kernel(struct xc_module *m, const char *name);
/* VAR_GET in a library; @flags: XCUDA_VAR_MANAGED or 0. */
cudaError_t xc_lib_global(struct xc_session *s, struct xc_module *m,
			  const char *name, uint32_t flags, uint64_t *dptr,
			  uint64_t *size);

/* Typed builders and round trips of every command (generated). */
#include "xcuda/guest_calls.h"

#endif /* XCUDA_GUEST_H */
