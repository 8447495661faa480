// msm.cu: G1 and G2 multi-scalar multiplication (Pippenger) for BLS12-381
// and BN254: one pipeline, instantiated per curve's fields (msm.h's groups).
//
// Pipeline of one MSM, on the caller's stream (host scalars in pieces: their
// copies, digits and sorts on the handle's copy and sort streams, below):
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
//     A streamed chunk (zk_msm_run_stream) merges in two launches instead
//     (k_merge_lead, k_merge_run: msm_core.cuh's merge_lead_one): its
//     buckets hold a few points each, so nearly every open run is two
//     slots, and the levels' serial tail, paid once per chunk, was most of
//     a chunk's time (BENCHMARKS.md, "A streamed chunk's timeline"). A streamed
//     chunk too short to fill the device at MIN_SEG pairs a thread (a
//     split's rest) takes shorter segments (zk_msm_short_threads).
//  4. k_reduce computes each window's sum_j (j+1)*B_j: the m buckets are cut
//     into T segments of L; a thread keeps the running and the weighted sum
//     of its segment (2L additions) and the segment's offset s*L*run is
//     L * (s*run), s*run by double-and-add. k_tree sums both lists per
//     window, k_window applies the factor L, k_horner combines the windows
//     (sum_w 2^(c*w) W_w) in Jacobian coordinates and converts the result.
// Scalars beyond MAX_CHUNK, and host scalars copied in pieces (pieces_of:
// each piece's work starts when it has arrived, beside the next one's copy),
// are processed in chunks that accumulate into one set of buckets
// (accumulate_one's RESUME), reduced once.
//
// Precomputed bases (zk_msm_precompute; the fastest ZPrize 2023 MSM entries
// and sppark keep multiples of the bases the same way): the handle keeps d
// copies of its points, copy g = P * 2^(c*G*g) with G = ceil(nwin/d), made
// on the device by k_precompute (c*G doublings a point a copy, and one
// inversion for PRE_K points). Window w = g*G + r of a scalar then adds copy g's point into bucket
// set r (k_digits writes key r*m + |d|-1 and val g*n + i), so only G sets
// are reduced and combined, G*c doublings in all (d = nwin: one set, no
// window doublings). The reduction's cost falls by d, so the window grows
// (msm_plan.h's zk_msm_choose_pre); the accumulation does nwin*n additions
// either way. A run reads the copies only when its cost model says they pay
// (a split run's rest may be too short for the copies' window).
//
// Witness-aware (split) MSM, after the production Filecoin prover's bitmaps
// of 0/1 witness scalars: zk_msm_split_classify runs k_classify (compare the
// Montgomery form with 0 and with R mod r, one byte a scalar) and two
// order-preserving cub::DeviceSelect passes over the indices, giving the
// ascending lists of the 1s and of the rest; the 0s are in neither. A split
// run then sends only the rest through the pipeline above (k_digits_idx reads
// scalar idx[i] and writes point index idx[i] - lo into vals, so accumulation
// is unchanged and the bases are not offset), sums the points of the 1s with
// k_ones (a segment of the list per thread, mixed additions) and k_tree, and
// adds that sum into window 0's accumulator before k_horner (its weight is
// 1), or converts it alone when no scalar needed Pippenger.
//
// A streamed run (zk_msm_run_stream: points and scalars in host memory)
// cannot classify on the device without a round trip per chunk (the sort's
// length is the host's to give), so its split (zk_msm_run_stream_split)
// takes a classification made on the host, where the scalars are: each
// chunk's list of its 1s then its rest (zk_msm_classify_chunk) is copied
// beside its points; k_ones adds the chunk's 1s into sums every chunk shares
// (kept in the reduction's buffers, unused until the last chunk), and only
// its rest goes through digits, sort and accumulation. A chunk of 0s copies
// nothing.
#include <cuda_runtime.h>
#include <cub/cub.cuh>

#include <atomic>
#include <mutex>
#include <new>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <type_traits>
#include <vector>

#include "msm.h"
#include "msm_core.cuh"
#include "msm_plan.h"

// zk_msm_split (msm.h): the classification of a device scalar vector.
struct zk_msm_split {
    int dev = 0;
    cudaStream_t st = nullptr;  // where the lists were made and are freed
    bool bn254 = false;         // BN254's scalars (else BLS12-381's)
    const void* scalars = nullptr;
    size_t n = 0, nones = 0, nrest = 0;
    uint32_t* ones = nullptr;  // device, nones ascending indices
    uint32_t* rest = nullptr;  // device, nrest ascending indices
};

namespace {

constexpr uint32_t ACC_THREADS = 128;  // block size of the EC kernels
constexpr uint32_t K_MERGE = ZK_MSM_K_MERGE;  // entries per thread in the later levels
constexpr uint32_t RUN_SEG = ZK_MSM_RUN_SEG;  // slots a streamed merge's leader sums
constexpr uint32_t MIN_SEG = ZK_MSM_MIN_SEG;  // fewest pairs per level-0 thread
constexpr size_t MAX_CHUNK = ZK_MSM_MAX_CHUNK;
// ZK_ACC_MAX_BLOCKS (default 2; 0: as many as fit): the blocks of k_accum0
// per SM its plan counts on, so the threads it launches (one segment each)
// and the segments' length. The G1 kernel fits three blocks at 168
// registers, but it measured slower so (BENCHMARKS.md, "G1 MSM: the product
// inlined, lazy reduction, a dedicated squaring"): the extra warps add no
// throughput to a kernel bound by its multiplications, and more, shorter
// segments (their cache lines, their partial sums) cost.
#ifndef ZK_ACC_MAX_BLOCKS
#define ZK_ACC_MAX_BLOCKS 2
#endif
// ZK_STREAM_RUN_MERGE (default 1; 0: the merge levels, as before it): how a
// streamed chunk closes the runs level 0 left open (k_merge_lead and
// k_merge_run); 0 only for an A/B run of kernel variants
// (scripts/gpu-variants-build.sh).
#ifndef ZK_STREAM_RUN_MERGE
#define ZK_STREAM_RUN_MERGE 1
#endif
static_assert(ZK_MSM_TREE_G == zk_msm::TREE_G, "msm_plan.h sizes the tree for msm_core.cuh's TREE_G");
static_assert(ZK_MSM_K_MERGE >= 4, "a merge level of T threads leaves 2T/K_MERGE: fewer only from 4 on");

using namespace zk_msm;


// ---- kernels (bodies in msm_core.cuh) --------------------------------------

// The scalars' field is the kernels' parameter P (fr_params: BLS12-381's).
template <class P>
__global__ void k_digits(const mont_t<P>* __restrict__ scalars, uint32_t n, int c, int nwin, int G,
                         uint32_t stride, uint32_t* __restrict__ keys,
                         uint32_t* __restrict__ vals) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) digits_one(i, scalars, n, c, nwin, G, stride, keys, vals);
}

template <class P>
__global__ void k_digits_idx(const mont_t<P>* __restrict__ scalars, const uint32_t* __restrict__ idx,
                             uint32_t lo, uint32_t hi, uint32_t n, int c, int nwin, int G,
                             uint32_t stride, uint32_t* __restrict__ keys,
                             uint32_t* __restrict__ vals) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) digits_idx_one(i, scalars, idx, lo, hi, n, c, nwin, G, stride, keys, vals);
}

// k_precompute: dst[i] = 2^shift * src[i], affine (one copy of the bases
// from the one before), PRE_K points a thread.
template <class F>
__global__ void __launch_bounds__(ACC_THREADS)
    k_precompute(const affine_t<F>* __restrict__ src, uint32_t n, uint32_t T, int shift,
                 affine_t<F>* __restrict__ dst) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < T) precompute_one(t, src, n, dst, shift);
}

template <class P>
__global__ void k_classify(const mont_t<P>* __restrict__ scalars, uint32_t n, uint8_t* __restrict__ cls) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) cls[i] = scalar_class(ldp(scalars + i));
}

template <class F>
__global__ void __launch_bounds__(ACC_THREADS)
    k_ones(const uint32_t* __restrict__ idx, uint32_t cnt, uint32_t K, uint32_t T, uint32_t lo,
           uint32_t hi, const affine_t<F>* __restrict__ bases, xyzz_t<F>* __restrict__ out,
           bool resume) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < T) ones_one(t, idx, cnt, K, lo, hi, bases, out, resume);
}

