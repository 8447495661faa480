// field.cuh: prime-field arithmetic in Montgomery form, shared by every
// zkhost CUDA kernel (NTT, MSM): one type, mont_t<P>, and each field's
// parameters P: BLS12-381's scalar field (fr_t, 8 x 32-bit limbs) and base
// field (fq_t, 12 limbs), BN254's (bn254_fr_t, bn254_fq_t, 8 limbs each).
//
// Representation: mont_t<P>::l holds a*R mod p as little-endian 32-bit limbs,
// R = 2^(32*N). That is bit for bit the memory layout of gnark-crypto's
// fr.Element ([4]uint64, R = 2^256) and fp.Element ([6]uint64, R = 2^384 for
// BLS12-381, [4]uint64 for BN254) on a little-endian host, so a device buffer
// is a raw copy of a Go slice.
//
// Every operation keeps values fully reduced (in [0, p)), so == compares
// representations. Every modulus leaves the top bit of the top limb clear
// (p < R/2), which the multiplication relies on (no extra carry word).
//
// Header-only. Arithmetic is __host__ __device__. On the device add, sub and
// mul run as PTX carry chains (zk_chain); the host runs the same chain code
// with an emulated carry flag, so hosttest/field_emu.cpp checks the device
// algorithms against the portable references (add_ref, sub_ref, mul_ref)
// without a GPU. The host operators use the references.
#pragma once

#include <stdint.h>

#ifdef __CUDACC__
#define ZK_HD __host__ __device__ __forceinline__
#else
#define ZK_HD inline
#endif

#ifdef __CUDACC__
// zk_fr_m0 is fr's M0 where ptxas cannot see it (a __constant__ that is not
// const, in each translation unit): the device's fr products read it, see
// fr_params::m0.
static __constant__ uint32_t zk_fr_m0 = 0xffffffffu;
#endif

