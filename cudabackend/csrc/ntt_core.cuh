// ntt_core.cuh: the index math and butterflies of the NTT passes, written as
// __host__ __device__ functions so the kernels in ntt.cu and the CPU
// emulation in hosttest/ntt_emu.cpp run the very same code.
//
// Every function is a template over the element type F, a scalar field's
// mont_t<P> of 8 limbs (BLS12-381's fr_t, BN254's bn254_fr_t): one
// algorithm, each field's domain (its roots of unity, its coset shift) from
// its parameters P (field.cuh's TWO_ADICITY, root, COSET_GEN), as sppark's
// ntt/ takes a curve's from its parameters.
//
// Conventions (gnark-crypto fr/fft): N = 2^L, ω = fr.Generator(N) (forward)
// or ω^-1 (inverse).
//   DIF: natural-order input, bit-reversed output (Gentleman-Sande stages,
//        half-size m = N/2 down to 1: a[i], a[i+m] = x+y, (x-y)·ω_2m^t).
//   DIT: bit-reversed input, natural output (Cooley-Tukey stages, m = 1 up
//        to N/2: y' = y·ω_2m^t; a[i], a[i+m] = x+y', x-y').
// ω_2m = ω^(N/2m) and t = i mod 2m < m.
//
// A pass runs k consecutive stages in shared memory. With S the smallest
// half-size among them (DIF: the last stage's, DIT: the first's) and
// T = 2^k, the stages only mix elements with the same (hi, lo) in
//     i = hi·S·T + j·S + lo,   j < T, lo < S,
// so each (hi, lo) is an independent sub-problem q = hi·S + lo of T
// elements. A block holds G = 2^logG consecutive sub-problems (E = G·T
// elements). When S >= G those share hi and have consecutive lo, and the
// block stores element (qq, j) at shared index j·G + qq ("column-major"); when
// S = 1 the block's elements are contiguous in memory and (qq, j) sits at
// qq·T + j. In both cases shared index e is loaded from global index
// pass_gidx(e), so consecutive threads read consecutive addresses.
//
// Twiddles: one table per direction, stage-major: the half-size-m stage's
// factors ω_2m^t (t < m) sit at offset m-1, N-1 entries in all, so every stage
// reads a contiguous run.
#pragma once

#include "field.cuh"

