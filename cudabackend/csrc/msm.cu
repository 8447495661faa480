// msm.cu: BLS12-381 G1 and G2 multi-scalar multiplication (Pippenger).
//
// Pipeline of one MSM, all on one stream:
//  1. k_digits: each scalar (gnark Montgomery form) is converted to an
//     integer and cut into nwin signed c-bit digits d in (-2^(c-1), 2^(c-1)].
//     Digit d != 0 of window w becomes the pair (key = w*m + |d|-1,
//     val = point index | sign bit), m = 2^(c-1); d == 0 gets the key
//     sentinel = nwin*m, which sorts last and is skipped.
//  2. cub::DeviceRadixSort sorts the nwin*n pairs by key, so every bucket's
//     points are one contiguous run.
//  3. k_accum0 cuts the sorted pairs into equal segments, one per thread
//     (load balance does not depend on how scalars are distributed: Groth16
//     witnesses are full of 0 and 1). A thread sums each run of equal keys
//     into an XYZZ accumulator with mixed additions; a run entirely inside
//     its segment is stored straight into its bucket, a run that crosses
//     the segment's first or last edge goes to one of two partial slots.
//     k_merge then treats the partial slots (sorted by key as well) the same
//     way, level after level, adding closed runs into their buckets, until
//     one segment remains. Each bucket is written by one thread per level.
//  4. k_reduce computes each window's sum_j (j+1)*B_j: the m buckets are cut
//     into T segments of L; a thread keeps the running and the weighted sum
//     of its segment (2L additions) and the segment's offset s*L*run is
//     L * (s*run), s*run by double-and-add. k_tree sums both lists per
//     window, k_window applies the factor L and adds the chunk's window sums
//     into the accumulators, k_horner combines the windows
//     (sum_w 2^(c*w) W_w) in Jacobian coordinates and converts the result.
// Scalars beyond MAX_CHUNK are processed in chunks whose window sums add up.
#include <cuda_runtime.h>
#include <cub/cub.cuh>

#include <mutex>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <vector>

#include "msm.h"
#include "msm_core.cuh"
#include "msm_plan.h"

namespace {

constexpr uint32_t ACC_THREADS = 128;  // block size of the EC kernels
constexpr uint32_t K_MERGE = ZK_MSM_K_MERGE;  // entries per thread in the later levels
constexpr uint32_t MIN_SEG = ZK_MSM_MIN_SEG;  // fewest pairs per level-0 thread
constexpr size_t MAX_CHUNK = ZK_MSM_MAX_CHUNK;
static_assert(ZK_MSM_TREE_G == zk_msm::TREE_G, "msm_plan.h sizes the tree for msm_core.cuh's TREE_G");

using namespace zk_msm;

// ---- kernels (bodies in msm_core.cuh) --------------------------------------

__global__ void k_digits(const fr_t* __restrict__ scalars, uint32_t n, int c, int nwin,
                         uint32_t* __restrict__ keys, uint32_t* __restrict__ vals) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) digits_one(i, scalars, n, c, nwin, keys, vals);
}

template <class F>
__global__ void __launch_bounds__(ACC_THREADS)
    k_accum0(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ vals, uint32_t M,
             uint32_t K, uint32_t T, const affine_t<F>* __restrict__ bases, uint32_t sentinel,
             xyzz_t<F>* __restrict__ buckets, uint32_t* __restrict__ pkeys,
             xyzz_t<F>* __restrict__ ppts) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < T)
        accumulate_one<true, F>(t, keys, vals, bases, nullptr, M, K, sentinel, buckets, pkeys,
                                ppts);
}

template <class F>
__global__ void __launch_bounds__(ACC_THREADS)
    k_merge(const uint32_t* __restrict__ keys, const xyzz_t<F>* __restrict__ pts, uint32_t M,
            uint32_t K, uint32_t T, uint32_t sentinel, xyzz_t<F>* __restrict__ buckets,
            uint32_t* __restrict__ okeys, xyzz_t<F>* __restrict__ opts) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < T)
        accumulate_one<false, F>(t, keys, nullptr, nullptr, pts, M, K, sentinel, buckets, okeys,
                                 opts);
}

