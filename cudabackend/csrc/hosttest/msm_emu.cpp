// msm_emu.cpp: runs the MSM pipeline of msm_core.cuh on the CPU (each
// kernel's threads one after another; a level's threads touch disjoint
// buckets and slots, so the order does not matter) with std::stable_sort in
// place of the radix sort, and checks it against a plain double-and-add sum
// for G1 and G2 of BLS12-381 and BN254: random inputs, zero/one/r-1 scalars,
// infinity and repeated points, P and -P, with segment sizes small enough
// that runs cross many segments and the partial sums merge over several
// levels (the point formulas themselves: curve_emu.cpp). Catches digit,
// segment and reduction mistakes without a GPU. The precomputed bases
// (zk_msm_precompute) run the same way: d copies made by precompute_one,
// digits over G = ceil(nwin/d) bucket sets, for several (n, c, d), d not
// dividing nwin included, dense and split.
// Build and run: g++ -O2 -std=c++17 -I.. msm_emu.cpp -o /tmp/msm_emu && /tmp/msm_emu
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "../msm_core.cuh"
#include "../msm_plan.h"
#include "curves.h"

using namespace zk_msm;

static std::mt19937_64 rng(42);
// jac_eq compares Jacobian points as gnark's Equal does.
template <class F>
static bool jac_eq(const jac_t<F>& p, const jac_t<F>& q) {
    if (p.z.is_zero() || q.z.is_zero()) return p.z.is_zero() && q.z.is_zero();
    F pz2 = fsqr(p.z), qz2 = fsqr(q.z);
    if (!(fmul(p.x, qz2) == fmul(q.x, pz2))) return false;
    return fmul(fmul(p.y, qz2), q.z) == fmul(fmul(q.y, pz2), p.z);
}

// Canonical scalars of the field of R (little-endian 32-bit limbs, < r).
template <class R>
static mont_t<R> rand_fr() {
    for (;;) {
        mont_t<R> x;
        for (int i = 0; i < R::N; i++) x.l[i] = (uint32_t)rng();
        uint64_t b = 0;
        for (int i = 0; i < R::N; i++) {
            uint64_t d = (uint64_t)x.l[i] - R::p(i) - b;
            b = (d >> 63) & 1;
        }
        if (b) return x;  // x < r
    }
}
template <class R>
static mont_t<R> fr_small(uint32_t v) {
    mont_t<R> x = mont_t<R>::zero();
    x.l[0] = v;
    return x;
}
template <class R>
static mont_t<R> fr_rm1() {
    mont_t<R> x;
    for (int i = 0; i < R::N; i++) x.l[i] = R::p(i);
    x.l[0] -= 1;
    return x;
}

// smul returns k*P for the canonical scalar k (curves.h's scalar_mul).
template <class F, class R>
static xyzz_t<F> smul(const affine_t<F>& p, const mont_t<R>& k) {
    return scalar_mul(p, k.l, R::N);
}

// random_points returns n points start + i*step, start and step random
// multiples of the generator.
template <class F, class R = typename scalar_params<F>::type>
static std::vector<affine_t<F>> random_points(size_t n) {
    affine_t<F> g = gen((F*)nullptr);
    affine_t<F> start = to_affine(smul(g, rand_fr<R>()));
    affine_t<F> step = to_affine(smul(g, rand_fr<R>()));
    std::vector<affine_t<F>> out(n);
    xyzz_t<F> cur = xyzz_t<F>::from_affine(start);
    for (size_t i = 0; i < n; i++) {
        out[i] = to_affine(cur);
        cur.add_affine(step.x, step.y);
    }
    return out;
}

template <class F, class R>
static jac_t<F> ref_msm(const std::vector<affine_t<F>>& pts, const std::vector<mont_t<R>>& sc) {
    xyzz_t<F> acc = xyzz_t<F>::inf();
    for (size_t i = 0; i < pts.size(); i++) acc.add(smul(pts[i], sc[i]));
    return acc.to_jac();
}

