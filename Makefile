# xcuda: top-level build.
#
#   make            build everything this machine can build
#   make check      every test this machine can run, the Xen rig under QEMU
#                   included (installs what it needs)
#   make check-xen  the Xen rig alone; make modules builds the kernel modules
#   make rig-pack   the rig for a GPU host, packed with QEMU (on Debian 12)
#   make check-xen-gpu RIG_PACK=FILE  that rig on a GPU host: a DomU's
#                   programs end on its GPU, compared with native runs
#   make check-gpu  the CUDA programs (through `local` and through the
#                   upstream link) and the frameworks (PyTorch, and CuPy
#                   with CUPY_SDIST=its sdist) natively and through xcuda
#                   (GPU host)
#   make check-samples SAMPLES=DIR   NVIDIA's cuda-samples (a checkout in
#                   DIR), natively and through xcuda (GPU host)
#   make fuzz       the libFuzzer harnesses (tests/fuzz/), FUZZ_SECONDS
#                   each (make check runs them briefly)
#   make demo       the main job: a CUDA sample through xcudad, then from a
#                   DomU through the Xen split driver (make demo-xen alone)
#
# SANITIZE=1 builds user space with ASan and UBSan, SANITIZE=thread with
# ThreadSanitizer (each in a build directory of its own: B=...).

CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
B         := build
# The test suites, the benchmark and the demo run programs of ours: the
# xcudad they start may serve a GPU that reaches pageable host memory
# (HMM, ATS), which a deployment refuses by default (docs/security.md).
export XCUDAD_ALLOW_PAGEABLE_MEMORY_ACCESS ?= 1

CC        ?= gcc
CSTD      := -std=c11 -D_GNU_SOURCE
WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	     -Wmissing-prototypes
CFLAGS    ?= -O2 -g
ifeq ($(SANITIZE),1)
CFLAGS    += -fsanitize=address,undefined -fno-omit-frame-pointer \
	     -fno-sanitize-recover=undefined
LDFLAGS   += -fsanitize=address,undefined
endif
# SANITIZE=thread builds user space with ThreadSanitizer.  It cannot
# model a bare fence (the rings' xen_rmb/xen_wmb) and GCC warns at each:
# where a fence alone orders a slot's bytes, a report may be TSan's own.
ifeq ($(SANITIZE),thread)
CFLAGS    += -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan
LDFLAGS   += -fsanitize=thread
endif
# Debian's python3 with its python3-clang, whatever python3 comes first.
PYTHON    ?= /usr/bin/python3
GEN       := $(B)/gen
# NVML's header: the toolkit's where it has one, else PyPI's
# nvidia-nvml-dev (make fetches it: tools/fetch-nvml-h.sh).
NVML_INCLUDE ?= $(if $(wildcard $(CUDA_HOME)/include/nvml.h),$(CUDA_HOME)/include,$(B)/deps/nvml)
NVML_H    := $(NVML_INCLUDE)/nvml.h
# NVIDIA's headers are system headers: cublasLt.h has an unprototyped
# declaration.  NVML's old names are functions of their own in the
# guest's library, not macros for the newest.
CPPFLAGS  := -I. -Iinclude -I$(GEN)/include -isystem $(CUDA_HOME)/include \
	     -isystem $(NVML_INCLUDE) -DNVML_NO_UNVERSIONED_FUNC_DEFS
XCFLAGS    = $(CSTD) $(WARN) $(CFLAGS) -fPIC -pthread -MMD -MP
CUDART    := -L$(CUDA_HOME)/lib64 -lcudart -Wl,-rpath,$(CUDA_HOME)/lib64
# The upstream link's HMAC-SHA256 (dom0-daemon/up_link.c): OpenSSL's
# libcrypto, Debian's libssl-dev.
CRYPTO    := -lcrypto
# The workers' seccomp filter (dom0-daemon/sandbox.c): Debian's
# libseccomp-dev.
SECCOMP   := -lseccomp

