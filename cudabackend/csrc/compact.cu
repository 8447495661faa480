// compact.cu: a compact partition's W expanded on the device, and every
// constraint evaluated and checked there (compact.cuh). The kernels are
// templates over the scalar field's element F, instantiated for BLS12-381's
// fr_t and BN254's bn254_fr_t (on_curve.cuh picks one), as ntt.cu's
// are: a curve is a field, not a copy of the kernels.

#include <cub/block/block_scan.cuh>

#include "common.cuh"
#include "compact.cuh"
#include "field.cuh"
#include "on_curve.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kRank = ZK_G16_COMPACT_RANK_WORDS;  // threads of the rank kernels
constexpr unsigned kFull = 0xffffffffu;

// kLongRow: a row with more terms than this in any of its three matrices is
// evaluated by a whole warp (bit recompositions of 32 to 256 terms, linear
// layers); the others, nearly all of 1 to 3 terms, by one thread each, so a
// long row does not hold its 31 neighbours' threads idle while it sums.
constexpr uint32_t kLongRow = 16;

// Both curves' scalars are 8 32-bit limbs (gnark-crypto's [4]uint64): the
// 16-byte loads and stores and the warp's shuffles below move them so.
static_assert(sizeof(fr_t) == 32 && sizeof(bn254_fr_t) == 32, "a scalar is 8 32-bit limbs");

// load_fr reads an element through the read-only cache in two 16-byte loads
// (F is 4-byte aligned as a type; every buffer here is 32-byte aligned).
template <class F>
__device__ __forceinline__ F load_fr(const F* p) {
    const uint4* q = reinterpret_cast<const uint4*>(p);
    const uint4 lo = __ldg(q), hi = __ldg(q + 1);
    F r;
    r.l[0] = lo.x, r.l[1] = lo.y, r.l[2] = lo.z, r.l[3] = lo.w;
    r.l[4] = hi.x, r.l[5] = hi.y, r.l[6] = hi.z, r.l[7] = hi.w;
    return r;
}

// store_fr writes an element in two 16-byte stores, so a warp's consecutive
// elements go out as whole sectors.
template <class F>
__device__ __forceinline__ void store_fr(F* p, const F& v) {
    uint4* q = reinterpret_cast<uint4*>(p);
    q[0] = make_uint4(v.l[0], v.l[1], v.l[2], v.l[3]);
    q[1] = make_uint4(v.l[4], v.l[5], v.l[6], v.l[7]);
}

// k_rank: per bitmap word, the set bits of other in the words before it in
// its block (wpre), and per block the block's total (bsum, made exclusive by
// k_scan_blocks). Bits at or past nwires in the last word are not counted.
__global__ void k_rank(const uint64_t* __restrict__ other, uint32_t words, uint64_t last_mask,
                       uint32_t* __restrict__ wpre, uint32_t* __restrict__ bsum) {
    using Scan = cub::BlockScan<uint32_t, kRank>;
    __shared__ typename Scan::TempStorage tmp;
    const uint32_t t = blockIdx.x * kRank + threadIdx.x;
    uint32_t c = 0;
    if (t < words) {
        uint64_t v = other[t];
        if (t == words - 1) v &= last_mask;
        c = (uint32_t)__popcll(v);
    }
    uint32_t pre, total;
    Scan(tmp).ExclusiveSum(c, pre, total);
    if (t < words) wpre[t] = pre;
    if (threadIdx.x == 0) bsum[blockIdx.x] = total;
}

// k_scan_blocks turns the nblk block totals into exclusive prefixes, in one
// block, kRank at a time (a few thousand blocks at most: 2^32 wires), and
// stores the grand total, other's set bits, in flags[1].
__global__ void k_scan_blocks(uint32_t* __restrict__ bsum, uint32_t nblk, uint32_t* __restrict__ flags) {
    using Scan = cub::BlockScan<uint32_t, kRank>;
    __shared__ typename Scan::TempStorage tmp;
    uint32_t carry = 0;
    for (uint32_t base = 0; base < nblk; base += kRank) {
        const uint32_t i = base + threadIdx.x;
        const uint32_t x = i < nblk ? bsum[i] : 0;
        uint32_t pre, total;
        Scan(tmp).ExclusiveSum(x, pre, total);
        if (i < nblk) bsum[i] = carry + pre;
        carry += total;
        __syncthreads();  // tmp is reused by the next round
    }
    if (threadIdx.x == 0) flags[1] = carry;
}