// emu_accumulate runs msm.cu's sort and accumulation levels into buckets.
// resume: the buckets hold earlier chunks' sums (run_impl's pieces). Rrun > 0:
// a streamed chunk's merge (merge_lead_one, then merge_run_one, leaders every
// Rrun slots) instead of the levels.
template <class F>
static void emu_accumulate(const affine_t<F>* bases, const std::vector<uint32_t>& keys,
                           const std::vector<uint32_t>& vals, int c, int G, uint32_t K0,
                           uint32_t Kmerge, std::vector<xyzz_t<F>>& buckets, bool resume = false,
                           uint32_t Rrun = 0) {
    using P = xyzz_t<F>;
    const uint32_t m = 1u << (c - 1);
    const uint32_t sentinel = (uint32_t)G * m;
    const uint32_t M = (uint32_t)keys.size();
    std::vector<uint32_t> order(M);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
    std::vector<uint32_t> sk(M), sv(M);
    for (uint32_t i = 0; i < M; i++) {
        sk[i] = keys[order[i]];
        sv[i] = vals[order[i]];
    }
    uint32_t T = (M + K0 - 1) / K0;
    std::vector<uint32_t> ka(2 * T);
    std::vector<P> pa(2 * T);
    auto level0 = resume ? accumulate_one<true, F, true> : accumulate_one<true, F, false>;
    for (uint32_t t = 0; t < T; t++)
        level0(t, sk.data(), sv.data(), bases, nullptr, M, K0, sentinel, buckets.data(),
               ka.data(), pa.data());
    if (Rrun > 0 && T > 1) {
        const uint32_t len = 2 * T;
        for (uint32_t i = 0; i < len; i++)
            merge_lead_one(i, ka.data(), pa.data(), len, Rrun, sentinel, buckets.data());
        for (uint32_t i = 0; i < len; i++)
            merge_run_one(i, ka.data(), pa.data(), len, Rrun, sentinel, buckets.data());
        return;
    }
    while (T > 1) {
        uint32_t len = 2 * T;
        uint32_t T2 = (len + Kmerge - 1) / Kmerge;
        std::vector<uint32_t> kb(2 * T2);
        std::vector<P> pb(2 * T2);
        for (uint32_t t = 0; t < T2; t++)
            accumulate_one<false, F>(t, ka.data(), nullptr, nullptr, pa.data(), len, Kmerge,
                                     sentinel, buckets.data(), kb.data(), pb.data());
        ka.swap(kb);
        pa.swap(pb);
        T = T2;
    }
}

// emu_reduce runs msm.cu's reduction and combination of the G bucket sets;
// ones (when not null) joins window 0 before horner.
template <class F>
static jac_t<F> emu_reduce(const std::vector<xyzz_t<F>>& buckets, int c, int G, uint32_t Tred,
                           const xyzz_t<F>* ones) {
    using P = xyzz_t<F>;
    const int nwin = G;
    const uint32_t m = 1u << (c - 1);
    const uint32_t L = m / Tred;
    int logL = 0;
    while ((1u << logL) < L) logL++;
    std::vector<P> red(2 * (size_t)nwin * Tred);
    for (uint32_t tid = 0; tid < nwin * Tred; tid++)
        reduce_one(tid, buckets.data(), m, L, Tred, (uint32_t)nwin, red.data());
    uint32_t len = Tred;
    while (len > 1) {
        uint32_t outlen = (len + TREE_G - 1) / TREE_G;
        std::vector<P> out(2 * (size_t)nwin * outlen);
        for (uint32_t tid = 0; tid < 2 * nwin * outlen; tid++) tree_one(tid, red.data(), len, outlen, out.data());
        red.swap(out);
        len = outlen;
    }
    std::vector<P> wacc(nwin);
    for (int w = 0; w < nwin; w++) window_one(w, red.data(), (uint32_t)nwin, logL, wacc.data());
    if (ones) wacc[0].add(*ones);  // k_add_into
    return horner(wacc.data(), (uint32_t)nwin, c);
}

// emu_pipeline runs msm.cu's pipeline after the digits: sort, accumulate,
// reduce, combine; ones (when not null) joins window 0 before horner.
template <class F>
static jac_t<F> emu_pipeline(const affine_t<F>* bases, const std::vector<uint32_t>& keys,
                             const std::vector<uint32_t>& vals, int c, int G, uint32_t K0,
                             uint32_t Kmerge, uint32_t Tred, const xyzz_t<F>* ones) {
    std::vector<xyzz_t<F>> buckets((size_t)G * (1u << (c - 1)), xyzz_t<F>::inf());
    emu_accumulate<F>(bases, keys, vals, c, G, K0, Kmerge, buckets);
    return emu_reduce<F>(buckets, c, G, Tred, ones);
}

