// msm_core.cuh: the per-thread bodies of the MSM kernels (msm.cu), written
// __host__ __device__ so hosttest/msm_emu.cpp runs the same code on the CPU,
// one thread after another, and checks the whole pipeline without a GPU.
// The kernels in msm.cu only compute the thread index and call these.
// See msm.cu for the algorithm.
#pragma once

#include "curve.cuh"

namespace zk_msm {

constexpr uint32_t NO_KEY = 0xffffffffu;  // "no neighbour" at the array ends
constexpr uint32_t SIGN = 0x80000000u;    // val bit: negate the point
constexpr uint32_t TREE_G = 4;            // points summed per thread in tree_one

// ldp / stp move a point in 16-byte pieces on the device (one 128-bit access
// instead of four 32-bit ones), plainly on the host.
template <class T>
ZK_HD T ldp(const T* p) {
#ifdef __CUDA_ARCH__
    static_assert(sizeof(T) % 16 == 0, "16-byte multiple");
    T r;
    const uint4* s = reinterpret_cast<const uint4*>(p);
    uint32_t* d = reinterpret_cast<uint32_t*>(&r);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++) {
        uint4 v = s[i];
        d[4 * i + 0] = v.x;
        d[4 * i + 1] = v.y;
        d[4 * i + 2] = v.z;
        d[4 * i + 3] = v.w;
    }
    return r;
#else
    return *p;
#endif
}

template <class T>
ZK_HD void stp(T* p, const T& v) {
#ifdef __CUDA_ARCH__
    static_assert(sizeof(T) % 16 == 0, "16-byte multiple");
    uint4* d = reinterpret_cast<uint4*>(p);
    const uint32_t* s = reinterpret_cast<const uint32_t*>(&v);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = make_uint4(s[4 * i + 0], s[4 * i + 1], s[4 * i + 2], s[4 * i + 3]);
#else
    *p = v;
#endif
}


// prefetch_l2 asks for the cache lines of the object at p (device only).
// Level 0 of the accumulation asks for the next pair's point before adding
// the current one, so the random read of a base overlaps an addition
// (a small gain: the kernel is bound by its multiplications, not by these
// reads; BENCHMARKS.md, "G1 MSM: the product inlined, lazy reduction, a dedicated
// squaring").
template <class T>
ZK_HD void prefetch_l2(const T* p) {
#ifdef __CUDA_ARCH__
    const char* c = reinterpret_cast<const char*>(p);
    asm volatile("prefetch.global.L2 [%0];" ::"l"(c));
    asm volatile("prefetch.global.L2 [%0];" ::"l"(c + sizeof(T) - 1));
#else
    (void)p;
#endif
}

// digits_of cuts the canonical scalar s into nwin signed c-bit digits and
// writes the (key, val) pair of each window at [w*n + i]; val is v (a point
// index) with the sign bit when the digit is negative. Over bases with
// precomputed copies (copy g at g*stride: P * 2^(c*G*g)), window w = g*G + r
// reads copy g and lands in bucket set r: key r*m + |d|-1, val v + g*stride.
// Without copies G = nwin (every window its own set, copy 0). Any scalar
// field of 8 limbs below 2^255 (BLS12-381's and BN254's): the plan's nwin
// windows cover 256 bits, room for the last window's carry.
template <class P>
ZK_HD void digits_of(const mont_t<P>& s, uint32_t i, uint32_t v, uint32_t n, int c, int nwin, int G,
                     uint32_t stride, uint32_t* keys, uint32_t* vals) {
    static_assert(P::N == 8, "msm_plan.h counts windows over 256 bits");
    const uint32_t m = 1u << (c - 1);
    const uint32_t full = 1u << c;
    const uint32_t mask = full - 1;
    const uint32_t sentinel = (uint32_t)G * m;
    uint32_t carry = 0;
    int r = 0;
    uint32_t base = v;  // v + g*stride for the current copy g
    for (int w = 0; w < nwin; w++) {
        int pos = w * c;
        int wi = pos >> 5, sh = pos & 31;
        uint64_t lo = wi < P::N ? s.l[wi] : 0;
        uint64_t hi = wi + 1 < P::N ? s.l[wi + 1] : 0;
        uint32_t raw = ((uint32_t)(((hi << 32) | lo) >> sh) & mask) + carry;
        uint32_t val = base;
        if (raw > m) {
            raw = full - raw;  // the digit is raw - 2^c < 0
            carry = 1;
            val |= SIGN;
        } else {
            carry = 0;
        }
        keys[(size_t)w * n + i] = raw == 0 ? sentinel : (uint32_t)r * m + raw - 1;
        vals[(size_t)w * n + i] = val;
        if (++r == G) {
            r = 0;
            base += stride;
        }
    }
}

