# cuda.mk: builds the CUDA kernels of cudabackend/csrc into one static
# library, build/cuda/libzkcuda.a, that the cgo package cudabackend/gpu links
# (go build -tags cuda). Included by the top Makefile; `make cuda-lib`.
#
# Every cudabackend/csrc/*.cu is compiled for sm_80 (A100), sm_89 (L4/L40,
# RTX 40xx), sm_90 (H100/H200) machine code, plus compute_90 PTX so newer GPUs
# JIT-compile it. No relocatable device code: each object is self-contained,
# so the Go linker needs no device-link step. The CUDA runtime is linked
# statically (-lcudart_static) by the cgo package; only the driver
# (libcuda.so) must be present at run time.
#
# Overridable: NVCC (the compiler), CUDA_LIBDIR (where libcudart_static.a
# lives; the cuda target passes it to cgo), CUDA_ARCH_FLAGS.

NVCC        ?= nvcc
CUDA_LIBDIR ?= /usr/lib/x86_64-linux-gnu
CUDA_SRCDIR := cudabackend/csrc
CUDA_OUTDIR := build/cuda
CUDA_LIB    := $(CUDA_OUTDIR)/libzkcuda.a
CUDA_SRCS   := $(wildcard $(CUDA_SRCDIR)/*.cu)
CUDA_HDRS   := $(wildcard $(CUDA_SRCDIR)/*.cuh $(CUDA_SRCDIR)/*.h)
CUDA_OBJS   := $(patsubst $(CUDA_SRCDIR)/%.cu,$(CUDA_OUTDIR)/%.o,$(CUDA_SRCS))

CUDA_ARCH_FLAGS ?= -gencode arch=compute_80,code=sm_80 \
                   -gencode arch=compute_89,code=sm_89 \
                   -gencode arch=compute_90,code=[sm_90,compute_90]
CUDA_NVCC_FLAGS := -O3 -std=c++17 $(CUDA_ARCH_FLAGS) -Xcompiler -fPIC,-Wall,-Wno-unknown-pragmas \
                   -I$(CUDA_SRCDIR)

.PHONY: cuda-lib cuda-tools cuda-clean

cuda-lib: $(CUDA_LIB)

# cuda-tools builds the stand-alone device measurements of
# cudabackend/csrc/bench (each a main of its own, cudart linked statically
# by nvcc): bench/pipes.cu, which issue pipes share a multiprocessor.
# scripts/gpu-build.sh carries them to the GPU machine.
CUDA_TOOLS := $(patsubst $(CUDA_SRCDIR)/bench/%.cu,$(CUDA_OUTDIR)/bench/%,$(wildcard $(CUDA_SRCDIR)/bench/*.cu))

cuda-tools: $(CUDA_TOOLS)

$(CUDA_OUTDIR)/bench/%: $(CUDA_SRCDIR)/bench/%.cu $(CUDA_FLAGS_STAMP)
	@mkdir -p $(CUDA_OUTDIR)/bench
	$(NVCC) -O3 -std=c++17 $(CUDA_ARCH_FLAGS) $< -o $@

# Each object depends on the headers it includes (nvcc -MMD writes the .d
# files), so editing one module's header does not rebuild the others, and on
# the flags it was compiled with (CUDA_FLAGS_STAMP), so that objects built for
# other architectures (scripts/gpu-build.sh builds for sm_90 alone) are built
# again rather than linked into a binary that lacks the others' code.
# The stamp's recipe runs every time but rewrites it only when the flags
# differ; make compares its time after the recipe, so unchanged flags rebuild
# nothing.
CUDA_FLAGS_STAMP := $(CUDA_OUTDIR)/nvcc-flags

$(CUDA_FLAGS_STAMP): cuda-force
	@mkdir -p $(CUDA_OUTDIR)
	@echo '$(CUDA_NVCC_FLAGS)' | cmp -s - $@ || echo '$(CUDA_NVCC_FLAGS)' > $@

.PHONY: cuda-force
cuda-force:

$(CUDA_OUTDIR)/%.o: $(CUDA_SRCDIR)/%.cu $(CUDA_FLAGS_STAMP)
	@mkdir -p $(CUDA_OUTDIR)
	$(NVCC) $(CUDA_NVCC_FLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $@

-include $(CUDA_OBJS:.o=.d)

$(CUDA_LIB): $(CUDA_OBJS)
	@mkdir -p $(CUDA_OUTDIR)
	rm -f $@
	ar rcs $@ $(CUDA_OBJS)

cuda-clean:
	rm -rf $(CUDA_OUTDIR)

# cuda-hosttest builds every cudabackend/csrc/hosttest/*.cpp with the host
# compiler and runs it: CPU emulations of the kernels' index math and
# arithmetic (ntt_emu: the NTT passes of both scalar fields against
# gnark-crypto's transforms, a naive DFT and the definition of H;
# field_emu: field.cuh's carry-chain arithmetic against the portable
# references). No GPU or nvcc needed; Go, for ntt_emu's expectations:
# ntt_gnark.h, written into the build folder by hosttest/gnarkntt from the
# gnark-crypto of go.mod (generated, never committed, so never stale).
CUDA_HOSTTEST_SRCS := $(wildcard $(CUDA_SRCDIR)/hosttest/*.cpp)
CUDA_HOSTTEST_BINS := $(patsubst $(CUDA_SRCDIR)/hosttest/%.cpp,$(CUDA_OUTDIR)/hosttest/%,$(CUDA_HOSTTEST_SRCS))
CUDA_HOSTTEST_GEN  := $(CUDA_OUTDIR)/hosttest/ntt_gnark.h
GO ?= go

.PHONY: cuda-hosttest
cuda-hosttest: $(CUDA_HOSTTEST_BINS)
	@for t in $(CUDA_HOSTTEST_BINS); do echo "== $$t"; $$t || exit 1; done

$(CUDA_HOSTTEST_GEN): $(wildcard $(CUDA_SRCDIR)/hosttest/gnarkntt/*.go) go.mod go.sum
	@mkdir -p $(CUDA_OUTDIR)/hosttest
	$(GO) run ./$(CUDA_SRCDIR)/hosttest/gnarkntt > $@.tmp && mv $@.tmp $@

$(CUDA_OUTDIR)/hosttest/ntt_emu: $(CUDA_HOSTTEST_GEN)

$(CUDA_OUTDIR)/hosttest/%: $(CUDA_SRCDIR)/hosttest/%.cpp $(CUDA_HDRS) $(wildcard $(CUDA_SRCDIR)/hosttest/*.h)
	@mkdir -p $(CUDA_OUTDIR)/hosttest
	$(CXX) -O2 -std=c++17 -Wall -Wno-unknown-pragmas -I$(CUDA_SRCDIR) -I$(CUDA_OUTDIR)/hosttest $< -o $@