// copies returns d copies of bases for window c, as zk_msm_precompute lays
// them out: copy g at g*n is copy g-1 through k_precompute's body, shifted by
// c*G bits, G = ceil(nwin/d). Also checks copy 1 against a plain scalar
// multiplication. d is the copies G needs (zk_msm_groups_of).
template <class R, class F>
static std::vector<affine_t<F>> copies(const std::vector<affine_t<F>>& bases, int c, int d, int* G) {
    int used = 0;
    *G = zk_msm_groups_of(c, d, &used);
    CHECK(used == d, "c=%d: %d copies asked, G=%d uses %d", c, d, *G, used);
    const size_t n = bases.size();
    std::vector<affine_t<F>> ext(n * (size_t)d);
    std::copy(bases.begin(), bases.end(), ext.begin());
    for (int g = 1; g < d; g++)
        for (uint32_t t = 0; t * PRE_K < n; t++)
            precompute_one(t, ext.data() + (g - 1) * n, (uint32_t)n, ext.data() + g * n, c * *G);
    // Copy 1 of the first points (two of k_precompute's batches of PRE_K,
    // infinity included) against a plain scalar multiplication.
    const int shift = c * *G;
    for (size_t i = 0; d > 1 && i < n && i < PRE_K + 2 && shift < 256; i++) {
        mont_t<R> k = mont_t<R>::zero();
        k.l[shift / 32] = 1u << (shift % 32);
        affine_t<F> want = to_affine(smul(bases[i], k));
        CHECK(ext[n + i].x == want.x && ext[n + i].y == want.y,
              "copy 1 of point %zu is not 2^%d times it", i, shift);
    }
    return ext;
}

// emu_msm runs msm.cu's dense pipeline with the given window, copies (1:
// none) and segment sizes, in chunks of piece scalars (0: one chunk) that
// accumulate into one set of buckets, as run_impl's pieces do.
template <class F, class R>
static jac_t<F> emu_msm(const std::vector<affine_t<F>>& ext, uint32_t n,
                        const std::vector<mont_t<R>>& sc_canon, int c, int G, uint32_t K0,
                        uint32_t Kmerge, uint32_t Tred, uint32_t piece = 0, uint32_t Rrun = 0) {
    const int nwin = (256 + c - 1) / c;
    std::vector<mont_t<R>> sc(n);
    for (uint32_t i = 0; i < n; i++) sc[i] = sc_canon[i].to_montgomery();
    if (piece == 0 || piece > n) piece = n;
    std::vector<xyzz_t<F>> buckets((size_t)G * (1u << (c - 1)), xyzz_t<F>::inf());
    for (uint32_t off = 0; off < n; off += piece) {
        const uint32_t cn = n - off < piece ? n - off : piece;
        const uint32_t M = (uint32_t)nwin * cn;
        std::vector<uint32_t> keys(M), vals(M);
        // k_digits over the piece's scalars, its points from ext + off
        // (copy g still n points after copy g-1).
        for (uint32_t i = 0; i < cn; i++)
            digits_one(i, sc.data() + off, cn, c, nwin, G, n, keys.data(), vals.data());
        emu_accumulate<F>(ext.data() + off, keys, vals, c, G, K0, Kmerge, buckets, off > 0, Rrun);
    }
    return emu_reduce<F>(buckets, c, G, Tred, nullptr);
}

// emu_ones_sum sums the ones' segment sums as msm.cu's tree_sum does (one
// group), level by level.
template <class F>
static xyzz_t<F> emu_ones_sum(std::vector<xyzz_t<F>> part) {
    uint32_t len = (uint32_t)part.size();
    while (len > 1) {
        uint32_t outlen = (len + TREE_G - 1) / TREE_G;
        std::vector<xyzz_t<F>> out(outlen);
        for (uint32_t tid = 0; tid < outlen; tid++) tree_one(tid, part.data(), len, outlen, out.data());
        part.swap(out);
        len = outlen;
    }
    return part[0];
}