// digits_one cuts scalar i (Montgomery form) of a dense vector: its digits
// pick point i (of copy g at i + g*stride).
template <class P>
ZK_HD void digits_one(uint32_t i, const mont_t<P>* scalars, uint32_t n, int c, int nwin, int G,
                      uint32_t stride, uint32_t* keys, uint32_t* vals) {
    digits_of(fr_from_mont(ldp(scalars + i)), i, i, n, c, nwin, G, stride, keys, vals);
}

// digits_idx_one cuts entry i of an index list over a classified vector
// (the split MSM): j = idx[i] names scalar j (Montgomery form) and point
// j - lo. An index outside [lo, hi) (the classified vector is longer than
// the MSM's range) counts as a zero scalar: every digit gets the sentinel.
template <class P>
ZK_HD void digits_idx_one(uint32_t i, const mont_t<P>* scalars, const uint32_t* idx, uint32_t lo,
                          uint32_t hi, uint32_t n, int c, int nwin, int G, uint32_t stride,
                          uint32_t* keys, uint32_t* vals) {
    const uint32_t j = idx[i];
    if (j >= lo && j < hi)
        digits_of(fr_from_mont(ldp(scalars + j)), i, j - lo, n, c, nwin, G, stride, keys, vals);
    else
        digits_of(mont_t<P>::zero(), i, 0, n, c, nwin, G, stride, keys, vals);
}

// finv is a^-1 (zero maps to zero): field.cuh's inverse of the reduced
// value (the device's Fq values may be lazy, in [0, 2p)).
template <class P>
ZK_HD mont_t<P> finv(const mont_t<P>& a) {
    return fcanon(a).inverse();
}

// finv in Fq2: 1/(a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2).
template <class P>
ZK_HD ext2_t<P> finv(const ext2_t<P>& a) {
    mont_t<P> t = finv(fadd(fsqr(a.c0), fsqr(a.c1)));
    ext2_t<P> r;
    r.c0 = fmul(a.c0, t);
    r.c1 = fneg(fmul(a.c1, t));
    return r;
}

// PRE_K: points a precompute thread converts to affine with one inversion
// (Montgomery's trick: the inversion, ~570 products, shared by PRE_K points
// at 3 products each; the doublings, ~7 products each, then dominate).
constexpr uint32_t PRE_K = 8;

