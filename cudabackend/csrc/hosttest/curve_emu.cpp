// curve_emu.cpp: curve.cuh's point arithmetic on the CPU for every curve it is
// instantiated for (BLS12-381 and BN254, G1 over Fq and G2 over Fq2): the
// generator is on the curve, [k]G by double-and-add matches gnark-crypto's
// ScalarMultiplication for fixed k, [r]G is infinity, P + P is 2P, P + (-P)
// is infinity, [a]G + [b]G is [a+b]G, and every result lies on the curve.
// The formulas take the curve only through its field (a = 0 for all of
// them), so a second curve needs only its constants (curves.h).
// Build and run: make cuda-hosttest (or g++ -O2 -std=c++17 -I.. curve_emu.cpp).
#include <stdio.h>

#include <random>

#include "../msm_core.cuh"
#include "curves.h"

using namespace zk_msm;

template <class F>
static bool affine_eq(const affine_t<F>& p, const affine_t<F>& q) {
    return p.x == q.x && p.y == q.y;
}

// check_group runs every check on one group of a curve: generator g, order
// r (nr limbs) and the vectors' expected [k]G.
template <class F, class V>
static void check_group(const char* name, const affine_t<F>& g, const uint32_t* r,
                        int nr, const V& vectors, int nvectors, std::mt19937_64& rng) {
    using P = xyzz_t<F>;
    const auto mul = [&](const affine_t<F>& p, const uint32_t* k) { return scalar_mul(p, k, nr); };
    CHECK(on_curve(g), "%s: generator not on the curve", name);
    for (int i = 0; i < nvectors; i++) {
        const affine_t<F> want = vectors[i].second;
        const affine_t<F> got = to_affine(mul(g, vectors[i].first));
        CHECK(affine_eq(got, want), "%s: [k]G of vector %d differs from gnark-crypto's", name, i);
    }
    CHECK(mul(g, r).is_inf(), "%s: [r]G is not infinity", name);
    // At G itself: 2G by dbl and by add agree, 3G is on the curve, [r-1]G is
    // -G, and Jacobian doublings of 3G stay on the curve.
    P g2 = P::from_affine(g), g2add = g2;
    g2.dbl();
    g2add.add(P::from_affine(g));
    CHECK(affine_eq(to_affine(g2), to_affine(g2add)), "%s: 2G by dbl != G + G", name);
    P g3 = g2;
    g3.add_affine(g.x, g.y);
    CHECK(on_curve(to_affine(g3)), "%s: 3G off the curve", name);
    uint32_t rm1[8] = {};
    for (int i = 0; i < nr; i++) rm1[i] = r[i];
    rm1[0] -= 1;  // r is odd
    const affine_t<F> mg = to_affine(mul(g, rm1));
    CHECK(mg.x == g.x && mg.y == fneg(g.y), "%s: [r-1]G != -G", name);
    jac_t<F> j = g3.to_jac();
    for (int i = 0; i < 5; i++) j = j.dbl();
    CHECK(on_curve(to_affine(P::from_jac(j))), "%s: Jacobian doubling off the curve", name);

    // Random scalars below 2^(32*nr - 8) (below r for both curves' orders).
    for (int t = 0; t < 4; t++) {
        uint32_t a[8] = {}, c[8] = {}, s[8] = {};
        uint64_t carry = 0;
        for (int i = 0; i < nr; i++) {
            a[i] = (uint32_t)rng();
            c[i] = (uint32_t)rng();
            if (i == nr - 1) {
                a[i] >>= 8;
                c[i] >>= 8;
            }
            uint64_t v = (uint64_t)a[i] + c[i] + carry;
            s[i] = (uint32_t)v;
            carry = v >> 32;
        }
        const xyzz_t<F> pa = mul(g, a), pc = mul(g, c);
        const affine_t<F> qa = to_affine(pa), qc = to_affine(pc);
        CHECK(on_curve(qa), "%s: [a]G off the curve", name);

        xyzz_t<F> sum = pa;
        sum.add(pc);
        CHECK(affine_eq(to_affine(sum), to_affine(mul(g, s))), "%s: [a]G + [c]G != [a+c]G",
              name);
        xyzz_t<F> mixed = pa;
        mixed.add_affine(qc.x, qc.y);
        CHECK(affine_eq(to_affine(mixed), to_affine(sum)), "%s: mixed and full additions differ",
              name);

        xyzz_t<F> twice = pa;
        twice.add(pa);
        xyzz_t<F> dbl = pa;
        dbl.dbl();
        CHECK(affine_eq(to_affine(twice), to_affine(dbl)), "%s: P + P != 2P", name);
        xyzz_t<F> dbla;
        dbla.dbl_affine(qa.x, qa.y);
        CHECK(affine_eq(to_affine(dbla), to_affine(dbl)), "%s: affine doubling != 2P", name);
        jac_t<F> j = pa.to_jac().dbl();
        CHECK(affine_eq(to_affine(xyzz_t<F>::from_jac(j)), to_affine(dbl)),
              "%s: Jacobian doubling != 2P", name);

        xyzz_t<F> zero = pa;
        zero.add_affine(qa.x, fneg(qa.y));
        CHECK(zero.is_inf(), "%s: P + (-P) is not infinity", name);
    }
}

template <class FqP>
static void check_curve(const curve_desc<FqP>& d, std::mt19937_64& rng) {
    using FrP = typename FqP::scalar_field;
    using F1 = mont_t<FqP>;
    using F2 = ext2_t<FqP>;
    uint32_t r[8] = {};
    for (int i = 0; i < FrP::N; i++) r[i] = FrP::p(i);

    std::pair<const uint32_t*, affine_t<F1>> v1[4];
    std::pair<const uint32_t*, affine_t<F2>> v2[4];
    for (int i = 0; i < d.nvectors; i++) {
        v1[i].first = v2[i].first = d.vectors[i].k;
        to_field<FqP>(d.vectors[i].g1, &v1[i].second);
        to_field<FqP>(d.vectors[i].g2, &v2[i].second);
    }
    char name[64];
    snprintf(name, sizeof name, "%s G1", d.name);
    check_group(name, gen((F1*)nullptr), r, FrP::N, v1, d.nvectors, rng);
    snprintf(name, sizeof name, "%s G2", d.name);
    check_group(name, gen((F2*)nullptr), r, FrP::N, v2, d.nvectors, rng);
}

int main() {
    std::mt19937_64 rng(7);
    check_curve(bls12_381, rng);
    check_curve(bn254, rng);
    if (failures) {
        printf("curve_emu: %d checks failed\n", failures);
        return 1;
    }
    printf("curve_emu: all checks passed\n");
    return 0;
}