template <class F>
__global__ void __launch_bounds__(ACC_THREADS)
    k_reduce(const xyzz_t<F>* __restrict__ buckets, uint32_t m, uint32_t L, uint32_t T,
             uint32_t nwin, xyzz_t<F>* __restrict__ out) {
    uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < nwin * T) reduce_one(tid, buckets, m, L, T, nwin, out);
}

template <class F>
__global__ void __launch_bounds__(ACC_THREADS)
    k_tree(const xyzz_t<F>* __restrict__ in, uint32_t groups, uint32_t len, uint32_t outlen,
           xyzz_t<F>* __restrict__ out) {
    uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < groups * outlen) tree_one(tid, in, len, outlen, out);
}

template <class F>
__global__ void k_window(const xyzz_t<F>* __restrict__ sums, uint32_t nwin, int logL,
                         xyzz_t<F>* __restrict__ wacc, int first) {
    uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w < nwin) window_one(w, sums, nwin, logL, wacc, first != 0);
}

template <class F>
__global__ void k_horner(const xyzz_t<F>* __restrict__ wacc, uint32_t nwin, int c,
                         jac_t<F>* __restrict__ out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) stp(out, horner(wacc, nwin, c));
}

// k_expand: out[i] = skip[i] ? infinity : compact[pos[i]].
template <class F>
__global__ void k_expand(const affine_t<F>* __restrict__ compact, const uint8_t* __restrict__ skip,
                         const uint32_t* __restrict__ pos, uint32_t n,
                         affine_t<F>* __restrict__ out) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    affine_t<F> p;
    if (skip[i]) {
        p.x = F::zero();
        p.y = F::zero();
    } else {
        p = ldp(compact + pos[i]);
    }
    stp(out + i, p);
}

__global__ void k_keep_flags(const uint8_t* __restrict__ skip, uint32_t n, uint32_t* __restrict__ f) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) f[i] = skip[i] ? 0u : 1u;
}

// ---- host side -------------------------------------------------------------

int fail(char* err, size_t errlen, int code, const char* fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

int cuda_code(cudaError_t e) {
    switch (e) {
    case cudaErrorMemoryAllocation:
        return ZK_MSM_ENOMEM;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
        return ZK_MSM_ENODEV;
    default:
        return ZK_MSM_ECUDA;
    }
}

#define CU(call)                                                                          \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            return fail(err, errlen, cuda_code(e_), "msm: %s: %s (%s:%d)", #call,         \
                        cudaGetErrorString(e_), __FILE__, __LINE__);                      \
        }                                                                                 \
    } while (0)

#define LAUNCHED(what)                                                                    \
    do {                                                                                  \
        cudaError_t e_ = cudaGetLastError();                                              \
        if (e_ != cudaSuccess) {                                                          \
            return fail(err, errlen, cuda_code(e_), "msm: launch %s: %s", what,           \
                        cudaGetErrorString(e_));                                          \
        }                                                                                 \
    } while (0)

struct handle_t {
    int group;
    int dev;
    size_t n;
    void* bases;
    cudaStream_t stream;
    int sms;
    uint32_t resident_accum;   // threads of k_accum0 the device holds at once
    uint32_t resident_reduce;  // likewise for k_reduce
};

// Workspace memory comes from one stream-ordered pool per device that keeps
// its memory between calls (allocation is then nearly free); zk_msm_free
// trims it.
std::mutex pool_mu;
cudaMemPool_t pools[64];
bool pool_made[64];

