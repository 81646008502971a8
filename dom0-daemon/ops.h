/* SPDX-License-Identifier: MIT */
/*
 * The command handlers.  The dispatch table and the worker side of
 * generated calls come from the call description (dispatch.c, generated);
 * the hand-written handlers are declared, typed, in
 * xcuda/worker_handlers.h.  A handler returns the cudaError_t to answer
 * with and fills its result structure.
 */
#ifndef XCUDAD_OPS_H
#define XCUDAD_OPS_H

#include <cuda.h>
#include <cublasLt.h>
#include <cublas_api.h>
#include <curand.h>
#include <cufftXt.h>
#include <nvml.h>

#include "worker.h"
#include "xcuda/worker_handlers.h"

typedef int (*xd_handler_t)(struct xd_session *s, struct xd_call *call);

/* Indexed by opcode; NULL for unknown opcodes. */
extern const xd_handler_t xd_handlers[XCUDA_OP_MAX];

/*
 * What an ops file sets up and tears down in every session.  Each file
 * registers its own with XD_SESSION_HOOKS, so the worker names none of
 * them; fini hooks run by increasing @order (streams before the modules
 * and memory they use).
 */
struct xd_session_hooks {
	int order;
	int (*init)(struct xd_session *s);	/* 0 or -errno */
	void (*fini)(struct xd_session *s);
};

#define XD_SESSION_HOOKS(name, ord, in, fi)				\
	static const struct xd_session_hooks xd_hooks_##name		\
	__attribute__((used, section("xd_session_hooks"), aligned(8))) = \
		{ (ord), (in), (fi) }

int xd_session_hooks_init(struct xd_session *s);
void xd_session_hooks_fini(struct xd_session *s);

/* Lookups the generated handlers use: 0 or a cudaError_t. */
int xd_kernel_lookup(struct xd_session *s, uint32_t h, cudaKernel_t *k);

/*
 * Graph kernel nodes: an argument vector (the caller frees *@argv) over
 * the packed bytes @args of kernel @h, which must be its whole layout;
 * and back, the packed bytes of CUDA's @argv for @kernel and its handle
 * (cudaErrorNotSupported for a kernel the session does not know).
 */
int xd_kernel_argv(struct xd_session *s, uint32_t h, uint8_t *args,
		   uint32_t len, cudaKernel_t *k, void ***argv);
int xd_kernel_pack(struct xd_session *s, const void *kernel, void **argv,
		   uint8_t *out, uint32_t cap, uint32_t *h, uint32_t *len);
/* Graph nodes are CUDA's, never the session's to destroy (ops_graph.c). */
void xd_graph_node_keep(cudaGraphNode_t node);
void xd_user_object_keep(cudaUserObject_t object);
/* Drops graph @gh's handle, its nodes' and those of the graphs they own. */
void xd_graph_forget(struct xd_session *s, uint32_t gh);
/*
 * The dot text CUDA wrote to @fd, in a new buffer of @room bytes: more
 * than @room or XCUDA_GDOT_MAX is cudaErrorMemoryAllocation.
 */
int xd_dot_take(int fd, uint32_t room, uint8_t **buf, uint64_t *size);

/*
 * The IPC table (ipc_table.h) for the session: records @h (XD_IPC_HANDLE
 * bytes) of @kind as its export, 0 or cudaErrorMemoryAllocation (a full
 * table keeps the handle from the guest); whether it may open @h, 0 or
 * cudaErrorInvalidValue (only its own domain's handles).
 */
int xd_ipc_export(struct xd_session *s, int kind, const void *h);
int xd_ipc_may_open(struct xd_session *s, int kind, const void *h);
/*
 * The driver's function @name (its exported symbol) from libcuda.so.1,
 * which xcudad never links; NULL without a driver (ops_driver.c).
 */
void *xd_drv_sym(const char *name);
/* Unloads a module the driver API loaded, and frees its image. */
void xd_drv_module_unload(CUmodule m);
/* Destroys a session's link state and what the worker kept for it. */
void xd_drv_link_destroy(CUlinkState state);
/* Releases a session's allocation handle (cuMemCreate's). */
void xd_drv_mem_release(CUmemGenericAllocationHandle h);

/*
 * A function @fn of a library xcudad loads at run time, found by @lookup
 * (xd_drv_sym, xd_blas_sym, ...) and typed as its header declares it;
 * looked up once per place that calls it (dlsym costs more than many of
 * the calls).
 */
