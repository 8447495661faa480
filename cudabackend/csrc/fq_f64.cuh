// fq_f64.cuh: the Fq product with its limb products on the FP64 pipe (issue
// 10's "faster Fq multiplication in bucket accumulation").
//
// Why: the integer product (field.cuh's mul_lazy) is bound by the
// multiply-add pipe. Its 32x32-bit IMAD.WIDEs take two passes each, and the
// product fills 96% of the pipe (BENCHMARKS.md, the product probe). The
// H200's FP64 units are a separate pipe of the same width, idle in the MSM.
// A 48x48-bit limb product costs three FP64 operations there (two fused
// multiply-adds rounded toward zero and one add) and 2304 bit products
// against an IMAD.WIDE's 1024 in two passes. Here the 64 limb products of a
// x b run on the FP64 pipe and the Montgomery reduction stays on the
// integer pipe (field.cuh's redc_wide_lazy), so the two pipes share a
// product.
//
// The limb product, after Emmart, Zheng and Weems, "Faster Modular
// Exponentiation Using Double Precision Floating Point Arithmetic on the
// GPU" (ARITH 2018): for exact integers x, y < 2^48 held in doubles,
//
//   hi = fma_rz(x, y, 2^100)          = 2^100 + H 2^48,  H = floor(xy / 2^48)
//   lo = fma_rz(x, y, 2^100 + 2^52 - hi) = 2^52 + L,     L = xy mod 2^48
//
// Both are exact: hi lies in [2^100, 2^101), where a double's unit is 2^48,
// and rounding toward zero drops L; lo lies in [2^52, 2^53), unit 1. So the
// bit patterns of hi and lo are a constant plus H and plus L: the limb
// products are summed into 64-bit integer columns as raw bits, and each
// column's constants are subtracted once (its starting value).
//
// Values: Fq as field.cuh's fq_t (12 x 32-bit limbs, Montgomery form, the
// lazy form below 2p < 2^382), split into 8 limbs of 48 bits (384 bits:
// every 3 words are 2 limbs). Results equal field.cuh's lazy products in the
// field and are below 2p (they share redc_wide_lazy). Every function is
// __host__ __device__: on the host fma_rz sets the rounding mode around
// std::fma, so hosttest/field_emu.cpp checks the device algorithm against
// mul_ref.
#pragma once

#include "field.cuh"

#include <cfenv>
#include <cmath>
#include <cstring>

