/* SPDX-License-Identifier: MIT */
/*
 * The one harness of the C unit tests, header only.  Each case prints one
 * line, and check_summary() prints the program's last one, which
 * tests/run-unit.sh reads:
 *
 *   PASS name
 *   FAIL name: detail (file:line)
 *   SKIP name: reason
 *   N passed, N failed[, N skipped]
 *
 * check_summary() returns the exit status: 1 if anything failed, else 0.
 *
 *   CHECK(cond, name)                 detail: the condition's text
 *   CHECKF(cond, fmt, ...)            the same, the name printf-formatted
 *   CHECK_MSG(cond, name, fmt, ...)   detail printf-formatted
 *   CHECK_EQ(got, want, name)         integers of any type, compared as
 *                                     numbers; a failure shows both
 *   SKIP(name, fmt, ...)              cannot run here: counted, and why
 *   REQUIRE(cond, name)               what nothing after it can do
 *   REQUIRE_MSG(cond, name, fmt, ...) without (setup): silent if cond
 *                                     holds, else a FAIL line, then the
 *                                     program ends cleanly: teardown,
 *                                     summary, exit status 1
 *   check_name(fmt, ...)              a formatted name for any of them
 *                                     (one buffer: once per call)
 *   check_teardown(fn)                fn runs once, before the summary
 *
 * A case of several steps, any of which can fail:
 *
 *   EXPECT(cond, fmt, ...)   if !cond: records why and where, then jumps
 *                            to the label `out` (the cleanup)
 *   CHECK_WHY(fmt, ...)      records a reason without jumping
 *   check_case_ok()          1 while no reason is recorded
 *   check_case(name)         reports the case by the first reason
 *                            recorded, then forgets it
 *
 * Every CHECK* and check_case() returns 1 if the case passed.  Arguments
 * are evaluated once.  Call it all from one thread (children after fork:
 * report through the parent).
 */
#ifndef XCUDA_TEST_CHECK_H
#define XCUDA_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int check_passed, check_failed, check_skipped;
static void (*check_teardown_fn)(void);
/* The reason the current case of several steps failed, and where. */
static char check_why_buf[512];
static const char *check_why_file;
static int check_why_line;

static inline int check_vreport(int ok, const char *file, int line,
				const char *name, const char *fmt,
				va_list ap)
	__attribute__((format(printf, 5, 0)));

static inline int check_vreport(int ok, const char *file, int line,
				const char *name, const char *fmt,
				va_list ap)
{
	if (ok) {
		check_passed++;
		printf("PASS %s\n", name);
	} else {
		check_failed++;
		printf("FAIL %s: ", name);
		vprintf(fmt, ap);
		printf(" (%s:%d)\n", file, line);
	}
	fflush(stdout);
	return ok;
}

