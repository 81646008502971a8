// SPDX-License-Identifier: MIT
/*
 * NVML as frameworks use it: loaded with dlopen (PyTorch, pynvml and
 * nvidia-smi's kin do so), then the queries they make of each GPU.  What
 * the GPU says of itself is printed; what changes from one moment to the
 * next (temperature, power, clocks, memory in use) is checked for sense
 * and printed as such.  NVML's GPU i is CUDA's device i, by UUID.
 *
 * Without libnvidia-ml.so.1 (a host without the driver), or with one
 * whose host has none (xcuda's, when the worker finds no NVML), the
 * program says NVML_ERROR_LIBRARY_NOT_FOUND and stops: the same line.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nvml.h>

static void *lib;

#define NV(fn) ((decltype(&fn))dlsym(lib, #fn))

static const char *(*err_str)(nvmlReturn_t);

static void say(const char *what, nvmlReturn_t r)
{
	printf("%s: %d %s\n", what, (int)r, err_str ? err_str(r) : "");
}

/* A value where the call succeeded, else its status. */
#define SHOW_U(what, call, v)						\
	do {								\
		nvmlReturn_t r_ = (call);				\
		if (r_ == NVML_SUCCESS)					\
			printf("  %s: %llu\n", what,			\
			       (unsigned long long)(v));		\
		else							\
			say("  " what, r_);				\
	} while (0)

static void strings(nvmlDevice_t d)
{
	char buf[256];
	nvmlReturn_t r;
	struct {
		const char *what;
		nvmlReturn_t (*fn)(nvmlDevice_t, char *, unsigned int);
	} s[] = {
		{ "name", NV(nvmlDeviceGetName) },
		{ "uuid", NV(nvmlDeviceGetUUID) },
		{ "serial", NV(nvmlDeviceGetSerial) },
		{ "board part", NV(nvmlDeviceGetBoardPartNumber) },
		{ "vbios", NV(nvmlDeviceGetVbiosVersion) },
		{ "inforom image", NV(nvmlDeviceGetInforomImageVersion) },
	};

	for (unsigned int i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		r = s[i].fn(d, buf, sizeof(buf));
		if (r == NVML_SUCCESS)
			printf("  %s: %s\n", s[i].what, buf);
		else
			say(s[i].what, r);
	}
	/* Too short a buffer: NVML's own answer, and what it wrote. */
	memset(buf, 'x', 8);
	r = NV(nvmlDeviceGetName)(d, buf, 2);
	printf("  name in 2 bytes: %d %s, buf[0..1] %s\n", (int)r,
	       err_str(r), buf[0] == 'x' ? "untouched" : "written");
}