// fr_params: BLS12-381 scalar field (deliberately parallel to fq_params and
// BN254's below: see why there)
// r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001.
struct fr_params {
    static constexpr int N = 8;
    // M0 = -r^-1 mod 2^32.
    static constexpr uint32_t M0 = 0xffffffffu;
    // m0 is M0 as the device's products take it: from zk_fr_m0 at run time.
    // As the literal 0xffffffff, ptxas turns m = t0*M0 into -t0 and then
    // splits every reduction row's m*p_j into separate low and high
    // multiply-adds instead of fusing them (IMAD.WIDE.U32) as in the a*b
    // rows: more SASS instructions per product on sm_90 (nvcc 11.8), and a
    // slower NTT (BENCHMARKS.md, "The G1 MSM's upload in pieces"). sppark's
    // mont_t.cuh keeps its M0 in __constant__ memory for the same reason.
    ZK_HD static uint32_t m0() {
#ifdef __CUDA_ARCH__
        return zk_fr_m0;
#else
        return M0;
#endif
    }
    ZK_HD static constexpr uint32_t p(int i) {
        constexpr uint32_t v[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                   0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
        return v[i];
    }
    // one = R mod r (Montgomery form of 1).
    ZK_HD static constexpr uint32_t one(int i) {
        constexpr uint32_t v[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                                   0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
        return v[i];
    }
    // r2 = R^2 mod r (to_montgomery multiplies by it).
    ZK_HD static constexpr uint32_t r2(int i) {
        constexpr uint32_t v[8] = {0xf3f29c6d, 0xc999e990, 0x87925c23, 0x2b6cedcb,
                                   0x7254398f, 0x05d31496, 0x9f59ff11, 0x0748d9d9};
        return v[i];
    }
    // The NTT's domains (ntt_core.cuh), as gnark-crypto's fr.Generator and
    // fr/fft build them. TWO_ADICITY: 2^32 is the largest power of two
    // dividing r-1 (fr.Generator's maxOrderRoot). root(i): limb i of its
    // fixed 2^32-th root of unity, canonical (not Montgomery form),
    // 10238227357739495823651030575849232062558860180284477541189508159991286009131;
    // the root of order 2^L is its 2^(32-L)-th power. COSET_GEN: the
    // domains' default shift, fft.GeneratorFullMultiplicativeGroup().
    static constexpr uint32_t TWO_ADICITY = 32;
    ZK_HD static constexpr uint32_t root(int i) {
        constexpr uint32_t v[8] = {0x439f0d2b, 0x3829971f, 0x8c2280b9, 0xb6368350,
                                   0x22c813b4, 0xd09b6819, 0xdfe81f20, 0x16a2a19e};
        return v[i];
    }
    static constexpr uint64_t COSET_GEN = 7;
    // snarkjs_root(i): limb i of the 2^32-th root of unity snarkjs
    // (ffjavascript) builds its domains from, nqr^t for the smallest
    // quadratic non-residue nqr and r-1 = 2^32·t (sdk/circom's
    // RootsOfUnity), canonical: another root than gnark-crypto's,
    // 937917089079007706106976984802249742464848817460758522850752807661925904159.
    // A key imported from a snarkjs .zkey pairs its H points with it.
    ZK_HD static constexpr uint32_t snarkjs_root(int i) {
        constexpr uint32_t v[8] = {0x0b912f1f, 0x1b788f50, 0x70b3e094, 0xc4024ff2,
                                   0xd168d6c0, 0x0fd56dc8, 0x5b416b6f, 0x0212d79e};
        return v[i];
    }
};

// fq_params: BLS12-381 base field (deliberately parallel to fr_params and
// BN254's below: see why there)
// q = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab.
struct fq_params {
    using scalar_field = fr_params;  // the curve's r, its MSMs' scalars
    static constexpr int N = 12;
    // M0 = -q^-1 mod 2^32.
    static constexpr uint32_t M0 = 0xfffcfffdu;
    // m0 is M0 as the device's products take it: fq's compiles the same as a
    // literal or a value (fr_params::m0 says why fr's is not a literal).
    ZK_HD static constexpr uint32_t m0() { return M0; }
    ZK_HD static constexpr uint32_t p(int i) {
        constexpr uint32_t v[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe,
                                    0xf6b0f624, 0x6730d2a0, 0xf38512bf, 0x64774b84,
                                    0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
        return v[i];
    }
    ZK_HD static constexpr uint32_t one(int i) {
        constexpr uint32_t v[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b,
                                    0x53c758ba, 0x5f489857, 0x70525745, 0x77ce5853,
                                    0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
        return v[i];
    }
    // four_p2 is limb i of 4p^2 (24 limbs; mont_t::mul_sub_lazy adds it).
    ZK_HD static constexpr uint32_t four_p2(int i) {
        constexpr uint32_t v[24] = {0x71c638e4, 0x9aa80000, 0xd8e0baac, 0xf3b5ac75, 0x8844f3f5,
                                    0x58b0ce0d, 0xf9c6dd0c, 0x9afe47b4, 0xc2468125, 0xa4ba16a1,
                                    0x186171ec, 0x75a18672, 0x25e3bc04, 0xd4c524cc, 0x5b7729bb,
                                    0x4298b3f4, 0xd27a2f41, 0x9b967924, 0x39c11ad1, 0x8b724394,
                                    0x88bc97a7, 0x2f49e3aa, 0xe30d7f1d, 0x0a90de92};
        return v[i];
    }
    ZK_HD static constexpr uint32_t r2(int i) {
        constexpr uint32_t v[12] = {0x1c341746, 0xf4df1f34, 0x09d104f1, 0x0a76e6a6,
                                    0x4c95b6d5, 0x8de5476c, 0x939d83c0, 0x67eb88a9,
                                    0xb519952d, 0x9a793e85, 0x92cae3aa, 0x11988fe5};
        return v[i];
    }
};

// ---- BN254 (alt_bn128) -----------------------------------------------------
// The fields of BN254, the curve of Ethereum's pairing precompiles and of most
// circom circuits, as parameters of the same mont_t (as sppark's ff/ headers
// give each curve's): both moduli are below 2^254, 8 limbs, so p < R/2 (what
// the product relies on) and 4p < R (the lazy form), but not 8p < R
// (mul_sub_lazy). The layout is gnark-crypto's bn254 fr.Element and
// fp.Element. The host tests check the device algorithms on them
// (hosttest/field_emu.cpp), and curve.cuh's point arithmetic and the MSM's
// pipeline over them (curve_emu.cpp, msm_emu.cpp). msm.cu builds its MSM
// for BN254's G1 and G2 (msm.h's ZK_MSM_BN254_*), ntt.cu its NTT over
// BN254's scalar field (ntt.h's ZK_NTT_BN254), and groth16.cu proves on
// either curve. Deliberately parallel to fr_params and
// fq_params: each field's constants, in the shape mont_t reads them.

// bn254_fr_params: BN254 scalar field
// r = 0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001.
struct bn254_fr_params {
    static constexpr int N = 8;
    // M0 = -r^-1 mod 2^32.
    static constexpr uint32_t M0 = 0xefffffffu;
    ZK_HD static constexpr uint32_t m0() { return M0; }
    ZK_HD static constexpr uint32_t p(int i) {
        constexpr uint32_t v[8] = {0xf0000001, 0x43e1f593, 0x79b97091, 0x2833e848,
                                   0x8181585d, 0xb85045b6, 0xe131a029, 0x30644e72};
        return v[i];
    }
    ZK_HD static constexpr uint32_t one(int i) {
        constexpr uint32_t v[8] = {0x4ffffffb, 0xac96341c, 0x9f60cd29, 0x36fc7695,
                                   0x7879462e, 0x666ea36f, 0x9a07df2f, 0x0e0a77c1};
        return v[i];
    }
    ZK_HD static constexpr uint32_t r2(int i) {
        constexpr uint32_t v[8] = {0xae216da7, 0x1bb8e645, 0xe35c59e3, 0x53fe3ab1,
                                   0x53bb8085, 0x8c49833d, 0x7f4e44a5, 0x0216d0b1};
        return v[i];
    }
    // The NTT's domains, as fr_params's (gnark-crypto's bn254 fr.Generator
    // and fr/fft): 2^28 is the largest power of two dividing r-1; the fixed
    // 2^28-th root of unity is
    // 19103219067921713944291392827692070036145651957329286315305642004821462161904;
    // the default shift is 5.
    static constexpr uint32_t TWO_ADICITY = 28;
    ZK_HD static constexpr uint32_t root(int i) {
        constexpr uint32_t v[8] = {0x725b19f0, 0x9bd61b6e, 0x41112ed4, 0x402d111e,
                                   0x8ef62abc, 0x00e0a7eb, 0xa58a7e85, 0x2a3c09f0};
        return v[i];
    }
    static constexpr uint64_t COSET_GEN = 5;
    // snarkjs_root: as fr_params's; for BN254 it is gnark-crypto's root.
    ZK_HD static constexpr uint32_t snarkjs_root(int i) { return root(i); }
};

// bn254_fq_params: BN254 base field
// q = 0x30644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd47.
struct bn254_fq_params {
    using scalar_field = bn254_fr_params;
    static constexpr int N = 8;
    // M0 = -q^-1 mod 2^32.
    static constexpr uint32_t M0 = 0xe4866389u;
    ZK_HD static constexpr uint32_t m0() { return M0; }
    ZK_HD static constexpr uint32_t p(int i) {
        constexpr uint32_t v[8] = {0xd87cfd47, 0x3c208c16, 0x6871ca8d, 0x97816a91,
                                   0x8181585d, 0xb85045b6, 0xe131a029, 0x30644e72};
        return v[i];
    }
    ZK_HD static constexpr uint32_t one(int i) {
        constexpr uint32_t v[8] = {0xc58f0d9d, 0xd35d438d, 0xf5c70b3d, 0x0a78eb28,
                                   0x7879462c, 0x666ea36f, 0x9a07df2f, 0x0e0a77c1};
        return v[i];
    }
    ZK_HD static constexpr uint32_t r2(int i) {
        constexpr uint32_t v[8] = {0x538afa89, 0xf32cfc5b, 0xd44501fb, 0xb5e71911,
                                   0x0a417ff6, 0x47ab1eff, 0xcab8351f, 0x06d89f71};
        return v[i];
    }
    // four_p2 is limb i of 4p^2 (16 limbs; mont_t::mul_sub_lazy adds it).
    ZK_HD static constexpr uint32_t four_p2(int i) {
        constexpr uint32_t v[16] = {0x9d75a6c4, 0xed516288, 0x27ab0404, 0x98081cb4,
                                    0xb65b2b72, 0x29406271, 0xe8490b21, 0x11a27a55,
                                    0xd31ace34, 0x9bb7e970, 0x58dd5818, 0xc02e1544,
                                    0x0d234872, 0x6669bdf0, 0xd8f2fe71, 0x249712e1};
        return v[i];
    }
};

// zk_chain is one carry chain of 32-bit multiply-add instructions. On the
// device each method is one PTX instruction and the carry lives in the
// hardware condition code (asm volatile keeps the chain's order); on the host
// the same methods emulate it with cf, so the device algorithm below is
// tested on the CPU against the portable reference.
struct zk_chain {
    uint32_t cf = 0;
#ifdef __CUDA_ARCH__
#define ZK_ASM3(op)                                                         \
    uint32_t r;                                                             \
    asm volatile(op " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); \
    return r;
#define ZK_ASM2(op)                                               \
    uint32_t r;                                                   \
    asm volatile(op " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));   \
    return r;
    __device__ __forceinline__ uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { ZK_ASM3("mad.lo.cc.u32") }
    __device__ __forceinline__ uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { ZK_ASM3("madc.lo.cc.u32") }
    __device__ __forceinline__ uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { ZK_ASM3("madc.hi.cc.u32") }
    __device__ __forceinline__ uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) { ZK_ASM3("madc.hi.u32") }
    __device__ __forceinline__ uint32_t add_cc(uint32_t a, uint32_t b) { ZK_ASM2("add.cc.u32") }
    __device__ __forceinline__ uint32_t addc_cc(uint32_t a, uint32_t b) { ZK_ASM2("addc.cc.u32") }
    __device__ __forceinline__ uint32_t addc(uint32_t a, uint32_t b) { ZK_ASM2("addc.u32") }
    __device__ __forceinline__ uint32_t sub_cc(uint32_t a, uint32_t b) { ZK_ASM2("sub.cc.u32") }
    __device__ __forceinline__ uint32_t subc_cc(uint32_t a, uint32_t b) { ZK_ASM2("subc.cc.u32") }
    __device__ __forceinline__ uint32_t subc(uint32_t a, uint32_t b) { ZK_ASM2("subc.u32") }
#undef ZK_ASM3
#undef ZK_ASM2
#else
    // Deliberately parallel to each other and to the PTX wrappers above: one host
    // emulation per carry-chain instruction, so both builds run the same field code.
    uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
        uint64_t s = (uint64_t)(uint32_t)((uint64_t)a * b) + c + cf;
        cf = (uint32_t)(s >> 32);
        return (uint32_t)s;
    }
    uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
        cf = 0;
        return madc_lo_cc(a, b, c);
    }
    uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
        uint64_t s = (((uint64_t)a * b) >> 32) + c + cf;
        cf = (uint32_t)(s >> 32);
        return (uint32_t)s;
    }
    uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) {
        uint32_t r = madc_hi_cc(a, b, c);
        cf = 0;
        return r;
    }
    uint32_t addc_cc(uint32_t a, uint32_t b) {
        uint64_t s = (uint64_t)a + b + cf;
        cf = (uint32_t)(s >> 32);
        return (uint32_t)s;
    }
    uint32_t add_cc(uint32_t a, uint32_t b) {
        cf = 0;
        return addc_cc(a, b);
    }
    uint32_t addc(uint32_t a, uint32_t b) {
        uint32_t r = addc_cc(a, b);
        cf = 0;
        return r;
    }
    // Subtraction: cf is the borrow (PTX subc computes a - (b + CF)).
    // Deliberately parallel to the additions above: one emulated PTX
    // instruction each, named as the device code names them.
    uint32_t subc_cc(uint32_t a, uint32_t b) {
        uint64_t d = (uint64_t)a - b - cf;
        cf = (uint32_t)(d >> 63) & 1;
        return (uint32_t)d;
    }
    uint32_t sub_cc(uint32_t a, uint32_t b) {
        cf = 0;
        return subc_cc(a, b);
    }
    uint32_t subc(uint32_t a, uint32_t b) {
        uint32_t r = subc_cc(a, b);
        cf = 0;
        return r;
    }
#endif
};

// mont_t is an element of the prime field described by P, in Montgomery form.
template <class P>
struct mont_t {
    using params = P;
    static constexpr int N = P::N;
    static_assert(P::p(N - 1) < 0x80000000u, "the products need p < R/2");
    // The bounds the lazy forms need, from p's top limb: 4p < R (a lazy
    // product of values below 2p stays below 2p; mul_sub_lazy) and 8p < R
    // (mul_sub_lazy without its last subtraction).
    static constexpr bool four_p_below_R = P::p(N - 1) < (1u << 30);
    static constexpr bool eight_p_below_R = P::p(N - 1) < (1u << 29);
    uint32_t l[N];

