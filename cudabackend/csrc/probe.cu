// probe.cu: the arithmetic throughput probes of probe.h. k_probe runs
// curve.cuh's mixed addition, the one the MSM's accumulation runs, on
// L1-resident points: what it reaches is the ceiling of k_accum0's
// additions a second at the same occupancy. k_probe_fmul runs the Fq
// product alone.
#include <cuda_runtime.h>

#include <initializer_list>
#include <utility>

#include "common.cuh"
#include "curve.cuh"
#include "msm_core.cuh"
#include "probe.h"

namespace {

constexpr uint32_t PROBE_THREADS = 128;  // msm.cu's ACC_THREADS
using A = affine_t<fq_t>;
using X = xyzz_t<fq_t>;

// to_affine_out stores p as a canonical affine point (one inversion; the
// probe's timing ends before this).
ZK_HD A to_affine_out(const X& p) {
    A r;
    if (p.is_inf()) {
        r.x = fq_t::zero();
        r.y = fq_t::zero();
        return r;
    }
    fq_t zzi = zk_msm::finv(p.zz);
    fq_t zzzi = zk_msm::finv(p.zzz);
    r.x = fcanon(fmul(p.x, zzi));
    r.y = fcanon(fmul(p.y, zzzi));
    return r;
}

// k_probe: one accumulator a thread; REG_BLOCKS sizes the registers as
// k_accum0's __launch_bounds__ would for that many blocks a multiprocessor.
template <int REG_BLOCKS>
__global__ void __launch_bounds__(PROBE_THREADS, REG_BLOCKS)
    k_probe(const A* __restrict__ pts, uint32_t mask, uint32_t iters, X* __restrict__ acc_out) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t s = t & mask;
    X acc = X::from_affine(zk_msm::ldp(pts + s));
#pragma unroll 1
    for (uint32_t i = 0; i < iters; i++) {
        A p = zk_msm::ldp(pts + ((s + 1 + i) & mask));
        acc.add_affine(p.x, p.y);
    }
    zk_msm::stp(acc_out + t, acc);
}

// k_probe_fmul: ILP independent chains of products a thread (registers
// sized for two blocks a multiprocessor, as k_accum0's).
template <int ILP>
__global__ void __launch_bounds__(PROBE_THREADS, 2)
    k_probe_fmul(const fq_t* __restrict__ xs, const fq_t* __restrict__ ys, uint32_t mask,
                 uint32_t iters, fq_t* __restrict__ out) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    fq_t x[ILP], y[ILP];
#pragma unroll
    for (int j = 0; j < ILP; j++) {
        x[j] = zk_msm::ldp(xs + ((t * ILP + j) & mask));
        y[j] = zk_msm::ldp(ys + ((t * ILP + j) & mask));
    }
#pragma unroll 1
    for (uint32_t i = 0; i < iters; i++) {
#pragma unroll
        for (int j = 0; j < ILP; j++) x[j] = fmul(x[j], y[j]);
    }
#pragma unroll
    for (int j = 0; j < ILP; j++) out[(size_t)t * ILP + j] = fcanon(x[j]);
}

// timed runs launch on the legacy stream between two events and reports
// the kernel's device time.
template <class L>
int timed(L launch, float* ms, char* err, size_t errlen) {
    cudaEvent_t e0, e1;
    ZK_CUDA(cudaEventCreate(&e0));
    cudaError_t e = cudaEventCreate(&e1);
    if (e != cudaSuccess) {
        cudaEventDestroy(e0);
        return zk_cuda_fail(err, errlen, e, "probe: event", __FILE__, __LINE__);
    }
    e = cudaEventRecord(e0, 0);
    if (e == cudaSuccess) {
        launch();
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaEventRecord(e1, 0);
    if (e == cudaSuccess) e = cudaEventSynchronize(e1);
    if (e == cudaSuccess) e = cudaEventElapsedTime(ms, e0, e1);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (e != cudaSuccess) return zk_cuda_fail(err, errlen, e, "probe: kernel", __FILE__, __LINE__);
    return ZK_OK;
}

// fits fails unless blocks_per_sm blocks of kern fit on a multiprocessor.
template <class K>
int fits(K kern, int blocks_per_sm, char* err, size_t errlen) {
    int fit = 0;
    ZK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kern, PROBE_THREADS, 0));
    if (blocks_per_sm > fit)
        return zk_fail(err, errlen, ZK_EINVAL, "probe: %d blocks a multiprocessor asked, %d fit",
                       blocks_per_sm, fit);
    return ZK_OK;
}