# guest-lib: api_*.c export the CUDA runtime API; the rest is internals
# that unit tests may link too.
# The call description: tools/gen-calls.py writes the wire layouts, the
# guest entry points and the worker's dispatch from it into $(GEN).
SPEC       := $(sort $(wildcard spec/*.calls))
GEN_STAMP  := $(GEN)/stamp
GEN_INCLUDES = --cuda-include $(CUDA_HOME)/include \
	       --cuda-include $(NVML_INCLUDE)
GEN_HDRS   := $(GEN)/include/xcuda/calls.h $(GEN)/include/xcuda/guest_calls.h \
	      $(GEN)/include/xcuda/worker_handlers.h
GEN_COMMON := $(GEN)/common/calls_table.c
GEN_GUEST  := $(GEN)/guest-lib/entries.c
GEN_DAEMON := $(GEN)/dom0-daemon/dispatch.c

# common/: code that both the guest library and the worker link.
COMMON_SRC := $(wildcard common/*.c) $(GEN_COMMON)

GUEST_API  := $(wildcard guest-lib/api_*.c) $(GEN_GUEST)
GUEST_INT  := $(filter-out $(GUEST_API),$(wildcard guest-lib/*.c)) $(COMMON_SRC)
# Objects: $(B)/path.o, and generated sources' beside them in $(GEN).
obj = $(patsubst %.c,%.o,$(filter $(GEN)/%,$1)) \
      $(patsubst %.c,$(B)/%.o,$(filter-out $(GEN)/%,$1))
GUEST_OBJ  := $(call obj,$(GUEST_API) $(GUEST_INT))
GUEST_SO   := $(B)/lib/libcudart.so.13
GUEST_EXPORTS := guest-lib/exports/libcudart.so.13.syms

# guest-lib/driver: xcuda's libcuda.so.1, the driver API, on the session
# of our libcudart.so.13 (which it links, and whose internals it calls).
GEN_DRIVER := $(GEN)/guest-lib/driver_entries.c
DRIVER_SRC := $(wildcard guest-lib/driver/*.c) $(GEN_DRIVER)
DRIVER_OBJ := $(call obj,$(DRIVER_SRC))
DRIVER_SO  := $(B)/lib/libcuda.so.1
DRIVER_EXPORTS := guest-lib/exports/libcuda.so.1.syms
# Tables made from NVIDIA's headers (not from the call description).
DRIVER_TABLES := $(B)/guest-lib/driver/gen/cu_errors.inc \
		 $(B)/guest-lib/driver/gen/cu_procs.inc
# The headers' unversioned names: the library defines each symbol itself.
DRIVER_CPPFLAGS := -D__CUDA_API_VERSION_INTERNAL -Iguest-lib \
		   -Iguest-lib/driver -I$(B)/guest-lib/driver/gen

# guest-lib/blas: xcuda's libcublas.so.13 and libcublasLt.so.13, on the
# session of our libcudart.so.13 too; each links its own copy of what
# they share.
BLAS_SHARED := guest-lib/blas/common.c guest-lib/blas/state.c
BLAS_OBJ   := $(call obj,$(BLAS_SHARED) guest-lib/blas/handle.c \
		guest-lib/blas/local.c $(GEN)/guest-lib/blas_entries.c)
BLASLT_OBJ := $(call obj,$(BLAS_SHARED) guest-lib/blas/lt.c \
		guest-lib/blas/lt_local.c $(GEN)/guest-lib/blaslt_entries.c)
BLAS_SO    := $(B)/lib/libcublas.so.13
BLASLT_SO  := $(B)/lib/libcublasLt.so.13

# guest-lib/nvml: xcuda's libnvidia-ml.so.1, on the session of our
# libcudart.so.13 too.
# guest-lib/curand: xcuda's libcurand.so.10, likewise.
lib_obj = $(call obj,$(wildcard guest-lib/$1/*.c) $(GEN)/guest-lib/$1_entries.c)
NVML_OBJ   := $(call lib_obj,nvml)
NVML_SO    := $(B)/lib/libnvidia-ml.so.1
CURAND_OBJ := $(call lib_obj,curand)
CURAND_SO  := $(B)/lib/libcurand.so.10
CUFFT_OBJ  := $(call lib_obj,cufft)
CUFFT_SO   := $(B)/lib/libcufft.so.12

DAEMON_MAIN := dom0-daemon/xcudad.c
DAEMON_INT  := $(filter-out $(DAEMON_MAIN),$(wildcard dom0-daemon/*.c)) \
	       $(GEN_DAEMON) $(COMMON_SRC)
XCUDAD      := $(B)/bin/xcudad
XCUDACTL    := $(B)/bin/xcudactl
RING_TEST   := $(B)/bin/xcuda-ring-test

UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)

.PHONY: all deps deps-xen modules check fuzzers fuzz fuzz-seeds check-xen check-xen-pvh check-xen-hvm rig-pack check-xen-gpu check-gpu check-samples demo demo-xen bench \
	clean docs check-docs

AUDIT_SO   := $(B)/lib/libxcuda-audit.so
XCUDA_RUN  := $(B)/bin/xcuda-run

all: $(GUEST_SO) $(DRIVER_SO) $(BLAS_SO) $(BLASLT_SO) $(NVML_SO) $(CURAND_SO) $(CUFFT_SO) $(AUDIT_SO) $(XCUDA_RUN) $(XCUDAD) $(XCUDACTL) $(RING_TEST) $(UNIT_BIN) $(GEN)/docs/commands.md

deps:
	@tools/deps.sh

# What the Xen rig needs: QEMU, Xen 4.17, a kernel and its headers.
deps-xen:
	@tests/xen/deps.sh

# The kernel modules, against the newest installed *-amd64 headers.
modules:
	$(MAKE) -C guest-kmod
	$(MAKE) -C dom0-kmod

# The generator skips its work (and libclang) when the stamp's hash of
# the description and of itself still matches.
$(GEN_STAMP): $(SPEC) tools/gen-calls.py $(wildcard tools/gencalls/*.py) Makefile \
		| $(NVML_H)
	$(PYTHON) tools/gen-calls.py code --out $(GEN) $(GEN_INCLUDES) $(SPEC)

$(B)/deps/nvml/nvml.h: tools/fetch-nvml-h.sh
	tools/fetch-nvml-h.sh $(dir $@)
# A recipe, even an empty one, makes make look at them again once the
# stamp's recipe has run, so what includes them is rebuilt in one pass.
$(GEN_HDRS) $(GEN_COMMON) $(GEN_GUEST) $(GEN_DRIVER) $(GEN_DAEMON) \
		$(GEN)/docs/commands.md: \
		$(GEN_STAMP)
	@:


# The committed documents: make docs rewrites them, make check compares.
# The same lists of each library besides the runtime.
LIB_STATUS := \
	--lib driver $(DRIVER_EXPORTS) $(B)/guest-lib/driver/impl.syms \
		guest-lib/exports/libcuda-local.txt \
		guest-lib/exports/libcuda-unsupported.txt \
	--lib cublas guest-lib/exports/libcublas.so.13.syms \
		$(B)/guest-lib/blas/libcublas.impl.syms \
		guest-lib/exports/libcublas-local.txt \
		guest-lib/exports/libcublas-unsupported.txt \
	--lib cublaslt guest-lib/exports/libcublasLt.so.13.syms \
		$(B)/guest-lib/blas/libcublasLt.impl.syms \
		guest-lib/exports/libcublasLt-local.txt \
		guest-lib/exports/libcublasLt-unsupported.txt \
	--lib nvml guest-lib/exports/libnvidia-ml.so.1.syms \
		$(B)/guest-lib/nvml/impl.syms \
		guest-lib/exports/libnvidia-ml-local.txt \
		guest-lib/exports/libnvidia-ml-unsupported.txt \
	--lib curand guest-lib/exports/libcurand.so.10.syms \
		$(B)/guest-lib/curand/impl.syms \
		guest-lib/exports/libcurand-local.txt \
		guest-lib/exports/libcurand-unsupported.txt \
	--lib cufft guest-lib/exports/libcufft.so.12.syms \
		$(B)/guest-lib/cufft/impl.syms \
		guest-lib/exports/libcufft-local.txt \
		guest-lib/exports/libcufft-unsupported.txt
STATUS_ARGS = $(GEN_INCLUDES) --exports $(GUEST_EXPORTS) --impl $(B)/guest-lib/impl.syms \
	      --local guest-lib/exports/local.txt \
	      --unsupported guest-lib/exports/unsupported.txt \
	      $(LIB_STATUS) $(SPEC)
STATUS_DEPS = $(GEN)/docs/commands.md $(B)/guest-lib/impl.syms \
	      $(filter $(B)/%,$(LIB_STATUS))
docs: $(STATUS_DEPS)
	cp $(GEN)/docs/commands.md docs/commands.md
	$(PYTHON) tools/gen-calls.py status --out docs/STATUS.md $(STATUS_ARGS)

check-docs: $(STATUS_DEPS)
	@cmp -s $(GEN)/docs/commands.md docs/commands.md || \
		{ echo "docs/commands.md is out of date: make docs" >&2; exit 1; }
	$(PYTHON) tools/gen-calls.py status --check --out docs/STATUS.md \
		$(STATUS_ARGS)

$(B)/%.o: %.c | $(GEN_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(XCFLAGS) -c $< -o $@

# Generated sources compile as if they sat beside the ones they serve.
$(GEN)/guest-lib/%.o: $(GEN)/guest-lib/%.c
	$(CC) $(CPPFLAGS) -Iguest-lib $(XCFLAGS) -c $< -o $@
$(GEN)/dom0-daemon/%.o: $(GEN)/dom0-daemon/%.c
	$(CC) $(CPPFLAGS) -Idom0-daemon $(XCFLAGS) \
		-c $< -o $@
$(GEN)/common/%.o: $(GEN)/common/%.c
	$(CC) $(CPPFLAGS) $(XCFLAGS) -c $< -o $@

# The driver library: its objects see cuda.h's unversioned names.
$(B)/guest-lib/driver/%.o: guest-lib/driver/%.c $(DRIVER_TABLES) | $(GEN_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(DRIVER_CPPFLAGS) $(XCFLAGS) -c $< -o $@
$(GEN)/guest-lib/driver_entries.o: $(GEN_DRIVER)
	$(CC) $(CPPFLAGS) $(DRIVER_CPPFLAGS) $(XCFLAGS) -c $< -o $@

$(DRIVER_TABLES) &: tools/gen-driver-tables.sh
	tools/gen-driver-tables.sh $(CUDA_HOME)/include \
		$(B)/guest-lib/driver/gen

$(B)/guest-lib/driver/impl.syms: $(DRIVER_OBJ)
	@mkdir -p $(dir $@)
	nm --defined-only -g $(DRIVER_OBJ) | awk 'NF==3 && $$2=="T" {print $$3}' \
		| sort -u > $@

$(B)/guest-lib/driver/gen/stubs.c $(B)/guest-lib/driver/gen/libcuda.map &: \
		$(DRIVER_EXPORTS) $(B)/guest-lib/driver/impl.syms \
		tools/gen-lib-stubs.sh
	tools/gen-lib-stubs.sh cu driver_stub.h $(DRIVER_EXPORTS) \
		$(B)/guest-lib/driver/impl.syms \
		$(B)/guest-lib/driver/gen/stubs.c \
		$(B)/guest-lib/driver/gen/libcuda.map

$(B)/guest-lib/driver/gen/stubs.o: $(B)/guest-lib/driver/gen/stubs.c
	$(CC) -Iguest-lib -Iguest-lib/driver $(XCFLAGS) -c $< -o $@

$(DRIVER_SO): $(DRIVER_OBJ) $(B)/guest-lib/driver/gen/stubs.o \
		$(B)/guest-lib/driver/gen/libcuda.map $(GUEST_SO)
	$(CC) -shared -pthread -Wl,-soname,libcuda.so.1 \
		-Wl,--version-script,$(B)/guest-lib/driver/gen/libcuda.map \
		-Wl,-z,defs -o $@ $(DRIVER_OBJ) $(B)/guest-lib/driver/gen/stubs.o \
		-L$(B)/lib -l:libcudart.so.13 -Wl,-rpath,'$$ORIGIN' -ldl \
		$(LDFLAGS)
	ln -sf libcuda.so.1 $(B)/lib/libcuda.so

$(B)/guest-lib/blas/%.o: guest-lib/blas/%.c | $(GEN_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Iguest-lib -Iguest-lib/blas $(XCFLAGS) -c $< -o $@
$(GEN)/guest-lib/blas_entries.o $(GEN)/guest-lib/blaslt_entries.o: \
		$(GEN)/guest-lib/%.o: $(GEN)/guest-lib/%.c
	$(CC) $(CPPFLAGS) -Iguest-lib -Iguest-lib/blas $(XCFLAGS) -c $< -o $@
$(GEN)/guest-lib/blas_entries.c $(GEN)/guest-lib/blaslt_entries.c: \
		$(GEN_STAMP)
	@:

# $(call math_lib,NAME,OBJECTS): NAME.so.13 from OBJECTS, with a stub for
# every export of NVIDIA's NAME.so.13 they lack, under its version node.
define math_lib
$(B)/guest-lib/blas/$1.impl.syms: $2
	@mkdir -p $$(dir $$@)
	nm --defined-only -g $2 | awk 'NF==3 && $$$$2=="T" {print $$$$3}' \
		| sort -u > $$@
$(B)/guest-lib/blas/gen/$1.stubs.c $(B)/guest-lib/blas/gen/$1.map &: \
		guest-lib/exports/$1.so.13.syms \
		$(B)/guest-lib/blas/$1.impl.syms tools/gen-lib-stubs.sh
	tools/gen-lib-stubs.sh -n $1.so.13 cublas blas_stub.h \
		guest-lib/exports/$1.so.13.syms \
		$(B)/guest-lib/blas/$1.impl.syms \
		$(B)/guest-lib/blas/gen/$1.stubs.c $(B)/guest-lib/blas/gen/$1.map
$(B)/guest-lib/blas/gen/$1.stubs.o: $(B)/guest-lib/blas/gen/$1.stubs.c
	$$(CC) -Iguest-lib -Iguest-lib/blas $$(XCFLAGS) -c $$< -o $$@
$(B)/lib/$1.so.13: $2 $(B)/guest-lib/blas/gen/$1.stubs.o \
		$(B)/guest-lib/blas/gen/$1.map $(GUEST_SO)
	$$(CC) -shared -pthread -Wl,-soname,$1.so.13 \
		-Wl,--version-script,$(B)/guest-lib/blas/gen/$1.map \
		-Wl,-z,defs -o $$@ $2 $(B)/guest-lib/blas/gen/$1.stubs.o \
		-L$(B)/lib -l:libcudart.so.13 -Wl,-rpath,'$$$$ORIGIN' \
		$$(LDFLAGS)
	ln -sf $1.so.13 $(B)/lib/$1.so
endef
$(eval $(call math_lib,libcublas,$(BLAS_OBJ)))
$(eval $(call math_lib,libcublasLt,$(BLASLT_OBJ)))

# $(call small_lib,DIR,SONAME,PREFIX,NODE): SONAME from guest-lib/DIR and
# its generated entry points, with a stub for every export of NVIDIA's
# SONAME (guest-lib/exports/SONAME.syms) it lacks, under the version
# node NODE where NVIDIA's library has one.
define small_lib
$(B)/guest-lib/$1/%.o: guest-lib/$1/%.c | $(GEN_STAMP)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CPPFLAGS) -Iguest-lib -Iguest-lib/$1 $$(XCFLAGS) -c $$< -o $$@
$(GEN)/guest-lib/$1_entries.o: $(GEN)/guest-lib/$1_entries.c
	$$(CC) $$(CPPFLAGS) -Iguest-lib -Iguest-lib/$1 $$(XCFLAGS) -c $$< -o $$@
$(GEN)/guest-lib/$1_entries.c: $(GEN_STAMP)
	@:

$(B)/guest-lib/$1/impl.syms: $(call lib_obj,$1)
	@mkdir -p $$(dir $$@)
	nm --defined-only -g $$^ | awk 'NF==3 && $$$$2=="T" {print $$$$3}' \
		| sort -u > $$@

$(B)/guest-lib/$1/gen/stubs.c $(B)/guest-lib/$1/gen/$2.map &: \
		guest-lib/exports/$2.syms \
		$(B)/guest-lib/$1/impl.syms tools/gen-lib-stubs.sh
	tools/gen-lib-stubs.sh $(if $4,-n $4) $3 $1_stub.h \
		guest-lib/exports/$2.syms $(B)/guest-lib/$1/impl.syms \
		$(B)/guest-lib/$1/gen/stubs.c $(B)/guest-lib/$1/gen/$2.map
$(B)/guest-lib/$1/gen/stubs.o: $(B)/guest-lib/$1/gen/stubs.c
	$$(CC) -Iguest-lib -Iguest-lib/$1 $$(XCFLAGS) -c $$< -o $$@

$(B)/lib/$2: $(call lib_obj,$1) $(B)/guest-lib/$1/gen/stubs.o \
		$(B)/guest-lib/$1/gen/$2.map $(GUEST_SO)
	$$(CC) -shared -pthread -Wl,-soname,$2 \
		-Wl,--version-script,$(B)/guest-lib/$1/gen/$2.map \
		-Wl,-z,defs -o $$@ $(call lib_obj,$1) \
		$(B)/guest-lib/$1/gen/stubs.o \
		-L$(B)/lib -l:libcudart.so.13 -Wl,-rpath,'$$$$ORIGIN' $$(LDFLAGS)
	ln -sf $2 $(B)/lib/$(basename $2)
endef
# NVIDIA's libnvidia-ml.so.1 has no version nodes: nor has ours.
$(eval $(call small_lib,nvml,libnvidia-ml.so.1,nvml,))
$(eval $(call small_lib,curand,libcurand.so.10,curand,libcurand.so.10))
$(eval $(call small_lib,cufft,libcufft.so.12,cufft,libcufft.so.12))

# xcuda-run and its rtld-audit library: every CUDA library a program
# loads is xcuda's.
$(AUDIT_SO): guest-lib/audit/audit.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(XCFLAGS) -shared -o $@ $< $(LDFLAGS)

$(XCUDA_RUN): tools/xcuda-run
	@mkdir -p $(dir $@)
	install -m 755 $< $@

# The stubs cover every export that no api_*.c defines.
$(B)/guest-lib/impl.syms: $(GUEST_OBJ)
	@mkdir -p $(dir $@)
	nm --defined-only -g $(GUEST_OBJ) | awk 'NF==3 && $$2=="T" {print $$3}' \
		| sort -u > $@

# The private node: the internals libcuda.so.1 calls, and only those.
$(B)/guest-lib/gen/stubs.c $(B)/guest-lib/gen/libcudart.map &: \
		$(GUEST_EXPORTS) $(B)/guest-lib/impl.syms tools/gen-stubs.sh \
		$(DRIVER_OBJ) $(BLAS_OBJ) $(BLASLT_OBJ) $(NVML_OBJ) \
		$(CURAND_OBJ) $(CUFFT_OBJ)
	tools/gen-stubs.sh $(GUEST_EXPORTS) $(B)/guest-lib/impl.syms \
		$(B)/guest-lib/gen/stubs.c $(B)/guest-lib/gen/libcudart.map
	{ printf '\n/* For the other guest libraries alone. */\n'; \
	  printf 'XCUDA_PRIVATE_1 {\nglobal:\n'; \
	  { nm -u $(DRIVER_OBJ) $(BLAS_OBJ) $(BLASLT_OBJ) $(NVML_OBJ) \
		$(CURAND_OBJ) $(CUFFT_OBJ) | \
		awk '$$2 ~ /^xc_/ {print "\t" $$2 ";"}'; \
	    printf '\txc_stub_note;\n'; } | sort -u; \
	  printf '};\n'; } >> $(B)/guest-lib/gen/libcudart.map

$(B)/guest-lib/gen/stubs.o: $(B)/guest-lib/gen/stubs.c
	$(CC) $(CPPFLAGS) -Iguest-lib $(XCFLAGS) -c $< -o $@

$(GUEST_SO): $(GUEST_OBJ) $(B)/guest-lib/gen/stubs.o $(B)/guest-lib/gen/libcudart.map
	@mkdir -p $(dir $@)
	$(CC) -shared -pthread -Wl,-soname,libcudart.so.13 \
		-Wl,--version-script,$(B)/guest-lib/gen/libcudart.map \
		-Wl,-z,defs -o $@ $(GUEST_OBJ) $(B)/guest-lib/gen/stubs.o \
		-Wl,-rpath,'$$ORIGIN' $(LDFLAGS) -lrt -ldl
	ln -sf libcudart.so.13 $(B)/lib/libcudart.so

$(B)/libxcguest.a: $(call obj,$(GUEST_INT))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/libxcdaemon.a: $(call obj,$(DAEMON_INT))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(XCUDAD): $(B)/dom0-daemon/xcudad.o $(B)/libxcdaemon.a
	@mkdir -p $(dir $@)
	$(CC) -pthread -o $@ $^ $(LDFLAGS) $(CUDART) $(CRYPTO) $(SECCOMP)

# The admin's ping and echo: the guest library's internals, no CUDA;
# status reads the daemon's GPU memory table (gpumem.c alone).
$(XCUDACTL): $(B)/tools/xcudactl.o $(B)/dom0-daemon/gpumem.o $(B)/libxcguest.a
	@mkdir -p $(dir $@)
	$(CC) -pthread -o $@ $^ $(LDFLAGS) -lrt -ldl

# The rig's data ring checks (tests/xen): the same internals.
$(RING_TEST): $(B)/tests/xen/ring-test.o $(B)/libxcguest.a
	@mkdir -p $(dir $@)
	$(CC) -pthread -o $@ $^ $(LDFLAGS) -lrt -ldl

# The guest's libcuda.so.1 by itself: no CUDA runtime of NVIDIA's may be
# loaded before it, or its libcudart.so.13 would resolve to that one.
$(B)/tests/test_libcuda: tests/unit/test_libcuda.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(XCFLAGS) -o $@ $< $(LDFLAGS) -ldl

# The guest's libnvidia-ml.so.1 by itself, for the same reason; it reads
# the committed export list at run time, wherever it runs from.
$(B)/tests/test_libnvml: tests/unit/test_libnvml.c | $(NVML_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(XCFLAGS) \
		-DXC_NVML_SYMS='"$(CURDIR)/guest-lib/exports/libnvidia-ml.so.1.syms"' \
		-o $@ $< $(LDFLAGS) -ldl

$(B)/tests/%: tests/unit/%.c $(B)/libxcguest.a $(B)/libxcdaemon.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(XCFLAGS) -o $@ $< \
		$(B)/libxcguest.a $(B)/libxcdaemon.a $(LDFLAGS) $(CUDART) \
		$(CRYPTO) $(SECCOMP)

# libFuzzer harnesses (tests/fuzz/fuzz_TARGET.c) over the daemon's real
# sources, compiled again by clang with coverage, ASan and UBSan into
# $(FUZZ_B); each harness links the objects it calls from their archive.
FUZZ_CC      ?= clang
FUZZ_B       := $(B)/fuzz
FUZZ_CFLAGS  := -O1 -g -fno-omit-frame-pointer \
		-fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_B)/%)
FUZZ_OBJ     := $(patsubst %.c,$(FUZZ_B)/obj/%.o,$(DAEMON_INT))
# Seconds of each harness for make fuzz; FUZZ_TARGETS picks some.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?=

$(FUZZ_B)/obj/%.o: %.c | $(GEN_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -Idom0-daemon $(CSTD) $(WARN) $(FUZZ_CFLAGS) \
		-fsanitize=fuzzer-no-link -pthread -MMD -MP -c $< -o $@

$(FUZZ_B)/libxcdaemon.a: $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_B)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_B)/libxcdaemon.a
	$(FUZZ_CC) $(CPPFLAGS) -Itests/fuzz $(CSTD) $(WARN) $(FUZZ_CFLAGS) \
		-fsanitize=fuzzer -pthread -MMD -MP -o $@ $< \
		$(FUZZ_B)/libxcdaemon.a $(CUDART) $(CRYPTO) $(SECCOMP)