static void fixed(nvmlDevice_t d)
{
	unsigned int u = 0, u2 = 0;
	int maj = 0, min = 0;
	unsigned long long ull = 0;
	nvmlEnableState_t e1, e2;
	nvmlPciInfo_t pci;
	nvmlMemory_t mem;
	nvmlMemory_v2_t mem2;
	nvmlBAR1Memory_t bar1;
	nvmlBrandType_t brand;
	nvmlDeviceArchitecture_t arch;
	nvmlComputeMode_t cm;
	nvmlGpuVirtualizationMode_t vm;
	nvmlReturn_t r;

	r = NV(nvmlDeviceGetPciInfo_v3)(d, &pci);
	if (r == NVML_SUCCESS)
		printf("  pci: %s legacy %s domain %u bus %u device %u id "
		       "%08x subsys %08x\n", pci.busId, pci.busIdLegacy,
		       pci.domain, pci.bus, pci.device, pci.pciDeviceId,
		       pci.pciSubSystemId);
	else
		say("  pci", r);
	SHOW_U("minor", NV(nvmlDeviceGetMinorNumber)(d, &u), u);
	SHOW_U("brand", NV(nvmlDeviceGetBrand)(d, &brand), brand);
	SHOW_U("architecture", NV(nvmlDeviceGetArchitecture)(d, &arch), arch);
	r = NV(nvmlDeviceGetCudaComputeCapability)(d, &maj, &min);
	printf("  compute capability: %d %d.%d\n", (int)r, maj, min);
	r = NV(nvmlDeviceGetMemoryInfo)(d, &mem);
	printf("  memory: %d total %llu used+free %s\n", (int)r, mem.total,
	       mem.used + mem.free == mem.total ? "= total" : "!= total");
	memset(&mem2, 0, sizeof(mem2));
	mem2.version = nvmlMemory_v2;
	r = NV(nvmlDeviceGetMemoryInfo_v2)(d, &mem2);
	printf("  memory v2: %d total %llu reserved %llu\n", (int)r,
	       mem2.total, mem2.reserved);
	mem2.version = 12345;
	say("  memory v2 of a wrong version",
	    NV(nvmlDeviceGetMemoryInfo_v2)(d, &mem2));
	r = NV(nvmlDeviceGetBAR1MemoryInfo)(d, &bar1);
	printf("  bar1: %d total %llu\n", (int)r, bar1.bar1Total);
	SHOW_U("compute mode", NV(nvmlDeviceGetComputeMode)(d, &cm), cm);
	SHOW_U("persistence", NV(nvmlDeviceGetPersistenceMode)(d, &e1), e1);
	r = NV(nvmlDeviceGetEccMode)(d, &e1, &e2);
	printf("  ecc: %d %d/%d\n", (int)r, r ? -1 : e1, r ? -1 : e2);
	r = NV(nvmlDeviceGetMigMode)(d, &u, &u2);
	printf("  mig: %d %u/%u\n", (int)r, r ? 0 : u, r ? 0 : u2);
	SHOW_U("display mode", NV(nvmlDeviceGetDisplayMode)(d, &e1), e1);
	SHOW_U("display active", NV(nvmlDeviceGetDisplayActive)(d, &e1), e1);
	SHOW_U("power limit", NV(nvmlDeviceGetPowerManagementLimit)(d, &u),
	       u);
	SHOW_U("default power limit",
	       NV(nvmlDeviceGetPowerManagementDefaultLimit)(d, &u), u);
	SHOW_U("enforced power limit",
	       NV(nvmlDeviceGetEnforcedPowerLimit)(d, &u), u);
	r = NV(nvmlDeviceGetPowerManagementLimitConstraints)(d, &u, &u2);
	printf("  power limits: %d %u..%u\n", (int)r, r ? 0 : u, r ? 0 : u2);
	SHOW_U("max sm clock",
	       NV(nvmlDeviceGetMaxClockInfo)(d, NVML_CLOCK_SM, &u), u);
	SHOW_U("max mem clock",
	       NV(nvmlDeviceGetMaxClockInfo)(d, NVML_CLOCK_MEM, &u), u);
	SHOW_U("max pcie gen",
	       NV(nvmlDeviceGetMaxPcieLinkGeneration)(d, &u), u);
	SHOW_U("max pcie width", NV(nvmlDeviceGetMaxPcieLinkWidth)(d, &u), u);
	SHOW_U("gpu max pcie gen",
	       NV(nvmlDeviceGetGpuMaxPcieLinkGeneration)(d, &u), u);
	SHOW_U("cores", NV(nvmlDeviceGetNumGpuCores)(d, &u), u);
	SHOW_U("bus width", NV(nvmlDeviceGetMemoryBusWidth)(d, &u), u);
	SHOW_U("fans", NV(nvmlDeviceGetNumFans)(d, &u), u);
	SHOW_U("fan speed", NV(nvmlDeviceGetFanSpeed)(d, &u), u);
	SHOW_U("multi-GPU board", NV(nvmlDeviceGetMultiGpuBoard)(d, &u), u);
	SHOW_U("board id", NV(nvmlDeviceGetBoardId)(d, &u), u);
	SHOW_U("module id", NV(nvmlDeviceGetModuleId)(d, &u), u);
	SHOW_U("MIG device", NV(nvmlDeviceIsMigDeviceHandle)(d, &u), u);
	SHOW_U("max MIG devices",
	       NV(nvmlDeviceGetMaxMigDeviceCount)(d, &u), u);
	SHOW_U("virtualization",
	       NV(nvmlDeviceGetVirtualizationMode)(d, &vm), vm);
	r = NV(nvmlDeviceGetGspFirmwareMode)(d, &u, &u2);
	printf("  gsp: %d %u/%u\n", (int)r, r ? 0 : u, r ? 0 : u2);
	SHOW_U("slowdown threshold",
	       NV(nvmlDeviceGetTemperatureThreshold)(
		       d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &u), u);
	SHOW_U("accounting", NV(nvmlDeviceGetAccountingMode)(d, &e1), e1);
	SHOW_U("retired pages pending",
	       NV(nvmlDeviceGetRetiredPagesPendingStatus)(d, &e1), e1);
	SHOW_U("uncorrected volatile ecc",
	       NV(nvmlDeviceGetTotalEccErrors)(d,
		       NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
		       &ull), ull);
	SHOW_U("clocks event reasons known",
	       NV(nvmlDeviceGetCurrentClocksEventReasons)(d, &ull), 1);
}