// emu_split runs the split MSM of msm.cu over scalars [lo, lo + bases.size())
// of the classified vector sc_canon: the classification (k_classify and the
// ordered selection), the ones' segment sums (Kones per thread) and their
// tree, Pippenger over the rest's index list, the combination. It also
// returns the class counts, checked by the caller.
template <class F, class R>
static jac_t<F> emu_split(const std::vector<affine_t<F>>& bases, const std::vector<mont_t<R>>& sc_canon,
                          uint32_t lo, int c, int d, uint32_t K0, uint32_t Kmerge, uint32_t Tred,
                          uint32_t Kones, size_t counts[3], uint32_t piece = 0) {
    using P = xyzz_t<F>;
    const uint32_t nall = (uint32_t)sc_canon.size();
    const uint32_t hi = lo + (uint32_t)bases.size();
    std::vector<mont_t<R>> sc(nall);
    for (uint32_t i = 0; i < nall; i++) sc[i] = sc_canon[i].to_montgomery();
    std::vector<uint32_t> ones, rest;
    counts[0] = counts[1] = counts[2] = 0;
    for (uint32_t i = 0; i < nall; i++) {
        uint8_t k = scalar_class(sc[i]);
        counts[k]++;
        if (k == CLASS_ONE) ones.push_back(i);
        if (k == CLASS_OTHER) rest.push_back(i);
    }
    P ones_sum = P::inf();
    if (!ones.empty()) {
        const uint32_t cnt = (uint32_t)ones.size();
        const uint32_t T = (cnt + Kones - 1) / Kones;
        std::vector<P> part(T);
        for (uint32_t t = 0; t < T; t++) ones_one(t, ones.data(), cnt, Kones, lo, hi, bases.data(), part.data());
        ones_sum = emu_ones_sum<F>(std::move(part));
    }
    if (rest.empty()) return ones_sum.to_jac();  // k_to_jac
    const int nwin = (256 + c - 1) / c;
    int G = nwin;
    std::vector<affine_t<F>> ext = d > 1 ? copies<R>(bases, c, d, &G) : bases;
    // The rest in chunks of piece entries (0: one), sharing the buckets as
    // run_impl's chunks do: k_digits_idx over rest + off, the bases not
    // offset.
    const uint32_t n = (uint32_t)rest.size();
    if (piece == 0 || piece > n) piece = n;
    std::vector<xyzz_t<F>> buckets((size_t)G * (1u << (c - 1)), xyzz_t<F>::inf());
    for (uint32_t off = 0; off < n; off += piece) {
        const uint32_t cn = n - off < piece ? n - off : piece;
        std::vector<uint32_t> keys((size_t)nwin * cn), vals((size_t)nwin * cn);
        for (uint32_t i = 0; i < cn; i++)
            digits_idx_one(i, sc.data(), rest.data() + off, lo, hi, cn, c, nwin, G,
                           (uint32_t)bases.size(), keys.data(), vals.data());
        emu_accumulate<F>(ext.data(), keys, vals, c, G, K0, Kmerge, buckets, off > 0);
    }
    return emu_reduce<F>(buckets, c, G, Tred, ones.empty() ? nullptr : &ones_sum);
}

// emu_stream_split runs msm.cu's streamed split (zk_msm_run_stream_split)
// over the points pts and the scalars sc_canon in chunks of chunk: each
// chunk classified on the host (classify_chunk, into its region of one
// index list), its ones added into ones_T shared sums (ones_one with resume
// from the first chunk with ones on), its rest's digits over the chunk's
// own points (k_digits_idx with lo 0 over the list after the ones) into one
// set of buckets (resumed from the first chunk with a rest on), then the
// ones' tree joined to window 0. Checks each chunk's classification against
// the scalars too.
template <class F, class R>
static jac_t<F> emu_stream_split(const std::vector<affine_t<F>>& pts,
                                 const std::vector<mont_t<R>>& sc_canon, uint32_t chunk, int c,
                                 uint32_t K0, uint32_t Kmerge, uint32_t Tred, uint32_t ones_T,
                                 uint32_t Rrun) {
    using P = xyzz_t<F>;
    const uint32_t n = (uint32_t)pts.size();
    std::vector<mont_t<R>> sc(n);
    for (uint32_t i = 0; i < n; i++) sc[i] = sc_canon[i].to_montgomery();
    const int nwin = (256 + c - 1) / c;
    const int G = nwin;
    std::vector<uint32_t> idx(n);
    std::vector<P> buckets((size_t)G * (1u << (c - 1)), P::inf());
    std::vector<P> ones_part(ones_T, P::inf());
    bool ones_started = false, rest_started = false;
    for (uint32_t off = 0; off < n; off += chunk) {
        const uint32_t cn = n - off < chunk ? n - off : chunk;
        uint32_t nones = 0, nrest = 0;
        classify_chunk(sc.data() + off, cn, idx.data() + off, &nones, &nrest);
        uint32_t want[3] = {0, 0, 0};
        for (uint32_t i = 0; i < cn; i++) want[scalar_class(sc[off + i])]++;
        CHECK(nones == want[CLASS_ONE] && nrest == want[CLASS_OTHER],
              "classify_chunk at %u: %u ones and %u others, want %u and %u", off, nones, nrest,
              want[CLASS_ONE], want[CLASS_OTHER]);
        const uint32_t* ci = idx.data() + off;
        for (uint32_t i = 0; i < nones + nrest; i++)
            CHECK(ci[i] < cn && scalar_class(sc[off + ci[i]]) == (i < nones ? CLASS_ONE : CLASS_OTHER) &&
                      (i == 0 || i == nones || ci[i] > ci[i - 1]),
                  "classify_chunk at %u: entry %u (index %u) out of place", off, i, ci[i]);
        const affine_t<F>* cb = pts.data() + off;  // the chunk's points (pbuf)
        if (nones > 0) {
            const uint32_t K1 = (nones + ones_T - 1) / ones_T;
            for (uint32_t t = 0; t < ones_T; t++)
                ones_one(t, ci, nones, K1, 0u, cn, cb, ones_part.data(), ones_started);
            ones_started = true;
        }
        if (nrest > 0) {
            std::vector<uint32_t> keys((size_t)nwin * nrest), vals((size_t)nwin * nrest);
            for (uint32_t i = 0; i < nrest; i++)
                digits_idx_one(i, sc.data() + off, ci + nones, 0u, cn, nrest, c, nwin, G, n,
                               keys.data(), vals.data());
            emu_accumulate<F>(cb, keys, vals, c, G, K0, Kmerge, buckets, rest_started, Rrun);
            rest_started = true;
        }
    }
    const P ones_sum = ones_started ? emu_ones_sum<F>(std::move(ones_part)) : P::inf();
    if (!rest_started) return ones_sum.to_jac();  // k_to_jac
    return emu_reduce<F>(buckets, c, G, Tred, ones_started ? &ones_sum : nullptr);
}