// precompute_one is thread t of one copy: dst[i] = 2^shift * src[i] in
// affine form for i in [t*PRE_K, t*PRE_K + PRE_K) within n (infinity, and a
// doubling that reaches it, stays all-zero): shift Jacobian doublings a
// point, then one batched inversion of their Z. Copy g of the bases is copy
// g-1 through this with shift c*G.
template <class F>
ZK_HD void precompute_one(uint32_t t, const affine_t<F>* src, uint32_t n, affine_t<F>* dst,
                          int shift) {
    const uint32_t i0 = t * PRE_K;
    jac_t<F> j[PRE_K];
    F before[PRE_K];  // the product of the nonzero Z before k
    F acc = F::one();
    for (uint32_t k = 0; k < PRE_K; k++) {
        j[k].z = F::zero();
        if (i0 + k >= n) continue;
        affine_t<F> p = ldp(src + i0 + k);
        if (p.is_inf()) continue;
        j[k].x = p.x;
        j[k].y = p.y;
        j[k].z = F::one();
        for (int s = 0; s < shift; s++) j[k] = j[k].dbl();
        before[k] = acc;
        if (!fzero(j[k].z)) acc = fmul(acc, j[k].z);
    }
    F inv = finv(acc);  // 1 / (product of the nonzero Z)
    for (int k = (int)PRE_K - 1; k >= 0; k--) {
        if (i0 + (uint32_t)k >= n) continue;
        affine_t<F> p;
        if (fzero(j[k].z)) {
            p.x = F::zero();
            p.y = F::zero();
        } else {
            F zi = fmul(inv, before[k]);
            inv = fmul(inv, j[k].z);
            F z2 = fsqr(zi);
            p.x = fcanon(fmul(j[k].x, z2));
            p.y = fcanon(fmul(j[k].y, fmul(z2, zi)));
        }
        stp(dst + i0 + k, p);
    }
}
// Scalar classes of the split MSM: a Groth16 witness is mostly 0 and 1.
constexpr uint8_t CLASS_ZERO = 0;   // adds nothing
constexpr uint8_t CLASS_ONE = 1;    // adds its point: summed apart, no Pippenger
constexpr uint8_t CLASS_OTHER = 2;  // goes through Pippenger

// scalar_class classifies a scalar in Montgomery form: zero is all-zero
// limbs, one is R mod r (P::one), as gnark-crypto stores them (always
// fully reduced, so the representation is unique).
template <class P>
ZK_HD uint8_t scalar_class(const mont_t<P>& s) {
    bool zero = true, one = true;
#pragma unroll
    for (int k = 0; k < P::N; k++) {
        zero = zero && s.l[k] == 0;
        one = one && s.l[k] == P::one(k);
    }
    return zero ? CLASS_ZERO : one ? CLASS_ONE : CLASS_OTHER;
}

// classify_chunk writes the chunk-local indices of cn scalars (Montgomery
// form, in host memory) into idx: those equal to 1 first, then those neither
// 0 nor 1, each in ascending order (msm.h's zk_msm_stream_split); the zeros
// are in neither. Their counts go to *nones and *nrest.
template <class P>
inline void classify_chunk(const mont_t<P>* scalars, uint32_t cn, uint32_t* idx, uint32_t* nones,
                           uint32_t* nrest) {
    uint32_t o = 0;
    for (uint32_t i = 0; i < cn; i++)
        if (scalar_class(scalars[i]) == CLASS_ONE) idx[o++] = i;
    uint32_t r = o;
    for (uint32_t i = 0; i < cn; i++)
        if (scalar_class(scalars[i]) == CLASS_OTHER) idx[r++] = i;
    *nones = o;
    *nrest = r - o;
}

// ones_one is thread t's segment [t*K, t*K+K) of an index list of scalars
// equal to 1: the sum of their points j - lo for j in [lo, hi) (others are
// outside the MSM's range), at out[t]. Repeated points and P, -P pairs are
// handled by add_affine; infinity bases add nothing. With resume the sum
// starts from out[t] (a streamed MSM's chunks add their ones into one set of
// sums, reduced once).
template <class F>
ZK_HD void ones_one(uint32_t t, const uint32_t* idx, uint32_t cnt, uint32_t K, uint32_t lo,
                    uint32_t hi, const affine_t<F>* bases, xyzz_t<F>* out, bool resume = false) {
    const uint32_t start = t * K;
    const uint32_t end = start + K < cnt ? start + K : cnt;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    if (resume) acc = ldp(out + t);
    for (uint32_t i = start; i < end; i++) {
        const uint32_t j = idx[i];
        if (j < lo || j >= hi) continue;
        affine_t<F> p = ldp(bases + (j - lo));
        if (!p.is_inf()) acc.add_affine(p.x, p.y);
    }
    stp(out + t, acc);
}

