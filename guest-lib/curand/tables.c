// SPDX-License-Identifier: MIT
/*
 * The tables NVIDIA's library points into for the device API's Sobol'
 * generators: direction vectors and scramble constants.  Each is read
 * from the worker's library once, in pieces, and kept for the process's
 * life, as the library's own tables live.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "curand_guest.h"

#define XC_TABLE_PIECE	(1u << 20)
/* The largest table: 20,000 dimensions of 64 64-bit vectors. */
#define XC_TABLE_MAX	(20000u * 64 * 8)

enum {
	XC_DV32, XC_DV64, XC_SC32, XC_SC64,
	XC_NTABLES
};

static pthread_mutex_t xc_table_lock = PTHREAD_MUTEX_INITIALIZER;
/* Per table, per set (the direction vectors' plain and scrambled). */
static void *xc_tables[XC_NTABLES][2];

static int xc_table_piece(uint32_t table, uint32_t set, uint64_t off,
			  void *buf, uint64_t len, uint64_t *size)
{
	struct xcuda_curand_get_table_args a;
	struct xcuda_curand_get_table_res r = { 0 };
	struct xc_xfer x;
	int err;

	memset(&a, 0, sizeof(a));
	a.table = table;
	a.set = set;
	a.offset = off;
	x = (struct xc_xfer){ buf, len, XC_XFER_OUT, &a.buf };
	err = xc_drv_forward_xfer(XCUDA_OP_CURAND_GET_TABLE, &a, sizeof(a),
				  &r, sizeof(r), &x, 1);
	*size = r.size;
	return err;
}

/* Table @table of @set (slot @slot), read once. */
static curandStatus_t xc_table(uint32_t table, uint32_t set, int slot,
			       void **out)
{
	uint64_t size, again, off, got;
	uint8_t *buf;
	int err;

	if (!out)
		return CURAND_STATUS_OUT_OF_RANGE;
	err = xc_curand_enter(0);
	if (err)
		return (curandStatus_t)err;
	pthread_mutex_lock(&xc_table_lock);
	if (slot >= 0 && xc_tables[table][slot]) {
		*out = xc_tables[table][slot];
		pthread_mutex_unlock(&xc_table_lock);
		return CURAND_STATUS_SUCCESS;
	}
	/* An empty piece: the size alone, or the library's refusal. */
	err = xc_table_piece(table, set, 0, NULL, 0, &size);
	if (!err && (slot < 0 || !size || size > XC_TABLE_MAX))
		err = CURAND_STATUS_INTERNAL_ERROR;
	buf = err ? NULL : malloc(size);
	if (!err && !buf)
		err = CURAND_STATUS_ALLOCATION_FAILED;
	for (off = 0; !err && off < size; off += got) {
		got = size - off < XC_TABLE_PIECE ? size - off : XC_TABLE_PIECE;
		err = xc_table_piece(table, set, off, buf + off, got, &again);
		/* The worker's answers are checked as any of its. */
		if (!err && again != size)
			err = CURAND_STATUS_INTERNAL_ERROR;
	}
	if (err) {
		free(buf);
		pthread_mutex_unlock(&xc_table_lock);
		return xc_curand_result(err);
	}
	xc_tables[table][slot] = buf;
	*out = buf;
	pthread_mutex_unlock(&xc_table_lock);
	return CURAND_STATUS_SUCCESS;
}

/* A set's slot among a table's two, -1 for one the library refuses. */
static int xc_set_slot(curandDirectionVectorSet_t set,
		       curandDirectionVectorSet_t plain,
		       curandDirectionVectorSet_t scrambled)
{
	return set == plain ? 0 : set == scrambled ? 1 : -1;
}

curandStatus_t
curandGetDirectionVectors32(curandDirectionVectors32_t *vectors[],
			    curandDirectionVectorSet_t set)
{
	int slot = xc_set_slot(set, CURAND_DIRECTION_VECTORS_32_JOEKUO6,
			       CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6);

	return xc_table(XC_DV32, set, slot, (void **)vectors);
}

curandStatus_t
curandGetDirectionVectors64(curandDirectionVectors64_t *vectors[],
			    curandDirectionVectorSet_t set)
{
	int slot = xc_set_slot(set, CURAND_DIRECTION_VECTORS_64_JOEKUO6,
			       CURAND_SCRAMBLED_DIRECTION_VECTORS_64_JOEKUO6);

	return xc_table(XC_DV64, set, slot, (void **)vectors);
}

curandStatus_t curandGetScrambleConstants32(unsigned int **constants)
{
	return xc_table(XC_SC32, 0, 0, (void **)constants);
}

curandStatus_t curandGetScrambleConstants64(unsigned long long **constants)
{
	return xc_table(XC_SC64, 0, 0, (void **)constants);
}