// check_stream_split checks emu_stream_split against the reference for
// several chunks (one that divides n, one that does not, one larger than n),
// windows and ones' thread counts.
template <class F, class R>
static void check_stream_split(const char* group, const char* name,
                               const std::vector<affine_t<F>>& pts, const std::vector<mont_t<R>>& sc) {
    jac_t<F> want = ref_msm(pts, sc);
    const uint32_t n = (uint32_t)pts.size();
    struct {
        uint32_t chunk;
        int c;
        uint32_t K0, Kmerge, Tred, ones_T, Rrun;
    } cases[] = {{16, 4, 3, 4, 2, 1, 2},      {37, 7, 1, 4, 8, 5, 3},
                 {n + 3, 13, 5, 8, 64, 40, 32}, {1, 5, 2, 4, 4, 2, 2},
                 {n + 3, 4, 1, 4, 2, 3, 2}};
    for (const auto& k : cases) {
        uint32_t m = 1u << (k.c - 1);
        uint32_t tred = k.Tred > m ? m : k.Tred;
        jac_t<F> got = emu_stream_split(pts, sc, k.chunk, k.c, k.K0, k.Kmerge, tred, k.ones_T, k.Rrun);
        CHECK(jac_eq(got, want),
              "%s streamed split %s: chunk=%u c=%d ones_T=%u Rrun=%u differs from the reference",
              group, name, k.chunk, k.c, k.ones_T, k.Rrun);
    }
}

struct cfg_t {
    int c;
    uint32_t K0, Kmerge, Tred;
};

// depths_of lists the copies to check for window c: none, 2, 5 (which
// divides no nwin of these windows but 20 and 37... as G rounds it, the last
// copy holds fewer windows), and nwin (one bucket set); for the large windows
// (few windows, so cheap copies) 3 and nwin-1 too; each as zk_msm_groups_of
// rounds it (the copies its G needs).
static std::vector<int> depths_of(int c) {
    const int nwin = (256 + c - 1) / c;
    std::vector<int> out;
    for (int d : {1, 2, 5, c >= 13 ? 3 : 0, c >= 13 ? nwin - 1 : 0, nwin}) {
        if (d < 1 || d > nwin) continue;
        int used = 1;
        zk_msm_groups_of(c, d, &used);
        if (std::find(out.begin(), out.end(), used) == out.end()) out.push_back(used);
    }
    return out;
}

template <class F, class R>
static void check_case(const char* group, const char* name, const std::vector<affine_t<F>>& pts,
                       const std::vector<mont_t<R>>& sc, const std::vector<cfg_t>& cfgs) {
    jac_t<F> want = ref_msm(pts, sc);
    for (const cfg_t& k : cfgs) {
        uint32_t m = 1u << (k.c - 1);
        uint32_t tred = k.Tred > m ? m : k.Tred;
        for (int d : depths_of(k.c)) {
            const uint32_t n = (uint32_t)pts.size();
            int G = (256 + k.c - 1) / k.c;
            const std::vector<affine_t<F>> ext = d > 1 ? copies<R>(pts, k.c, d, &G) : pts;
            // One chunk, and (for the smallest windows, whose few buckets
            // every piece resumes) pieces sharing the buckets: one scalar a
            // piece, and a piece that is not a divisor of n.
            // Pieces of 7 also as a streamed run's chunks merge (leaders
            // every 2 slots, so runs cross them), and one chunk so with
            // leaders every 3 slots (first copies-free depth only).
            struct {
                uint32_t piece, Rrun;
            } runs[] = {{0, 0}, {1, 0}, {7, 0}, {7, 2}, {0, 3}};
            for (const auto& r : runs) {
                const uint32_t piece = r.piece;
                if (piece >= n || (piece > 0 && k.c > 5) || (r.Rrun == 3 && d != 1)) continue;
                jac_t<F> got = emu_msm(ext, n, sc, k.c, G, k.K0, k.Kmerge, tred, piece, r.Rrun);
                CHECK(jac_eq(got, want),
                      "%s %s: c=%d d=%d K0=%u Kmerge=%u Tred=%u piece=%u Rrun=%u differs from the "
                      "reference",
                      group, name, k.c, d, k.K0, k.Kmerge, tred, piece, r.Rrun);
            }
        }
    }
}