// accumulate_one is thread t's segment [t*K, t*K+K) of one accumulation
// level over M sorted keys. Level 0 (LEVEL0) adds affine bases picked by
// vals (sign bit: negated); later levels add the xyzz partial sums pts.
// Runs wholly inside the segment go to their bucket (level 0 stores, later
// levels add: a bucket is closed once per chunk, at the level where its run
// ends up inside one segment, and a later level's run that holds only
// unused slots adds nothing); a run that touches the segment's first or last
// entry and continues into the neighbour goes to partial slot 2t or 2t+1
// with its key. Unused slots get infinity and a key that keeps the slot
// array sorted.
//
// RESUME (level 0): the buckets already hold the sums of earlier chunks of
// the same MSM (run_impl's pieces share one set of buckets). A run that
// starts and ends in this segment then starts from its bucket's sum instead
// of infinity, so closing it stays a store: a load where the first piece has
// none, and no extra addition executed while the warp's other threads wait
// (adding each closed run into its bucket made the whole accumulation several
// times slower; BENCHMARKS.md, "The G1 MSM's upload in pieces"). A run that
// continues into the next segment starts from infinity as before: the merge
// level that closes it adds into the bucket, which level 0 left alone.
// A template parameter, so the first chunk's kernel (every MSM has one) keeps
// its registers: the G2 one has none to spare.
// ZK_ACC_PREFETCH_BUCKET (default 0: off): in a resumed level 0, how many
// entries ahead the loop looks for the start of the next run, to ask for that
// run's bucket before begin() loads it. A candidate for the cost of bucket
// loads at run boundaries; compiled in only for an A/B run of kernel variants
// (scripts/gpu-variants-build.sh) until the H200 says whether it pays.
#ifndef ZK_ACC_PREFETCH_BUCKET
#define ZK_ACC_PREFETCH_BUCKET 0
#endif

template <bool LEVEL0, class F, bool RESUME = false>
ZK_HD void accumulate_one(uint32_t t, const uint32_t* keys, const uint32_t* vals,
                          const affine_t<F>* bases, const xyzz_t<F>* pts, uint32_t M, uint32_t K,
                          uint32_t sentinel, xyzz_t<F>* buckets, uint32_t* okeys,
                          xyzz_t<F>* opts) {
    const uint32_t start = t * K;
    const uint32_t end = start + K < M ? start + K : M;
    const uint32_t prevk = start > 0 ? keys[start - 1] : NO_KEY;
    const uint32_t nextk = end < M ? keys[end] : NO_KEY;
    const uint32_t lastk = keys[end - 1];
    uint32_t cur = keys[start];
    okeys[2 * t] = cur;
    okeys[2 * t + 1] = lastk;
    bool first = true, w0 = false, w1 = false;
    const bool open_start = prevk == cur;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    // begin starts the run of key k that begins in this segment.
    auto begin = [&](uint32_t k) {
        const bool closes_here = k != sentinel && !(k == lastk && nextk == k);
        if (LEVEL0 && RESUME && closes_here) acc = ldp(buckets + k);
        else acc.set_inf();
    };
    if (!open_start) begin(cur);
    auto close = [&](uint32_t key) {
        if (LEVEL0) {
            stp(buckets + key, acc);
        } else if (!acc.is_inf()) {
            xyzz_t<F> b = ldp(buckets + key);
            b.add(acc);
            stp(buckets + key, b);
        }
    };
    for (uint32_t i = start; i < end; i++) {
        const uint32_t k = keys[i];
        if (k != cur) {
            if (first && open_start) {
                stp(opts + 2 * t, acc);
                w0 = true;
            } else {
                close(cur);
            }
            first = false;
            cur = k;
            begin(k);
        }
        if (k == sentinel) break;  // sorted: the rest are zero digits
#if ZK_ACC_PREFETCH_BUCKET > 0
        if (LEVEL0 && RESUME && i + ZK_ACC_PREFETCH_BUCKET < end) {
            const uint32_t ahead = keys[i + ZK_ACC_PREFETCH_BUCKET];
            if (ahead != keys[i + ZK_ACC_PREFETCH_BUCKET - 1] && ahead != sentinel)
                prefetch_l2(buckets + ahead);
        }
#endif
        if (LEVEL0) {
            const uint32_t v = vals[i];
            if (i + 1 < end) prefetch_l2(bases + (vals[i + 1] & ~SIGN));
            affine_t<F> p = ldp(bases + (v & ~SIGN));
            if (!p.is_inf()) {
                if (v & SIGN) p.y = fneg(p.y);
                acc.add_affine(p.x, p.y);
            }
        } else {
            acc.add(ldp(pts + i));
        }
    }
    if (cur != sentinel) {
        const bool open_end = nextk == cur;
        if (first && (open_start || open_end)) {
            stp(opts + 2 * t, acc);
            w0 = true;
        } else if (open_end) {
            stp(opts + 2 * t + 1, acc);
            w1 = true;
        } else {
            close(cur);
        }
    }
    if (!w0) stp(opts + 2 * t, xyzz_t<F>::inf());
    if (!w1) stp(opts + 2 * t + 1, xyzz_t<F>::inf());
}