fuzzers: $(FUZZ_BIN)

# Rewrites the seeds (valid inputs) of tests/fuzz/corpus/ from the
# protocol's headers; regression inputs there are kept.
fuzz-seeds: tests/fuzz/make-seeds.c | $(GEN_STAMP)
	@mkdir -p $(FUZZ_B)
	$(CC) $(CPPFLAGS) $(XCFLAGS) -o $(FUZZ_B)/make-seeds $< $(GEN_COMMON)
	mkdir -p tests/fuzz/corpus
	$(FUZZ_B)/make-seeds tests/fuzz/corpus

# The harnesses for FUZZ_SECONDS each, one after the other, from the
# corpus in tests/fuzz/corpus/ (new inputs go to $(FUZZ_B)/corpus/).
fuzz: deps
	$(MAKE) fuzzers
	tests/fuzz/run-fuzz.sh $(B) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Everything this machine can run, the Xen rig included.
check: deps deps-xen
	$(MAKE) all
	$(MAKE) fuzzers
	tests/run-unit.sh $(B)

# The Xen rig alone.
check-xen: deps deps-xen
	$(MAKE) all
	tests/xen/run.sh $(B)

# The rig's PVH pass, which make check leaves out (tests/xen/README.md,
# "The PVH pass"): QEMU's emulated SVM crashes the PVH DomU in most passes.
check-xen-pvh: deps deps-xen
	$(MAKE) all
	XCUDA_RIG_PVH=1 tests/xen/run.sh $(B) connect pvh