cudaError_t get_pool(int dev, cudaMemPool_t* out) {
    std::lock_guard<std::mutex> lk(pool_mu);
    if (dev < 0 || dev >= 64) return cudaErrorInvalidDevice;
    if (!pool_made[dev]) {
        cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.handleTypes = cudaMemHandleTypeNone;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        cudaError_t e = cudaMemPoolCreate(&pools[dev], &props);
        if (e != cudaSuccess) return e;
        uint64_t thr = ~(uint64_t)0;
        e = cudaMemPoolSetAttribute(pools[dev], cudaMemPoolAttrReleaseThreshold, &thr);
        if (e != cudaSuccess) return e;
        pool_made[dev] = true;
    }
    *out = pools[dev];
    return cudaSuccess;
}

// work_t owns one MSM's stream-ordered allocations and events.
struct work_t {
    cudaStream_t st = nullptr;
    cudaMemPool_t pool = nullptr;
    std::vector<void*> ptrs;
    std::vector<cudaEvent_t> evs;
    ~work_t() {
        for (void* p : ptrs) cudaFreeAsync(p, st);
        for (cudaEvent_t e : evs) cudaEventDestroy(e);
    }
    cudaError_t alloc(void** p, size_t bytes) {
        if (bytes == 0) bytes = 16;
        cudaError_t e = cudaMallocFromPoolAsync(p, bytes, pool, st);
        if (e == cudaSuccess) ptrs.push_back(*p);
        return e;
    }
    cudaError_t event(cudaEvent_t* ev) {
        cudaError_t e = cudaEventCreate(ev);
        if (e == cudaSuccess) evs.push_back(*ev);
        return e;
    }
};

// The plan (window size, thread counts) and the workspace sizes come from
// msm_plan.h, which the Go admission estimate shares.
using plan_t = zk_msm_plan;

plan_t make_plan(const handle_t* h, size_t chunk) {
    return zk_msm_make_plan(chunk, h->resident_accum, h->resident_reduce);
}

// sort_bytes is the radix sort's temporary storage for plan p: what CUB asks,
// or msm_plan.h's bound of it when larger, so that the allocation is what the
// estimate counts.
int sort_bytes(const plan_t& p, cudaStream_t st, size_t* out, char* err, size_t errlen) {
    size_t b = 0;
    cub::DoubleBuffer<uint32_t> dk(nullptr, nullptr), dv(nullptr, nullptr);
    CU(cub::DeviceRadixSort::SortPairs(nullptr, b, dk, dv, (int)p.M, 0, p.keybits, st));
    size_t bound = (size_t)zk_msm_sort_bytes_bound(p.M, p.keybits);
    *out = b > bound ? b : bound;
    return ZK_MSM_OK;
}

// residency is how many threads of k_accum0 and k_reduce device dev holds at
// once: the plan's thread counts, and so its partial-sum buffers, follow them.
template <class F>
int residency(int dev, uint32_t* accum, uint32_t* reduce, char* err, size_t errlen) {
    int sms = 0, blocks = 0;
    CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_accum0<F>, ACC_THREADS, 0));
    if (blocks < 1) blocks = 1;
    *accum = (uint32_t)(blocks * sms * ACC_THREADS);
    CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_reduce<F>, ACC_THREADS, 0));
    if (blocks < 1) blocks = 1;
    *reduce = (uint32_t)(blocks * sms * ACC_THREADS);
    return ZK_MSM_OK;
}