/* What moves: the call succeeds and its answer makes sense. */
static void moving(nvmlDevice_t d)
{
	unsigned int u = 0, u2 = 0;
	unsigned long long e = 0;
	nvmlUtilization_t ut;
	nvmlPstates_t ps;
	nvmlTemperature_t t;
	nvmlReturn_t r;

	r = NV(nvmlDeviceGetTemperature)(d, NVML_TEMPERATURE_GPU, &u);
	printf("  temperature: %d %s\n", (int)r,
	       r ? "" : u > 0 && u < 120 ? "sane" : "insane");
	memset(&t, 0, sizeof(t));
	t.version = nvmlTemperature_v1;
	t.sensorType = NVML_TEMPERATURE_GPU;
	r = NV(nvmlDeviceGetTemperatureV)(d, &t);
	printf("  temperature v: %d %s\n", (int)r,
	       r ? "" : t.temperature > 0 && t.temperature < 120 ?
	       "sane" : "insane");
	r = NV(nvmlDeviceGetPowerUsage)(d, &u);
	printf("  power: %d %s\n", (int)r, r ? "" : u > 0 ? "sane" : "zero");
	r = NV(nvmlDeviceGetTotalEnergyConsumption)(d, &e);
	printf("  energy: %d %s\n", (int)r, r ? "" : e > 0 ? "sane" : "zero");
	r = NV(nvmlDeviceGetUtilizationRates)(d, &ut);
	printf("  utilization: %d %s\n", (int)r,
	       r ? "" : ut.gpu <= 100 && ut.memory <= 100 ? "sane" : "insane");
	r = NV(nvmlDeviceGetPerformanceState)(d, &ps);
	printf("  pstate: %d %s\n", (int)r,
	       r ? "" : ps <= NVML_PSTATE_15 ? "sane" : "insane");
	r = NV(nvmlDeviceGetClockInfo)(d, NVML_CLOCK_SM, &u);
	printf("  sm clock: %d %s\n", (int)r, r ? "" : u > 0 ? "sane" : "0");
	r = NV(nvmlDeviceGetClock)(d, NVML_CLOCK_MEM, NVML_CLOCK_ID_CURRENT,
				   &u);
	printf("  mem clock: %d %s\n", (int)r, r ? "" : u > 0 ? "sane" : "0");
	r = NV(nvmlDeviceGetCurrPcieLinkGeneration)(d, &u);
	printf("  pcie gen: %d %s\n", (int)r, r ? "" : u > 0 ? "sane" : "0");
	r = NV(nvmlDeviceGetCurrPcieLinkWidth)(d, &u);
	printf("  pcie width: %d %s\n", (int)r, r ? "" : u > 0 ? "sane" : "0");
	r = NV(nvmlDeviceGetEncoderUtilization)(d, &u, &u2);
	printf("  encoder: %d %s\n", (int)r, r ? "" : u <= 100 ? "sane" : "?");
	r = NV(nvmlDeviceGetComputeRunningProcesses_v3)(d, &u, NULL);
	printf("  compute processes listed: %d\n",
	       r == NVML_SUCCESS || r == NVML_ERROR_INSUFFICIENT_SIZE);
}

/* Handles found again by what identifies the GPU. */
static void lookups(nvmlDevice_t d, unsigned int i)
{
	char uuid[96], bus[64];
	nvmlDevice_t o = NULL;
	nvmlPciInfo_t pci;
	unsigned int j = 99;

	NV(nvmlDeviceGetUUID)(d, uuid, sizeof(uuid));
	NV(nvmlDeviceGetPciInfo_v3)(d, &pci);
	snprintf(bus, sizeof(bus), "%s", pci.busId);
	say("  by uuid", NV(nvmlDeviceGetHandleByUUID)(uuid, &o));
	printf("  same device: %d\n", o == d);
	o = NULL;
	say("  by pci bus id",
	    NV(nvmlDeviceGetHandleByPciBusId_v2)(bus, &o));
	printf("  same device: %d\n", o == d);
	say("  index", NV(nvmlDeviceGetIndex)(d, &j));
	printf("  index is %s\n", j == i ? "right" : "wrong");
}