namespace zk_ntt {

// LOG_E is log2 of the elements one block holds in shared memory (32 KiB).
constexpr uint32_t LOG_E = 10;
// MAX_K_INNER caps the stages of a pass that is not the S = 1 pass, so such a
// pass keeps G >= 4 sub-problems per block (>= 128-byte contiguous loads).
constexpr uint32_t MAX_K_INNER = LOG_E - 2;
// MAX_PASSES bounds the plan length (L <= 30).
constexpr int MAX_PASSES = 8;

// plan_t lists the passes in DIF order: pass 0 runs stages 0..k[0]-1 (the
// largest half-sizes), the last pass runs the half-sizes below 2^k[last]
// with S = 1. DIT runs the same groups in reverse order.
struct plan_t {
    int passes;
    uint32_t k[MAX_PASSES];
};

// make_plan splits L stages into passes; false if L is out of range.
ZK_HD bool make_plan(uint32_t L, plan_t* pl) {
    pl->passes = 0;
    if (L > 30) return false;
    if (L == 0) return true;
    if (L <= LOG_E) {
        pl->passes = 1;
        pl->k[0] = L;
        return true;
    }
    int P = 1 + (int)((L - LOG_E + MAX_K_INNER - 1) / MAX_K_INNER);
    if (P > MAX_PASSES) return false;
    uint32_t base = L / P, rem = L % P;
    for (int i = 0; i < P; i++) pl->k[i] = base + ((uint32_t)i < rem ? 1 : 0);
    // Cap the inner passes; the excess goes to the S = 1 pass.
    uint32_t excess = 0;
    for (int i = 0; i < P - 1; i++) {
        if (pl->k[i] > MAX_K_INNER) {
            excess += pl->k[i] - MAX_K_INNER;
            pl->k[i] = MAX_K_INNER;
        }
    }
    pl->k[P - 1] += excess;
    if (pl->k[P - 1] > LOG_E) return false;
    // Column-major passes need S >= G.
    uint32_t done = 0;
    for (int i = 0; i < P - 1; i++) {
        done += pl->k[i];
        uint32_t logS = L - done, logG = LOG_E - pl->k[i];
        if (logS < logG) return false;
    }
    pl->passes = P;
    return true;
}

// pass_params describes one pass.
template <class F>
struct pass_params {
    uint32_t L;     // log2 N
    uint32_t logS;  // log2 of the pass's smallest half-size S
    uint32_t k;     // stages in the pass
    uint32_t logG;  // log2 of the sub-problems per block
    const F* tw;    // the direction's stage-major twiddle table
};

// pass_setup fills p for the pass that runs the stage group of plan index
// idx (DIF numbering).
template <class F>
ZK_HD pass_params<F> pass_setup(const plan_t& pl, int idx, uint32_t L, const F* tw) {
    uint32_t done = 0;
    for (int i = 0; i <= idx; i++) done += pl.k[i];
    pass_params<F> p;
    p.L = L;
    p.k = pl.k[idx];
    p.logS = L - done;
    uint32_t logE = L < LOG_E ? L : LOG_E;
    p.logG = logE - p.k;
    p.tw = tw;
    return p;
}

template <class F>
ZK_HD bool pass_colmajor(const pass_params<F>& p) { return p.logS > 0; }

// pass_gidx is the global index of the block's shared element e.
template <class F>
ZK_HD uint32_t pass_gidx(const pass_params<F>& p, uint32_t block, uint32_t e) {
    const uint32_t logE = p.k + p.logG;
    if (!pass_colmajor(p)) return (block << logE) + e;
    uint32_t q = (block << p.logG) + (e & ((1u << p.logG) - 1));
    uint32_t j = e >> p.logG;
    uint32_t lo = q & ((1u << p.logS) - 1), hi = q >> p.logS;
    return (hi << (p.logS + p.k)) + (j << p.logS) + lo;
}

// rd_fr / wr_fr read and write an element; on the device with 16-byte
// accesses (every buffer here is 32-byte aligned), and rd_fr_ro through the
// read-only cache for tables. Elements are 8 limbs, two 16-byte words.
template <class F>
ZK_HD F rd_fr(const F* p) {
    static_assert(F::N == 8, "the NTT's elements are 32 bytes");
#ifdef __CUDA_ARCH__
    const uint4* q = reinterpret_cast<const uint4*>(p);
    uint4 a = q[0], b = q[1];
    F r;
    r.l[0] = a.x; r.l[1] = a.y; r.l[2] = a.z; r.l[3] = a.w;
    r.l[4] = b.x; r.l[5] = b.y; r.l[6] = b.z; r.l[7] = b.w;
    return r;
#else
    return *p;
#endif
}
template <class F>
ZK_HD F rd_fr_ro(const F* p) {
    static_assert(F::N == 8, "the NTT's elements are 32 bytes");
#ifdef __CUDA_ARCH__
    const uint4* q = reinterpret_cast<const uint4*>(p);
    uint4 a = __ldg(q), b = __ldg(q + 1);
    F r;
    r.l[0] = a.x; r.l[1] = a.y; r.l[2] = a.z; r.l[3] = a.w;
    r.l[4] = b.x; r.l[5] = b.y; r.l[6] = b.z; r.l[7] = b.w;
    return r;
#else
    return *p;
#endif
}
template <class F>
ZK_HD void wr_fr(F* p, const F& v) {
    static_assert(F::N == 8, "the NTT's elements are 32 bytes");
#ifdef __CUDA_ARCH__
    uint4* q = reinterpret_cast<uint4*>(p);
    q[0] = make_uint4(v.l[0], v.l[1], v.l[2], v.l[3]);
    q[1] = make_uint4(v.l[4], v.l[5], v.l[6], v.l[7]);
#else
    *p = v;
#endif
}

// bitrev reverses the low L bits of i.
ZK_HD uint32_t bitrev(uint32_t i, uint32_t L) {
    if (L == 0) return 0;
#ifdef __CUDA_ARCH__
    return __brev(i) >> (32 - L);
#else
    uint32_t r = 0;
    for (uint32_t b = 0; b < L; b++) r |= ((i >> b) & 1u) << (L - 1 - b);
    return r;
#endif
}

// scale_spec multiplies element i by a factor: nothing (kind 0), a constant
// c (kind 1), or c·base^e (kind 2) with e = i or bitrev(i), read as
// hi[e >> lo_bits]·lo[e & mask] from two small tables (c folded into hi).
template <class F>
struct scale_spec {
    int kind;
    int bitrev;
    uint32_t lo_bits;
    const F* hi;
    const F* lo;
    F c;
};

template <class F>
ZK_HD scale_spec<F> scale_none() {
    scale_spec<F> s;
    s.kind = 0;
    s.bitrev = 0;
    s.lo_bits = 0;
    s.hi = nullptr;
    s.lo = nullptr;
    s.c = F::one();
    return s;
}

template <class F>
ZK_HD F scale_apply(const scale_spec<F>& s, const F& v, uint32_t i, uint32_t L) {
    if (s.kind == 0) return v;
    if (s.kind == 1) return v * s.c;
    uint32_t e = s.bitrev ? bitrev(i, L) : i;
    F f = rd_fr_ro(s.hi + (e >> s.lo_bits)) * rd_fr_ro(s.lo + (e & ((1u << s.lo_bits) - 1)));
    return v * f;
}

// pass_butterfly runs butterfly u (< E/2) of stage l (0-based within the
// pass) on the block's shared elements sm. Deliberately parallel to
// pass_butterfly4: see why there.
template <bool DIT, class F>
ZK_HD void pass_butterfly(F* sm, const pass_params<F>& p, uint32_t block, uint32_t l,
                          uint32_t u) {
    const uint32_t logh = DIT ? l : p.k - 1 - l;
    const uint32_t h = 1u << logh;
    const uint32_t logm = logh + p.logS;
    uint32_t qq, v, a0, a1, lo;
    if (pass_colmajor(p)) {
        qq = u & ((1u << p.logG) - 1);
        v = u >> p.logG;
    } else {
        qq = u >> (p.k - 1);
        v = u & ((1u << (p.k - 1)) - 1);
    }
    const uint32_t t = v & (h - 1);
    const uint32_t j = ((v >> logh) << (logh + 1)) | t;
    if (pass_colmajor(p)) {
        a0 = (j << p.logG) | qq;
        a1 = a0 + (h << p.logG);
        lo = ((block << p.logG) + qq) & ((1u << p.logS) - 1);
    } else {
        a0 = (qq << p.k) | j;
        a1 = a0 + h;
        lo = 0;
    }
    F x = rd_fr(sm + a0), y = rd_fr(sm + a1);
    // logm == 0 is the half-size-1 stage, whose only factor is ω^0 = 1.
    if (DIT) {
        if (logm != 0) y = y * rd_fr_ro(p.tw + ((1u << logm) - 1) + ((t << p.logS) | lo));
        wr_fr(sm + a0, x + y);
        wr_fr(sm + a1, x - y);
    } else {
        F d = x - y;
        if (logm != 0) d = d * rd_fr_ro(p.tw + ((1u << logm) - 1) + ((t << p.logS) | lo));
        wr_fr(sm + a0, x + y);
        wr_fr(sm + a1, d);
    }
}

// pass_pairs reports whether stages l and l+1 of the pass run together as
// radix-4 butterflies (pass_butterfly4): when radix4 is asked and both are
// left. A pass then synchronizes once per two stages, and each element
// crosses shared memory half as often.
template <class F>
ZK_HD bool pass_pairs(const pass_params<F>& p, uint32_t l, bool radix4) {
    return radix4 && l + 1 < p.k;
}

// Deliberately parallel to pass_butterfly: it must do the same arithmetic to stay
// bit for bit equal to the radix-2 passes, fused for registers.
//
// pass_butterfly4 runs butterfly u (< E/4) of stages l and l+1 together: the
// four elements j0 + {0, 1, 2, 3}·q of one sub-problem, q the smaller of the
// two stages' half-sizes (DIF: stage l has half-size 2q, l+1 has q; DIT: l
// has q, l+1 has 2q), in registers. The same additions, subtractions and
// products as pass_butterfly on the two stages one after the other, so the
// result is bit for bit the radix-2 one; the half-size-q stage's two pairs
// share one twiddle.
// Deliberately parallel to pass_butterfly's index math: a radix-4 step takes
// two bits of the index where a radix-2 step takes one, in the NTT's
// innermost loop, where a shared helper would take the radix at run time.
template <bool DIT, class F>
ZK_HD void pass_butterfly4(F* sm, const pass_params<F>& p, uint32_t block, uint32_t l,
                           uint32_t u) {
    const uint32_t logq = DIT ? l : p.k - 2 - l;
    const uint32_t q = 1u << logq;
    uint32_t qq, v;
    if (pass_colmajor(p)) {
        qq = u & ((1u << p.logG) - 1);
        v = u >> p.logG;
    } else {
        qq = u >> (p.k - 2);
        v = u & ((1u << (p.k - 2)) - 1);
    }
    const uint32_t t0 = v & (q - 1);
    const uint32_t j0 = ((v >> logq) << (logq + 2)) | t0;
    uint32_t a[4];
    for (uint32_t i = 0; i < 4; i++) {
        const uint32_t j = j0 + i * q;
        a[i] = pass_colmajor(p) ? (j << p.logG) | qq : (qq << p.k) | j;
    }
    const uint32_t lo = pass_colmajor(p) ? ((block << p.logG) + qq) & ((1u << p.logS) - 1) : 0;
    // The twiddle of index t in the stage of global half-size 2^logm.
    const uint32_t logm_q = logq + p.logS, logm_2q = logm_q + 1;
    auto tw = [&](uint32_t logm, uint32_t t) {
        return rd_fr_ro(p.tw + ((1u << logm) - 1) + ((t << p.logS) | lo));
    };
    F x0 = rd_fr(sm + a[0]), x1 = rd_fr(sm + a[1]), x2 = rd_fr(sm + a[2]), x3 = rd_fr(sm + a[3]);
    // logm_q == 0 is the half-size-1 stage, whose only factor is 1.
    const bool wq_one = logm_q == 0;
    const F wq = wq_one ? F::one() : tw(logm_q, t0);
    if (DIT) {
        // stage l, half-size q: pairs (0, 1) and (2, 3), twiddle t0
        if (!wq_one) {
            x1 = x1 * wq;
            x3 = x3 * wq;
        }
        F y0 = x0 + x1, y1 = x0 - x1, y2 = x2 + x3, y3 = x2 - x3;
        // stage l+1, half-size 2q: pairs (0, 2) with t0 and (1, 3) with t0 + q
        y2 = y2 * tw(logm_2q, t0);
        y3 = y3 * tw(logm_2q, t0 + q);
        wr_fr(sm + a[0], y0 + y2);
        wr_fr(sm + a[2], y0 - y2);
        wr_fr(sm + a[1], y1 + y3);
        wr_fr(sm + a[3], y1 - y3);
    } else {
        // stage l, half-size 2q: pairs (0, 2) with t0 and (1, 3) with t0 + q
        F y0 = x0 + x2, y2 = (x0 - x2) * tw(logm_2q, t0);
        F y1 = x1 + x3, y3 = (x1 - x3) * tw(logm_2q, t0 + q);
        // stage l+1, half-size q: pairs (0, 1) and (2, 3), twiddle t0
        F d01 = y0 - y1, d23 = y2 - y3;
        if (!wq_one) {
            d01 = d01 * wq;
            d23 = d23 * wq;
        }
        wr_fr(sm + a[0], y0 + y1);
        wr_fr(sm + a[1], d01);
        wr_fr(sm + a[2], y2 + y3);
        wr_fr(sm + a[3], d23);
    }
}

// powers_chunk writes out[j] = c·base^(j0+j) for j < cnt (a table chunk).
template <class F>
ZK_HD void powers_chunk(F* out, uint32_t j0, uint32_t cnt, const F& base, const F& c) {
    F v = c * base.pow(j0);
    for (uint32_t j = 0; j < cnt; j++) {
        wr_fr(out + j, v);
        v = v * base;
    }
}

// fr_from_u64 returns the Montgomery form of a small integer.
template <class F>
ZK_HD F fr_from_u64(uint64_t x) {
    F r = F::zero();
    r.l[0] = (uint32_t)x;
    r.l[1] = (uint32_t)(x >> 32);
    return r.to_montgomery();
}

// root_of_unity returns gnark-crypto's generator of the order-2^L subgroup
// (L <= the field's TWO_ADICITY S): fr.Generator(2^L) = gS^(2^(S-L)), gS
// the field's fixed 2^S-th root (field.cuh's root); with snarkjs, the one
// snarkjs's domains use, from its fixed root (field.cuh's snarkjs_root).
// snarkjs's H evaluates on the coset shifted by its order-2^(L+1) root (L < S).
template <class F>
ZK_HD F root_of_unity(uint32_t L, bool snarkjs = false) {
    using P = typename F::params;
    F gS;
    for (int i = 0; i < 8; i++) gS.l[i] = snarkjs ? P::snarkjs_root(i) : P::root(i);
    F w = gS.to_montgomery();
    for (uint32_t i = L; i < P::TWO_ADICITY; i++) w = w.sqr();
    return w;
}

// coset_gen returns gnark-crypto's domain shift FrMultiplicativeGen of the
// field (fft.GeneratorFullMultiplicativeGroup(): 7 for BLS12-381, 5 for
// BN254).
template <class F>
ZK_HD F coset_gen() {
    return fr_from_u64<F>(F::params::COSET_GEN);
}

}  // namespace zk_ntt