    // ---- constants -------------------------------------------------------

    ZK_HD static mont_t zero() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = 0;
        return r;
    }
    // one returns the Montgomery form of 1 (R mod p).
    ZK_HD static mont_t one() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = P::one(i);
        return r;
    }
    // modulus returns p itself (not a field element; for tests and
    // reductions).
    ZK_HD static mont_t modulus() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = P::p(i);
        return r;
    }

    // ---- predicates ------------------------------------------------------

    ZK_HD bool is_zero() const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= l[i];
        return acc == 0;
    }
    ZK_HD bool is_one() const { return *this == one(); }
    ZK_HD friend bool operator==(const mont_t& a, const mont_t& b) {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= a.l[i] ^ b.l[i];
        return acc == 0;
    }
    ZK_HD friend bool operator!=(const mont_t& a, const mont_t& b) { return !(a == b); }

    // ---- raw limb helpers (portable) ---------------------------------------

    // reduce_once subtracts p from x when x >= p (x < 2p, N limbs).
    ZK_HD static void reduce_once(uint32_t* x) {
        uint32_t t[N];
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)x[i] - P::p(i) - borrow;
            t[i] = (uint32_t)d;
            borrow = (d >> 63) & 1;
        }
        // borrow == 0 means x >= p: take t.
        uint32_t mask = (uint32_t)0 - (uint32_t)(1 - borrow);