// k_merge_lead and k_merge_run: a streamed chunk's merge (msm_core.cuh's
// merge_lead_one), over level 0's M partial slots in place.
template <class F>
__global__ void __launch_bounds__(ACC_THREADS)
    k_merge_lead(const uint32_t* __restrict__ keys, xyzz_t<F>* __restrict__ pts, uint32_t M,
                 uint32_t R, uint32_t sentinel, xyzz_t<F>* __restrict__ buckets) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M) merge_lead_one(i, keys, pts, M, R, sentinel, buckets);
}

template <class F>
__global__ void __launch_bounds__(ACC_THREADS)
    k_merge_run(const uint32_t* __restrict__ keys, const xyzz_t<F>* __restrict__ pts, uint32_t M,
                uint32_t R, uint32_t sentinel, xyzz_t<F>* __restrict__ buckets) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M) merge_run_one(i, keys, pts, M, R, sentinel, buckets);
}

// k_add_into: *acc += *p (one thread): the ones' sum joins window 0, whose
// weight in horner is 1.
template <class F>
__global__ void k_add_into(xyzz_t<F>* __restrict__ acc, const xyzz_t<F>* __restrict__ p) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        xyzz_t<F> a = ldp(acc);
        a.add(ldp(p));
        stp(acc, a);
    }
}

// k_to_jac: the result when no scalar went through Pippenger.
template <class F>
__global__ void k_to_jac(const xyzz_t<F>* __restrict__ p, jac_t<F>* __restrict__ out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) stp(out, ldp(p).to_jac().canon());
}

// k_accum0 is level 0 of the accumulation; RESUME for the chunks after an
// MSM's first (accumulate_one).
template <class F, bool RESUME = false>
__global__ void __launch_bounds__(ACC_THREADS)
    k_accum0(const uint32_t* __restrict__ keys, const uint32_t* __restrict__ vals, uint32_t M,
             uint32_t K, uint32_t T, const affine_t<F>* __restrict__ bases, uint32_t sentinel,
             xyzz_t<F>* __restrict__ buckets, uint32_t* __restrict__ pkeys,
             xyzz_t<F>* __restrict__ ppts) {
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < T)
        accumulate_one<true, F, RESUME>(t, keys, vals, bases, nullptr, M, K, sentinel, buckets,
                                        pkeys, ppts);
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
                         xyzz_t<F>* __restrict__ wacc) {
    uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w < nwin) window_one(w, sums, nwin, logL, wacc);
}

template <class F>
__global__ void k_horner(const xyzz_t<F>* __restrict__ wacc, uint32_t nwin, int c,
                         jac_t<F>* __restrict__ out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) stp(out, horner(wacc, nwin, c).canon());
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
    void* bases;               // pre_depth copies of n points, copy g at g*n
    int pre_c, pre_depth;      // the copies' window and count (1: the points alone)
    cudaStream_t stream;
    cudaStream_t copy_stream;  // host scalars' pieces, copied beside the work (run_impl)
    cudaStream_t sort_stream;  // and their digits and sorts, beside the accumulation
    int sms;
    uint32_t resident_accum;   // threads of k_accum0 the device holds at once
    uint32_t resident_reduce;  // likewise for k_reduce
    // zk_msm_set_pieces: host scalars' pieces (0: DEFAULT_PIECES, G1 only)
    // and the least scalars a piece keeps (0: DEFAULT_MIN_PIECE). Atomic: set
    // between runs while another thread may plan one.
    std::atomic<int> pieces{0};
    std::atomic<size_t> min_piece{0};
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
        // No opportunistic reuse across streams: a proof's G1 MSMs (one stream)
        // and its G2 MSM (another) would otherwise take each other's freed
        // blocks as they come free, and the pool grow past the largest G1 MSM
        // plus the G2 MSM that admission counts (measured for a streamed key:
        // BENCHMARKS.md, "Larger sizes"). Same-stream reuse,
        // the MSMs' own pattern, is unaffected.
        int no = 0;
        e = cudaMemPoolSetAttribute(pools[dev], cudaMemPoolReuseAllowOpportunistic, &no);
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

// make_plan plans an MSM of n scalars in chunks of at most chunk (and
// MAX_CHUNK) over the handle's bases and copies.
plan_t make_plan(const handle_t* h, size_t n, size_t chunk) {
    return zk_msm_make_plan_chunk(n, chunk, h->pre_c, h->pre_depth, h->resident_accum,
                                  h->resident_reduce);
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
    if (ZK_ACC_MAX_BLOCKS > 0 && blocks > ZK_ACC_MAX_BLOCKS) blocks = ZK_ACC_MAX_BLOCKS;
    if (blocks < 1) blocks = 1;
    *accum = (uint32_t)(blocks * sms * ACC_THREADS);
    CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_reduce<F>, ACC_THREADS, 0));
    if (blocks < 1) blocks = 1;
    *reduce = (uint32_t)(blocks * sms * ACC_THREADS);
    return ZK_MSM_OK;
}

// fill_copies computes copies 1..d-1 of the h->n points at bases (copy 0)
// for window c, in place, on the handle's stream.
template <class F>
int fill_copies(handle_t* h, void* bases, int c, int d, char* err, size_t errlen) {
    using A = affine_t<F>;
    const size_t n = h->n;
    if (n == 0) return ZK_MSM_OK;
    const int G = zk_msm_groups_of(c, d, nullptr);
    const uint32_t T = (uint32_t)((n + PRE_K - 1) / PRE_K);
    const uint32_t grid = (T + ACC_THREADS - 1) / ACC_THREADS;
    for (int g = 1; g < d; g++) {
        k_precompute<F><<<grid, ACC_THREADS, 0, h->stream>>>((const A*)bases + (g - 1) * n,
                                                            (uint32_t)n, T, c * G,
                                                            (A*)bases + g * n);
        LAUNCHED("k_precompute");
    }
    return ZK_MSM_OK;
}

// upload_impl makes a handle of the points (expanded over skip), with the
// copies zk_msm_precompute_choice picks for at most maxdepth (1: none),
// allocated with the points at once and computed in place.
template <class F>
int upload_impl(int group, const void* points, size_t n, const uint8_t* skip, size_t nskip,
                int maxdepth, void** handle, char* err, size_t errlen) {
    using A = affine_t<F>;
    if (2 * zk_msm_fq_bytes(group) != sizeof(A))
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: group %d is not its points' field", group);
    size_t total = skip ? nskip : n;
    if (total >= ((size_t)1 << 31))
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: %zu points: at most 2^31-1 supported", total);
    handle_t* h = new handle_t();
    h->group = group;
    h->n = total;
    h->bases = nullptr;
    h->pre_c = 0;
    h->pre_depth = 1;
    h->stream = nullptr;
    h->copy_stream = nullptr;
    h->sort_stream = nullptr;
    struct guard_t {
        handle_t*& h;
        ~guard_t() {
            if (!h) return;
            if (h->bases) cudaFree(h->bases);
            if (h->stream) cudaStreamDestroy(h->stream);
            if (h->copy_stream) cudaStreamDestroy(h->copy_stream);
            if (h->sort_stream) cudaStreamDestroy(h->sort_stream);
            delete h;
        }
    } guard{h};
    CU(cudaGetDevice(&h->dev));
    CU(cudaDeviceGetAttribute(&h->sms, cudaDevAttrMultiProcessorCount, h->dev));
    if (int rc = residency<F>(h->dev, &h->resident_accum, &h->resident_reduce, err, errlen))
        return rc;
    CU(cudaStreamCreateWithFlags(&h->stream, cudaStreamNonBlocking));
    CU(cudaStreamCreateWithFlags(&h->copy_stream, cudaStreamNonBlocking));
    CU(cudaStreamCreateWithFlags(&h->sort_stream, cudaStreamNonBlocking));
    int pre_c = 0, pre_d = 1;
    zk_msm_precompute_choice(total, maxdepth, &pre_c, &pre_d);
    CU(cudaMalloc(&h->bases, (size_t)zk_msm_bases_bytes(group, total, pre_d)));
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
    if (pre_d > 1) {
        if (int rc = fill_copies<F>(h, h->bases, pre_c, pre_d, err, errlen)) return rc;
        h->pre_c = pre_c;
        h->pre_depth = pre_d;
    }
    CU(cudaStreamSynchronize(h->stream));
    *handle = h;
    h = nullptr;  // the guard keeps it
    return ZK_MSM_OK;
}

