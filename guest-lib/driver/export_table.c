// SPDX-License-Identifier: MIT
/*
 * cuGetExportTable: the private tables through which NVIDIA's own
 * runtime, linked statically into a library or a framework, reaches the
 * driver.  Their contents are undocumented: xcuda cannot give them, and
 * answers CUDA_ERROR_NOT_SUPPORTED.  The message names each table asked
 * for (once), so that a program's failure says which library needs what
 * (docs/driver.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

#define XC_ET_SEEN	16

static CUuuid xc_et_seen[XC_ET_SEEN];
static unsigned int xc_et_nseen;
static pthread_mutex_t xc_et_lock = PTHREAD_MUTEX_INITIALIZER;

/* Says so once per table, unless XCUDA_QUIET. */
static void xc_et_note(const CUuuid *id)
{
	const char *q = getenv("XCUDA_QUIET");
	char hex[2 * sizeof(id->bytes) + 1];
	unsigned int i;

	pthread_mutex_lock(&xc_et_lock);
	for (i = 0; i < xc_et_nseen; i++)
		if (!memcmp(&xc_et_seen[i], id, sizeof(*id)))
			break;
	if (i < xc_et_nseen || xc_et_nseen == XC_ET_SEEN) {
		pthread_mutex_unlock(&xc_et_lock);
		return;
	}
	xc_et_seen[xc_et_nseen++] = *id;
	pthread_mutex_unlock(&xc_et_lock);
	if (q && *q && strcmp(q, "0"))
		return;
	for (i = 0; i < sizeof(id->bytes); i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)id->bytes[i]);
	fprintf(stderr, "xcuda: cuGetExportTable(%s) is not supported: "
		"NVIDIA's runtime linked statically cannot run in a guest "
		"(CUDA_ERROR_NOT_SUPPORTED)\n", hex);
}

CUresult cuGetExportTable(const void **ppExportTable,
			  const CUuuid *pExportTableId)
{
	if (ppExportTable)
		*ppExportTable = NULL;
	if (!ppExportTable || !pExportTableId)
		return CUDA_ERROR_INVALID_VALUE;
	xc_et_note(pExportTableId);
	return CUDA_ERROR_NOT_SUPPORTED;
}