# The rig's HVM pass, which make check leaves out and which is run before
# each release (tests/xen/README.md, "The HVM pass"): an HVM DomU with PV
# drivers and QEMU as its device model in Dom0, which QEMU's emulated SVM
# crashes as it does the PVH one.
check-xen-hvm: deps deps-xen
	$(MAKE) all
	XCUDA_RIG_HVM=1 XCUDA_RIG_PVH=0 tests/xen/run.sh $(B) connect hvm

# The rig for a GPU host, which has no Debian packages: its images and
# Debian's QEMU in one file (RIG_PACK), made here; then, on the GPU host,
# a DomU whose sessions Dom0 relays to that host's xcudad.
RIG_PACK ?= $(B)/xcuda-rig-gpu.tar.xz
rig-pack: deps deps-xen
	$(MAKE) all
	tests/xen/run.sh $(B) --pack $(RIG_PACK)

check-xen-gpu: deps
	$(MAKE) all
	tests/xen/gpu-rig.sh $(B) $(RIG_PACK)

# CuPy runs from its sdist (CUPY_SDIST=cupy-X.Y.Z.tar.gz), built once into
# $(B)/cupy against the shared runtime: its check, then 14 files of its
# own tests.
CUPY_SDIST ?=
check-gpu: deps
	$(MAKE) all
	tests/cuda/run-compare.sh --gpu $(B)
	OUT=$(B)/results/cuda-upstream tests/cuda/run-compare.sh --gpu \
		--upstream $(B)
	tests/frameworks/run-frameworks.sh $(B)
	@if [ -z "$(CUPY_SDIST)" ]; then \
		echo "SKIP cupy: no CUPY_SDIST (CuPy's sdist: pip download" \
			"--no-deps --no-binary :all: cupy==14.2.0)"; \
	else \
		{ [ -d $(B)/cupy/cupy ] || \
		  tests/frameworks/build-cupy.sh $(CUPY_SDIST) $(B)/cupy; } && \
		PYTHONPATH=$(abspath $(B))/cupy \
			tests/frameworks/run-frameworks.sh $(B) cupy && \
		tests/frameworks/run-cupy-tests.sh $(B) $(CUPY_SDIST); \
	fi

