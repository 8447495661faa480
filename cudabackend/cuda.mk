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
# lives; scripts/gpu-build.sh passes it to cgo), CUDA_ARCH_FLAGS.

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
CUDA_NVCC_FLAGS := -O3 -std=c++17 $(CUDA_ARCH_FLAGS) -Xcompiler -fPIC,-Wall \
                   -I$(CUDA_SRCDIR)

.PHONY: cuda-lib cuda-clean

cuda-lib: $(CUDA_LIB)

$(CUDA_OUTDIR)/%.o: $(CUDA_SRCDIR)/%.cu $(CUDA_HDRS)
	@mkdir -p $(CUDA_OUTDIR)
	$(NVCC) $(CUDA_NVCC_FLAGS) -c $< -o $@

$(CUDA_LIB): $(CUDA_OBJS)
	@mkdir -p $(CUDA_OUTDIR)
	rm -f $@
	ar rcs $@ $(CUDA_OBJS)

cuda-clean:
	rm -rf $(CUDA_OUTDIR)

# cuda-hosttest runs the NTT passes of ntt_core.cuh on the CPU against a
# naive DFT and the definition of H (no GPU or nvcc needed; ~20 s).
.PHONY: cuda-hosttest
cuda-hosttest: $(CUDA_OUTDIR)/ntt_emu
	$(CUDA_OUTDIR)/ntt_emu

$(CUDA_OUTDIR)/ntt_emu: $(CUDA_SRCDIR)/hosttest/ntt_emu.cpp $(CUDA_HDRS)
	@mkdir -p $(CUDA_OUTDIR)
	$(CXX) -O2 -std=c++17 -Wall -I$(CUDA_SRCDIR) $< -o $@
