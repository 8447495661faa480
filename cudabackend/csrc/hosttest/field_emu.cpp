// field_emu.cpp: checks field.cuh's device algorithms (the carry-chain add,
// sub and even/odd Montgomery product, run here with an emulated carry flag)
// against the portable references and against known values, for BLS12-381's
// fr and fq and BN254's, on edge and random inputs. Build and run: make
// cuda-hosttest.
#include <stdio.h>

#include <random>
#include <vector>

#include "../field.cuh"

static int failures = 0;

template <class F>
static F reduce_rand(std::mt19937_64& g) {
    for (;;) {
        F x;
        for (int i = 0; i < F::N; i++) x.l[i] = (uint32_t)g();
        x.l[F::N - 1] &= 0x7fffffff;
        // keep x < p
        uint64_t b = 0;
        for (int i = 0; i < F::N; i++) {
            uint64_t d = (uint64_t)x.l[i] - F::modulus().l[i] - b;
            b = (d >> 63) & 1;
        }
        if (b) return x;
    }
}

template <class F>
static void check_field(const char* name, int iters, uint64_t seed) {
    std::mt19937_64 g(seed);
    volatile uint32_t m0_volatile = F::params::M0;
    const uint32_t m0_opaque = m0_volatile;
    F pm1 = F::modulus();  // the integer p-1: the largest canonical value
    pm1.l[0] -= 1;
    F one_raw = F::zero();
    one_raw.l[0] = 1;
    std::vector<F> edges = {F::zero(), F::one(), F::zero() - F::one(), pm1, one_raw,
                            F::one() + F::one()};
    int bad = 0;
    for (int it = 0; it < iters; it++) {
        size_t ne = edges.size();
        bool edge = (size_t)it < ne * ne;
        F a = edge ? edges[it / ne] : reduce_rand<F>(g);
        F b = edge ? edges[it % ne] : reduce_rand<F>(g);
        if (F::mul_eo(a, b) != F::mul_ref(a, b)) bad++;
        // The device's fr product takes M0 as a value the compiler cannot
        // fold (fr_params::m0): the same rows with m0 as a parameter.
        if (F::mul_eo(a, b, m0_opaque) != F::mul_ref(a, b)) bad++;
        if (F::sqr_eo(a) != F::mul_ref(a, a)) bad++;
        if (F::add_chain(a, b) != F::add_ref(a, b)) bad++;
        if (F::sub_chain(a, b) != F::sub_ref(a, b)) bad++;
    }
    // Algebra the references must satisfy.
    for (int it = 0; it < 2000; it++) {
        F a = reduce_rand<F>(g), b = reduce_rand<F>(g);
        if ((a + b) - b != a) bad++;
        if (a * F::one() != a) bad++;
        if (a.to_montgomery().from_montgomery() != a) bad++;
        if (!a.is_zero() && a * a.inverse() != F::one()) bad++;
        if (a.pow(3) != a * a * a) bad++;
        if (a.dbl() != a + a || -a + a != F::zero()) bad++;
    }
    if ((F::zero() - F::one()) + F::one() != F::zero()) bad++;
    if (bad) {
        printf("FAIL %s: %d mismatches\n", name, bad);
        failures++;
    }
}

// lazy_of returns a + p (below 2p: a lazy form of a, as the device's Fq
// arithmetic keeps values with ZK_FQ_LAZY) for a < p.
template <class F>
static F lazy_of(const F& a) {
    F r;
    uint64_t carry = 0;
    for (int i = 0; i < F::N; i++) {
        uint64_t s = (uint64_t)a.l[i] + F::modulus().l[i] + carry;
        r.l[i] = (uint32_t)s;
        carry = s >> 32;
    }
    return r;
}

// below_2p reports x < 2p.
template <class F>
static bool below_2p(const F& x) {
    uint64_t b = 0;
    for (int i = 0; i < F::N; i++) {
        uint64_t d = (uint64_t)x.l[i] - F::template kp<2>(i) - b;
        b = (d >> 63) & 1;
    }
    return b != 0;
}

