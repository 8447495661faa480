// ntt_emu.cpp: runs the NTT passes of ntt_core.cuh on the CPU (each block's
// threads one after another, which is exact: a stage's butterflies touch
// disjoint pairs) and checks them against a naive DFT, the inverse, the
// DIF/DIT bit-reversal relation and the definition of Groth16's H. Catches
// index and twiddle mistakes without a GPU. Build and run: make cuda-hosttest.
#include <stdio.h>
#include <stdlib.h>

#include <random>
#include <vector>

#include "../ntt_core.cuh"

using namespace zk_ntt;

static std::mt19937_64 rng(42);

static fr_t rand_fr() {
    fr_t x;
    for (;;) {
        for (int i = 0; i < 8; i++) x.l[i] = (uint32_t)rng();
        x.l[7] &= 0x7fffffff;
        // accept only x < p
        uint64_t b = 0;
        for (int i = 0; i < 8; i++) {
            uint64_t d = (uint64_t)x.l[i] - fr_params::p(i) - b;
            b = (d >> 63) & 1;
        }
        if (b) return x;
    }
}

struct host_domain {
    uint32_t L, lo_bits;
    plan_t plan;
    std::vector<fr_t> tw[2], lo[2], hi[2][2];
    fr_t n_inv, den, g[2], w[2];
};

static void powers(std::vector<fr_t>& out, size_t n, const fr_t& base, const fr_t& c) {
    out.resize(n);
    for (size_t j0 = 0; j0 < n; j0 += 64) {
        uint32_t cnt = (uint32_t)(n - j0 < 64 ? n - j0 : 64);
        powers_chunk(out.data() + j0, (uint32_t)j0, cnt, base, c);
    }
}

static host_domain make_domain(uint32_t L) {
    host_domain d;
    d.L = L;
    if (!make_plan(L, &d.plan)) {
        printf("no plan for L=%u\n", L);
        exit(1);
    }
    d.lo_bits = (L + 1) / 2;
    uint64_t N = 1ull << L;
    fr_t one = fr_t::one();
    d.w[0] = root_of_unity(L);
    d.w[1] = d.w[0].inverse();
    d.g[0] = fr_from_u64(COSET_GEN);
    d.g[1] = d.g[0].inverse();
    d.n_inv = fr_from_u64(N).inverse();
    d.den = (d.g[0].pow(N) - one).inverse();
    for (int dir = 0; dir < 2; dir++) {
        d.tw[dir].assign(N > 1 ? N - 1 : 1, one);
        if (N > 1) {
            std::vector<fr_t> top;
            powers(top, N / 2, d.w[dir], one);
            for (uint64_t m = 1; m <= N / 2; m <<= 1)
                for (uint64_t t = 0; t < m; t++) d.tw[dir][m - 1 + t] = top[t * (N / 2 / m)];
        }
    }
    for (int b = 0; b < 2; b++) {
        powers(d.lo[b], 1ull << d.lo_bits, d.g[b], one);
        fr_t step = d.g[b].pow(1ull << d.lo_bits);
        powers(d.hi[b][0], 1ull << (L - d.lo_bits), step, one);
        powers(d.hi[b][1], 1ull << (L - d.lo_bits), step, d.n_inv);
    }
    return d;
}

static scale_spec coset(const host_domain& d, int inv, int ninv, int br) {
    scale_spec s = scale_none();
    s.kind = 2;
    s.bitrev = br;
    s.lo_bits = d.lo_bits;
    s.hi = d.hi[inv][ninv].data();
    s.lo = d.lo[inv].data();
    return s;
}

// radix4 is k_ntt_pass's radix4 argument: stages in pairs (pass_butterfly4).
static bool radix4 = false;