// Host scalars are copied in pieces on the handle's copy stream, and each
// piece's digits, sort and accumulation start as soon as it has arrived: the
// copy of the next piece runs beside them, so only the first piece's copy
// stays in front of the work. The pieces are chunks of one MSM: they share
// one set of buckets (accumulate_one's RESUME) and one reduction. A piece
// keeps at least min_piece scalars (fewer pieces for short MSMs: each piece
// pays a sort's and the merge levels' fixed costs). zk_msm_set_pieces sets
// both for a handle; 0 is DEFAULT_PIECES and DEFAULT_MIN_PIECE.
//
// Each piece's digits and radix sort run on the handle's sort stream, into
// the other of two sets of sort buffers, while the MSM's stream accumulates
// the piece before: only the first piece's copy and sort stay in front of the
// accumulation, which leaves most of each SM's registers and all its shared
// memory to the sort's blocks (two blocks of 128 threads). That measured
// faster than sorting in line with one set of buffers, and pieces faster than
// a whole upload at 2^24 and 2^26 but not at 2^22, so a piece keeps at least
// 2^23 scalars (2^23-2^24 is not measured); BENCHMARKS.md, "The G1 MSM's
// upload in pieces".
constexpr int DEFAULT_PIECES = 4;
constexpr size_t DEFAULT_MIN_PIECE = (size_t)1 << 23;

// pieces_of is how many pieces n host scalars are copied in on handle h.
size_t pieces_of(const handle_t* h, size_t n) {
    const int set = h->pieces.load();
    const size_t want = (size_t)(set > 0 ? set : DEFAULT_PIECES);
    const size_t mp = h->min_piece.load();
    const size_t min_piece = mp > 0 ? mp : DEFAULT_MIN_PIECE;
    size_t most = n / min_piece;
    if (most < 1) most = 1;
    return want < most ? want : most;
}

// chunk_of is the chunk size of an MSM of n Pippenger scalars on handle h: at
// most MAX_CHUNK, and host scalars in pieces_of(n) pieces: a G1's by default,
// G2's only when zk_msm_set_pieces asks (tests, measurements). G2's
// accumulation of a later chunk spills (sm_90: 2518 bytes of spill loads a
// thread against the first chunk's 494), so its pieces would cost more than
// the upload they hide.
size_t chunk_of(const handle_t* h, size_t n, bool host_scalars) {
    if (n == 0) return 0;
    const bool g1 = h->group == ZK_MSM_G1 || h->group == ZK_MSM_BN254_G1;
    const bool pieces = host_scalars && (g1 || h->pieces.load() > 0);
    const size_t want = pieces ? pieces_of(h, n) : 1;
    const size_t chunk = (n + want - 1) / want;
    return chunk < MAX_CHUNK ? chunk : MAX_CHUNK;
}

float elapsed(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) return 0;
    return ms;
}

// ZKHOST_MSM_TRACE (environment, read once): when set, every MSM of more
// than one chunk prints its chunks' timeline to stderr (trace_chunks): when
// each chunk's copy began and ended, its digits, its sort, its level-0
// accumulation's start and end, and its merge levels' end, in ms from the
// MSM's start, then the sums. Where a streamed chunk's fixed cost goes (the
// merge levels' tail, the sort waiting for the accumulation's
// multiprocessors, the copies) is read from it, not guessed. Off, it costs
// nothing but the check.
bool trace_on() {
    static const bool on = [] {
        const char* v = getenv("ZKHOST_MSM_TRACE");
        return v != nullptr && v[0] != '\0' && strcmp(v, "0") != 0;
    }();
    return on;
}

// chunk_events are the extra events of one traced chunk (run_impl records
// the copy's end, the sort's end and the accumulation's end anyway).
struct chunk_events {
    cudaEvent_t copy0 = nullptr, digits = nullptr, acc0s = nullptr, acc0e = nullptr;
};

// scalars_t says where an MSM's scalars are. Dense: n scalars at ptr (host
// or device), scalar i with point i. Split (split != nullptr): the
// classified device vector's ones and rest over [lo, lo + n). Streamed
// (points != nullptr): the points too are in host memory, and both go
// through the double buffers pbuf and sbuf, chunk points at a time
// (zk_msm_run_stream).
struct scalars_t {
    const void* ptr;
    bool on_dev;
    const zk_msm_split* split;
    size_t lo;
    const void* points = nullptr;
    void* pbuf[2] = {nullptr, nullptr};
    void* sbuf[2] = {nullptr, nullptr};
    size_t chunk = 0;
    int max_c = 0;
    // Streamed and classified on the host (zk_msm_run_stream_split): each
    // chunk's ones summed apart, only its rest through Pippenger.
    const zk_msm_stream_split* ssplit = nullptr;
};