static inline int check_report(int ok, const char *file, int line,
			       const char *name, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static inline int check_report(int ok, const char *file, int line,
			       const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ok = check_vreport(ok, file, line, name, fmt, ap);
	va_end(ap);
	return ok;
}

#define CHECK(cond, name)						\
	check_report(!!(cond), __FILE__, __LINE__, (name), "%s", #cond)
#define CHECKF(cond, ...)						\
	check_report(!!(cond), __FILE__, __LINE__,			\
		     check_name(__VA_ARGS__), "%s", #cond)
#define CHECK_MSG(cond, name, ...)					\
	check_report(!!(cond), __FILE__, __LINE__, (name), __VA_ARGS__)

static inline const char *check_name(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline const char *check_name(const char *fmt, ...)
{
	static char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return buf;
}

/* ---- CHECK_EQ: an integer of any type, as a number ---- */

struct check_int {
	int neg;
	unsigned long long bits;
};

static inline struct check_int check_int_s(long long v)
{
	struct check_int r = { v < 0, (unsigned long long)v };

	return r;
}

static inline struct check_int check_int_u(unsigned long long v)
{
	struct check_int r = { 0, v };

	return r;
}

/* Enumerations select the integer type they are compatible with. */
#define CHECK_INT_(x) _Generic((x),					\
	_Bool: check_int_u, unsigned char: check_int_u,			\
	unsigned short: check_int_u, unsigned int: check_int_u,		\
	unsigned long: check_int_u, unsigned long long: check_int_u,	\
	char: check_int_s, signed char: check_int_s,			\
	short: check_int_s, int: check_int_s, long: check_int_s,	\
	long long: check_int_s)(x)

static inline void check_int_str(char *buf, size_t len, struct check_int v)
{
	if (v.neg)
		snprintf(buf, len, "%lld", (long long)v.bits);
	else if (v.bits > 0xffff)
		snprintf(buf, len, "%llu (%#llx)", v.bits, v.bits);
	else
		snprintf(buf, len, "%llu", v.bits);
}

static inline int check_eq(struct check_int got, struct check_int want,
			   const char *got_s, const char *want_s,
			   const char *file, int line, const char *name)
{
	char g[48], w[48];

	check_int_str(g, sizeof(g), got);
	check_int_str(w, sizeof(w), want);
	return check_report(got.neg == want.neg && got.bits == want.bits,
			    file, line, name, "%s == %s: got %s, want %s",
			    got_s, want_s, g, w);
}

#define CHECK_EQ(got, want, name)					\
	check_eq(CHECK_INT_(got), CHECK_INT_(want), #got, #want,	\
		 __FILE__, __LINE__, (name))

/* ---- skipping, stopping, the summary ---- */

static inline void check_skip(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void check_skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	check_skipped++;
	printf("SKIP %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

#define SKIP(name, ...)	check_skip((name), __VA_ARGS__)

/* @fn runs once, from check_summary(), before the summary line. */
static inline void check_teardown(void (*fn)(void))
{
	check_teardown_fn = fn;
}

static inline int check_summary(void)
{
	void (*fn)(void) = check_teardown_fn;

	check_teardown_fn = NULL;
	if (fn)
		fn();
	if (check_skipped)
		printf("%d passed, %d failed, %d skipped\n", check_passed,
		       check_failed, check_skipped);
	else
		printf("%d passed, %d failed\n", check_passed, check_failed);
	fflush(stdout);
	return check_failed ? 1 : 0;
}

/* Ends the program: teardown, summary, and its exit status. */
static inline _Noreturn void check_stop(void)
{
	exit(check_summary());
}

#define REQUIRE(cond, name) do {					\
	if (!(cond)) {							\
		check_report(0, __FILE__, __LINE__, (name), "%s",	\
			     #cond);					\
		check_stop();						\
	}								\
} while (0)
#define REQUIRE_MSG(cond, name, ...) do {				\
	if (!(cond)) {							\
		check_report(0, __FILE__, __LINE__, (name),		\
			     __VA_ARGS__);				\
		check_stop();						\
	}								\
} while (0)

/* ---- cases of several steps ---- */

static inline void check_why(const char *file, int line, const char *fmt,
			     ...)
	__attribute__((format(printf, 3, 4)));

/* Records why the current case failed; only the first reason counts. */
static inline void check_why(const char *file, int line, const char *fmt,
			     ...)
{
	va_list ap;

	if (check_why_buf[0])
		return;
	va_start(ap, fmt);
	vsnprintf(check_why_buf, sizeof(check_why_buf), fmt, ap);
	va_end(ap);
	if (!check_why_buf[0])
		snprintf(check_why_buf, sizeof(check_why_buf), "failed");
	check_why_file = file;
	check_why_line = line;
}

#define CHECK_WHY(...)	check_why(__FILE__, __LINE__, __VA_ARGS__)
#define EXPECT(cond, ...) do {						\
	if (!(cond)) {							\
		CHECK_WHY(__VA_ARGS__);					\
		goto out;						\
	}								\
} while (0)

static inline int check_case_ok(void)
{
	return !check_why_buf[0];
}

static inline int check_case(const char *name)
{
	int ok = check_report(!check_why_buf[0], check_why_file,
			      check_why_line, name, "%s", check_why_buf);

	check_why_buf[0] = 0;
	return ok;
}

/*
 * The whole file at @path, NUL-ended and malloc'ed, its length in *@len
 * when @len is not NULL; NULL when it cannot be read whole.
 */
static inline char *check_slurp(const char *path, size_t *len)
{
	/* Read to the end: files of sysfs and cgroupfs have no size. */
	FILE *f = fopen(path, "r");
	size_t n = 0, cap = 4096, got;
	char *buf = NULL, *grown;

	if (!f)
		return NULL;
	for (;;) {
		grown = realloc(buf, cap + 1);
		if (!grown) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = grown;
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap) {
			if (ferror(f)) {
				free(buf);
				buf = NULL;
			}
			break;
		}
		cap *= 2;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		if (len)
			*len = n;
	}
	return buf;
}

#endif /* XCUDA_TEST_CHECK_H */