// emu_ntt mirrors run_ntt + k_ntt_pass of ntt.cu.
static void emu_ntt(const host_domain& d, std::vector<fr_t>& X, int dir, bool dit,
                    const scale_spec& pre, const scale_spec& post) {
    const uint32_t L = d.L;
    const plan_t& pl = d.plan;
    if (pl.passes == 0) {
        X[0] = scale_apply(post, scale_apply(pre, X[0], 0, L), 0, L);
        return;
    }
    const uint32_t logE = L < LOG_E ? L : LOG_E, E = 1u << logE;
    const uint32_t blocks = (uint32_t)((1ull << L) >> logE);
    std::vector<fr_t> sm(E);
    const scale_spec none = scale_none();
    for (int n = 0; n < pl.passes; n++) {
        const int idx = dit ? pl.passes - 1 - n : n;
        const pass_params p = pass_setup(pl, idx, L, d.tw[dir].data());
        const scale_spec& first = n == 0 ? pre : none;
        const scale_spec& last = n == pl.passes - 1 ? post : none;
        for (uint32_t block = 0; block < blocks; block++) {
            for (uint32_t e = 0; e < E; e++) {
                uint32_t i = pass_gidx(p, block, e);
                sm[e] = scale_apply(first, X[i], i, L);
            }
            for (uint32_t l = 0; l < p.k;) {
                if (pass_pairs(p, l, radix4)) {
                    for (uint32_t u = 0; u < E / 4; u++) {
                        if (dit)
                            pass_butterfly4<true>(sm.data(), p, block, l, u);
                        else
                            pass_butterfly4<false>(sm.data(), p, block, l, u);
                    }
                    l += 2;
                    continue;
                }
                for (uint32_t u = 0; u < E / 2; u++) {
                    if (dit)
                        pass_butterfly<true>(sm.data(), p, block, l, u);
                    else
                        pass_butterfly<false>(sm.data(), p, block, l, u);
                }
                l++;
            }
            for (uint32_t e = 0; e < E; e++) {
                uint32_t i = pass_gidx(p, block, e);
                X[i] = scale_apply(last, sm[e], i, L);
            }
        }
    }
}

// gnark semantics, as ntt.cu's gnark_specs.
static void gnark_ntt(const host_domain& d, std::vector<fr_t>& X, int inverse, int dif, int cos) {
    scale_spec pre = scale_none(), post = scale_none();
    if (!inverse) {
        if (cos) pre = coset(d, 0, 0, !dif);
    } else if (cos) {
        post = coset(d, 1, 1, dif);
    } else {
        post.kind = 1;
        post.c = d.n_inv;
    }
    emu_ntt(d, X, inverse, !dif, pre, post);
}

static int failures = 0;
static void expect(bool ok, const char* what, uint32_t L) {
    if (!ok) {
        failures++;
        printf("FAIL %s L=%u\n", what, L);
    }
}

static bool eq(const std::vector<fr_t>& a, const std::vector<fr_t>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++)
        if (a[i] != b[i]) return false;
    return true;
}

// naive_dft: out[k] = sum_j c^j... : evaluations of coefficients x at shift·w^k.
static std::vector<fr_t> naive(const std::vector<fr_t>& x, const fr_t& w, const fr_t& shift) {
    size_t N = x.size();
    std::vector<fr_t> out(N);
    fr_t wk = shift;  // shift·w^k
    for (size_t k = 0; k < N; k++) {
        fr_t acc = fr_t::zero(), pw = fr_t::one();
        for (size_t j = 0; j < N; j++) {
            acc = acc + x[j] * pw;
            pw = pw * wk;
        }
        out[k] = acc;
        wk = wk * w;
    }
    return out;
}

static std::vector<fr_t> bitrev_perm(const std::vector<fr_t>& x, uint32_t L) {
    std::vector<fr_t> y(x.size());
    for (uint32_t i = 0; i < x.size(); i++) y[bitrev(i, L)] = x[i];
    return y;
}

static void check_transforms(uint32_t L, bool with_naive) {
    host_domain d = make_domain(L);
    size_t N = 1ull << L;
    std::vector<fr_t> x(N);
    for (auto& v : x) v = rand_fr();
    fr_t one = fr_t::one();
    if (with_naive) {
        std::vector<fr_t> ref = naive(x, d.w[0], one);
        std::vector<fr_t> y = x;
        gnark_ntt(d, y, 0, 1, 0);
        expect(eq(y, bitrev_perm(ref, L)), "forward DIF == naive (bit-reversed)", L);
        y = bitrev_perm(x, L);
        gnark_ntt(d, y, 0, 0, 0);
        expect(eq(y, ref), "forward DIT (bit-reversed in) == naive", L);
        std::vector<fr_t> refc = naive(x, d.w[0], d.g[0]);
        y = x;
        gnark_ntt(d, y, 0, 1, 1);
        expect(eq(y, bitrev_perm(refc, L)), "forward DIF coset == naive on coset", L);
        y = bitrev_perm(x, L);
        gnark_ntt(d, y, 0, 0, 1);
        expect(eq(y, refc), "forward DIT coset == naive on coset", L);
    }
    // Inverses undo forwards, in every order and with cosets.
    for (int cos = 0; cos < 2; cos++) {
        std::vector<fr_t> y = x;
        gnark_ntt(d, y, 0, 1, cos);  // natural -> bitrev
        gnark_ntt(d, y, 1, 0, cos);  // bitrev -> natural
        expect(eq(y, x), cos ? "DIT^-1(DIF coset) == id" : "DIT^-1(DIF) == id", L);
        y = x;
        gnark_ntt(d, y, 0, 0, cos);  // bitrev in -> natural
        gnark_ntt(d, y, 1, 1, cos);  // natural -> bitrev
        expect(eq(y, x), cos ? "DIF^-1(DIT coset) == id" : "DIF^-1(DIT) == id", L);
    }
    // Radix 4 gives radix 2's result bit for bit, in every variant.
    for (int v = 0; v < 8; v++) {
        int inverse = v & 1, dif = (v >> 1) & 1, cos = v >> 2;
        std::vector<fr_t> r2 = x, r4 = x;
        bool was = radix4;
        radix4 = false;
        gnark_ntt(d, r2, inverse, dif, cos);
        radix4 = true;
        gnark_ntt(d, r4, inverse, dif, cos);
        radix4 = was;
        expect(eq(r2, r4), "radix 4 == radix 2", L);
    }
    // DIF output is DIT output bit-reversed.
    std::vector<fr_t> a = x, b = bitrev_perm(x, L);
    gnark_ntt(d, a, 0, 1, 1);
    gnark_ntt(d, b, 0, 0, 1);
    expect(eq(a, bitrev_perm(b, L)), "DIF coset == bitrev(DIT coset)", L);
}