// k_expand writes wire i of W: values[rank(i)] where other's bit i is set,
// else one where bits' bit i is set, else zero. A rank at or past nb_other
// (the host gave fewer values than other marks; flags[1] says so) reads
// nothing and gives zero. F::one() is the field's 1 in Montgomery form,
// which differs per curve.
template <class F>
__global__ void k_expand(const uint64_t* __restrict__ other, const uint64_t* __restrict__ bits,
                         const uint32_t* __restrict__ wpre, const uint32_t* __restrict__ bsum,
                         const F* __restrict__ values, uint32_t nb_other, uint32_t nwires,
                         F* __restrict__ w) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nwires) return;
    const uint32_t word = i >> 6, bit = i & 63;
    const uint64_t o = other[word];
    F v = F::zero();
    if ((o >> bit) & 1) {
        const uint32_t rank = bsum[word / kRank] + wpre[word] +
                              (uint32_t)__popcll(o & ((uint64_t(1) << bit) - 1));
        if (rank < nb_other) v = load_fr(values + rank);
    } else if ((bits[word] >> bit) & 1) {
        v = F::one();
    }
    store_fr(w + i, v);
}

// eval_params is what k_eval reads: the three matrices, the coefficient
// table, the compact bitmaps and the expanded W, and where the rows go.
template <class F>
struct eval_params {
    zk_cs_matrix m[3];
    const F* coeffs;
    const uint64_t* other;
    const uint64_t* bits;
    const F* w;
    F* out[3];  // a, b, c; c may be null (H computes C = A∘B itself)
    uint32_t n;
    uint32_t* bad;
    F one, minus_one;
};

// add_term adds term k of matrix m to acc. The bitmaps decide first, from
// two 8-byte words that stay in cache: a wire that is 0 adds nothing (its
// coefficient is not even read), a wire that is 1 adds its coefficient; only
// the others read W and multiply, and a coefficient of 1 or -1 (the common
// ones) is an add or a subtract.
template <class F>
__device__ __forceinline__ void add_term(const eval_params<F>& p, const zk_cs_matrix& m, uint32_t k,
                                         F& acc) {
    const uint32_t j = __ldg(m.wire + k);
    const uint32_t word = j >> 6, bit = j & 63;
    if ((__ldg(p.other + word) >> bit) & 1) {
        const F x = load_fr(p.w + j);
        const F cf = load_fr(p.coeffs + __ldg(m.coeff + k));
        if (cf == p.one)
            acc = acc + x;
        else if (cf == p.minus_one)
            acc = acc - x;
        else
            acc = acc + cf * x;
    } else if ((__ldg(p.bits + word) >> bit) & 1) {
        acc = acc + load_fr(p.coeffs + __ldg(m.coeff + k));
    }
}

// warp_sum is the sum of every lane's v, in every lane.
template <class F>
__device__ __forceinline__ F warp_sum(F v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        F o;
#pragma unroll
        for (int i = 0; i < 8; i++) o.l[i] = __shfl_xor_sync(kFull, v.l[i], off);
        v = v + o;
    }
    return v;
}

// finish_row stores row i's three values and checks the constraint.
template <class F>
__device__ __forceinline__ void finish_row(const eval_params<F>& p, uint32_t i, const F r[3]) {
    store_fr(p.out[0] + i, r[0]);
    store_fr(p.out[1] + i, r[1]);
    if (p.out[2]) store_fr(p.out[2] + i, r[2]);
    if (r[0] * r[1] != r[2]) atomicMin(p.bad, i);
}

// k_eval evaluates rows 0..n-1, a thread per row; a row with more than
// kLongRow terms in a matrix is left by its thread to the whole warp, which
// takes its warp's long rows one after another (each lane sums every 32nd
// term, then the lanes' sums are added). Every thread of a launched warp
// reaches the ballot: blockDim is a multiple of 32 and nothing returns early.
template <class F>
__global__ void __launch_bounds__(kThreads) k_eval(const eval_params<F> p) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool active = i < p.n;
    bool islong = false;
    if (active) {
#pragma unroll
        for (int mi = 0; mi < 3; mi++)
            islong |= __ldg(p.m[mi].start + i + 1) - __ldg(p.m[mi].start + i) > kLongRow;
    }
    // Deliberately parallel to the warp's loop below: a thread's row and a
    // warp's differ in who sums which terms and how the sums meet, in the
    // innermost loop of the evaluation.
    if (active && !islong) {
        F r[3];
#pragma unroll
        for (int mi = 0; mi < 3; mi++) {
            const zk_cs_matrix& m = p.m[mi];
            const uint32_t e = __ldg(m.start + i + 1);
            F acc = F::zero();
            for (uint32_t k = __ldg(m.start + i); k < e; k++) add_term(p, m, k, acc);
            r[mi] = acc;
        }
        finish_row(p, i, r);
    }
    unsigned pending = __ballot_sync(kFull, active && islong);
    const uint32_t lane = threadIdx.x & 31;
    while (pending) {
        const int src = __ffs(pending) - 1;
        pending &= pending - 1;
        const uint32_t row = __shfl_sync(kFull, i, src);
        // Deliberately parallel to the thread's loop above: see why there.
        F r[3];
#pragma unroll
        for (int mi = 0; mi < 3; mi++) {
            const zk_cs_matrix& m = p.m[mi];
            const uint32_t e = __ldg(m.start + row + 1);
            F acc = F::zero();
            for (uint32_t k = __ldg(m.start + row) + lane; k < e; k += 32) add_term(p, m, k, acc);
            r[mi] = warp_sum(acc);
        }
        if (lane == 0) finish_row(p, row, r);
    }
}

}  // namespace