# tests/samples/samples.txt says which samples take part, and why not the
# others.
check-samples: all
	@test -n "$(SAMPLES)" || { echo "make check-samples SAMPLES=DIR:" \
		"DIR is a checkout of NVIDIA's cuda-samples" >&2; exit 2; }
	tests/samples/samples.sh build $(SAMPLES) $(B)/samples
	tests/samples/samples.sh compare $(B)/samples $(B)

# The sample through xcudad here (on the GPU when there is one), then
# from a DomU through the Xen split driver in the QEMU rig, where the
# rig's packages can be installed.
demo: deps
	$(MAKE) all
	tools/demo.sh $(B)
	@if tests/xen/deps.sh; then tests/xen/run.sh $(B) --demo; else \
		echo "demo: skipping the Xen demo: it needs Debian 12's QEMU," \
		     "Xen 4.17 and kernel packages (make deps-xen)"; fi

# On a GPU host: xcuda-bench natively and through xcuda, paired
# (build/results/bench/; tests/bench/plot.sh draws the charts).
bench: deps
	$(MAKE) all
	tests/bench/run-bench.sh $(B)

demo-xen: deps deps-xen
	$(MAKE) all
	tests/xen/run.sh $(B) --demo

clean:
	rm -rf $(B)
	-$(MAKE) -C guest-kmod clean
	-$(MAKE) -C dom0-kmod clean
	-$(MAKE) -C tests/xen/hostile clean

-include $(shell find $(B) -name '*.d' 2>/dev/null)