#pragma unroll
        for (int i = 0; i < N; i++) x[i] = (t[i] & mask) | (x[i] & ~mask);
    }

    // ---- addition --------------------------------------------------------
    //
    // add_chain / sub_chain / reduce_chain are the carry-chain versions (PTX
    // on the device, emulated on the host, where tests compare them with
    // add_ref / sub_ref); the operators use the chains on the device and the
    // plain C++ versions on the host.

    // add_ref is the portable a + b mod p.
    ZK_HD static mont_t add_ref(const mont_t& a, const mont_t& b) {
        mont_t r;
        uint64_t carry = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t s = (uint64_t)a.l[i] + b.l[i] + carry;
            r.l[i] = (uint32_t)s;
            carry = s >> 32;
        }
        // p < R/2 so a+b < 2p < R: no carry out of the top limb.
        reduce_once(r.l);
        return r;
    }

    // sub_ref is the portable a - b mod p.
    ZK_HD static mont_t sub_ref(const mont_t& a, const mont_t& b) {
        mont_t r;
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)a.l[i] - b.l[i] - borrow;
            r.l[i] = (uint32_t)d;
            borrow = (d >> 63) & 1;
        }
        // On borrow add p back.
        uint32_t mask = (uint32_t)0 - (uint32_t)borrow;
        uint64_t carry = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t s = (uint64_t)r.l[i] + (P::p(i) & mask) + carry;
            r.l[i] = (uint32_t)s;
            carry = s >> 32;
        }
        return r;
    }

    // kp is limb i of K*p, K = 1 or 2 (p < R/2: 2p has no carry out of the
    // top limb). K = 2 serves the lazy form, values kept below 2p.
    template <int K = 1>
    ZK_HD static constexpr uint32_t kp(int i) {
        return K == 1 ? P::p(i) : (P::p(i) << 1) | (i > 0 ? P::p(i - 1) >> 31 : 0u);
    }

    // reduce_chain: x -= K*p if x >= K*p (x < 2K*p).
    template <int K = 1>
    ZK_HD static void reduce_chain(uint32_t* x) {
        uint32_t t[N];
        zk_chain c;
        t[0] = c.sub_cc(x[0], kp<K>(0));
#pragma unroll
        for (int i = 1; i < N; i++) t[i] = c.subc_cc(x[i], kp<K>(i));
        // all ones when the subtraction borrowed, i.e. x < K*p: keep x.
        uint32_t borrow = c.subc(0, 0);
#pragma unroll
        for (int i = 0; i < N; i++) x[i] = borrow ? x[i] : t[i];
    }

    // add_chain is a + b reduced below K*p (a, b below K*p; K = 1: a + b mod
    // p) with carry chains.
    template <int K = 1>
    ZK_HD static mont_t add_chain(const mont_t& a, const mont_t& b) {
        mont_t r;
        zk_chain c;
        r.l[0] = c.add_cc(a.l[0], b.l[0]);
#pragma unroll
        for (int i = 1; i < N - 1; i++) r.l[i] = c.addc_cc(a.l[i], b.l[i]);
        r.l[N - 1] = c.addc(a.l[N - 1], b.l[N - 1]);
        reduce_chain<K>(r.l);
        return r;
    }

    // sub_chain is a - b with K*p added back on borrow (a, b below K*p; K = 1:
    // a - b mod p) with carry chains.
    template <int K = 1>
    ZK_HD static mont_t sub_chain(const mont_t& a, const mont_t& b) {
        mont_t r;
        zk_chain c;
        r.l[0] = c.sub_cc(a.l[0], b.l[0]);
#pragma unroll
        for (int i = 1; i < N; i++) r.l[i] = c.subc_cc(a.l[i], b.l[i]);
        uint32_t mask = c.subc(0, 0);  // all ones on borrow: add K*p back
        zk_chain c2;
        r.l[0] = c2.add_cc(r.l[0], kp<K>(0) & mask);
#pragma unroll
        for (int i = 1; i < N - 1; i++) r.l[i] = c2.addc_cc(r.l[i], kp<K>(i) & mask);
        r.l[N - 1] = c2.addc(r.l[N - 1], kp<K>(N - 1) & mask);
        return r;
    }

    ZK_HD friend mont_t operator+(const mont_t& a, const mont_t& b) {
#ifdef __CUDA_ARCH__
        return add_chain(a, b);
#else
        return add_ref(a, b);
#endif
    }

    ZK_HD friend mont_t operator-(const mont_t& a, const mont_t& b) {
#ifdef __CUDA_ARCH__
        return sub_chain(a, b);
#else
        return sub_ref(a, b);
#endif
    }

    ZK_HD mont_t operator-() const { return zero() - *this; }
    ZK_HD mont_t dbl() const { return *this + *this; }
    ZK_HD mont_t& operator+=(const mont_t& b) { return *this = *this + b; }
    ZK_HD mont_t& operator-=(const mont_t& b) { return *this = *this - b; }
    ZK_HD mont_t& operator*=(const mont_t& b) { return *this = *this * b; }

    // ---- multiplication ----------------------------------------------------

    // mul_ref is the portable CIOS Montgomery product a*b*R^-1 mod p; the
    // host path and the reference for the device path.
    ZK_HD static mont_t mul_ref(const mont_t& a, const mont_t& b) {
        uint32_t t[N + 2];
#pragma unroll
        for (int i = 0; i < N + 2; i++) t[i] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t c = 0;
#pragma unroll
            for (int j = 0; j < N; j++) {
                uint64_t s = (uint64_t)a.l[j] * b.l[i] + t[j] + c;
                t[j] = (uint32_t)s;
                c = s >> 32;
            }
            uint64_t s = (uint64_t)t[N] + c;
            t[N] = (uint32_t)s;
            t[N + 1] = (uint32_t)(s >> 32);
            uint32_t m = t[0] * P::M0;
            s = (uint64_t)m * P::p(0) + t[0];
            c = s >> 32;
#pragma unroll
            for (int j = 1; j < N; j++) {
                s = (uint64_t)m * P::p(j) + t[j] + c;
                t[j - 1] = (uint32_t)s;
                c = s >> 32;
            }
            s = (uint64_t)t[N] + c;
            t[N - 1] = (uint32_t)s;
            t[N] = t[N + 1] + (uint32_t)(s >> 32);
        }
        // t < 2p < R (p < R/2), so t[N] == 0 here.
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.l[i] = t[i];
        reduce_once(r.l);
        return r;
    }

    ZK_HD friend mont_t operator*(const mont_t& a, const mont_t& b) {
#ifdef __CUDA_ARCH__
        return mul_eo(a, b, P::m0());
#else
        return mul_ref(a, b);
#endif
    }

    ZK_HD mont_t sqr() const { return *this * *this; }

    // from_montgomery returns the canonical integer a (limbs) of a*R.
    ZK_HD mont_t from_montgomery() const {
        mont_t one_raw = zero();
        one_raw.l[0] = 1;
        return *this * one_raw;
    }
    // to_montgomery treats the limbs as a canonical integer a < p and returns
    // a*R mod p.
    ZK_HD mont_t to_montgomery() const {
        mont_t r2;
#pragma unroll
        for (int i = 0; i < N; i++) r2.l[i] = P::r2(i);
        return *this * r2;
    }

    // pow returns this^e.
    ZK_HD mont_t pow(uint64_t e) const {
        mont_t r = one();
        mont_t b = *this;
#pragma unroll 1
        while (e) {
            if (e & 1) r = r * b;
            b = b.sqr();
            e >>= 1;
        }
        return r;
    }

    // inverse returns this^(p-2) = this^-1 (Fermat); zero maps to zero.
    ZK_HD mont_t inverse() const {
        // exponent p - 2, with the borrow carried (fr's low limb is 1).
        uint32_t ex[N];
        uint64_t borrow = 2;
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)P::p(i) - borrow;
            ex[i] = (uint32_t)d;
            borrow = (d >> 63) & 1;
        }
        mont_t r = one();
        // Not unrolled: ~N*64 inlined products would bloat every caller.