template <class F>
int upload_impl(int group, const void* points, size_t n, const uint8_t* skip, size_t nskip,
                void** handle, char* err, size_t errlen) {
    using A = affine_t<F>;
    size_t total = skip ? nskip : n;
    if (total >= ((size_t)1 << 31))
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: %zu points: at most 2^31-1 supported", total);
    handle_t* h = new handle_t();
    h->group = group;
    h->n = total;
    h->bases = nullptr;
    h->stream = nullptr;
    struct guard_t {
        handle_t*& h;
        ~guard_t() {
            if (!h) return;
            if (h->bases) cudaFree(h->bases);
            if (h->stream) cudaStreamDestroy(h->stream);
            delete h;
        }
    } guard{h};
    CU(cudaGetDevice(&h->dev));
    CU(cudaDeviceGetAttribute(&h->sms, cudaDevAttrMultiProcessorCount, h->dev));
    if (int rc = residency<F>(h->dev, &h->resident_accum, &h->resident_reduce, err, errlen))
        return rc;
    CU(cudaStreamCreateWithFlags(&h->stream, cudaStreamNonBlocking));
    CU(cudaMalloc(&h->bases, total * sizeof(A) + 16));
    if (!skip) {
        if (n) CU(cudaMemcpyAsync(h->bases, points, n * sizeof(A), cudaMemcpyHostToDevice, h->stream));
    } else if (total) {
        work_t wk;
        wk.st = h->stream;
        CU(get_pool(h->dev, &wk.pool));
        void *compact, *mask, *flags, *pos, *tmp;
        CU(wk.alloc(&compact, n * sizeof(A)));
        CU(wk.alloc(&mask, total));
        CU(wk.alloc(&flags, total * 4));
        CU(wk.alloc(&pos, total * 4));
        if (n) CU(cudaMemcpyAsync(compact, points, n * sizeof(A), cudaMemcpyHostToDevice, h->stream));
        CU(cudaMemcpyAsync(mask, skip, total, cudaMemcpyHostToDevice, h->stream));
        uint32_t grid = (uint32_t)((total + 255) / 256);
        k_keep_flags<<<grid, 256, 0, h->stream>>>((const uint8_t*)mask, (uint32_t)total, (uint32_t*)flags);
        LAUNCHED("k_keep_flags");
        size_t tmpb = 0;
        CU(cub::DeviceScan::ExclusiveSum(nullptr, tmpb, (uint32_t*)flags, (uint32_t*)pos, (int)total,
                                         h->stream));
        CU(wk.alloc(&tmp, tmpb));
        CU(cub::DeviceScan::ExclusiveSum(tmp, tmpb, (uint32_t*)flags, (uint32_t*)pos, (int)total,
                                         h->stream));
        k_expand<F><<<grid, 256, 0, h->stream>>>((const A*)compact, (const uint8_t*)mask,
                                                  (const uint32_t*)pos, (uint32_t)total, (A*)h->bases);
        LAUNCHED("k_expand");
        CU(cudaStreamSynchronize(h->stream));
    }
    CU(cudaStreamSynchronize(h->stream));
    *handle = h;
    h = nullptr;  // the guard keeps it
    return ZK_MSM_OK;
}

float elapsed(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) return 0;
    return ms;
}