__global__ void k_probe_affine(const X* __restrict__ in, uint32_t n, A* __restrict__ out) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) zk_msm::stp(out + i, to_affine_out(zk_msm::ldp(in + i)));
}

template <int REG_BLOCKS>
int run(int blocks_per_sm, uint32_t sms, const A* pts, uint32_t mask, uint32_t iters, X* acc,
        float* ms, int* regs, int* spill, char* err, size_t errlen) {
    auto kern = k_probe<REG_BLOCKS>;
    cudaFuncAttributes fa;
    ZK_CUDA(cudaFuncGetAttributes(&fa, kern));
    *regs = fa.numRegs;
    *spill = (int)fa.localSizeBytes;
    int rc = fits(kern, blocks_per_sm, err, errlen);
    if (rc != ZK_OK) return rc;
    return timed([&]() { kern<<<blocks_per_sm * sms, PROBE_THREADS>>>(pts, mask, iters, acc); },
                 ms, err, errlen);
}

// run_fmul_ilp runs k_probe_fmul<ILP> on grid blocks, timed.
template <int ILP>
int run_fmul_ilp(int blocks_per_sm, uint32_t grid, const fq_t* x, const fq_t* y, uint32_t mask,
                 uint32_t iters, fq_t* out, float* ms, char* err, size_t errlen) {
    int rc = fits(k_probe_fmul<ILP>, blocks_per_sm, err, errlen);
    if (rc != ZK_OK) return rc;
    return timed([&]() { k_probe_fmul<ILP><<<grid, PROBE_THREADS>>>(x, y, mask, iters, out); },
                 ms, err, errlen);
}

// device_buffers allocates each (pointer, bytes) pair; on failure frees
// what it allocated.
int device_buffers(std::initializer_list<std::pair<void**, size_t>> bufs, char* err,
                   size_t errlen) {
    for (auto& b : bufs) *b.first = nullptr;
    for (auto& b : bufs) {
        cudaError_t e = cudaMalloc(b.first, b.second);
        if (e != cudaSuccess) {
            for (auto& f : bufs) cudaFree(*f.first);
            return zk_cuda_fail(err, errlen, e, "probe: buffers", __FILE__, __LINE__);
        }
    }
    return ZK_OK;
}

}  // namespace

int zk_probe_threads(int device, int blocks_per_sm, uint32_t* threads, char* err,
                          size_t errlen) {
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    if (threads == NULL || blocks_per_sm < 1)
        return zk_fail(err, errlen, ZK_EINVAL, "probe: threads NULL or blocks_per_sm %d < 1",
                       blocks_per_sm);
    int sms = 0;
    ZK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    *threads = (uint32_t)(blocks_per_sm * sms) * PROBE_THREADS;
    return ZK_OK;
}