// merge_lead_one and merge_run_one close the runs level 0 left open (its
// partial slots, M of them, sorted by key) in two launches, where the merge
// levels (accumulate_one over pts) take one launch per factor K_MERGE/2 of
// slots, each a chain of dependent additions: a streamed MSM pays those
// levels once per chunk, and they were most of a chunk's time (BENCHMARKS.md,
// "A streamed chunk's timeline"). Slot i leads
// when it starts a run (its key differs from slot i-1's) or sits at a
// multiple of R inside one; merge_lead_one sums a leader's slots up to the
// next leader. A run that ends before the next multiple of R (in a streamed
// chunk nearly every run: two slots, one from each side of a boundary
// between segments) goes into its bucket there; otherwise the leader's sum
// stays in its own slot, and merge_run_one has the run's first leader add
// the sums of its leaders at R, 2R, ... into the bucket. A run is at most a
// chunk's scalars long (one key a window), so that walk visits about
// 2 * chunk / (K * R) leaders at most. Keys are never the sentinel's (zero digits):
// those slots are skipped. A bucket is added into, never stored: level 0
// left the buckets of open runs alone.
template <class F>
ZK_HD void add_into_bucket(xyzz_t<F>* buckets, uint32_t key, const xyzz_t<F>& acc) {
    if (acc.is_inf()) return;
    xyzz_t<F> b = ldp(buckets + key);
    b.add(acc);
    stp(buckets + key, b);
}

template <class F>
ZK_HD void merge_lead_one(uint32_t i, const uint32_t* keys, xyzz_t<F>* pts, uint32_t M, uint32_t R,
                          uint32_t sentinel, xyzz_t<F>* buckets) {
    const uint32_t k = keys[i];
    if (k == sentinel) return;
    const bool head = i == 0 || keys[i - 1] != k;
    if (!head && i % R != 0) return;
    const uint32_t next = (i / R + 1) * R;  // the next multiple of R: a leader if the run goes on
    const uint32_t stop = next < M ? next : M;
    xyzz_t<F> acc = ldp(pts + i);
    for (uint32_t j = i + 1; j < stop && keys[j] == k; j++) acc.add(ldp(pts + j));
    if (head && !(next < M && keys[next] == k))
        add_into_bucket(buckets, k, acc);
    else
        stp(pts + i, acc);  // read only by this run's merge_run_one
}

