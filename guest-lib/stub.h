/* SPDX-License-Identifier: MIT */
/*
 * Stubs: exports of a guest library that answer "not supported" (the
 * library's own code of it) and say so once on stderr, unless
 * XCUDA_QUIET=1.  tools/gen-lib-stubs.sh writes one per export a library
 * does not implement, as XC_STUB(name) of the library's stub header.
 */
#ifndef XCUDA_STUB_H
#define XCUDA_STUB_H

#include <stdatomic.h>

void xc_stub_note(atomic_flag *seen, const char *name, const char *what);

/* A stub answering @code, named @what in its message. */
#define XC_STUB_OF(name, code, what)					\
	int name(void);							\
	int name(void)							\
	{								\
		static atomic_flag seen_ = ATOMIC_FLAG_INIT;		\
									\
		xc_stub_note(&seen_, #name, what);			\
		return code;						\
	}

#endif /* XCUDA_STUB_H */