// check_h runs computeH as ntt.cu's enqueue_h does and checks the result
// against the definition: h = (A·B - C)/(X^N - 1) with A, B, C the
// interpolants of the inputs, h's coefficients in bit-reversed order.
static void check_h(uint32_t L, int n_inputs) {
    host_domain d = make_domain(L);
    size_t N = 1ull << L;
    std::vector<fr_t> a(N, fr_t::zero()), b(N, fr_t::zero()), c(N);
    for (int i = 0; i < n_inputs; i++) {
        a[i] = rand_fr();
        b[i] = rand_fr();
    }
    for (size_t i = 0; i < N; i++) c[i] = a[i] * b[i];
    std::vector<fr_t> A = a, B = b, C = c;
    scale_spec none = scale_none();
    for (auto* v : {&A, &B, &C}) emu_ntt(d, *v, 1, false, none, coset(d, 0, 1, 1));
    for (auto* v : {&A, &B, &C}) emu_ntt(d, *v, 0, true, none, none);
    for (size_t i = 0; i < N; i++) A[i] = (A[i] * B[i] - C[i]) * d.den;
    emu_ntt(d, A, 1, false, none, coset(d, 1, 1, 1));
    std::vector<fr_t> h = bitrev_perm(A, L);  // natural coefficient order

    // Reference: coefficients by inverse DFT (naive), product, division.
    fr_t ninv = d.n_inv;
    auto coeffs = [&](const std::vector<fr_t>& ev) {
        std::vector<fr_t> co = naive(ev, d.w[1], fr_t::one());
        for (auto& v : co) v = v * ninv;
        return co;
    };
    std::vector<fr_t> ca = coeffs(a), cb = coeffs(b), cc = coeffs(c);
    std::vector<fr_t> prod(2 * N, fr_t::zero());
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++) prod[i + j] = prod[i + j] + ca[i] * cb[j];
    for (size_t i = 0; i < N; i++) prod[i] = prod[i] - cc[i];
    // divide by X^N - 1: q_i = prod_{i+N} + q_{i+N} (from the top down).
    std::vector<fr_t> q(2 * N, fr_t::zero());
    for (size_t i = 2 * N; i-- > N;) {
        q[i - N] = prod[i] + (i < N + N ? q[i] : fr_t::zero());
    }
    // remainder must vanish: prod_i + q_i == 0 for i < N
    bool exact = true;
    for (size_t i = 0; i < N; i++)
        if (prod[i] + q[i] != fr_t::zero()) exact = false;
    expect(exact, "A·B - C divisible by X^N - 1", L);
    std::vector<fr_t> ref(q.begin(), q.begin() + N);
    expect(eq(h, ref), "computeH == (A·B-C)/Z", L);
    expect(h[N - 1].is_zero(), "computeH top coefficient zero", L);
}

int main() {
    // plans exist for every supported size
    for (uint32_t L = 0; L <= 28; L++) {
        plan_t pl;
        expect(make_plan(L, &pl), "make_plan", L);
        uint32_t sum = 0;
        for (int i = 0; i < pl.passes; i++) sum += pl.k[i];
        expect(sum == L, "plan covers every stage", L);
    }
    for (bool r4 : {false, true}) {
        radix4 = r4;
        for (uint32_t L = 0; L <= 9; L++) check_transforms(L, true);
        for (uint32_t L : {10u, 11u, 12u, 13u, 14u, 15u, 16u, 17u, 18u}) check_transforms(L, L <= 11);
        for (uint32_t L : {1u, 2u, 3u, 5u, 8u}) check_h(L, (1 << L) - (L > 2 ? 3 : 0));
    }
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("ntt_emu: all checks passed\n");
    return 0;
}