namespace zk_f64 {

constexpr int LIMBS = 8;       // 48-bit limbs of an Fq value
constexpr int COLS = 16;       // columns of a wide product, 48 bits apart
constexpr int W = 2 * fq_t::N;  // 32-bit words of a wide product

// Bit patterns of the constants (IEEE 754 binary64).
constexpr uint64_t BITS_2_52 = 0x4330000000000000ull;   // 2^52: lo's constant
constexpr uint64_t BITS_2_100 = 0x4630000000000000ull;  // 2^100: hi's constant

ZK_HD uint64_t bits_of(double x) {
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

ZK_HD double double_of(uint64_t u) {
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)u);
#else
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

// fma_rz is x*y + c rounded toward zero (one DFMA.RZ on the device).
ZK_HD double fma_rz(double x, double y, double c) {
#ifdef __CUDA_ARCH__
    return __fma_rz(x, y, c);
#else
    const int mode = fegetround();
    fesetround(FE_TOWARDZERO);
    volatile double r = std::fma(x, y, c);
    fesetround(mode);
    return r;
#endif
}

// limbs_of splits a (below 2^384) into 8 exact doubles of 48 bits: words
// 3m, 3m+1 and 3m+2 hold limbs 2m and 2m+1. A limb becomes a double by
// setting 2^52's exponent above it and subtracting 2^52 (no conversion
// instruction).
ZK_HD void limbs_of(const fq_t& a, double* x) {
#pragma unroll
    for (int m = 0; m < LIMBS / 2; m++) {
        const uint32_t w0 = a.l[3 * m], w1 = a.l[3 * m + 1], w2 = a.l[3 * m + 2];
        const uint64_t lo = (uint64_t)w0 | (uint64_t)(w1 & 0xffffu) << 32;
        const uint64_t hi = (uint64_t)(w1 >> 16) | (uint64_t)w2 << 16;
        x[2 * m] = double_of(BITS_2_52 | lo) - double_of(BITS_2_52);
        x[2 * m + 1] = double_of(BITS_2_52 | hi) - double_of(BITS_2_52);
    }
}

// pairs_in is the number of limb pairs (i, j), i + j == k.
ZK_HD constexpr int pairs_in(int k) {
    return k < 0 || k > 2 * LIMBS - 2 ? 0 : (k < LIMBS ? k + 1 : 2 * LIMBS - 1 - k);
}

// column_start is column k's starting value for `times` products a pair:
// minus the constants its lo and hi bit patterns will bring (mod 2^64).
ZK_HD constexpr uint64_t column_start(int k, int times) {
    return (uint64_t)0 - (uint64_t)times * ((uint64_t)pairs_in(k) * BITS_2_52 +
                                            (uint64_t)pairs_in(k - 1) * BITS_2_100);
}

// add_product adds the limb product x*y (x, y < 2^48, xy < 2^100) to
// columns k (its low 48 bits) and k + 1 (the rest).
ZK_HD void add_product(uint64_t* col, int k, double x, double y) {
    const double hi = fma_rz(x, y, double_of(BITS_2_100));
    // 2^100 + 2^52 - hi is exact: both are multiples of 2^48 below 2^101.
    const double lo = fma_rz(x, y, double_of(BITS_2_100 | 16) - hi);
    col[k] += bits_of(lo);
    col[k + 1] += bits_of(hi);
}

// pack_columns writes sum col[k] 2^(48k) (each col[k] below 2^56) into
// w[0..23]. Even columns start at word 3m, odd ones at bit 16 of word 3m+1:
// the even ones laid side by side do not overlap, nor do the odd ones, so w
// is one 24-word sum of the two layouts. The top column's bits past word 23
// are zero for a product below 2^768.
ZK_HD void pack_columns(const uint64_t* col, uint32_t* w) {
    uint32_t ev[W], od[W];
#pragma unroll
    for (int m = 0; m < COLS / 2; m++) {
        const uint64_t e = col[2 * m], o = col[2 * m + 1];
        ev[3 * m] = (uint32_t)e;
        ev[3 * m + 1] = (uint32_t)(e >> 32);
        ev[3 * m + 2] = 0;
        od[3 * m + 1] = (uint32_t)o << 16;
        od[3 * m + 2] = (uint32_t)(o >> 16);
        if (3 * m + 3 < W) od[3 * m + 3] = (uint32_t)(o >> 48);
    }
    od[0] = 0;
    fq_t::add_wide(ev, od, w);
}

// mul_wide is w = a*b (24 words), a, b below 2^384.
ZK_HD void mul_wide(const fq_t& a, const fq_t& b, uint32_t* w) {
    double x[LIMBS], y[LIMBS];
    limbs_of(a, x);
    limbs_of(b, y);
    uint64_t col[COLS];
#pragma unroll
    for (int k = 0; k < COLS; k++) col[k] = column_start(k, 1);
#pragma unroll
    for (int i = 0; i < LIMBS; i++)
#pragma unroll
        for (int j = 0; j < LIMBS; j++) add_product(col, i + j, x[i], y[j]);
    pack_columns(col, w);
}

// sqr_wide is w = a^2 (24 words): the products x_i x_j, i < j, once with
// 2 x_i (exact, below 2^49; the product stays below 2^100), and the squares
// x_i^2: 36 limb products instead of 64.
ZK_HD void sqr_wide(const fq_t& a, uint32_t* w) {
    double x[LIMBS];
    limbs_of(a, x);
    uint64_t col[COLS];
    // Column k holds the pairs i <= j, i + j == k: one for each (i, j) and
    // (j, i) of the full product, plus the square's.
#pragma unroll
    for (int k = 0; k < COLS; k++) {
        const int lo = (pairs_in(k) + 1) / 2, hi = (pairs_in(k - 1) + 1) / 2;
        col[k] = (uint64_t)0 - ((uint64_t)lo * BITS_2_52 + (uint64_t)hi * BITS_2_100);
    }
#pragma unroll
    for (int i = 0; i < LIMBS; i++) {
        const double x2 = x[i] + x[i];
        add_product(col, 2 * i, x[i], x[i]);
#pragma unroll
        for (int j = i + 1; j < LIMBS; j++) add_product(col, i + j, x2, x[j]);
    }
    pack_columns(col, w);
}

// mul_lazy is a*b R^-1 mod p, below 2p, for a, b below 2p (field.cuh's
// mul_lazy, its limb products on the FP64 pipe).
ZK_HD fq_t mul_lazy(const fq_t& a, const fq_t& b) {
    uint32_t w[W];
    mul_wide(a, b, w);
    return fq_t::redc_wide_lazy(w);
}

// sqr_lazy is a^2 R^-1 mod p, below 2p, for a below 2p.
ZK_HD fq_t sqr_lazy(const fq_t& a) {
    uint32_t w[W];
    sqr_wide(a, w);
    return fq_t::redc_wide_lazy(w);
}

// mul_sub_lazy is (a*b - c*d) R^-1 mod p, below 2p, for a, b, c, d below 2p:
// a*b + c*(2p - d), both products summed in one set of columns (so one
// packing and one reduction). The sum is below 8p^2 < pR (8p < R), which
// redc_wide_lazy needs.
ZK_HD fq_t mul_sub_lazy(const fq_t& a, const fq_t& b, const fq_t& c, const fq_t& d) {
    fq_t d2;  // 2p - d, below 2p (d > 0) or 2p (d == 0): below 2^382
    {
        zk_chain c2;
        d2.l[0] = c2.sub_cc(fq_t::kp<2>(0), d.l[0]);
#pragma unroll
        for (int i = 1; i < fq_t::N - 1; i++) d2.l[i] = c2.subc_cc(fq_t::kp<2>(i), d.l[i]);
        d2.l[fq_t::N - 1] = c2.subc(fq_t::kp<2>(fq_t::N - 1), d.l[fq_t::N - 1]);
    }
    double x[LIMBS], y[LIMBS], u[LIMBS], v[LIMBS];
    limbs_of(a, x);
    limbs_of(b, y);
    limbs_of(c, u);
    limbs_of(d2, v);
    uint64_t col[COLS];
#pragma unroll
    for (int k = 0; k < COLS; k++) col[k] = column_start(k, 2);
#pragma unroll
    for (int i = 0; i < LIMBS; i++)
#pragma unroll
        for (int j = 0; j < LIMBS; j++) {
            add_product(col, i + j, x[i], y[j]);
            add_product(col, i + j, u[i], v[j]);
        }
    uint32_t w[W];
    pack_columns(col, w);
    return fq_t::redc_wide_lazy(w);
}

}  // namespace zk_f64
