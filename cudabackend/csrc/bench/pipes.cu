// pipes.cu: do the FP64 units and the integer pipes issue side by side on
// this GPU? (An Fq product with its limb products on the FP64 pipe,
// fq_f64.cuh of commit 94f509f, ran no faster than the integer one;
// BENCHMARKS.md, "FP64 products".) Independent chains of IMAD.WIDE (with their
// 64-bit adds),
// of DFMA and of ALU operations (add, xor), alone and mixed, each mix timed:
// if two kinds issue side by side, the mix takes the longer of their times;
// if they share the issue, the sum.
//
//   make cuda-tools && build/cuda/bench/pipes      (or STEPS=pipes scripts/gpu-run.sh)
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

constexpr int CH = 16;  // independent chains of each kind a thread

// Each operation is one asm volatile PTX instruction, so the compiler
// neither hoists nor merges them: one mad.wide.u32 is one IMAD.WIDE.U32,
// one fma.rn.f64 one DFMA, one add.u32 / xor.b32 pair two ALU operations.
__device__ __forceinline__ uint64_t mad_wide(uint32_t a, uint32_t b, uint64_t c) {
    uint64_t r;
    asm volatile("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"(a), "r"(b), "l"(c));
    return r;
}
__device__ __forceinline__ double dfma(double a, double b, double c) {
    double r;
    asm volatile("fma.rn.f64 %0, %1, %2, %3;" : "=d"(r) : "d"(a), "d"(b), "d"(c));
    return r;
}
__device__ __forceinline__ uint32_t add_xor(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("add.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    asm volatile("xor.b32 %0, %0, %1;" : "+r"(r) : "r"(b));
    return r;
}

// MODE bits: 1 IMAD.WIDE, 2 DFMA, 4 integer add/logic (ALU); each chain
// one operation of its kind an iteration.
template <int MODE>
__global__ void __launch_bounds__(128) k_pipes(uint32_t iters, uint64_t* out, double* dout) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t acc[CH];
    uint32_t a[CH];
    double d[CH];
#pragma unroll
    for (int k = 0; k < CH; k++) {
        acc[k] = t + k;
        a[k] = t ^ (k * 0x9e3779b9u);
        d[k] = 1.0 + 1e-9 * (t + k);
    }
    const uint32_t x = t * 2654435761u, y = t | 1;  // acc feeds its own next multiplicand: nothing to hoist
    const double dy = 1.0000001, dz = 1e-7;
#pragma unroll 1
    for (uint32_t i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < CH; k++) {
            if (MODE & 1) acc[k] = mad_wide((uint32_t)(acc[k] >> 32) ^ x, y, acc[k]);
            if (MODE & 2) d[k] = dfma(d[k], dy, dz);
            if (MODE & 4) a[k] = add_xor(a[k], y);
        }
    }
    uint64_t s = 0;
    double ds = 0;
#pragma unroll
    for (int k = 0; k < CH; k++) s += acc[k] + a[k], ds += d[k];
    out[t] = s;
    dout[t] = ds;
}

template <int MODE>
static float run(int grid, uint32_t iters, uint64_t* out, double* dout) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    k_pipes<MODE><<<grid, 128>>>(iters, out, dout);  // warm-up
    cudaEventRecord(e0);
    k_pipes<MODE><<<grid, 128>>>(iters, out, dout);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return ms;
}

int main() {
    int dev = 0, sms = 0, clk = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev);
    if (e != cudaSuccess) {
        fprintf(stderr, "pipes: no usable CUDA device: %s\n", cudaGetErrorString(e));
        return 1;
    }
    const int grid = sms * 8;  // 8 blocks of 4 warps a multiprocessor
    const uint32_t iters = 1 << 15;
    uint64_t* out;
    double* dout;
    e = cudaMalloc(&out, (size_t)grid * 128 * 8);
    if (e == cudaSuccess) e = cudaMalloc(&dout, (size_t)grid * 128 * 8);
    if (e != cudaSuccess) {
        fprintf(stderr, "pipes: buffers: %s\n", cudaGetErrorString(e));
        return 1;
    }
    const double ops = (double)grid * 128 * iters * CH;  // of each kind in the mode
    const double per_clk = 1.0 / ((double)sms * clk * 1e3);
    struct { const char* name; float (*f)(int, uint32_t, uint64_t*, double*); } modes[] = {
        {"imad.wide", run<1>}, {"dfma", run<2>}, {"alu", run<4>},
        {"imad.wide+dfma", run<3>}, {"imad.wide+alu", run<5>}, {"dfma+alu", run<6>},
        {"all three", run<7>},
    };
    printf("%d SMs, %d MHz max; %d chains of each kind a thread, %d blocks of 128\n", sms, clk / 1000, CH, grid);
    for (auto& m : modes) {
        float ms = m.f(grid, iters, out, dout);
        e = cudaGetLastError();
        if (e != cudaSuccess) {
            fprintf(stderr, "pipes: %s\n", cudaGetErrorString(e));
            return 1;
        }
        printf("%-16s %9.3f ms  %7.2f of each kind a clock a multiprocessor (at max clock)\n", m.name, ms,
               ops / (ms * 1e-3) * per_clk);
    }
    return 0;
}