#define XD_SYM(lookup, fn)						\
	({								\
		static void *p_;					\
		void *q_ = __atomic_load_n(&p_, __ATOMIC_ACQUIRE);	\
									\
		if (!q_) {						\
			q_ = lookup(#fn);				\
			__atomic_store_n(&p_, q_, __ATOMIC_RELEASE);	\
		}							\
		(__typeof__(&fn))q_;					\
	})

/* A function of the real driver, typed as cuda.h declares it. */
#define XD_DRV(fn) XD_SYM(xd_drv_sym, fn)

/*
 * cuBLAS's and cuBLASLt's function @name from the real libcublas.so.13
 * and libcublasLt.so.13, loaded at run time (ops_blas.c): NULL without.
 */
void *xd_blas_sym(const char *name);
void *xd_blaslt_sym(const char *name);
/*
 * A math library's @soname from XCUDA_MATH_LIBS, else the loader's path,
 * else $CUDA_HOME/lib64 (ops_blas.c): its dlopen handle, or NULL.
 */
void *xd_math_open(const char *soname);
/*
 * cuRAND's function @name from the real libcurand.so.10 (ops_curand.c):
 * NULL without.  What a session leaves: its generators and Poisson
 * distributions go.
 */
void *xd_curand_sym(const char *name);
void xd_curand_destroy(curandGenerator_t g);
void xd_curand_dist_destroy(curandDiscreteDistribution_t d);
/*
 * cuFFT's function @name from the real libcufft.so.12 (ops_cufft.c):
 * NULL without.  A plan the session leaves goes.
 */
void *xd_cufft_sym(const char *name);
void xd_cufft_destroy(cufftHandle plan);
/*
 * A scalar argument of a math library: NULL when the program passed
 * NULL, else the worker's copy of its value (host pointer mode) or its
 * device address.
 */
static inline void *xd_scalar(uint32_t null, int host, void *copy,
			      uint64_t addr)
{
	if (null)
		return NULL;
	return host ? copy : (void *)(uintptr_t)addr;
}
/*
 * NVML's function @name from the real libnvidia-ml.so.1, loaded at run
 * time (ops_nvml.c): NULL without.  The session's GPU @index as the
 * worker's NVML device, and back: 0 or an nvmlReturn_t (an NVML device
 * of no GPU of the session's is NVML_ERROR_NOT_FOUND).
 */
void *xd_nvml_sym(const char *name);
int xd_nvml_dev_of(struct xd_session *s, uint32_t index, nvmlDevice_t *dev);
int xd_nvml_dev_index(struct xd_session *s, nvmlDevice_t dev,
		      uint32_t *index);
/* 1 when @h's pointer mode puts scalars in host memory. */
int xd_blas_host_scalars(cublasHandle_t h);
/*
 * Whether @blob, @len bytes the guest sent, holds exactly @n cuBLASLt
 * objects of @kinds (include/xcuda/blaslt.h): 0, or -1.
 */
int xd_lt_check(const uint8_t *blob, uint64_t len, const uint32_t *kinds,
		int n);
/* A handle the session leaves goes. */
void xd_blas_destroy(cublasHandle_t h);

/* The size of the device allocation that starts at @p, 0 if unknown. */
uint64_t xd_alloc_size(const void *p);

/* Arena extents named in a command's arguments (struct xcuda_extent). */
int xd_extent_ok(const struct xd_session *s, const struct xcuda_extent *e);
/*
 * What needs the guest's own memory (XD_CHAN_REMOTE in transport.h):
 * cudaErrorNotSupported, with a warning that names @what, when the guest
 * is on another host; else 0.
 */
int xd_remote_refuse(struct xd_session *s, const char *what);
/*
 * An asynchronous copy with a side in the arena on @st, on a relayed
 * session: when @st captures, the copy is recorded into a graph, whose
 * launches move its bytes (graph_remote.c), and writes nothing now: the
 * transport is told so (drop_out).  Returns 1 then, else 0.
 */
int xd_remote_capturing(struct xd_session *s, cudaStream_t st);
/*
 * The handler wrote arena rows the command's description does not name
 * (transport.h, note_out): tells a transport that copies the arena.
 */
static inline void xd_arena_wrote(struct xd_session *s, uint64_t off,
				  uint64_t width, uint64_t pitch,
				  uint64_t rows)
{
	if (s->chan->ops && s->chan->ops->note_out && width && rows)
		s->chan->ops->note_out(s->chan, off, width, pitch, rows);
}
/* The arena offset of @p, a worker address, or -1 when it is not there. */
int64_t xd_arena_off(const struct xd_session *s, const void *p);
/*
 * A private copy of an extent of at most @max bytes (the guest may change
 * the arena at any time), or NULL: len 0, too long, or no memory.
 */
uint8_t *xd_arena_copy(struct xd_session *s, const struct xcuda_extent *e,
		       uint32_t max);
/* Writes a result buffer back to its extent. */
void xd_arena_put(struct xd_session *s, const struct xcuda_extent *e,
		  const uint8_t *buf);
/*
 * Writes the text @text to extent @e (which is not empty), cut to fit
 * with its NUL, the rest zero; *@len is its length.  0, or -1 without
 * memory.
 */
int xd_arena_put_text(struct xd_session *s, const struct xcuda_extent *e,
		      const char *text, uint32_t *len);

/* Bytes a 2D host region spans; 0 with *ok clear when it cannot exist. */
uint64_t xd_span_2d(uint64_t pitch, uint64_t width, uint64_t height, int *ok);

/*
 * Launches (ops_module.c): the kernel @func and the session's argument
 * vector, built from a private copy of the @len packed bytes at @src,
 * which must be the kernel's args_size.  0 or a cudaError_t.
 */
int xd_launch_argv(struct xd_session *s, uint32_t func, const uint8_t *src,
		   uint32_t len, cudaKernel_t *k);
/* The same from a LAUNCH layout (inline or extent), and its stream. */
struct xcuda_launch_args;
int xd_launch_fixed(struct xd_session *s, const struct xcuda_launch_args *a,
		    struct xd_call *call, cudaKernel_t *k, cudaStream_t *st);

/*
 * The GPU memory quota (ops_gpumem.c): before a validated request reaches
 * CUDA, 0 or cudaErrorMemoryAllocation (over the domain's quota), with
 * the bytes charged in *@charged; after its handler ran with status
 * @err and result @res, what it allocated is remembered or the charge
 * given back, and what it freed is given back.
 */
int xd_gpumem_before(struct xd_session *s, const struct xcuda_request *req,
		     uint64_t *charged);
void xd_gpumem_after(struct xd_session *s, const struct xcuda_request *req,
		     uint64_t charged, int err, const void *res);

/* A device reset destroyed the device's streams and events. */
void xd_streams_forget_device(struct xd_session *s, int device);
/*
 * A new event of the session's in its table (ops_stream.c), its handle in
 * *@h; destroyed when the table is full.  0 or a cudaError_t.
 */
int xd_event_adopt(struct xd_session *s, cudaEvent_t ev, uint32_t *h);

#endif /* XCUDAD_OPS_H */