template <class F>
ZK_HD void merge_run_one(uint32_t i, const uint32_t* keys, const xyzz_t<F>* pts, uint32_t M,
                         uint32_t R, uint32_t sentinel, xyzz_t<F>* buckets) {
    const uint32_t k = keys[i];
    if (k == sentinel || (i > 0 && keys[i - 1] == k)) return;  // run heads only
    uint32_t next = (i / R + 1) * R;
    if (!(next < M && keys[next] == k)) return;  // closed by merge_lead_one
    xyzz_t<F> acc = ldp(pts + i);
    for (; next < M && keys[next] == k; next += R) acc.add(ldp(pts + next));
    add_into_bucket(buckets, k, acc);
}

// reduce_one: thread (w, s) = (tid / T, tid % T) sums buckets
// [s*L, (s+1)*L) of window w into tot = sum_j (j - s*L + 1) B_j (running
// sum from the top) and q = s * sum_j B_j (double-and-add), at out[w*T + s]
// and out[(nwin + w)*T + s]. Then the window's sum_j (j+1) B_j is
// sum_s tot_s + L * sum_s q_s.
template <class F>
ZK_HD void reduce_one(uint32_t tid, const xyzz_t<F>* buckets, uint32_t m, uint32_t L, uint32_t T,
                      uint32_t nwin, xyzz_t<F>* out) {
    const uint32_t w = tid / T, s = tid % T;
    const xyzz_t<F>* b = buckets + (size_t)w * m + (size_t)s * L;
    xyzz_t<F> run = xyzz_t<F>::inf(), tot = xyzz_t<F>::inf();
    for (int j = (int)L - 1; j >= 0; j--) {
        run.add(ldp(b + j));
        tot.add(run);
    }
    xyzz_t<F> q = xyzz_t<F>::inf();
    for (int bit = 31; bit >= 0; bit--) {
        q.dbl();
        if ((s >> bit) & 1) q.add(run);
    }
    stp(out + (size_t)w * T + s, tot);
    stp(out + (size_t)(nwin + w) * T + s, q);
}

// tree_one: out[g][k] = in[g][k*G] + ... + in[g][k*G + G - 1] (within len),
// g = tid / outlen, k = tid % outlen.
template <class F>
ZK_HD void tree_one(uint32_t tid, const xyzz_t<F>* in, uint32_t len, uint32_t outlen,
                    xyzz_t<F>* out) {
    const uint32_t g = tid / outlen, k = tid % outlen;
    const uint32_t lo = k * TREE_G, hi = lo + TREE_G < len ? lo + TREE_G : len;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    for (uint32_t j = lo; j < hi; j++) acc.add(ldp(in + (size_t)g * len + j));
    stp(out + (size_t)g * outlen + k, acc);
}

// window_one: wacc[w] = W_w = tot_w + 2^logL * q_w (sums holds the nwin
// tot, then the nwin q).
template <class F>
ZK_HD void window_one(uint32_t w, const xyzz_t<F>* sums, uint32_t nwin, int logL,
                      xyzz_t<F>* wacc) {
    xyzz_t<F> q = ldp(sums + nwin + w);
    for (int i = 0; i < logL; i++) q.dbl();
    q.add(ldp(sums + w));
    stp(wacc + w, q);
}

// horner returns sum_w 2^(c*w) W_w in Jacobian coordinates (their doubling
// is the cheaper one; the result is what gnark's G1Jac / G2Jac hold).
template <class F>
ZK_HD jac_t<F> horner(const xyzz_t<F>* wacc, uint32_t nwin, int c) {
    jac_t<F> acc = ldp(wacc + nwin - 1).to_jac();
    for (int w = (int)nwin - 2; w >= 0; w--) {
        for (int i = 0; i < c; i++) acc = acc.dbl();
        xyzz_t<F> x = xyzz_t<F>::from_jac(acc);
        x.add(ldp(wacc + w));
        acc = x.to_jac();
    }
    return acc;
}

}  // namespace zk_msm