// check_split checks the split MSM over [lo, lo + pts.size()) of sc
// against the reference over that range, and the class counts.
template <class F, class R>
static void check_split(const char* group, const char* name, const std::vector<affine_t<F>>& pts,
                        const std::vector<mont_t<R>>& sc, uint32_t lo) {
    std::vector<mont_t<R>> range(sc.begin() + lo, sc.begin() + lo + pts.size());
    jac_t<F> want = ref_msm(pts, range);
    size_t want_counts[3] = {0, 0, 0};
    for (const mont_t<R>& x : sc) {
        bool zero = x == mont_t<R>::zero(), one = x == fr_small<R>(1);
        want_counts[zero ? 0 : one ? 1 : 2]++;
    }
    const cfg_t cfgs[] = {{4, 3, 4, 2}, {7, 1, 4, 8}, {13, 100000, 32, 256}};
    const uint32_t kones[] = {1, 3, 32, 1000};
    for (const cfg_t& k : cfgs) {
        for (uint32_t ko : kones) {
            uint32_t m = 1u << (k.c - 1);
            uint32_t tred = k.Tred > m ? m : k.Tred;
            size_t counts[3];
            // Copies: none, and (one Kones each) a d not dividing nwin.
            const int d = ko == 3 ? depths_of(k.c)[depths_of(k.c).size() > 2 ? 2 : 1] : 1;
            // The rest in one chunk, and (one Kones each) in chunks of 7
            // entries sharing the buckets.
            const uint32_t piece = ko == 32 ? 7 : 0;
            jac_t<F> got = emu_split(pts, sc, lo, k.c, d, k.K0, k.Kmerge, tred, ko, counts, piece);
            CHECK(jac_eq(got, want), "%s split %s (lo=%u): c=%d d=%d K0=%u Kones=%u piece=%u differs from the reference",
                  group, name, lo, k.c, d, k.K0, ko, piece);
            CHECK(counts[0] == want_counts[0] && counts[1] == want_counts[1] && counts[2] == want_counts[2],
                  "%s split %s: classified %zu/%zu/%zu zero/one/other, want %zu/%zu/%zu", group, name,
                  counts[0], counts[1], counts[2], want_counts[0], want_counts[1], want_counts[2]);
        }
    }
}