#pragma unroll 1
        for (int i = N - 1; i >= 0; i--) {
            uint32_t e = ex[i];
#pragma unroll 1
            for (int bit = 31; bit >= 0; bit--) {
                r = r.sqr();
                if ((e >> bit) & 1) r = r * *this;
            }
        }
        return r;
    }

    // ---- even/odd Montgomery product (the device path) ---------------------
    //
    // The running sum T is kept as two arrays, T = even + W*odd (W = 2^32):
    // even collects the products of even-indexed limbs of a, odd those of
    // odd-indexed limbs, so each 32x32 product's low and high halves land in
    // adjacent limbs of one array and a whole row is a single madc carry
    // chain (the layout sppark and ICICLE use). After each reduction step the
    // two arrays swap roles, which is the division by W.

    // mul_row: acc = a[0,2,4..] * bi (first row, no addend).
    ZK_HD static void mul_row(uint32_t* acc, const uint32_t* a, uint32_t bi) {
        zk_chain c;
#pragma unroll
        for (int j = 0; j < N; j += 2) {
            acc[j] = c.mad_lo_cc(a[j], bi, 0);
            acc[j + 1] = c.madc_hi(a[j], bi, 0);
        }
    }
    // cmad_row: acc += a[0,2,4..] * bi; the carry out is left in c.
    ZK_HD static void cmad_row(zk_chain& c, uint32_t* acc, const uint32_t* a, uint32_t bi) {
        acc[0] = c.mad_lo_cc(a[0], bi, acc[0]);
        acc[1] = c.madc_hi_cc(a[0], bi, acc[1]);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            acc[j] = c.madc_lo_cc(a[j], bi, acc[j]);
            acc[j + 1] = c.madc_hi_cc(a[j], bi, acc[j + 1]);
        }
    }
    // madc_row_rshift: odd = (odd >> 2 limbs) + a[1,3,5..] * bi + carry-in.
    ZK_HD static void madc_row_rshift(zk_chain& c, uint32_t* odd, const uint32_t* a, uint32_t bi) {
#pragma unroll
        for (int j = 0; j < N - 2; j += 2) {
            odd[j] = c.madc_lo_cc(a[j + 1], bi, odd[j + 2]);
            odd[j + 1] = c.madc_hi_cc(a[j + 1], bi, odd[j + 3]);
        }
        odd[N - 2] = c.madc_lo_cc(a[N - 1], bi, 0);
        odd[N - 1] = c.madc_hi(a[N - 1], bi, 0);
    }
    // mad_row_redc: T += a*bi, then T += m*p with m making T divisible by W
    // (m = T*m0 mod W, m0 == P::M0).
    ZK_HD static void mad_row_redc(uint32_t* even, uint32_t* odd, const uint32_t* a, uint32_t bi,
                                   bool first, uint32_t m0) {
        uint32_t pe[N], po[N];
#pragma unroll
        for (int j = 0; j < N; j += 2) {
            pe[j] = P::p(j);
            po[j] = P::p(j + 1);
        }
        uint32_t ao[N];
#pragma unroll
        for (int j = 0; j < N; j += 2) ao[j] = a[j + 1];
        if (first) {
            mul_row(odd, ao, bi);
            mul_row(even, a, bi);
        } else {
            zk_chain c;
            even[0] = c.add_cc(even[0], odd[1]);
            madc_row_rshift(c, odd, a, bi);
            zk_chain c2;
            cmad_row(c2, even, a, bi);
            odd[N - 1] = c2.addc(odd[N - 1], 0);
        }
        uint32_t mi = even[0] * m0;
        zk_chain c3;
        cmad_row(c3, odd, po, mi);
        zk_chain c4;
        cmad_row(c4, even, pe, mi);
        odd[N - 1] = c4.addc(odd[N - 1], 0);
    }

    // mul_eo is the even/odd Montgomery product; the device's operator*
    // (with m0 = P::m0()). m0 must equal P::M0: it is a parameter only so
    // that the caller decides whether ptxas sees it as a constant.
    ZK_HD static mont_t mul_eo(const mont_t& a, const mont_t& b, uint32_t m0 = P::M0) {
        mont_t r = mul_lazy(a, b, m0);
        reduce_chain(r.l);
        return r;
    }

    // mul_lazy is mul_eo without its final subtraction: below 2p for inputs
    // below 2p when 4p < R (the lazy form of Fq on the device).
    ZK_HD static mont_t mul_lazy(const mont_t& a, const mont_t& b, uint32_t m0 = P::M0) {
        mont_t even, odd;
#pragma unroll
        for (int i = 0; i < N; i += 2) {
            mad_row_redc(even.l, odd.l, a.l, b.l[i], i == 0, m0);
            mad_row_redc(odd.l, even.l, a.l, b.l[i + 1], false, m0);
        }
        // T = odd + W*even with odd[0] == 0: result = even + odd/W.
        merge_eo(even.l, odd.l);
        return even;
    }

    // merge_eo: even += odd/W, the last step of the even/odd rows (odd[0]
    // is 0 after them).
    ZK_HD static void merge_eo(uint32_t* even, const uint32_t* odd) {
        zk_chain c;
        even[0] = c.add_cc(even[0], odd[1]);
#pragma unroll
        for (int i = 1; i < N - 1; i++) even[i] = c.addc_cc(even[i], odd[i + 1]);
        even[N - 1] = c.addc(even[N - 1], 0);
    }

    // ---- dedicated squaring (the device's Fq squaring) ----------------------
    //
    // a^2 as a 2N-limb integer, then one Montgomery reduction: the products
    // a_i*a_j for i < j are computed once and doubled, the squares a_i^2
    // added, so N(N+1)/2 products instead of N^2 (78 instead of 144 for Fq)
    // before the N^2 of the reduction. The structure (off-diagonal rows,
    // double, diagonal, reduce the low half and add the high half) follows
    // sppark's mont_t squaring; the rows are written here over this file's
    // chains, so the host emulation checks them against mul_ref.

    // wide_row adds x * b_j for j = j0, j0 + 2, ... < N into acc (2N limbs)
    // at limbs base + j (consecutive: one chain), the chain's carry into the
    // limb after (none past the top: a wide product has no carry out).
    ZK_HD static void wide_row(uint32_t x, const uint32_t* b, int j0, int base, uint32_t* acc) {
        zk_chain c;
        int pos = base + j0;
#pragma unroll
        for (int j = j0; j < N; j += 2, pos += 2) {
            acc[pos] = j == j0 ? c.mad_lo_cc(x, b[j], acc[pos]) : c.madc_lo_cc(x, b[j], acc[pos]);
            acc[pos + 1] = c.madc_hi_cc(x, b[j], acc[pos + 1]);
        }
        if (pos < 2 * N) acc[pos] = c.addc(acc[pos], 0);
    }

    // add_wide: w = ev + od (2N limbs, no carry out).
    ZK_HD static void add_wide(const uint32_t* ev, const uint32_t* od, uint32_t* w) {
        zk_chain c;
        w[0] = c.add_cc(ev[0], od[0]);
#pragma unroll
        for (int k = 1; k < 2 * N - 1; k++) w[k] = c.addc_cc(ev[k], od[k]);
        w[2 * N - 1] = c.addc(ev[2 * N - 1], od[2 * N - 1]);
    }

    // mul_wide: w = a*b (2N limbs). As in sqr_wide, a product whose low half
    // lands at an even limb goes to ev, at an odd limb to od: each row's
    // products of one parity sit in consecutive limbs of one array, and the
    // rows' chains end no lower than the ones before.
    ZK_HD static void mul_wide(const uint32_t* a, const uint32_t* b, uint32_t* w) {
        uint32_t ev[2 * N], od[2 * N];
#pragma unroll
        for (int k = 0; k < 2 * N; k++) ev[k] = od[k] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            wide_row(a[i], b, 0, i, i % 2 == 0 ? ev : od);
            wide_row(a[i], b, 1, i, i % 2 == 0 ? od : ev);
        }
        add_wide(ev, od, w);
    }

    // sqr_wide: w = a^2 (2N limbs). A product a_i*a_j (i < j) whose low half
    // lands at an odd limb goes to od, at an even limb to ev: each row's
    // products of one parity then sit in consecutive limbs, one carry chain
    // each; a chain's carry goes to the limb after it, which earlier rows
    // left holding at most their carries.
    ZK_HD static void sqr_wide(const uint32_t* a, uint32_t* w) {
        uint32_t ev[2 * N], od[2 * N];
#pragma unroll
        for (int k = 0; k < 2 * N; k++) ev[k] = od[k] = 0;
#pragma unroll
        for (int i = 0; i < N - 1; i++) {
            wide_row(a[i], a, i + 1, i, od);
            if (i + 2 < N) wide_row(a[i], a, i + 2, i, ev);
        }
        // w = 2*(ev + od) + sum a_i^2 W^(2i); a^2 < 2^(64N), no carry out.
        add_wide(ev, od, w);
        {
            zk_chain c;
            w[0] = c.add_cc(w[0], w[0]);
#pragma unroll
            for (int k = 1; k < 2 * N - 1; k++) w[k] = c.addc_cc(w[k], w[k]);
            w[2 * N - 1] = c.addc(w[2 * N - 1], w[2 * N - 1]);
        }
        {
            zk_chain c;
            w[0] = c.mad_lo_cc(a[0], a[0], w[0]);
            w[1] = c.madc_hi_cc(a[0], a[0], w[1]);
#pragma unroll
            for (int i = 1; i < N - 1; i++) {
                w[2 * i] = c.madc_lo_cc(a[i], a[i], w[2 * i]);
                w[2 * i + 1] = c.madc_hi_cc(a[i], a[i], w[2 * i + 1]);
            }
            w[2 * N - 2] = c.madc_lo_cc(a[N - 1], a[N - 1], w[2 * N - 2]);
            w[2 * N - 1] = c.madc_hi(a[N - 1], a[N - 1], w[2 * N - 1]);
        }
    }

    // redc_row is one row of the Montgomery reduction of even (+ W*odd, the
    // arrays' roles as in mad_row_redc, with no product row): m makes the sum
    // divisible by W, m*p is added, and the next row's roles swap.
    ZK_HD static void redc_row(uint32_t* even, uint32_t* odd, bool first) {
        uint32_t pf[N], po[N];
#pragma unroll
        for (int j = 0; j < N; j++) pf[j] = P::p(j);
#pragma unroll
        for (int j = 0; j < N; j += 2) po[j] = P::p(j + 1);
        if (first) {
            uint32_t mi = even[0] * P::M0;
            mul_row(odd, po, mi);
            zk_chain c;
            cmad_row(c, even, pf, mi);
            odd[N - 1] = c.addc(odd[N - 1], 0);
        } else {
            zk_chain c;
            even[0] = c.add_cc(even[0], odd[1]);
            uint32_t mi = even[0] * P::M0;
            madc_row_rshift(c, odd, pf, mi);
            zk_chain c2;
            cmad_row(c2, even, pf, mi);
            odd[N - 1] = c2.addc(odd[N - 1], 0);
        }
    }

    // sqr_lazy is a^2 R^-1 mod p in [0, 2p) for a < 2p when 4p < R (the
    // reduction of the low half is at most p and the high half below p: below
    // p/2 where 8p < R).
    ZK_HD static mont_t sqr_lazy(const mont_t& a) {
        uint32_t w[2 * N];
        sqr_wide(a.l, w);
        return redc_wide_lazy(w);
    }

    // redc_wide_lazy is w R^-1 mod p for a 2N-limb w: the reduction of the
    // low half (at most p) plus the high half; below 2p when w < p*R.
    ZK_HD static mont_t redc_wide_lazy(const uint32_t* w) {
        mont_t even, odd;
#pragma unroll
        for (int i = 0; i < N; i++) even.l[i] = w[i];
#pragma unroll
        for (int i = 0; i < N; i += 2) {
            redc_row(even.l, odd.l, i == 0);
            redc_row(odd.l, even.l, false);
        }
        // REDC(low half) = even + odd/W (odd[0] == 0), plus the high half.
        merge_eo(even.l, odd.l);
        zk_chain c2;
        even.l[0] = c2.add_cc(even.l[0], w[N]);
#pragma unroll
        for (int i = 1; i < N - 1; i++) even.l[i] = c2.addc_cc(even.l[i], w[N + i]);
        even.l[N - 1] = c2.addc(even.l[N - 1], w[2 * N - 1]);
        return even;
    }

    // mul_sub_lazy is (a*b - c*d) R^-1 mod p, below 2p, for a, b, c, d below
    // 2p: both products wide, 4p^2 added so the difference stays positive
    // (w below 8p^2), one reduction instead of two. REDC(w) is below
    // 8p^2/R + p: below 2p where 8p < R (BLS12-381's Fq); where only 4p < R
    // (BN254's Fq, p/R = 0.19) below 2.52p, and one conditional subtraction of
    // p brings it below 2p. After Matter Labs' ZPrize 2022 MSM (ec.cuh: Y3
    // from two wide products and one reduction).
    ZK_HD static mont_t mul_sub_lazy(const mont_t& a, const mont_t& b, const mont_t& c,
                                     const mont_t& d) {
        static_assert(four_p_below_R, "mul_sub_lazy needs 4p < R");
        uint32_t w[2 * N], v[2 * N];
        mul_wide(a.l, b.l, w);
        mul_wide(c.l, d.l, v);
        {
            zk_chain k;
            w[0] = k.add_cc(w[0], P::four_p2(0));
#pragma unroll
            for (int i = 1; i < 2 * N - 1; i++) w[i] = k.addc_cc(w[i], P::four_p2(i));
            w[2 * N - 1] = k.addc(w[2 * N - 1], P::four_p2(2 * N - 1));
        }
        {
            zk_chain k;
            w[0] = k.sub_cc(w[0], v[0]);
#pragma unroll
            for (int i = 1; i < 2 * N - 1; i++) w[i] = k.subc_cc(w[i], v[i]);
            w[2 * N - 1] = k.subc(w[2 * N - 1], v[2 * N - 1]);
        }
        mont_t r = redc_wide_lazy(w);
        // r < 2.52p here, past reduce_chain's x < 2p: one subtraction leaves
        // r < 1.52p, below 2p, all the lazy form needs.
        if constexpr (!eight_p_below_R) reduce_chain<1>(r.l);
        return r;
    }

    // sqr_eo is the fully reduced square (sqr_lazy is below 2p for a < p:
    // 1.5p for BLS12-381's Fq, 1.25p for BN254's).
    ZK_HD static mont_t sqr_eo(const mont_t& a) {
        mont_t r = sqr_lazy(a);
        reduce_chain(r.l);
        return r;
    }

};

// fr_t is an element of the BLS12-381 scalar field (gnark-crypto fr.Element).
using fr_t = mont_t<fr_params>;
// fq_t is an element of the BLS12-381 base field (gnark-crypto fp.Element).
using fq_t = mont_t<fq_params>;
// bn254_fr_t and bn254_fq_t are BN254's (gnark-crypto bn254 fr.Element and
// fp.Element).
using bn254_fr_t = mont_t<bn254_fr_params>;
using bn254_fq_t = mont_t<bn254_fq_params>;