// check_mul_sub_lazy: (a*b - c*d) R^-1 from two wide products and one
// reduction (both curves' Fq: 4p < R, which mul_sub_lazy needs), and the
// lazy a*b, a + b and a - b, inputs reduced or lazy, are below 2p and the
// reference's values.
template <class F>
static void check_mul_sub_lazy(const char* name, int iters, uint64_t seed) {
    std::mt19937_64 g(seed);
    int bad = 0;
    for (int it = 0; it < iters; it++) {
        F v[4];
        for (auto& x : v) x = reduce_rand<F>(g);
        if (it == 1) v[0] = v[2], v[1] = v[3];  // a*b == c*d: zero
        if (it == 2) v[0] = F::zero();           // 0 - c*d
        if (it == 3) {                           // (2p-1)^2 - 0: w near 8p^2, its largest
            v[0] = F::modulus();
            v[0].l[0] -= 1;
            v[1] = v[0], v[2] = v[3] = F::zero();
        }
        F in[4];
        for (int k = 0; k < 4; k++) in[k] = ((it >> k) & 1) ? lazy_of(v[k]) : v[k];
        if constexpr (F::four_p_below_R) {
            F want = F::mul_ref(v[0], v[1]) - F::mul_ref(v[2], v[3]);
            F got = F::mul_sub_lazy(in[0], in[1], in[2], in[3]);
            if (!below_2p(got)) bad++;
            F red = got;
            F::reduce_once(red.l);
            if (red != want) bad++;
        }
        // The lazy product, the device's Fq product.
        F prod = F::mul_lazy(in[0], in[1]);
        if (!below_2p(prod)) bad++;
        F::reduce_once(prod.l);
        if (prod != F::mul_ref(v[0], v[1])) bad++;
        // The lazy sum and difference (add_chain, sub_chain with K = 2).
        F sum = F::template add_chain<2>(in[0], in[1]), dif = F::template sub_chain<2>(in[0], in[1]);
        if (!below_2p(sum) || !below_2p(dif)) bad++;
        F::reduce_once(sum.l);
        F::reduce_once(dif.l);
        if (sum != F::add_ref(v[0], v[1]) || dif != F::sub_ref(v[0], v[1])) bad++;
    }
    if (bad) {
        printf("FAIL %s lazy product differences, sums, differences: %d mismatches\n", name, bad);
        failures++;
    }
}

// check_sqr_lazy: the square of a lazy value is below 2p and equal to the
// reference square of its reduced form.
template <class F>
static void check_sqr_lazy(const char* name, int iters, uint64_t seed) {
    std::mt19937_64 g(seed);
    int bad = 0;
    for (int it = 0; it < iters; it++) {
        F a = reduce_rand<F>(g);
        F lazy = it == 0 ? F::modulus() : lazy_of(a);  // p: the lazy form of 0
        F want = it == 0 ? F::zero() : F::mul_ref(a, a);
        F got = F::sqr_lazy(lazy);
        if (!below_2p(got)) bad++;
        F red = got;
        F::reduce_once(red.l);
        if (red != want) bad++;
    }
    if (bad) {
        printf("FAIL %s lazy squares: %d mismatches\n", name, bad);
        failures++;
    }
}

// check_half checks that 2^-1 in F, out of Montgomery form, is want: (p+1)/2.
template <class F>
static void check_half(const char* name, const std::vector<uint32_t>& want) {
    F two = F::one() + F::one();
    F half = two.inverse().from_montgomery();
    for (int i = 0; i < F::N; i++)
        if (half.l[i] != want[i]) {
            printf("FAIL %s: 1/2 limb %d = %08x, want %08x\n", name, i, half.l[i], want[i]);
            failures++;
            return;
        }
}

int main() {
    check_field<fr_t>("fr", 300000, 1);
    check_field<fq_t>("fq", 150000, 2);
    check_sqr_lazy<fq_t>("fq", 100000, 3);
    check_mul_sub_lazy<fq_t>("fq", 100000, 4);
    check_field<bn254_fr_t>("bn254 fr", 300000, 5);
    check_field<bn254_fq_t>("bn254 fq", 300000, 6);
    check_sqr_lazy<bn254_fq_t>("bn254 fq", 100000, 7);
    check_mul_sub_lazy<bn254_fq_t>("bn254 fq", 100000, 8);  // its lazy product, sum, difference
    // A known value in each scalar field: 2^-1, whose from_montgomery() must
    // be (r+1)/2.
    check_half<fr_t>("fr", {0x80000001, 0x7fffffff, 0x7fff2dff, 0xa9ded201, 0x04d0ec02,
                            0x199cec04, 0x94cebea4, 0x39f6d3a9});
    check_half<bn254_fr_t>("bn254 fr", {0xf8000001, 0xa1f0fac9, 0x3cdcb848, 0x9419f424,
                                        0x40c0ac2e, 0xdc2822db, 0x7098d014, 0x18322739});
    check_half<bn254_fq_t>("bn254 fq", {0x6c3e7ea4, 0x9e10460b, 0xb438e546, 0xcbc0b548,
                                        0x40c0ac2e, 0xdc2822db, 0x7098d014, 0x18322739});
    if (failures) return 1;
    printf("field_emu: all checks passed\n");
    return 0;
}
