/* SPDX-License-Identifier: MIT */
/* A minimal harness: CHECK() records a case, the summary line ends it. */
#ifndef XCUDA_TEST_CHECK_H
#define XCUDA_TEST_CHECK_H

#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond, name) do {						\
	if (cond) {							\
		check_passed++;						\
		printf("PASS %s\n", name);				\
	} else {							\
		check_failed++;						\
		printf("FAIL %s: %s (%s:%d)\n", name, #cond,		\
		       __FILE__, __LINE__);				\
	}								\
} while (0)

static inline int check_summary(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif /* XCUDA_TEST_CHECK_H */