// tree_sum sums each of groups lists of len points at src (list g at
// g*len) down to one point with k_tree levels, alternating between src and
// dst (each of at least groups*ceil(len/TREE_G) points); *sums is where the
// groups' sums end up, one after another.
template <class F>
int tree_sum(xyzz_t<F>* src, xyzz_t<F>* dst, uint32_t groups, uint32_t len, cudaStream_t st,
             xyzz_t<F>** sums, char* err, size_t errlen) {
    while (len > 1) {
        const uint32_t outlen = (len + TREE_G - 1) / TREE_G;
        const uint32_t nt = groups * outlen;
        k_tree<F><<<(nt + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, 0, st>>>(src, groups, len,
                                                                             outlen, dst);
        LAUNCHED("k_tree");
        std::swap(src, dst);
        len = outlen;
    }
    *sums = src;
    return ZK_MSM_OK;
}

// trace_chunks prints a traced MSM's chunks (trace_on): one line a chunk,
// each event in ms from start (copy0 and copy on the copy stream, digits and
// sort on the sort stream, acc0s/acc0e around level 0 and acc after the merge
// levels on the MSM's stream), then the sums over the chunks: the copies'
// spans, the sorts' (from the digits' end), level 0's, the merge levels'
// (acc0e to acc), and the waits of level 0 for its sort or copy (acc0s
// after the chunk before's acc).
void trace_chunks(int group, const plan_t& p, size_t npip, size_t chunk, bool streamed,
                  cudaEvent_t start, cudaEvent_t end, const std::vector<chunk_events>& tr,
                  const std::vector<cudaEvent_t>& copy, const std::vector<cudaEvent_t>& sort,
                  const std::vector<cudaEvent_t>& acc) {
    const size_t n = tr.size();
    double s_copy = 0, s_sort = 0, s_acc0 = 0, s_merge = 0, s_wait = 0;
    fprintf(stderr,
            "msm trace: group %d, %zu scalars in %zu chunks of %zu%s, c=%d nwin=%d G=%d T0=%u\n",
            group, npip, n, chunk, streamed ? " (streamed)" : "", p.c, p.nwin, p.G, p.T0);
    for (size_t k = 0; k < n; k++) {
        const float c0 = copy.empty() ? 0 : elapsed(start, tr[k].copy0);
        const float c1 = copy.empty() ? 0 : elapsed(start, copy[k]);
        const float dg = elapsed(start, tr[k].digits), so = elapsed(start, sort[k]);
        const float a0s = elapsed(start, tr[k].acc0s), a0e = elapsed(start, tr[k].acc0e);
        const float ac = elapsed(start, acc[k]);
        const float prev = k == 0 ? 0 : elapsed(start, acc[k - 1]);
        s_copy += c1 - c0;
        s_sort += so - dg;
        s_acc0 += a0e - a0s;
        s_merge += ac - a0e;
        if (k > 0) s_wait += a0s - prev;
        fprintf(stderr,
                "msm trace: chunk %zu copy %.3f-%.3f digits -%.3f sort -%.3f level0 %.3f-%.3f "
                "merged %.3f\n",
                k, c0, c1, dg, so, a0s, a0e, ac);
    }
    fprintf(stderr,
            "msm trace: sums over %zu chunks: copies %.3f, sorts %.3f, level 0 %.3f, merge "
            "levels %.3f, level 0 waiting %.3f; the MSM %.3f ms\n",
            n, s_copy, s_sort, s_acc0, s_merge, s_wait, elapsed(start, end));
}

template <class F>
int run_impl(handle_t* h, const scalars_t& in, size_t n, cudaStream_t st, void* out,
             zk_msm_timing* tm, char* err, size_t errlen) {
    using A = affine_t<F>;
    using P = xyzz_t<F>;
    using J = jac_t<F>;
    using Fr = mont_t<typename scalar_params<F>::type>;  // the curve's scalars
    zk_msm_timing t;
    memset(&t, 0, sizeof t);
    const zk_msm_split* sp = in.split;
    if (sp && sp->bn254 != std::is_same<Fr, bn254_fr_t>::value)
        return fail(err, errlen, ZK_MSM_EINVAL,
                    "msm: a split of %s scalars for an MSM of group %d", sp->bn254 ? "BN254" : "BLS12-381",
                    h->group);
    // Pippenger's inputs: the dense scalars, or the split's rest list; the
    // split's ones are summed apart.
    const size_t npip = sp ? sp->nrest : n;
    const size_t nones = sp ? sp->nones : 0;
    const bool streamed = in.points != nullptr;
    if (n > h->n && !streamed)
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: %zu scalars for %zu resident bases", n, h->n);
    // A streamed split's counts, chunk by chunk: the largest ones and the
    // totals (its chunks follow the streamed chunk, as the classification did).
    const zk_msm_stream_split* ss = streamed ? in.ssplit : nullptr;
    size_t ss_ones = 0, ss_rest = 0;
    uint32_t ss_max_ones = 0;
    if (ss) {
        const size_t sc = std::min(in.chunk, MAX_CHUNK);
        if (sc != in.chunk)
            return fail(err, errlen, ZK_MSM_EINVAL,
                        "msm: a streamed split in chunks of %zu, more than %zu", in.chunk,
                        (size_t)MAX_CHUNK);
        for (size_t k = 0, off = 0; off < n; k++, off += sc) {
            const size_t cn = std::min(sc, n - off);
            if ((size_t)ss->ones[k] + ss->rest[k] > cn)
                return fail(err, errlen, ZK_MSM_EINVAL,
                            "msm: streamed chunk %zu of %zu scalars classified as %u ones and %u "
                            "others",
                            k, cn, ss->ones[k], ss->rest[k]);
            ss_ones += ss->ones[k];
            ss_rest += ss->rest[k];
            ss_max_ones = std::max(ss_max_ones, ss->ones[k]);
        }
        if (ss_ones + ss_rest == 0) {
            J r = J::inf();
            memcpy(out, &r, sizeof r);
            if (tm) *tm = t;
            return ZK_MSM_OK;
        }
    }
    if (sp && (in.lo > sp->n || n > sp->n - in.lo))
        return fail(err, errlen, ZK_MSM_EINVAL,
                    "msm: scalars [%zu, %zu) outside the %zu classified ones", in.lo, in.lo + n,
                    sp->n);
    if (n == 0 || npip + nones == 0) {
        J r = J::inf();
        memcpy(out, &r, sizeof r);
        if (tm) *tm = t;
        return ZK_MSM_OK;
    }
    if (!sp && !in.ptr) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil scalars");
    CU(cudaSetDevice(h->dev));
    if (sp && sp->dev != h->dev)
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: scalars classified on device %d, points on %d",
                    sp->dev, h->dev);
    const uint32_t lo = (uint32_t)in.lo, hi = (uint32_t)(in.lo + n);

    // Chunks of at most MAX_CHUNK scalars (the workspace holds one chunk's
    // digit pairs) and, for host scalars, the pieces of the overlapped upload
    // (pieces_of): all of them accumulate into one set of buckets, reduced once.
    const bool host_scalars = !sp && !in.on_dev;
    const size_t chunk = streamed ? std::min(in.chunk, MAX_CHUNK) : chunk_of(h, npip, host_scalars);
    const size_t nchunks = chunk == 0 ? 0 : (npip + chunk - 1) / chunk;
    // Every allocation's size from msm_plan.h (zk_msm_work_bytes reports
    // their sum): the plan of a chunk, the ones' threads of a split run.
    const plan_t p = streamed ? zk_msm_make_plan_stream(npip, chunk, in.max_c, h->resident_accum,
                                                        h->resident_reduce)
                              : make_plan(h, npip == 0 ? 1 : npip, chunk == 0 ? 1 : chunk);
    size_t sort_tmp_bytes = 0;
    if (nchunks > 0) {
        if (int rc = sort_bytes(p, st, &sort_tmp_bytes, err, errlen)) return rc;
    }
    static_assert(sizeof(P) == 4 * sizeof(F) && sizeof(J) == 3 * sizeof(F),
                  "msm_plan.h counts 4 coordinates per bucket and 3 per result");
    const uint32_t ones_T = zk_msm_ones_threads(nones, h->resident_accum);
    const zk_msm_work ws =
        streamed ? zk_msm_stream_work_of(h->group, &p, n, sort_tmp_bytes)
                 : zk_msm_work_of(h->group, &p, n, !host_scalars, sort_tmp_bytes, ones_T, nchunks > 0);
    // Host scalars in more than one chunk (ws's second sort set): copied on
    // the copy stream, their digits and sorts on the sort stream, piece k
    // into set k % 2 of the sort buffers. Streamed runs copy so even in one
    // chunk (their points with their scalars).
    const bool overlap = ws.sort_sets == 2 || (streamed && nchunks > 0);
    // A streamed split of 0s and 1s alone runs no Pippenger.
    const bool pippenger = nchunks > 0 && !(ss && ss_rest == 0);
    t.window_bits = pippenger ? p.c : 0;
    t.depth = pippenger ? p.depth : 0;
    t.chunks = (int)nchunks;
    t.pippenger_n = ss ? ss_rest : npip;

    work_t wk;
    wk.st = st;
    CU(get_pool(h->dev, &wk.pool));
    cudaEvent_t ev_start, ev_up, ev_ones, ev_end, ev_alloc = nullptr, ev_cstart = nullptr;
    std::vector<cudaEvent_t> ev_sort(nchunks), ev_acc(nchunks), ev_copy(overlap ? nchunks : 0);
    CU(wk.event(&ev_start));
    CU(wk.event(&ev_up));
    CU(wk.event(&ev_ones));
    CU(wk.event(&ev_end));
    for (size_t k = 0; k < nchunks; k++) {
        CU(wk.event(&ev_sort[k]));
        CU(wk.event(&ev_acc[k]));
        if (overlap) CU(wk.event(&ev_copy[k]));
    }
    const bool trace = nchunks > 1 && trace_on();
    std::vector<chunk_events> ev_tr(trace ? nchunks : 0);
    for (chunk_events& e : ev_tr) {
        CU(wk.event(&e.copy0));
        CU(wk.event(&e.digits));
        CU(wk.event(&e.acc0s));
        CU(wk.event(&e.acc0e));
    }
    if (overlap) {
        CU(wk.event(&ev_alloc));
        CU(wk.event(&ev_cstart));
    }
    CU(cudaEventRecord(ev_start, st));
    // After an error midway, copies and sorts still queued on the other
    // streams must not touch memory wk has given back: drained first
    // (declared after wk, so it runs before wk's frees). Idle by then on
    // success.
    struct drain_t {
        cudaStream_t a, b;
        ~drain_t() {
            if (a) cudaStreamSynchronize(a);
            if (b) cudaStreamSynchronize(b);
        }
    } drain{overlap ? h->copy_stream : nullptr, overlap ? h->sort_stream : nullptr};
    const Fr* d_scalars = sp ? (const Fr*)sp->scalars : (const Fr*)in.ptr;
    if (host_scalars) {
        void* d = nullptr;
        if (!streamed) CU(wk.alloc(&d, ws.scalars));  // streamed: the caller's sbuf
        if (overlap) {
            // The pieces' copies (in the loop below) follow the allocation,
            // made on st.
            CU(cudaEventRecord(ev_alloc, st));
            CU(cudaStreamWaitEvent(h->copy_stream, ev_alloc, 0));
            CU(cudaEventRecord(ev_cstart, h->copy_stream));
        } else {
            CU(cudaMemcpyAsync(d, in.ptr, n * sizeof(Fr), cudaMemcpyHostToDevice, st));
        }
        d_scalars = (const Fr*)d;
    }
    CU(cudaEventRecord(ev_up, st));

    void* d_out;
    CU(wk.alloc(&d_out, ws.out));

    // The ones: each thread sums a segment of the list, a tree sums the
    // segments' sums into ones_sum.
    P* ones_sum = nullptr;
    if (nones > 0) {
        if (nones >= ((size_t)1 << 31))
            return fail(err, errlen, ZK_MSM_EINVAL, "msm: %zu ones exceed the index range", nones);
        const uint32_t cnt = (uint32_t)nones;
        const uint32_t T = ones_T;  // what msm_plan.h sized the buffers for
        const uint32_t K = (cnt + T - 1) / T;
        void *oa, *ob;
        CU(wk.alloc(&oa, ws.ones_part));
        CU(wk.alloc(&ob, ws.ones_tree));
        k_ones<F><<<(T + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, 0, st>>>(
            sp->ones, cnt, K, T, lo, hi, (const A*)h->bases, (P*)oa, false);
        LAUNCHED("k_ones");
        if (int rc = tree_sum<F>((P*)oa, (P*)ob, 1, T, st, &ones_sum, err, errlen)) return rc;
    }
    CU(cudaEventRecord(ev_ones, st));

    if (nchunks == 0) {
        // Every scalar in range was 0 or 1.
        k_to_jac<F><<<1, 1, 0, st>>>(ones_sum, (J*)d_out);
        LAUNCHED("k_to_jac");
    } else {
        // Workspace for a full chunk: one set of sort buffers, two for
        // pieces.
        void *keys0, *keys1, *vals0, *vals1, *sort_tmp, *buckets, *pa, *pb, *pka, *pkb, *red,
            *tree, *wacc;
        void* set2[4] = {nullptr, nullptr, nullptr, nullptr};
        const size_t M = p.M;
        if (M >= ((size_t)1 << 31))
            return fail(err, errlen, ZK_MSM_EINVAL, "msm: %zu digit pairs exceed the sort's range",
                        M);
        CU(wk.alloc(&keys0, ws.keys));
        CU(wk.alloc(&keys1, ws.keys));
        CU(wk.alloc(&vals0, ws.vals));
        CU(wk.alloc(&vals1, ws.vals));
        const size_t sort_len = ws.sort_tmp;
        CU(wk.alloc(&sort_tmp, sort_len));
        const size_t nbuckets = (size_t)p.G * p.m;
        CU(wk.alloc(&buckets, ws.buckets));
        CU(wk.alloc(&pa, ws.part_a));
        CU(wk.alloc(&pka, ws.part_ka));
        CU(wk.alloc(&pb, ws.part_b));
        CU(wk.alloc(&pkb, ws.part_kb));
        const size_t groups = 2 * (size_t)p.G;
        // Copy g of the bases lies h->n points after copy g-1.
        const uint32_t stride = (uint32_t)h->n;
        CU(wk.alloc(&red, ws.red));
        CU(wk.alloc(&tree, ws.tree));
        CU(wk.alloc(&wacc, ws.wacc));
        if (ws.sort_sets == 2) {
            CU(wk.alloc(&set2[0], ws.keys));
            CU(wk.alloc(&set2[1], ws.keys));
            CU(wk.alloc(&set2[2], ws.vals));
            CU(wk.alloc(&set2[3], ws.vals));
        }
        // A streamed run's two chunks' index lists (used when split).
        uint32_t* ibuf[2] = {nullptr, nullptr};
        if (streamed) {
            void* ib;
            CU(wk.alloc(&ib, ws.idx));
            ibuf[0] = (uint32_t*)ib;
            ibuf[1] = ibuf[0] + p.chunk;  // chunk itself, whenever a second chunk runs
        }
        // A streamed split's ones: stream_ones_T sums (in red, unused until
        // the reduction), every chunk's ones added into them.
        uint32_t stream_ones_T = 0;
        if (ss && ss_ones > 0) {
            stream_ones_T = zk_msm_short_threads(ss_max_ones, h->resident_accum);
            const uint32_t room = (uint32_t)(ws.red / sizeof(P));
            if (stream_ones_T > room) stream_ones_T = room;
        }
        bool ones_started = false, rest_started = false;

        // One set of buckets for every chunk: zeroed once, each chunk after
        // the first resumes from the sums of those before it.
        CU(cudaMemsetAsync(buckets, 0, nbuckets * sizeof(P), st));
        if (overlap) {
            // The workspace is allocated on st; the sort stream uses it
            // after, and so does the copy stream a streamed run's index
            // lists (allocated from the pool on st, they may reuse memory
            // another stream freed: only st is ordered after that).
            CU(cudaEventRecord(ev_alloc, st));
            CU(cudaStreamWaitEvent(h->sort_stream, ev_alloc, 0));
            if (streamed) CU(cudaStreamWaitEvent(h->copy_stream, ev_alloc, 0));
        }
        const cudaStream_t prep = overlap ? h->sort_stream : st;
        for (size_t k = 0; k < nchunks; k++) {
            const size_t off = k * chunk;
            const uint32_t cn = (uint32_t)(npip - off < chunk ? npip - off : chunk);
            // A streamed split's chunk: its ones, and its rest (the only
            // scalars its digits, sort and accumulation see).
            const uint32_t kones = ss ? ss->ones[k] : 0;
            const uint32_t kpip = ss ? ss->rest[k] : cn;
            const uint32_t Mk = (uint32_t)p.nwin * kpip;
            void* const* bufs = overlap && (k & 1) ? set2 : nullptr;
            uint32_t* k0 = (uint32_t*)(bufs ? bufs[0] : keys0);
            uint32_t* k1 = (uint32_t*)(bufs ? bufs[1] : keys1);
            uint32_t* v0 = (uint32_t*)(bufs ? bufs[2] : vals0);
            uint32_t* v1 = (uint32_t*)(bufs ? bufs[3] : vals1);
            // The set this piece sorts into is free once the accumulation of
            // the piece two before has read it.
            if (overlap && k >= 2) CU(cudaStreamWaitEvent(prep, ev_acc[k - 2], 0));
            if (overlap && streamed) {
                // This chunk's scalars and points into the buffers the
                // accumulation of the chunk two before has read.
                if (k >= 2) CU(cudaStreamWaitEvent(h->copy_stream, ev_acc[k - 2], 0));
                if (trace) CU(cudaEventRecord(ev_tr[k].copy0, h->copy_stream));
                // A split chunk's scalars only when some go through
                // Pippenger, its points only when some add; its index list.
                if (kpip > 0)
                    CU(cudaMemcpyAsync(in.sbuf[k & 1], (const Fr*)in.ptr + off, cn * sizeof(Fr),
                                       cudaMemcpyHostToDevice, h->copy_stream));
                if (kpip + kones > 0)
                    CU(cudaMemcpyAsync(in.pbuf[k & 1], (const A*)in.points + off, cn * sizeof(A),
                                       cudaMemcpyHostToDevice, h->copy_stream));
                if (ss && kpip + kones > 0)
                    CU(cudaMemcpyAsync(ibuf[k & 1], ss->idx + off,
                                       (size_t)(kones + kpip) * sizeof(uint32_t),
                                       cudaMemcpyHostToDevice, h->copy_stream));
            } else if (overlap) {
                if (trace) CU(cudaEventRecord(ev_tr[k].copy0, h->copy_stream));
                // This piece's copy. From pageable memory the host blocks here
                // while the device works on the pieces queued before.
                CU(cudaMemcpyAsync((void*)(d_scalars + off), (const Fr*)in.ptr + off,
                                   cn * sizeof(Fr), cudaMemcpyHostToDevice, h->copy_stream));
            }
            if (overlap) {
                CU(cudaEventRecord(ev_copy[k], h->copy_stream));
                CU(cudaStreamWaitEvent(prep, ev_copy[k], 0));
            }
            if (sp) {
                // Digits of the rest's entries [off, off + cn); their vals are
                // point indices j - lo, so the bases are not offset.
                k_digits_idx<<<(cn + 255) / 256, 256, 0, prep>>>(
                    d_scalars, sp->rest + off, lo, hi, cn, p.c, p.nwin, p.G, stride, k0, v0);
                LAUNCHED("k_digits_idx");
            } else if (ss) {
                // The chunk's rest: chunk-local indices after its ones.
                if (kpip > 0) {
                    k_digits_idx<<<(kpip + 255) / 256, 256, 0, prep>>>(
                        (const Fr*)in.sbuf[k & 1], ibuf[k & 1] + kones, 0u, cn, kpip, p.c,
                        p.nwin, p.G, stride, k0, v0);
                    LAUNCHED("k_digits_idx");
                }
            } else {
                const Fr* sc = streamed ? (const Fr*)in.sbuf[k & 1] : d_scalars + off;
                k_digits<<<(cn + 255) / 256, 256, 0, prep>>>(sc, cn, p.c, p.nwin, p.G, stride, k0,
                                                             v0);
                LAUNCHED("k_digits");
            }
            const A* chunk_bases = streamed ? (const A*)in.pbuf[k & 1]
                                   : sp     ? (const A*)h->bases
                                            : (const A*)h->bases + off;
            if (trace) CU(cudaEventRecord(ev_tr[k].digits, prep));
            cub::DoubleBuffer<uint32_t> dk(k0, k1);
            cub::DoubleBuffer<uint32_t> dv(v0, v1);
            size_t sort_avail = sort_len;
            if (Mk > 0)
                CU(cub::DeviceRadixSort::SortPairs(sort_tmp, sort_avail, dk, dv, (int)Mk, 0,
                                                   p.keybits, prep));
            CU(cudaEventRecord(ev_sort[k], prep));
            if (overlap) CU(cudaStreamWaitEvent(st, ev_sort[k], 0));
            if (kones > 0) {
                // The chunk's ones into the shared sums (the first chunk with
                // ones starts them), their points the chunk's.
                const uint32_t K1 = (kones + stream_ones_T - 1) / stream_ones_T;
                k_ones<F><<<(stream_ones_T + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, 0, st>>>(
                    ibuf[k & 1], kones, K1, stream_ones_T, 0u, cn, (const A*)in.pbuf[k & 1],
                    (P*)red, ones_started);
                LAUNCHED("k_ones (streamed)");
                ones_started = true;
            }
            if (Mk == 0) {
                // Nothing of this chunk through Pippenger.
                if (trace) {
                    CU(cudaEventRecord(ev_tr[k].acc0s, st));
                    CU(cudaEventRecord(ev_tr[k].acc0e, st));
                }
                CU(cudaEventRecord(ev_acc[k], st));
                continue;
            }

            // A streamed chunk too short to fill the device at MIN_SEG a
            // thread (a split's rest) takes shorter segments.
            uint32_t T = p.T0;
            if (streamed)
                T = zk_msm_short_threads(Mk, p.T0);
            else if ((size_t)T * MIN_SEG > Mk)
                T = (Mk + MIN_SEG - 1) / MIN_SEG;
            if (T == 0) T = 1;
            uint32_t K = (Mk + T - 1) / T;
            T = (Mk + K - 1) / K;
            // A chunk after the first resumes from the buckets' sums.
            auto accum0 = !rest_started ? k_accum0<F, false> : k_accum0<F, true>;
            rest_started = true;
            if (trace) CU(cudaEventRecord(ev_tr[k].acc0s, st));
            accum0<<<(T + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, 0, st>>>(
                dk.Current(), dv.Current(), Mk, K, T, chunk_bases, p.sentinel, (P*)buckets,
                (uint32_t*)pka, (P*)pa);
            LAUNCHED("k_accum0");
            if (trace) CU(cudaEventRecord(ev_tr[k].acc0e, st));
            uint32_t* ink = (uint32_t*)pka;
            P* inp = (P*)pa;
            uint32_t* outk = (uint32_t*)pkb;
            P* outp = (P*)pb;
            if (ZK_STREAM_RUN_MERGE && streamed && T > 1) {
                // A streamed chunk's open runs in two launches, not a level
                // per factor K_MERGE/2 (msm_core.cuh's merge_lead_one).
                const uint32_t len = 2 * T, nb = (len + ACC_THREADS - 1) / ACC_THREADS;
                k_merge_lead<F><<<nb, ACC_THREADS, 0, st>>>(ink, inp, len, RUN_SEG, p.sentinel,
                                                            (P*)buckets);
                LAUNCHED("k_merge_lead");
                k_merge_run<F><<<nb, ACC_THREADS, 0, st>>>(ink, inp, len, RUN_SEG, p.sentinel,
                                                           (P*)buckets);
                LAUNCHED("k_merge_run");
                T = 1;
            }
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
        }

        if (ss && ones_started) {
            // The streamed split's ones: their sums' tree (in red and tree,
            // before the reduction takes them), the total kept in pa's first
            // slot, free since the last merge level.
            P* src;
            if (int rc = tree_sum<F>((P*)red, (P*)tree, 1, stream_ones_T, st, &src, err, errlen))
                return rc;
            CU(cudaMemsetAsync(pa, 0, sizeof(P), st));
            k_add_into<F><<<1, 1, 0, st>>>((P*)pa, src);
            LAUNCHED("k_add_into (streamed ones)");
            ones_sum = (P*)pa;
        }
        if (!rest_started) {
            // A streamed split whose every scalar was 0 or 1.
            k_to_jac<F><<<1, 1, 0, st>>>(ones_sum, (J*)d_out);
            LAUNCHED("k_to_jac");
        } else {
            const uint32_t nred = (uint32_t)p.G * p.Tred;
            k_reduce<F><<<(nred + ACC_THREADS - 1) / ACC_THREADS, ACC_THREADS, 0, st>>>(
                (const P*)buckets, p.m, p.L, p.Tred, (uint32_t)p.G, (P*)red);
            LAUNCHED("k_reduce");
            P* src;
            if (int rc = tree_sum<F>((P*)red, (P*)tree, (uint32_t)groups, p.Tred, st, &src, err,
                                     errlen))
                return rc;
            k_window<F><<<1, 64, 0, st>>>(src, (uint32_t)p.G, p.logL, (P*)wacc);
            LAUNCHED("k_window");
            if (ones_sum) {
                k_add_into<F><<<1, 1, 0, st>>>((P*)wacc, ones_sum);
                LAUNCHED("k_add_into");
            }
            k_horner<F><<<1, 1, 0, st>>>((const P*)wacc, (uint32_t)p.G, p.c, (J*)d_out);
            LAUNCHED("k_horner");
        }
    }
    CU(cudaEventRecord(ev_end, st));
    CU(cudaMemcpyAsync(out, d_out, sizeof(J), cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));

    t.upload_ms = !host_scalars ? 0.0f
                  : overlap     ? elapsed(ev_cstart, ev_copy[nchunks - 1])
                                : elapsed(ev_start, ev_up);
    t.ones_ms = elapsed(ev_up, ev_ones);
    for (size_t k = 0; k < nchunks; k++) {
        // A chunk's digits and sort as far as they delay its accumulation:
        // from when the chunk before was accumulated or, for a piece that
        // arrived later, from its arrival; a piece's, only what outlasts the
        // accumulation before. Its accumulation from then on.
        cudaEvent_t from = k == 0 ? ev_ones : ev_acc[k - 1];
        if (overlap && elapsed(from, ev_copy[k]) > 0) from = ev_copy[k];
        const float sorting = elapsed(from, ev_sort[k]);
        if (sorting > 0) t.sort_ms += sorting;
        t.accum_ms += elapsed(sorting > 0 ? ev_sort[k] : from, ev_acc[k]);
    }
    t.reduce_ms = elapsed(nchunks ? ev_acc[nchunks - 1] : ev_ones, ev_end);
    t.total_ms = elapsed(ev_start, ev_end);
    if (trace)
        trace_chunks(h->group, p, npip, chunk, streamed, ev_start, ev_end, ev_tr,
                     overlap ? ev_copy : std::vector<cudaEvent_t>(), ev_sort, ev_acc);
    if (tm) *tm = t;
    return ZK_MSM_OK;
}

}  // namespace

extern "C" int zk_msm_upload(int group, const void* points, size_t n, const uint8_t* skip,
                             size_t nskip, void** handle, char* err, size_t errlen) {
    return zk_msm_upload_depth(group, points, n, skip, nskip, 1, handle, err, errlen);
}

extern "C" int zk_msm_upload_depth(int group, const void* points, size_t n, const uint8_t* skip,
                                   size_t nskip, int maxdepth, void** handle, char* err,
                                   size_t errlen) {
    if (!handle) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil handle pointer");
    *handle = nullptr;
    if (maxdepth < 1 || maxdepth > ZK_MSM_MAX_DEPTH)
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: precompute depth %d outside [1, %d]",
                    maxdepth, ZK_MSM_MAX_DEPTH);
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
        return upload_impl<fq_t>(group, points, n, skip, nskip, maxdepth, handle, err, errlen);
    case ZK_MSM_G2:
        return upload_impl<fq2_t>(group, points, n, skip, nskip, maxdepth, handle, err, errlen);
    case ZK_MSM_BN254_G1:
        return upload_impl<bn254_fq_t>(group, points, n, skip, nskip, maxdepth, handle, err,
                                       errlen);
    case ZK_MSM_BN254_G2:
        return upload_impl<bn254_fq2_t>(group, points, n, skip, nskip, maxdepth, handle, err,
                                        errlen);
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
    if (e == cudaSuccess) e = cudaStreamDestroy(h->copy_stream);
    if (e == cudaSuccess) e = cudaStreamDestroy(h->sort_stream);
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

namespace {

// run_group runs run_impl in h's group: the C entry points take no template.
int run_group(handle_t* h, const scalars_t& in, size_t n, cudaStream_t st, void* out,
              zk_msm_timing* timing, char* err, size_t errlen) {
    switch (h->group) {
    case ZK_MSM_G1:
        return run_impl<fq_t>(h, in, n, st, out, timing, err, errlen);
    case ZK_MSM_G2:
        return run_impl<fq2_t>(h, in, n, st, out, timing, err, errlen);
    case ZK_MSM_BN254_G1:
        return run_impl<bn254_fq_t>(h, in, n, st, out, timing, err, errlen);
    case ZK_MSM_BN254_G2:
        return run_impl<bn254_fq2_t>(h, in, n, st, out, timing, err, errlen);
    default:
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: corrupt handle");
    }
}

}  // namespace

extern "C" int zk_msm_run(void* handle, const void* scalars, size_t n, int scalars_on_device,
                          void* stream, void* out, zk_msm_timing* timing, char* err, size_t errlen) {
    if (!handle) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil handle");
    if (!out) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil output");
    handle_t* h = (handle_t*)handle;
    cudaStream_t st = stream ? (cudaStream_t)stream : h->stream;
    const scalars_t in{scalars, scalars_on_device != 0, nullptr, 0};
    return run_group(h, in, n, st, out, timing, err, errlen);
}

namespace {

// run_stream is zk_msm_run_stream, with the classification split when not
// null (zk_msm_run_stream_split).
int run_stream(void* handle, const void* host_points, const void* host_scalars, size_t n,
               void* const pbuf[2], void* const sbuf[2], size_t chunk, int max_c,
               const zk_msm_stream_split* split, void* stream, void* out, zk_msm_timing* timing,
               char* err, size_t errlen) {
    if (!handle) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil handle");
    if (!out) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil output");
    if (n > 0 && (!host_points || !host_scalars || !pbuf || !sbuf || !pbuf[0] || !pbuf[1] ||
                  !sbuf[0] || !sbuf[1] || chunk == 0))
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: streamed run: nil points, scalars or buffers, or chunk 0");
    handle_t* h = (handle_t*)handle;
    cudaStream_t st = stream ? (cudaStream_t)stream : h->stream;
    scalars_t in{host_scalars, false, nullptr, 0};
    in.points = n > 0 ? host_points : nullptr;
    in.chunk = chunk;
    in.max_c = max_c;
    in.ssplit = split;
    for (int i = 0; i < 2; i++) {
        in.pbuf[i] = pbuf ? pbuf[i] : nullptr;
        in.sbuf[i] = sbuf ? sbuf[i] : nullptr;
    }
    return run_group(h, in, n, st, out, timing, err, errlen);
}

}  // namespace

extern "C" int zk_msm_run_stream(void* handle, const void* host_points, const void* host_scalars,
                                 size_t n, void* const pbuf[2], void* const sbuf[2], size_t chunk,
                                 int max_c, void* stream, void* out, zk_msm_timing* timing,
                                 char* err, size_t errlen) {
    return run_stream(handle, host_points, host_scalars, n, pbuf, sbuf, chunk, max_c, nullptr,
                      stream, out, timing, err, errlen);
}

extern "C" int zk_msm_run_stream_split(void* handle, const void* host_points,
                                       const void* host_scalars, size_t n, void* const pbuf[2],
                                       void* const sbuf[2], size_t chunk, int max_c,
                                       const zk_msm_stream_split* split, void* stream, void* out,
                                       zk_msm_timing* timing, char* err, size_t errlen) {
    if (!split || (n > 0 && (!split->idx || !split->ones || !split->rest)))
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: streamed split run: nil classification");
    return run_stream(handle, host_points, host_scalars, n, pbuf, sbuf, chunk, max_c, split,
                      stream, out, timing, err, errlen);
}

extern "C" int zk_msm_classify_chunk(int group, const void* scalars, size_t cn, uint32_t* idx,
                                     uint32_t* nones, uint32_t* nrest, char* err,
                                     size_t errlen) {
    if (cn > 0 && (!scalars || !idx))
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: classify: nil scalars or index list");
    if (!nones || !nrest) return fail(err, errlen, ZK_MSM_EINVAL, "msm: classify: nil counts");
    if (cn > MAX_CHUNK)
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: classify: a chunk of %zu scalars, more than %zu",
                    cn, (size_t)MAX_CHUNK);
    switch (group) {
    case ZK_MSM_G1:
    case ZK_MSM_G2:
        classify_chunk((const mont_t<fr_params>*)scalars, (uint32_t)cn, idx, nones, nrest);
        return ZK_MSM_OK;
    case ZK_MSM_BN254_G1:
    case ZK_MSM_BN254_G2:
        classify_chunk((const bn254_fr_t*)scalars, (uint32_t)cn, idx, nones, nrest);
        return ZK_MSM_OK;
    default:
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: classify: unknown group %d", group);
    }
}

extern "C" int zk_msm_stream_work_bytes(void* handle, size_t n, size_t chunk, int max_c,
                                        uint64_t* out, char* err, size_t errlen) {
    if (!handle || !out) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil argument");
    handle_t* h = (handle_t*)handle;
    *out = 0;
    if (n == 0) return ZK_MSM_OK;
    if (chunk == 0) return fail(err, errlen, ZK_MSM_EINVAL, "msm: streamed run in chunks of 0");
    CU(cudaSetDevice(h->dev));
    const plan_t p = zk_msm_make_plan_stream(n, std::min(chunk, MAX_CHUNK), max_c,
                                             h->resident_accum, h->resident_reduce);
    size_t sb = 0;
    if (int rc = sort_bytes(p, h->stream, &sb, err, errlen)) return rc;
    *out = zk_msm_stream_work_of(h->group, &p, n, sb).total;
    return ZK_MSM_OK;
}

extern "C" int zk_msm_run_split(void* handle, const zk_msm_split* split, size_t lo, size_t n,
                                void* stream, void* out, zk_msm_timing* timing, char* err,
                                size_t errlen) {
    if (!handle) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil handle");
    if (!split) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil split");
    if (!out) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil output");
    handle_t* h = (handle_t*)handle;
    cudaStream_t st = stream ? (cudaStream_t)stream : h->stream;
    const scalars_t in{nullptr, true, split, lo};
    return run_group(h, in, n, st, out, timing, err, errlen);
}

namespace {

// class_is selects the indices i whose scalar class cls[i] is want.
struct class_is {
    const uint8_t* cls;
    uint8_t want;
    __host__ __device__ __forceinline__ bool operator()(const uint32_t& i) const {
        return cls[i] == want;
    }
};

// split_release frees a split's lists (stream-ordered, on its stream) and
// returns the first error.
cudaError_t split_release(zk_msm_split* s) {
    cudaError_t e = cudaSuccess, e2 = cudaSuccess;
    if (s->ones) e = cudaFreeAsync(s->ones, s->st);
    if (s->rest) e2 = cudaFreeAsync(s->rest, s->st);
    s->ones = s->rest = nullptr;
    return e != cudaSuccess ? e : e2;
}

}  // namespace

extern "C" int zk_msm_split_classify(int device, const void* scalars, size_t n, void* stream,
                                     zk_msm_split** out, char* err, size_t errlen) {
    return zk_msm_split_classify_group(ZK_MSM_G1, device, scalars, n, stream, out, err, errlen);
}

extern "C" int zk_msm_split_classify_group(int group, int device, const void* scalars, size_t n,
                                           void* stream, zk_msm_split** out, char* err,
                                           size_t errlen) {
    if (!out) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil split pointer");
    *out = nullptr;
    if (group < ZK_MSM_G1 || group > ZK_MSM_BN254_G2)
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: classify the scalars of group %d", group);
    if (n > 0 && !scalars) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil scalars");
    if (n >= ((size_t)1 << 31))
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: %zu scalars: at most 2^31-1 classified", n);
    zk_msm_split* s = new (std::nothrow) zk_msm_split();
    if (!s) return fail(err, errlen, ZK_MSM_ENOMEM, "msm: host allocation");
    struct guard_t {
        zk_msm_split*& s;
        ~guard_t() {
            if (!s) return;
            split_release(s);
            delete s;
        }
    } guard{s};
    s->st = (cudaStream_t)stream;
    s->bn254 = group == ZK_MSM_BN254_G1 || group == ZK_MSM_BN254_G2;
    s->scalars = scalars;
    s->n = n;
    s->dev = device;
    CU(cudaSetDevice(device));
    if (n > 0) {
        work_t wk;  // the temporaries, freed on its stream when it goes
        wk.st = s->st;
        CU(get_pool(s->dev, &wk.pool));
        CU(cudaMallocFromPoolAsync((void**)&s->ones, n * 4, wk.pool, s->st));
        CU(cudaMallocFromPoolAsync((void**)&s->rest, n * 4, wk.pool, s->st));
        void *cls, *counts, *tmp;
        CU(wk.alloc(&cls, n));
        CU(wk.alloc(&counts, 2 * sizeof(uint32_t)));  // sizes as zk_msm_classify_work counts
        const uint32_t blocks = (uint32_t)((n + 255) / 256);
        if (s->bn254)
            k_classify<<<blocks, 256, 0, s->st>>>((const bn254_fr_t*)s->scalars, (uint32_t)n,
                                                 (uint8_t*)cls);
        else
            k_classify<<<blocks, 256, 0, s->st>>>((const fr_t*)s->scalars, (uint32_t)n,
                                                 (uint8_t*)cls);
        LAUNCHED("k_classify");
        cub::CountingInputIterator<uint32_t> it(0);
        const class_is is_one{(const uint8_t*)cls, CLASS_ONE};
        const class_is is_other{(const uint8_t*)cls, CLASS_OTHER};
        uint32_t* d_counts = (uint32_t*)counts;
        size_t b1 = 0, b2 = 0;
        CU(cub::DeviceSelect::If(nullptr, b1, it, s->ones, d_counts, (int)n, is_one, s->st));
        CU(cub::DeviceSelect::If(nullptr, b2, it, s->rest, d_counts + 1, (int)n, is_other, s->st));
        // msm_plan.h's bound when larger: zk_msm_classify_work counts it.
        size_t tb = b1 > b2 ? b1 : b2;
        const size_t tbound = (size_t)zk_msm_select_bytes_bound(n);
        if (tb < tbound) tb = tbound;
        CU(wk.alloc(&tmp, tb));
        CU(cub::DeviceSelect::If(tmp, tb, it, s->ones, d_counts, (int)n, is_one, s->st));
        CU(cub::DeviceSelect::If(tmp, tb, it, s->rest, d_counts + 1, (int)n, is_other, s->st));
        uint32_t h_counts[2] = {0, 0};
        CU(cudaMemcpyAsync(h_counts, d_counts, sizeof h_counts, cudaMemcpyDeviceToHost, s->st));
        CU(cudaStreamSynchronize(s->st));
        s->nones = h_counts[0];
        s->nrest = h_counts[1];
        if (s->nones + s->nrest > n)
            return fail(err, errlen, ZK_MSM_ECUDA, "msm: classification counted %zu ones and %zu "
                        "others among %zu scalars", s->nones, s->nrest, n);
    }
    *out = s;
    s = nullptr;  // the guard keeps it
    return ZK_MSM_OK;
}

extern "C" void zk_msm_split_counts(const zk_msm_split* split, size_t* zeros, size_t* ones,
                                    size_t* rest) {
    size_t n = split ? split->n : 0, o = split ? split->nones : 0, r = split ? split->nrest : 0;
    if (zeros) *zeros = n - o - r;
    if (ones) *ones = o;
    if (rest) *rest = r;
}

extern "C" int zk_msm_split_free(zk_msm_split* split, char* err, size_t errlen) {
    if (!split) return ZK_MSM_OK;
    int rc = ZK_MSM_OK;
    cudaError_t e = cudaSetDevice(split->dev);
    if (e == cudaSuccess) e = split_release(split);
    if (e != cudaSuccess)
        rc = fail(err, errlen, cuda_code(e), "msm: free split: %s", cudaGetErrorString(e));
    delete split;
    return rc;
}

extern "C" int zk_msm_work_bytes(void* handle, size_t n, int scalars_on_device, uint64_t* out,
                                 char* err, size_t errlen) {
    if (!handle || !out) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil argument");
    handle_t* h = (handle_t*)handle;
    *out = 0;
    if (n == 0) return ZK_MSM_OK;
    CU(cudaSetDevice(h->dev));
    const size_t chunk = chunk_of(h, n, !scalars_on_device);
    const plan_t p = make_plan(h, n, chunk);
    size_t sb = 0;
    if (int rc = sort_bytes(p, h->stream, &sb, err, errlen)) return rc;
    *out = zk_msm_work_of(h->group, &p, n, scalars_on_device, sb, 0, 1).total;
    return ZK_MSM_OK;
}

extern "C" int zk_msm_split_work_bytes(void* handle, size_t n, uint64_t* out, char* err,
                                       size_t errlen) {
    if (!handle || !out) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil argument");
    handle_t* h = (handle_t*)handle;
    *out = 0;
    if (n == 0) return ZK_MSM_OK;
    CU(cudaSetDevice(h->dev));
    // msm_plan.h's zk_msm_split_work_bound, with the storage CUB asks when
    // more than the bound.
    plan_t plans[2];
    const int k = zk_msm_split_plans(n, h->pre_c, h->pre_depth, h->resident_accum,
                                     h->resident_reduce, plans);
    const uint32_t ones = zk_msm_ones_threads(n, h->resident_accum);
    for (int i = 0; i < k; i++) {
        size_t sb = 0;
        if (int rc = sort_bytes(plans[i], h->stream, &sb, err, errlen)) return rc;
        const uint64_t w = zk_msm_work_of(h->group, &plans[i], n, 1, sb, ones, 1).total;
        if (w > *out) *out = w;
    }
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
    case ZK_MSM_BN254_G1:
        return residency<bn254_fq_t>(device, accum, reduce, err, errlen);
    case ZK_MSM_BN254_G2:
        return residency<bn254_fq2_t>(device, accum, reduce, err, errlen);
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

namespace {

// precompute_impl replaces h's points by d copies for window c (copy 0 the
// points themselves), or by the points alone when d == 1.
template <class F>
int precompute_impl(handle_t* h, int c, int d, char* err, size_t errlen) {
    using A = affine_t<F>;
    const size_t n = h->n;
    if (d == h->pre_depth && (d == 1 || c == h->pre_c)) return ZK_MSM_OK;
    CU(cudaSetDevice(h->dev));
    CU(cudaStreamSynchronize(h->stream));
    void* nb = nullptr;
    CU(cudaMalloc(&nb, (size_t)zk_msm_bases_bytes(h->group, n, d)));
    struct guard_t {
        void*& p;
        ~guard_t() {
            if (p) cudaFree(p);
        }
    } guard{nb};
    if (n) CU(cudaMemcpyAsync(nb, h->bases, n * sizeof(A), cudaMemcpyDeviceToDevice, h->stream));
    if (d > 1)
        if (int rc = fill_copies<F>(h, nb, c, d, err, errlen)) return rc;
    CU(cudaStreamSynchronize(h->stream));
    CU(cudaFree(h->bases));
    h->bases = nb;
    nb = nullptr;  // the handle's now
    h->pre_c = d > 1 ? c : 0;
    h->pre_depth = d;
    return ZK_MSM_OK;
}

}  // namespace

extern "C" int zk_msm_precompute(void* handle, int maxdepth, char* err, size_t errlen) {
    if (!handle) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil handle");
    if (maxdepth < 1 || maxdepth > ZK_MSM_MAX_DEPTH)
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: precompute depth %d outside [1, %d]",
                    maxdepth, ZK_MSM_MAX_DEPTH);
    handle_t* h = (handle_t*)handle;
    int c = 0, d = 1;
    zk_msm_precompute_choice(h->n, maxdepth, &c, &d);
    switch (h->group) {
    case ZK_MSM_G1:
        return precompute_impl<fq_t>(h, c, d, err, errlen);
    case ZK_MSM_G2:
        return precompute_impl<fq2_t>(h, c, d, err, errlen);
    case ZK_MSM_BN254_G1:
        return precompute_impl<bn254_fq_t>(h, c, d, err, errlen);
    case ZK_MSM_BN254_G2:
        return precompute_impl<bn254_fq2_t>(h, c, d, err, errlen);
    default:
        return fail(err, errlen, ZK_MSM_EINVAL, "msm: corrupt handle");
    }
}

extern "C" void zk_msm_precomputed(void* handle, int* c, int* depth) {
    const handle_t* h = (const handle_t*)handle;
    if (c) *c = h ? h->pre_c : 0;
    if (depth) *depth = h ? h->pre_depth : 1;
}

extern "C" int zk_msm_host_alloc(size_t bytes, void** out, char* err, size_t errlen) {
    if (!out) return fail(err, errlen, ZK_MSM_EINVAL, "msm: nil pointer");
    *out = nullptr;
    CU(cudaHostAlloc(out, bytes ? bytes : 1, cudaHostAllocPortable));
    return ZK_MSM_OK;
}

extern "C" int zk_msm_host_free(void* p, char* err, size_t errlen) {
    if (p) CU(cudaFreeHost(p));
    return ZK_MSM_OK;
}

extern "C" void zk_msm_set_pieces(void* handle, int pieces, size_t min_piece) {
    if (!handle) return;
    handle_t* h = (handle_t*)handle;
    h->pieces.store(pieces < 0 ? 0 : pieces > 64 ? 64 : pieces);
    h->min_piece.store(min_piece);
}

extern "C" int zk_msm_window_bits(int group, size_t n) {
    (void)group;
    size_t chunk = n < MAX_CHUNK ? n : MAX_CHUNK;
    return zk_msm_choose_c(chunk);
}