/* CUDA's device i is NVML's GPU i: the same UUID. */
static void cuda_uuid(nvmlDevice_t d, int i)
{
	cudaDeviceProp p;
	char uuid[96], mine[96];
	int n;

	if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
		printf("  cuda: no device %d\n", i);
		return;
	}
	NV(nvmlDeviceGetUUID)(d, uuid, sizeof(uuid));
	n = snprintf(mine, sizeof(mine), "GPU-");
	for (int k = 0; k < 16; k++) {
		n += snprintf(mine + n, sizeof(mine) - n, "%02x",
			      (unsigned char)p.uuid.bytes[k]);
		if (k == 3 || k == 5 || k == 7 || k == 9)
			n += snprintf(mine + n, sizeof(mine) - n, "-");
	}
	printf("  cuda device %d has this uuid: %d\n", i, !strcmp(mine, uuid));
}

int main(void)
{
	unsigned int n = 0, i;
	char buf[96];
	int v = 0;
	nvmlDevice_t d = NULL, none = NULL;
	nvmlReturn_t r, early[2];

	lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	if (!lib) {
		printf("nvmlInit: %d NVML_ERROR_LIBRARY_NOT_FOUND\n",
		       NVML_ERROR_LIBRARY_NOT_FOUND);
		return 0;
	}
	err_str = NV(nvmlErrorString);
	early[0] = NV(nvmlDeviceGetCount_v2)(&n);
	early[1] = NV(nvmlShutdown)();
	r = NV(nvmlInit_v2)();
	if (r == NVML_ERROR_LIBRARY_NOT_FOUND) {
		printf("nvmlInit: %d NVML_ERROR_LIBRARY_NOT_FOUND\n", r);
		return 0;
	}
	say("count before init", early[0]);
	say("shutdown before init", early[1]);
	say("nvmlInit", r);
	if (r)
		return 1;
	say("nested init", NV(nvmlInitWithFlags)(0));
	r = NV(nvmlSystemGetDriverVersion)(buf, sizeof(buf));
	printf("driver: %d %s\n", (int)r, r ? "" : buf);
	r = NV(nvmlSystemGetNVMLVersion)(buf, sizeof(buf));
	printf("nvml: %d %s\n", (int)r, r ? "" : buf);
	r = NV(nvmlSystemGetCudaDriverVersion_v2)(&v);
	printf("cuda driver: %d %d\n", (int)r, v);
	say("count", NV(nvmlDeviceGetCount_v2)(&n));
	printf("gpus: %u\n", n);
	for (i = 0; i < n; i++) {
		r = NV(nvmlDeviceGetHandleByIndex_v2)(i, &d);
		printf("gpu %u: %d\n", i, (int)r);
		if (r)
			continue;
		strings(d);
		fixed(d);
		moving(d);
		lookups(d, i);
		cuda_uuid(d, (int)i);
	}
	if (n) {
		NV(nvmlDeviceGetHandleByIndex_v2)(0, &d);
		r = NV(nvmlDeviceGetP2PStatus)(d, d, NVML_P2P_CAPS_INDEX_READ,
					       (nvmlGpuP2PStatus_t *)&v);
		printf("p2p with itself: %d %d\n", (int)r, r ? -1 : v);
		r = NV(nvmlDeviceOnSameBoard)(d, d, &v);
		printf("same board as itself: %d %d\n", (int)r, r ? -1 : v);
	}
	/* The program's mistakes: NVML's own answers. */
	say("handle past the count",
	    NV(nvmlDeviceGetHandleByIndex_v2)(n, &d));
	say("name of no device", NV(nvmlDeviceGetName)(none, buf, 96));
	say("null count", NV(nvmlDeviceGetCount_v2)(NULL));
	say("unknown uuid", NV(nvmlDeviceGetHandleByUUID)(
		"GPU-00000000-0000-0000-0000-000000000000", &d));
	say("bad pci bus id",
	    NV(nvmlDeviceGetHandleByPciBusId_v2)("zz:zz.z", &d));
	for (int c = 0; c <= NVML_ERROR_RESET_TYPE_NOT_SUPPORTED; c++)
		printf("text %d: %s\n", c, err_str((nvmlReturn_t)c));
	printf("text 999: %s\n", err_str(NVML_ERROR_UNKNOWN));
	say("shutdown", NV(nvmlShutdown)());
	say("name while still initialised",
	    NV(nvmlSystemGetDriverVersion)(buf, sizeof(buf)));
	say("last shutdown", NV(nvmlShutdown)());
	say("after shutdown",
	    NV(nvmlSystemGetDriverVersion)(buf, sizeof(buf)));
	say("shutdown again", NV(nvmlShutdown)());
	return 0;
}