int zk_probe_madd(int device, int reg_blocks, int blocks_per_sm, const void* points,
                  uint32_t npts, uint32_t iters, void* out, float* ms, int* regs, int* spill,
                  char* err, size_t errlen) {
    if (points == NULL || out == NULL || ms == NULL || regs == NULL || spill == NULL)
        return zk_fail(err, errlen, ZK_EINVAL, "probe: NULL argument");
    if (reg_blocks != 2 && reg_blocks != 3)
        return zk_fail(err, errlen, ZK_EINVAL, "probe: reg_blocks %d: 2 or 3", reg_blocks);
    if (npts < 2 || npts > 1024 || (npts & (npts - 1)) != 0)
        return zk_fail(err, errlen, ZK_EINVAL, "probe: npts %u: a power of two in [2, 1024]",
                       npts);
    uint32_t threads = 0;
    int rc = zk_probe_threads(device, blocks_per_sm, &threads, err, errlen);
    if (rc != ZK_OK) return rc;
    const uint32_t sms = threads / PROBE_THREADS / (uint32_t)blocks_per_sm;
    A* dpts;
    X* dacc;
    A* dout;
    rc = device_buffers({{(void**)&dpts, npts * sizeof(A)},
                         {(void**)&dacc, threads * sizeof(X)},
                         {(void**)&dout, threads * sizeof(A)}},
                        err, errlen);
    if (rc != ZK_OK) return rc;
    const uint32_t mask = npts - 1;
    cudaError_t e = cudaMemcpy(dpts, points, npts * sizeof(A), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        rc = zk_cuda_fail(err, errlen, e, "probe: points", __FILE__, __LINE__);
    } else {
        auto run_madd = reg_blocks == 2 ? run<2> : run<3>;
        rc = run_madd(blocks_per_sm, sms, dpts, mask, iters, dacc, ms, regs, spill, err, errlen);
    }
    if (rc == ZK_OK) {
        k_probe_affine<<<(threads + 127) / 128, 128>>>(dacc, threads, dout);
        e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaMemcpy(out, dout, threads * sizeof(A), cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) rc = zk_cuda_fail(err, errlen, e, "probe: results", __FILE__, __LINE__);
    }
    cudaFree(dpts);
    cudaFree(dacc);
    cudaFree(dout);
    return rc;
}

int zk_probe_fmul(int device, int ilp, int blocks_per_sm, const void* xs, const void* ys,
                  uint32_t n, uint32_t iters, void* out, float* ms, char* err, size_t errlen) {
    if (xs == NULL || ys == NULL || out == NULL || ms == NULL)
        return zk_fail(err, errlen, ZK_EINVAL, "probe: NULL argument");
    if (ilp != 1 && ilp != 2 && ilp != 4)
        return zk_fail(err, errlen, ZK_EINVAL, "probe: ilp %d: 1, 2 or 4", ilp);
    if (n < 1 || n > 1024 || (n & (n - 1)) != 0)
        return zk_fail(err, errlen, ZK_EINVAL, "probe: n %u: a power of two up to 1024", n);
    uint32_t threads = 0;
    int rc = zk_probe_threads(device, blocks_per_sm, &threads, err, errlen);
    if (rc != ZK_OK) return rc;
    const size_t nout = (size_t)threads * ilp;
    fq_t *dx, *dy, *dout;
    rc = device_buffers({{(void**)&dx, n * sizeof(fq_t)},
                         {(void**)&dy, n * sizeof(fq_t)},
                         {(void**)&dout, nout * sizeof(fq_t)}},
                        err, errlen);
    if (rc != ZK_OK) return rc;
    const uint32_t grid = threads / PROBE_THREADS, mask = n - 1;
    cudaError_t e = cudaMemcpy(dx, xs, n * sizeof(fq_t), cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(dy, ys, n * sizeof(fq_t), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        rc = zk_cuda_fail(err, errlen, e, "probe: inputs", __FILE__, __LINE__);
    } else {
        auto run_fmul = ilp == 1 ? run_fmul_ilp<1> : ilp == 2 ? run_fmul_ilp<2> : run_fmul_ilp<4>;
        rc = run_fmul(blocks_per_sm, grid, dx, dy, mask, iters, dout, ms, err, errlen);
    }
    if (rc == ZK_OK) {
        e = cudaMemcpy(out, dout, nout * sizeof(fq_t), cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) rc = zk_cuda_fail(err, errlen, e, "probe: results", __FILE__, __LINE__);
    }
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dout);
    return rc;
}