// run_group checks the pipeline on the group over F (the point formulas
// themselves: curve_emu).
template <class F>
static void run_group(const char* group) {
    using R = typename scalar_params<F>::type;
    std::vector<affine_t<F>> pool = random_points<F>(400);
    for (auto& p : pool) CHECK(on_curve(p), "%s random point off the curve", group);
    const std::vector<cfg_t> cfgs = {
        {4, 3, 4, 2}, {5, 7, 5, 4}, {7, 1, 4, 8}, {8, 64, 32, 16}, {13, 100000, 32, 256}, {16, 5, 4, 1},
    };
    auto rnd = [](size_t n) {
        std::vector<mont_t<R>> v(n);
        for (auto& x : v) x = rand_fr<R>();
        return v;
    };
    auto fill = [](size_t n, mont_t<R> v) { return std::vector<mont_t<R>>(n, v); };
    auto prefix = [&](size_t n) { return std::vector<affine_t<F>>(pool.begin(), pool.begin() + n); };

    check_case(group, "n=1", prefix(1), rnd(1), cfgs);
    check_case(group, "n=3", prefix(3), rnd(3), cfgs);
    check_case(group, "n=3 scalars 1", prefix(3), fill(3, fr_small<R>(1)), cfgs);
    check_case(group, "random 200", prefix(200), rnd(200), cfgs);
    check_case(group, "zero scalars", prefix(50), fill(50, mont_t<R>::zero()), cfgs);
    check_case(group, "scalars r-1", prefix(60), fill(60, fr_rm1<R>()), cfgs);
    check_case(group, "one point, equal scalars", std::vector<affine_t<F>>(90, pool[5]),
               fill(90, fr_small<R>(12345)), cfgs);
    check_case(group, "one point, random scalars", std::vector<affine_t<F>>(90, pool[5]), rnd(90), cfgs);
    {
        std::vector<affine_t<F>> pts = prefix(150);
        std::vector<mont_t<R>> sc = rnd(150);
        for (size_t i = 0; i < pts.size(); i++) {
            if (i % 7 == 0) pts[i].x = F::zero(), pts[i].y = F::zero();
            if (i % 11 == 0) pts[i] = pool[3];
            if (i % 13 == 1) sc[i] = fr_small<R>(1);
            if (i % 13 == 2) sc[i] = fr_rm1<R>();
            if (i % 13 == 3) sc[i] = mont_t<R>::zero();
            if (i % 13 == 4) sc[i] = fr_small<R>((uint32_t)i);
        }
        check_case(group, "mixed", pts, sc, cfgs);
    }
    {
        affine_t<F> p = pool[9], q = pool[9];
        q.y = fneg(q.y);
        check_case(group, "P and -P", std::vector<affine_t<F>>{p, q, p, q}, fill(4, fr_small<R>(77)), cfgs);
    }

    // The split MSM (0/1 scalars apart): all zero, all one, none binary, a
    // single non-binary scalar among bits, bits with infinity, repeated
    // points and P, -P, and ranges that skip a prefix (Groth16's K).
    auto bits = [&](size_t n, int other_every) {
        std::vector<mont_t<R>> v(n);
        for (size_t i = 0; i < n; i++) {
            v[i] = (rng() & 1) ? fr_small<R>(1) : mont_t<R>::zero();
            if (other_every && i % other_every == 0) v[i] = rand_fr<R>();
        }
        return v;
    };
    check_split(group, "all zero", prefix(70), fill(70, mont_t<R>::zero()), 0);
    check_split(group, "all one", prefix(70), fill(70, fr_small<R>(1)), 0);
    check_split(group, "none binary", prefix(70), rnd(70), 0);
    check_split(group, "n=1 one", prefix(1), fill(1, fr_small<R>(1)), 0);
    check_split(group, "n=1 zero", prefix(1), fill(1, mont_t<R>::zero()), 0);
    check_split(group, "n=1 other", prefix(1), rnd(1), 0);
    {
        std::vector<mont_t<R>> sc = bits(200, 0);
        sc[117] = rand_fr<R>();
        check_split(group, "single non-binary", prefix(200), sc, 0);
        check_split(group, "single non-binary, lo=3", prefix(197), sc, 3);
    }
    check_split(group, "bits, every 10th random", prefix(300), bits(300, 10), 0);
    check_split(group, "bits, every 10th random, lo=2", prefix(298), bits(300, 10), 2);
    {
        std::vector<affine_t<F>> pts = prefix(250);
        std::vector<mont_t<R>> sc = bits(250, 9);
        for (size_t i = 0; i < pts.size(); i++) {
            if (i % 7 == 0) pts[i].x = F::zero(), pts[i].y = F::zero();
            if (i % 5 == 0) pts[i] = pool[3];
            if (i % 13 == 2) sc[i] = fr_rm1<R>();
            if (i % 17 == 4) sc[i] = fr_small<R>(2);
        }
        pts[20] = pool[9];
        pts[21] = pool[9];
        pts[21].y = fneg(pts[21].y);
        sc[20] = sc[21] = fr_small<R>(1);
        check_split(group, "mixed: infinity, repeats, P and -P", pts, sc, 0);
        std::vector<affine_t<F>> tail(pts.begin() + 5, pts.end());
        check_split(group, "mixed, lo=5", tail, sc, 5);
    }
    check_split(group, "one point repeated, all ones", std::vector<affine_t<F>>(90, pool[5]), fill(90, fr_small<R>(1)), 0);
    check_split(group, "one point repeated, bits", std::vector<affine_t<F>>(90, pool[5]), bits(90, 11), 0);
    // The streamed split: chunks with only zeros, only ones, no ones, a
    // single other; infinity points and P, -P among the ones.
    check_stream_split(group, "all zero", prefix(70), fill(70, mont_t<R>::zero()));
    check_stream_split(group, "all one", prefix(70), fill(70, fr_small<R>(1)));
    check_stream_split(group, "none binary", prefix(70), rnd(70));
    check_stream_split(group, "bits, every 10th random", prefix(300), bits(300, 10));
    {
        std::vector<affine_t<F>> pts = prefix(200);
        std::vector<mont_t<R>> sc = bits(200, 0);
        for (int i = 0; i < 40; i++) sc[i] = mont_t<R>::zero();          // a chunk of zeros
        for (int i = 40; i < 80; i++) sc[i] = fr_small<R>(1);            // of ones
        for (int i = 80; i < 120; i++) sc[i] = rand_fr<R>();             // of others
        sc[150] = fr_rm1<R>();
        for (size_t i = 0; i < pts.size(); i++)
            if (i % 7 == 0) pts[i].x = F::zero(), pts[i].y = F::zero();
        pts[50] = pool[9];
        pts[51] = pool[9];
        pts[51].y = fneg(pts[51].y);
        check_stream_split(group, "zeros, ones, others in runs; infinity; P and -P", pts, sc);
    }
}

