// SPDX-License-Identifier: MIT
/*
 * libxcuda-audit.so: an rtld-audit(7) library that xcuda-run puts in
 * LD_AUDIT, so that every CUDA library a program loads is xcuda's, by
 * whatever name it asks for it: a DT_NEEDED soname, a dlopen of a bare
 * name, or a dlopen of a framework's bundled copy by its absolute path
 * (PyTorch's nvidia/cu13/lib).  The loader asks la_objsearch() before
 * it searches; for the libraries xcuda replaces the answer is the file
 * in XCUDA_LIB_DIR.  Nothing else is touched, and nothing of the
 * program's is edited.
 */
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The libraries xcuda replaces: a file name, with any version suffix
 * where @versions (libcudart.so.13.0.96), and xcuda's file.  Other major
 * versions (libcudart.so.12) are not ours to answer.
 */
static const struct {
	const char *name;
	int versions;
	const char *ours;
} xc_replaced[] = {
	{ "libcudart.so.13", 1, "libcudart.so.13" },
	{ "libcudart.so", 0, "libcudart.so.13" },
	{ "libcuda.so.1", 1, "libcuda.so.1" },
	{ "libcuda.so", 0, "libcuda.so.1" },
	{ "libcublas.so.13", 1, "libcublas.so.13" },
	{ "libcublas.so", 0, "libcublas.so.13" },
	{ "libcublasLt.so.13", 1, "libcublasLt.so.13" },
	{ "libcublasLt.so", 0, "libcublasLt.so.13" },
	{ "libnvidia-ml.so.1", 1, "libnvidia-ml.so.1" },
	{ "libnvidia-ml.so", 0, "libnvidia-ml.so.1" },
	{ "libcurand.so.10", 1, "libcurand.so.10" },
	{ "libcurand.so", 0, "libcurand.so.10" },
	{ "libcufft.so.12", 1, "libcufft.so.12" },
	{ "libcufft.so", 0, "libcufft.so.12" },
};

#define XC_NREPL	(sizeof(xc_replaced) / sizeof(xc_replaced[0]))

static char xc_dir[PATH_MAX];
/* The directory, a slash and the longest of our file names. */
static char xc_paths[XC_NREPL][PATH_MAX + 32];

unsigned int la_version(unsigned int version)
{
	const char *d = getenv("XCUDA_LIB_DIR");
	unsigned int i;

	/* Without a directory of ours, redirect nothing. */
	if (d && *d && strlen(d) < sizeof(xc_dir)) {
		snprintf(xc_dir, sizeof(xc_dir), "%s", d);
		for (i = 0; i < XC_NREPL; i++)
			snprintf(xc_paths[i], sizeof(xc_paths[i]), "%s/%s",
				 xc_dir, xc_replaced[i].ours);
	}
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

/* Whether @base is @name, or with @versions @name.N[.N...]. */
static int xc_matches(const char *base, const char *name, int versions)
{
	size_t n = strlen(name);

	if (strncmp(base, name, n))
		return 0;
	base += n;
	if (!*base)
		return 1;
	if (!versions || *base != '.')
		return 0;
	for (base++; *base; base++)
		if (*base != '.' && (*base < '0' || *base > '9'))
			return 0;
	return 1;
}

char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
	const char *base = strrchr(name, '/');
	unsigned int i;

	(void)cookie;
	if (flag != LA_SER_ORIG || !xc_dir[0])
		return (char *)name;
	base = base ? base + 1 : name;
	/* Our own files load as they are. */
	if (!strncmp(name, xc_dir, strlen(xc_dir)) &&
	    name[strlen(xc_dir)] == '/')
		return (char *)name;
	for (i = 0; i < XC_NREPL; i++)
		if (xc_matches(base, xc_replaced[i].name,
			       xc_replaced[i].versions))
			return xc_paths[i];
	return (char *)name;
}