template <class F>
int run_impl(handle_t* h, const void* scalars, size_t n, bool on_dev, cudaStream_t st, void* out,
             zk_msm_timing* tm, char* err, size_t errlen) {
    using A = affine_t<F>;
    using P = xyzz_t<F>;
    using J = jac_t<F>;
    zk_msm_timing t;
    memset(&t, 0, sizeof t);
    if (n == 0) {
        J r = J::inf();
        memcpy(out, &r, sizeof r);
        if (tm) *tm = t;
        return ZK_MSM_OK;
    }
    if (n > h->n)
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: %zu scalars for %zu resident bases", n, h->n);
    if (!scalars) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil scalars");
    CU(cudaSetDevice(h->dev));

    const size_t chunk = n < MAX_CHUNK ? n : MAX_CHUNK;
    const size_t nchunks = (n + chunk - 1) / chunk;
    const plan_t p = make_plan(h, chunk);
    // Every allocation's size from msm_plan.h (zk_msm_work_bytes reports their sum).
    size_t sort_tmp_bytes = 0;
    if (int rc = sort_bytes(p, st, &sort_tmp_bytes, err, errlen)) return rc;
    static_assert(sizeof(P) == 4 * sizeof(F) && sizeof(J) == 3 * sizeof(F),
                  "msm_plan.h counts 4 coordinates per bucket and 3 per result");
    const zk_msm_work ws = zk_msm_work_of(h->group, &p, n, on_dev, sort_tmp_bytes);
    t.window_bits = p.c;
    t.chunks = (int)nchunks;

    work_t wk;
    wk.st = st;
    CU(get_pool(h->dev, &wk.pool));
    cudaEvent_t ev_start, ev_up, ev_end;
    std::vector<cudaEvent_t> ev_sort(nchunks), ev_acc(nchunks), ev_red(nchunks);
    CU(wk.event(&ev_start));
    CU(wk.event(&ev_up));
    CU(wk.event(&ev_end));
    for (size_t k = 0; k < nchunks; k++) {
        CU(wk.event(&ev_sort[k]));
        CU(wk.event(&ev_acc[k]));
        CU(wk.event(&ev_red[k]));
    }
    CU(cudaEventRecord(ev_start, st));

    const fr_t* d_scalars = (const fr_t*)scalars;
    if (!on_dev) {
        void* d;
        CU(wk.alloc(&d, ws.scalars));
        CU(cudaMemcpyAsync(d, scalars, n * sizeof(fr_t), cudaMemcpyHostToDevice, st));
        d_scalars = (const fr_t*)d;
    }
    CU(cudaEventRecord(ev_up, st));

    // Workspace for a full chunk.
    void *keys0, *keys1, *vals0, *vals1, *sort_tmp, *buckets, *pa, *pb, *pka, *pkb, *red, *tree,
        *wacc, *d_out;
    const size_t M = p.M;
    if (M >= ((size_t)1 << 31))
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: %zu digit pairs exceed the sort's range", M);
    CU(wk.alloc(&keys0, ws.keys));
    CU(wk.alloc(&keys1, ws.keys));
    CU(wk.alloc(&vals0, ws.vals));
    CU(wk.alloc(&vals1, ws.vals));
    size_t sort_len = ws.sort_tmp;
    CU(wk.alloc(&sort_tmp, sort_len));
    const size_t nbuckets = (size_t)p.nwin * p.m;
    CU(wk.alloc(&buckets, ws.buckets));
    CU(wk.alloc(&pa, ws.part_a));
    CU(wk.alloc(&pka, ws.part_ka));
    CU(wk.alloc(&pb, ws.part_b));
    CU(wk.alloc(&pkb, ws.part_kb));
    const size_t groups = 2 * (size_t)p.nwin;
    CU(wk.alloc(&red, ws.red));
    CU(wk.alloc(&tree, ws.tree));
    CU(wk.alloc(&wacc, ws.wacc));
    CU(wk.alloc(&d_out, ws.out));

    for (size_t k = 0; k < nchunks; k++) {
        const size_t off = k * chunk;
        const uint32_t cn = (uint32_t)(n - off < chunk ? n - off : chunk);
        const uint32_t Mk = (uint32_t)p.nwin * cn;
        k_digits<<<(cn + 255) / 256, 256, 0, st>>>(d_scalars + off, cn, p.c, p.nwin,
                                                   (uint32_t*)keys0, (uint32_t*)vals0);
        LAUNCHED("k_digits");
        cub::DoubleBuffer<uint32_t> dk((uint32_t*)keys0, (uint32_t*)keys1);
        cub::DoubleBuffer<uint32_t> dv((uint32_t*)vals0, (uint32_t*)vals1);
        CU(cub::DeviceRadixSort::SortPairs(sort_tmp, sort_len, dk, dv, (int)Mk, 0, p.keybits, st));
        CU(cudaEventRecord(ev_sort[k], st));

        CU(cudaMemsetAsync(buckets, 0, nbuckets * sizeof(P), st));
        uint32_t T = p.T0;
        if ((size_t)T * MIN_SEG > Mk) T = (Mk + MIN_SEG - 1) / MIN_SEG;
        if (T == 0) T = 1;
        uint32_t K = (Mk + T - 1) / T;
        T = (Mk + K - 1) / K;
        k_accum0<F><<<(T + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, 0, st>>>(
            dk.Current(), dv.Current(), Mk, K, T, (const A*)h->bases + off, p.sentinel, (P*)buckets,
            (uint32_t*)pka, (P*)pa);
        LAUNCHED("k_accum0");
        uint32_t* ink = (uint32_t*)pka;
        P* inp = (P*)pa;
        uint32_t* outk = (uint32_t*)pkb;
        P* outp = (P*)pb;
        while (T > 1) {
            uint32_t len = 2 * T;
            uint32_t T2 = (len + K_MERGE - 1) / K_MERGE;
            k_merge<F><<<(T2 + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, 0, st>>>(
                ink, inp, len, K_MERGE, T2, p.sentinel, (P*)buckets, outk, outp);
            LAUNCHED("k_merge");
            uint32_t* tk = ink;
            ink = outk;
            outk = tk;
            P* tp = inp;
            inp = outp;
            outp = tp;
            T = T2;
        }
        CU(cudaEventRecord(ev_acc[k], st));

        const uint32_t nred = p.nwin * p.Tred;
        k_reduce<F><<<(nred + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, 0, st>>>(
            (const P*)buckets, p.m, p.L, p.Tred, p.nwin, (P*)red);
        LAUNCHED("k_reduce");
        P* src = (P*)red;
        P* dst = (P*)tree;
        uint32_t len = p.Tred;
        while (len > 1) {
            uint32_t outlen = (len + TREE_G - 1) / TREE_G;
            uint32_t nt = (uint32_t)groups * outlen;
            k_tree<F><<<(nt + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, 0, st>>>(
                src, (uint32_t)groups, len, outlen, dst);
            LAUNCHED("k_tree");
            P* tp = src;
            src = dst;
            dst = tp;
            len = outlen;
        }
        k_window<F><<<1, 64, 0, st>>>(src, p.nwin, p.logL, (P*)wacc, k == 0);
        LAUNCHED("k_window");
        CU(cudaEventRecord(ev_red[k], st));
    }
    k_horner<F><<<1, 1, 0, st>>>((const P*)wacc, p.nwin, p.c, (J*)d_out);
    LAUNCHED("k_horner");
    CU(cudaEventRecord(ev_end, st));
    CU(cudaMemcpyAsync(out, d_out, sizeof(J), cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));

    t.upload_ms = on_dev ? 0.0f : elapsed(ev_start, ev_up);
    for (size_t k = 0; k < nchunks; k++) {
        t.sort_ms += elapsed(k == 0 ? ev_up : ev_red[k - 1], ev_sort[k]);
        t.accum_ms += elapsed(ev_sort[k], ev_acc[k]);
        t.reduce_ms += elapsed(ev_acc[k], ev_red[k]);
    }
    t.reduce_ms += elapsed(ev_red[nchunks - 1], ev_end);
    t.total_ms = elapsed(ev_start, ev_end);
    if (tm) *tm = t;
    return ZK_MSM_OK;
}

}  // namespace

extern "C" int zk_msm_upload(int group, const void* points, size_t n, const uint8_t* skip,
                             size_t nskip, void** handle, char* err, size_t errlen) {
    if (!handle) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil handle pointer");
    *handle = nullptr;
    if (n > 0 && !points) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil points");
    if (skip) {
        size_t keep = 0;
        for (size_t i = 0; i < nskip; i++) keep += skip[i] == 0;
        if (keep != n)
            return fail(err, errlen, ZK_MSM_EINVAL,
                        "msm: skip mask keeps %zu of %zu entries but %zu points were given", keep,
                        nskip, n);
    }
    switch (group) {
    case ZK_MSM_G1:
        return upload_impl<fq_t>(group, points, n, skip, nskip, handle, err, errlen);
    case ZK_MSM_G2:
        return upload_impl<fq2_t>(group, points, n, skip, nskip, handle, err, errlen);
    default:
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: unknown group %d", group);
    }
}

extern "C" int zk_msm_upload_on(int device, int group, const void* points, size_t n,
                                const uint8_t* skip, size_t nskip, void** handle, char* err,
                                size_t errlen) {
    if (handle) *handle = nullptr;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        return fail(err, errlen, cuda_code(e), "msm: no CUDA device: %s", cudaGetErrorString(e));
    if (device < 0 || device >= count)
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: device %d out of range (%d devices)", device,
                    count);
    e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return fail(err, errlen, cuda_code(e), "msm: set device %d: %s", device,
                    cudaGetErrorString(e));
    return zk_msm_upload(group, points, n, skip, nskip, handle, err, errlen);
}

extern "C" size_t zk_msm_len(void* handle) {
    return handle ? ((handle_t*)handle)->n : 0;
}

extern "C" int zk_msm_free(void* handle, char* err, size_t errlen) {
    if (!handle) return ZK_MSM_OK;
    handle_t* h = (handle_t*)handle;
    int rc = ZK_MSM_OK;
    cudaError_t e = cudaSetDevice(h->dev);
    if (e == cudaSuccess) e = cudaStreamSynchronize(h->stream);
    if (e == cudaSuccess) e = cudaFree(h->bases);
    if (e == cudaSuccess) e = cudaStreamDestroy(h->stream);
    if (e == cudaSuccess) {
        cudaMemPool_t pool;
        e = get_pool(h->dev, &pool);
        if (e == cudaSuccess) e = cudaMemPoolTrimTo(pool, 0);
    }
    if (e != cudaSuccess)
        rc = fail(err, errlen, cuda_code(e), "msm: free: %s", cudaGetErrorString(e));
    delete h;
    return rc;
}

extern "C" int zk_msm_run(void* handle, const void* scalars, size_t n, int scalars_on_device,
                          void* stream, void* out, zk_msm_timing* timing, char* err, size_t errlen) {
    if (!handle) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil handle");
    if (!out) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil output");
    handle_t* h = (handle_t*)handle;
    cudaStream_t st = stream ? (cudaStream_t)stream : h->stream;
    switch (h->group) {
    case ZK_MSM_G1:
        return run_impl<fq_t>(h, scalars, n, scalars_on_device != 0, st, out, timing, err, errlen);
    case ZK_MSM_G2:
        return run_impl<fq2_t>(h, scalars, n, scalars_on_device != 0, st, out, timing, err, errlen);
    default:
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: corrupt handle");
    }
}

extern "C" int zk_msm_work_bytes(void* handle, size_t n, int scalars_on_device, uint64_t* out,
                                 char* err, size_t errlen) {
    if (!handle || !out) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil argument");
    handle_t* h = (handle_t*)handle;
    *out = 0;
    if (n == 0) return ZK_MSM_OK;
    CU(cudaSetDevice(h->dev));
    const plan_t p = make_plan(h, n < MAX_CHUNK ? n : MAX_CHUNK);
    size_t sb = 0;
    if (int rc = sort_bytes(p, h->stream, &sb, err, errlen)) return rc;
    *out = zk_msm_work_of(h->group, &p, n, scalars_on_device, sb).total;
    return ZK_MSM_OK;
}

extern "C" int zk_msm_residency(int device, int group, uint32_t* accum, uint32_t* reduce,
                                char* err, size_t errlen) {
    if (!accum || !reduce) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil argument");
    CU(cudaSetDevice(device));
    switch (group) {
    case ZK_MSM_G1:
        return residency<fq_t>(device, accum, reduce, err, errlen);
    case ZK_MSM_G2:
        return residency<fq2_t>(device, accum, reduce, err, errlen);
    default:
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: unknown group %d", group);
    }
}

extern "C" void* zk_msm_bases(void* handle) {
    return handle ? ((handle_t*)handle)->bases : nullptr;
}

extern "C" int zk_msm_trim(int device, char* err, size_t errlen) {
    CU(cudaSetDevice(device));
    cudaMemPool_t pool;
    CU(get_pool(device, &pool));
    CU(cudaDeviceSynchronize());
    CU(cudaMemPoolTrimTo(pool, 0));
    return ZK_MSM_OK;
}

extern "C" int zk_msm_window_bits(int group, size_t n) {
    (void)group;
    size_t chunk = n < MAX_CHUNK ? n : MAX_CHUNK;
    return zk_msm_choose_c(chunk);
}