// check_plan_chunk checks msm_plan.h's plan of an MSM whose chunks are
// pieces: the window, copies and reduction of the whole MSM, the workspace
// (digit pairs, level-0 threads) of one piece.
static void check_plan_chunk() {
    const uint32_t ra = 33792, rr = 50688;  // an H200's G1 residency
    const size_t ns[] = {1, 1000, (size_t)1 << 20, ((size_t)1 << 24) + 5, (size_t)1 << 26};
    const int pres[][2] = {{0, 1}, {22, 12}, {16, 16}};
    for (size_t n : ns) {
        for (const auto& pre : pres) {
            const zk_msm_plan whole = zk_msm_make_plan_pre(n, pre[0], pre[1], ra, rr);
            for (size_t pieces : {(size_t)1, (size_t)2, (size_t)7}) {
                const size_t chunk = (n + pieces - 1) / pieces;
                const zk_msm_plan p = zk_msm_make_plan_chunk(n, chunk, pre[0], pre[1], ra, rr);
                const size_t want_chunk = chunk < whole.chunk ? chunk : whole.chunk;
                CHECK(p.c == whole.c && p.depth == whole.depth && p.G == whole.G &&
                          p.m == whole.m && p.sentinel == whole.sentinel &&
                          p.keybits == whole.keybits && p.Tred == whole.Tred && p.L == whole.L,
                      "plan of %zu scalars in %zu pieces (copies %d/%d): window or reduction differs "
                      "from the whole MSM's",
                      n, pieces, pre[0], pre[1]);
                CHECK(p.chunk == want_chunk && p.M == (size_t)p.nwin * want_chunk && p.T0 <= ra &&
                          p.T0 >= 1,
                      "plan of %zu scalars in %zu pieces: chunk %zu, %zu pairs, %u threads", n,
                      pieces, p.chunk, p.M, p.T0);
            }
        }
    }
}

// check_short_threads checks zk_msm_short_threads: within the cap, every
// entry in some thread's segment and no thread without one, segments of at
// most ZK_MSM_SHORT_SEG entries where the cap allows, else as short as it
// allows.
static void check_short_threads() {
    const uint32_t cap = 33792;
    const size_t counts[] = {0, 1, 3, 4, 5, 1000, 3900, 32768, 135168, 1081344, 1179648, (size_t)1 << 25};
    for (size_t count : counts) {
        const uint32_t T = zk_msm_short_threads(count, cap);
        if (count == 0) {
            CHECK(T == 0, "short threads of 0 entries: %u, want 0", T);
            continue;
        }
        const size_t K = (count + T - 1) / T;
        CHECK(T >= 1 && T <= cap && (size_t)T * K >= count && (size_t)(T - 1) * K < count,
              "short threads of %zu entries: %u threads of %zu", count, T, K);
        // Past what the cap takes at ZK_MSM_SHORT_SEG a thread: the
        // shortest segments cap threads allow.
        if (count > (size_t)cap * ZK_MSM_SHORT_SEG)
            CHECK(K == (count + cap - 1) / cap,
                  "short threads of %zu entries: %zu a thread, want %zu", count, K,
                  (count + cap - 1) / cap);
        else
            CHECK(K <= ZK_MSM_SHORT_SEG, "short threads of %zu entries: %zu a thread, want at most %u",
                  count, K, ZK_MSM_SHORT_SEG);
    }
}

int main() {
    check_plan_chunk();
    check_short_threads();
    run_group<fq_t>("BLS12-381 G1");
    run_group<fq2_t>("BLS12-381 G2");
    run_group<bn254_fq_t>("BN254 G1");
    run_group<bn254_fq2_t>("BN254 G2");
    if (failures) {
        printf("msm_emu: %d failures\n", failures);
        return 1;
    }
    printf("msm_emu: ok\n");
    return 0;
}
