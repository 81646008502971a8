// SPDX-License-Identifier: MIT
/*
 * The driver API's streams and events are the runtime's: a CUstream is a
 * cudaStream_t and a CUevent a cudaEvent_t, natively as here, and their
 * flags have the same values.  Each call is the runtime's, answered as a
 * CUresult without touching the runtime's last error.
 */
#include "driver.h"

#define XC_DRV_CALL(call)						\
	do {								\
		int err_ = xc_drv_enter(1);				\
									\
		if (err_)						\
			return (CUresult)err_;				\
		return XC_DRV_RT(call);					\
	} while (0)

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	XC_DRV_CALL(cudaStreamCreateWithFlags(phStream, Flags));
}

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
				    int priority)
{
	XC_DRV_CALL(cudaStreamCreateWithPriority(phStream, flags, priority));
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
	XC_DRV_CALL(cudaStreamDestroy(hStream));
}

CUresult cuStreamSynchronize(CUstream hStream)
{
	XC_DRV_CALL(cudaStreamSynchronize(hStream));
}

CUresult cuStreamQuery(CUstream hStream)
{
	XC_DRV_CALL(cudaStreamQuery(hStream));
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent,
			   unsigned int Flags)
{
	XC_DRV_CALL(cudaStreamWaitEvent(hStream, hEvent, Flags));
}

CUresult cuStreamGetPriority(CUstream hStream, int *priority)
{
	XC_DRV_CALL(cudaStreamGetPriority(hStream, priority));
}

CUresult cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
	XC_DRV_CALL(cudaStreamGetFlags(hStream, flags));
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	XC_DRV_CALL(cudaEventCreateWithFlags(phEvent, Flags));
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
	XC_DRV_CALL(cudaEventDestroy(hEvent));
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
	XC_DRV_CALL(cudaEventRecord(hEvent, hStream));
}

CUresult cuEventSynchronize(CUevent hEvent)
{
	XC_DRV_CALL(cudaEventSynchronize(hEvent));
}

CUresult cuEventQuery(CUevent hEvent)
{
	XC_DRV_CALL(cudaEventQuery(hEvent));
}

CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart,
			       CUevent hEnd)
{
	XC_DRV_CALL(cudaEventElapsedTime(pMilliseconds, hStart, hEnd));
}

CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart,
			    CUevent hEnd);
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart,
			    CUevent hEnd)
{
	XC_DRV_CALL(cudaEventElapsedTime(pMilliseconds, hStart, hEnd));
}
