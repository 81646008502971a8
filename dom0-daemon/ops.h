/* SPDX-License-Identifier: MIT */
/*
 * The command handlers, one per row of xcuda/calls.def, and the dispatch
 * table built from it.  A handler returns the cudaError_t to answer with
 * and writes its result (call->res_len bytes) to call->res.
 *
 * The preprocessor cannot lowercase a name, so each row's handler name is
 * spelled out below: a row added to calls.def without its XD_LC_ line
 * fails to compile, and one without its handler fails to link.
 */
#ifndef XCUDAD_OPS_H
#define XCUDAD_OPS_H

#include "worker.h"

typedef int (*xd_handler_t)(struct xd_session *s, struct xd_call *call);

#define XD_LC_OPEN			open
#define XD_LC_CLOSE			close
#define XD_LC_ECHO			echo
#define XD_LC_GET_DEVICE_COUNT		get_device_count
#define XD_LC_SET_DEVICE		set_device
#define XD_LC_GET_DEVICE_PROPERTIES	get_device_properties
#define XD_LC_DEVICE_GET_ATTRIBUTE	device_get_attribute
#define XD_LC_DEVICE_SYNCHRONIZE	device_synchronize
#define XD_LC_DEVICE_RESET		device_reset
#define XD_LC_SET_DEVICE_FLAGS		set_device_flags
#define XD_LC_GET_DEVICE_FLAGS		get_device_flags
#define XD_LC_DEVICE_GET_LIMIT		device_get_limit
#define XD_LC_DEVICE_SET_LIMIT		device_set_limit
#define XD_LC_MEM_GET_INFO		mem_get_info
#define XD_LC_MALLOC			malloc
#define XD_LC_FREE			free
#define XD_LC_MALLOC_PITCH		malloc_pitch
#define XD_LC_MEMCPY			memcpy
#define XD_LC_MEMCPY_2D			memcpy_2d
#define XD_LC_MEMSET			memset
#define XD_LC_ARENA_PIN			arena_pin
#define XD_LC_ARENA_UNPIN		arena_unpin
#define XD_LC_MEMSET_2D			memset_2d
#define XD_LC_STREAM_CREATE		stream_create
#define XD_LC_STREAM_DESTROY		stream_destroy
#define XD_LC_STREAM_SYNCHRONIZE	stream_synchronize
#define XD_LC_STREAM_QUERY		stream_query
#define XD_LC_STREAM_WAIT_EVENT		stream_wait_event
#define XD_LC_EVENT_CREATE		event_create
#define XD_LC_EVENT_RECORD		event_record
#define XD_LC_EVENT_SYNCHRONIZE		event_synchronize
#define XD_LC_EVENT_QUERY		event_query
#define XD_LC_EVENT_ELAPSED_TIME	event_elapsed_time
#define XD_LC_EVENT_DESTROY		event_destroy
#define XD_LC_MODULE_DATA		module_data
#define XD_LC_MODULE_UNLOAD		module_unload
#define XD_LC_FUNC_GET			func_get
#define XD_LC_VAR_GET			var_get
#define XD_LC_LAUNCH			launch
#define XD_LC_FUNC_GET_ATTRIBUTES	func_get_attributes
#define XD_LC_FUNC_SET_ATTRIBUTE	func_set_attribute
#define XD_LC_OCCUPANCY			occupancy

#define XD_CAT_(a, b)		a##b
#define XD_CAT(a, b)		XD_CAT_(a, b)
#define XD_HANDLER(name)	XD_CAT(xd_op_, XD_LC_##name)

#define XCUDA_CALL(name, num, flags, args, res, data)			\
	int XD_HANDLER(name)(struct xd_session *s, struct xd_call *call);
#include "xcuda/calls.def"
#undef XCUDA_CALL

/* Indexed by opcode; NULL for unknown opcodes. */
extern const xd_handler_t xd_handlers[XCUDA_OP_MAX];

/* Session teardown and device reset helpers of the ops files. */
void xd_streams_fini(struct xd_session *s);
void xd_streams_forget_device(struct xd_session *s, int device);
void xd_pins_fini(struct xd_session *s);
void xd_modules_fini(struct xd_session *s);
void xd_upload_drop(struct xd_session *s);

#endif /* XCUDAD_OPS_H */