zk_compact_dev zk_compact_at(void* base, size_t nwires) {
    const size_t words = zk_g16_compact_words(nwires);
    char* p = (char*)base;
    zk_compact_dev d;
    d.other = (uint64_t*)p;
    d.bits = (uint64_t*)(p + 8 * words);
    d.flags = (uint32_t*)(p + 16 * words);
    d.wpre = (uint32_t*)(p + 16 * words + 16);
    d.bsum = (uint32_t*)(p + 16 * words + 16 + 4 * words);
    return d;
}

// expand_as launches k_expand for the field F.
template <class F>
static void expand_as(const zk_compact_dev& d, const void* values, size_t nb_other, size_t nwires,
                      void* w, cudaStream_t st) {
    k_expand<F><<<(unsigned)((nwires + kThreads - 1) / kThreads), kThreads, 0, st>>>(
        d.other, d.bits, d.wpre, d.bsum, (const F*)values, (uint32_t)nb_other, (uint32_t)nwires,
        (F*)w);
}

// eval_as launches k_eval for the field F.
template <class F>
static void eval_as(const zk_cs_matrix m[3], const void* coeffs, const zk_compact_dev& d,
                    const void* w, size_t n, void* a, void* b, void* c, cudaStream_t st) {
    eval_params<F> p;
    for (int i = 0; i < 3; i++) p.m[i] = m[i];
    p.coeffs = (const F*)coeffs;
    p.other = d.other;
    p.bits = d.bits;
    p.w = (const F*)w;
    p.out[0] = (F*)a;
    p.out[1] = (F*)b;
    p.out[2] = (F*)c;
    p.n = (uint32_t)n;
    p.bad = d.flags;
    p.one = F::one();
    p.minus_one = F::zero() - F::one();
    k_eval<F><<<(unsigned)((n + kThreads - 1) / kThreads), kThreads, 0, st>>>(p);
}


int zk_compact_expand(int curve, const zk_compact_dev& d, const void* values, size_t nb_other,
                      size_t nwires, void* w, cudaStream_t st, char* err, size_t errlen) {
    return on_curve(curve, "compact W", err, errlen, [&](auto f) -> int {
        if (nwires > UINT32_MAX || nb_other > nwires)
            return zk_fail(err, errlen, ZK_EINVAL, "compact W: %zu values for %zu wires", nb_other,
                           nwires);
        const size_t words = zk_g16_compact_words(nwires);
        const size_t nblk = (words + kRank - 1) / kRank;
        // flags[0] = no unsatisfied row yet; k_scan_blocks writes flags[1].
        ZK_CUDA(cudaMemsetAsync(d.flags, 0xff, 4 * sizeof(uint32_t), st));
        if (nblk) {
            const uint64_t last_mask = nwires % 64 ? (uint64_t(1) << (nwires % 64)) - 1 : ~uint64_t(0);
            k_rank<<<(unsigned)nblk, kRank, 0, st>>>(d.other, (uint32_t)words, last_mask, d.wpre, d.bsum);
            ZK_LAUNCHED();
        }
        k_scan_blocks<<<1, kRank, 0, st>>>(d.bsum, (uint32_t)nblk, d.flags);
        ZK_LAUNCHED();
        if (nwires) {
            expand_as<decltype(f)>(d, values, nb_other, nwires, w, st);
            ZK_LAUNCHED();
        }
        return ZK_OK;
    });
}

int zk_compact_eval(int curve, const zk_cs_matrix m[3], const void* coeffs,
                    const zk_compact_dev& d, const void* w, size_t n, void* a, void* b, void* c,
                    cudaStream_t st, char* err, size_t errlen) {
    return on_curve(curve, "compact evaluation", err, errlen, [&](auto f) -> int {
        if (n == 0 || n >= UINT32_MAX)
            return zk_fail(err, errlen, ZK_EINVAL, "compact evaluation of %zu rows", n);
        eval_as<decltype(f)>(m, coeffs, d, w, n, a, b, c, st);
        ZK_LAUNCHED();
        return ZK_OK;
    });
}
