// curves.h: the curves the host tests check the kernels' arithmetic on,
// BLS12-381 and BN254, as values from gnark-crypto: generators, b of each
// group, and [k]G for a few k (bls12-381 and bn254 Generators and
// ScalarMultiplication). gen and curve_b give them as field values for a
// group's field (mont_t<P> for G1, ext2_t<P> for G2). Also what the host
// tests share: CHECK, to_affine and on_curve.
#pragma once

#include <stdio.h>

#include "../msm_core.cuh"

// A point in canonical coordinates: G1's two, G2's four (x.A0, x.A1, y.A0,
// y.A1).
template <int N, int K>
struct canon_point {
    uint32_t c[K][N];
};

// A curve as the test needs it: the generators, b of each group and
// gnark-crypto's [k]G for a few k (its order r is its base field's
// scalar_field). Values from gnark-crypto (bls12-381 and bn254 Generators,
// ScalarMultiplication).
template <class FqP>
struct curve_desc {
    using FrP = typename FqP::scalar_field;
    static constexpr int N = FqP::N;
    static constexpr int NR = FrP::N;
    const char* name;
    canon_point<N, 2> g1;
    canon_point<N, 4> g2;
    canon_point<N, 1> b1;
    canon_point<N, 2> b2;
    struct vector {
        uint32_t k[NR];
        canon_point<N, 2> g1;
        canon_point<N, 4> g2;
    };
    vector vectors[4];
    int nvectors;
};

template <class P>
static mont_t<P> fq_of(const uint32_t* v) {
    mont_t<P> x;
    for (int i = 0; i < P::N; i++) x.l[i] = v[i];
    return x.to_montgomery();
}

// to_field gives a canonical G1 coordinate set as Fq values, G2's as Fq2.
template <class P, int N>
static void to_field(const canon_point<N, 2>& c, affine_t<mont_t<P>>* a) {
    a->x = fq_of<P>(c.c[0]);
    a->y = fq_of<P>(c.c[1]);
}
template <class P, int N>
static void to_field(const canon_point<N, 4>& c, affine_t<ext2_t<P>>* a) {
    a->x.c0 = fq_of<P>(c.c[0]);
    a->x.c1 = fq_of<P>(c.c[1]);
    a->y.c0 = fq_of<P>(c.c[2]);
    a->y.c1 = fq_of<P>(c.c[3]);
}

// Deliberately parallel to bls12_381 below: see why there.
// BN254: generators (1, 2) and gnark-crypto's G2 generator; b = 3 and the
// twist's b' = 3/(9+u); [k]G for k = 2, 3, 1000003 and a 253-bit k.
static const curve_desc<bn254_fq_params> bn254 = {
    "BN254",
    {{{0x00000001, 0, 0, 0, 0, 0, 0, 0}, {0x00000002, 0, 0, 0, 0, 0, 0, 0}}},
    {{{0xd992f6ed, 0x46debd5c, 0xf75edadd, 0x674322d4, 0x5e5c4479, 0x426a0066, 0x121f1e76, 0x1800deef},
      {0xaef312c2, 0x97e485b7, 0x35a9e712, 0xf1aa4933, 0x31fb5d25, 0x7260bfb7, 0x920d483a, 0x198e9393},
      {0x66fa7daa, 0x4ce6cc01, 0x0c43d37b, 0xe3d1e769, 0x8dcb408f, 0x4aab7180, 0xdb8c6deb, 0x12c85ea5},
      {0xd122975b, 0x55acdadc, 0x70b38ef3, 0xbc4b3133, 0x690c3395, 0xec9e99ad, 0x585ff075, 0x090689d0}}},
    {{{0x00000003, 0, 0, 0, 0, 0, 0, 0}}},
    {{{0x24a138e5, 0x3267e6dc, 0x59dbefa3, 0xb5b4c5e5, 0x1be06ac3, 0x81be1899, 0xceb8aaae, 0x2b149d40},
      {0x85c315d2, 0xe4a2bd06, 0xe52d1852, 0xa74fa084, 0xeed8fdf4, 0xcd2cafad, 0x3af0fed4, 0x009713b0}}},
    {
        {{2, 0, 0, 0, 0, 0, 0, 0},
         {{{0x6d87cfd3, 0xd3c208c1, 0x16871ca8, 0xd97816a9, 0x68181585, 0x9b85045b, 0x2e131a02, 0x030644e7},
           {0x5a18a2c4, 0xff3ebf7a, 0xe3538fc7, 0x68a6a449, 0xb2ae9c0a, 0xe7845f96, 0x0e0a7c92, 0x15ed738c}}},
         {{{0x62b4b3b9, 0x49f81309, 0xa9a62aee, 0x9d5cd3cf, 0x7c3e6f14, 0xc36c5927, 0xfd11d3e8, 0x27dc7234},
           {0x3928ad79, 0x9957ed8c, 0xc6d83584, 0x6db86431, 0x3a733370, 0xb60121b8, 0xb4f19b37, 0x203e205d},
           {0x122b5d2e, 0x6e2a6dad, 0xe6b1c046, 0x44a59b4f, 0x42c48309, 0xa0bc3727, 0x977e5f92, 0x04bb53b8},
           {0x509de152, 0x98e185f0, 0x4edf48d4, 0x3505566b, 0x3931579d, 0x722b8c15, 0xb7827463, 0x195e8aa5}}}},
        {{3, 0, 0, 0, 0, 0, 0, 0},
         {{{0x1915abf0, 0xf2d35596, 0x15b8e679, 0x9315d847, 0xb1b6bd15, 0xf40232bc, 0xc56bea3f, 0x0769bf9a},
           {0xd9fe2261, 0xcdf1ff3d, 0x0b9c5b57, 0x319e63b4, 0x8d086475, 0x554fdb7c, 0xe0489429, 0x2ab799be}}},
         {{{0x94fbc7f5, 0x12defa06, 0xb09a5e00, 0x8d7e478c, 0xe192715e, 0x51e52826, 0x4db10e90, 0x06064e78},
           {0xffb66e85, 0xc9824f32, 0x6878a0a7, 0xbc04156b, 0x5dcfe4eb, 0x735191cd, 0x57bb9742, 0x1014772f},
           {0x666c5597, 0x65036d57, 0x4521e797, 0x69b920d7, 0x8d2c68a0, 0x074b0f9c, 0x81b5b9e0, 0x058e1d56},
           {0x147711b2, 0x452aeaca, 0x49b55441, 0xdd9453ac, 0xf38d3323, 0x922ffcc2, 0xf3354bb7, 0x021e2335}}}},
        {{0x000f4243, 0, 0, 0, 0, 0, 0, 0},
         {{{0x979a193d, 0x39e6a3e9, 0x33b0d0d1, 0x25e39251, 0x074cbbfa, 0x76291e7a, 0x3473c13c, 0x13dcb887},
           {0xfe1b84cf, 0xc13eea93, 0x83a650e3, 0x7dc415b5, 0xed7f3d47, 0x98db1120, 0xb666e814, 0x273fe860}}},
         {{{0xe3b23568, 0x680b41fe, 0xffedf5ec, 0xb19a696f, 0x43c59eec, 0x8a9384af, 0xd4e88295, 0x30309e1b},
           {0x43b91a9c, 0xed9e5d3b, 0x50d74904, 0x825f9bd8, 0x09667144, 0x6b56d697, 0x2cb8d95b, 0x2ede6148},
           {0x449202b8, 0x906ab499, 0x51dfa07e, 0x4b9335e6, 0xf77a85f7, 0xf69e810a, 0x4111f2f4, 0x156a25d0},
           {0x7c54ad87, 0x892c996d, 0x26ed81d0, 0x5056ffca, 0xf63d205d, 0xf586b392, 0xc3bdbe0c, 0x2cff5e10}}}},
        {{0x7890abcd, 0xef123456, 0x7890abcd, 0xef123456, 0x7890abcd, 0xef123456, 0x7890abcd, 0x00123456},
         {{{0x994f28b9, 0x96ec0758, 0x895f8faa, 0xa797075c, 0x182e7347, 0x56b39a85, 0x18e43387, 0x02cf66ea},
           {0x0b789aef, 0xed0a94d4, 0x38c718e6, 0x4ff7fa01, 0x6194e1f8, 0x2a8f47fe, 0x47ad34eb, 0x0871da43}}},
         {{{0x32fef4e0, 0x1a2b506a, 0x4ab9cd36, 0x61f5e987, 0x9b1d56c1, 0x639d1ecc, 0x378da107, 0x302d0d39},
           {0x02e90466, 0x8ff44361, 0xdcb379fe, 0xc503bd5e, 0x18487d71, 0xf347525d, 0xb226bd9c, 0x1e56e51b},
           {0xed78e528, 0x39d94bec, 0x639bfd4b, 0x2031be52, 0x1105138b, 0xbb7f7f89, 0xfa0922d1, 0x04681aa6},
           {0xb910c93b, 0xef6fa433, 0x4f943757, 0x2ae83511, 0x33a514f6, 0x7d7ccb58, 0x54149358, 0x06aeff6a}}}},
    },
    4,
};

// Deliberately parallel to bn254 above: each curve's constants in the one
// shape the tests read.
// BLS12-381: gnark-crypto's generators; b = 4 and the twist's b' = 4(1+u);
// [k]G for the same k as BN254's.
static const curve_desc<fq_params> bls12_381 = {
    "BLS12-381",
    {{{0xdb22c6bb, 0xfb3af00a, 0xf97a1aef, 0x6c55e83f, 0x171bac58, 0xa14e3a3f, 0x9774b905, 0xc3688c4f, 0x4fa9ac0f, 0x2695638c, 0x3197d794, 0x17f1d3a7},
      {0x46c5e7e1, 0x0caa2329, 0xa2888ae4, 0xd03cc744, 0x2c04b3ed, 0x00db18cb, 0xd5d00af6, 0xfcf5e095, 0x741d8ae4, 0xa09e30ed, 0xe3aaa0f1, 0x08b3f481}}},
    {{{0xc121bdb8, 0xd48056c8, 0xa805bbef, 0x0bac0326, 0x7ae3d177, 0xb4510b64, 0xfa403b02, 0xc6e47ad4, 0x2dc51051, 0x26080527, 0xf08f0a91, 0x024aa2b2},
      {0x5d042b7e, 0xe5ac7d05, 0x13945d57, 0x334cf112, 0xdc7f5049, 0xb5da61bb, 0x9920b61a, 0x596bd0d0, 0x88274f65, 0x7dacd3a0, 0x52719f60, 0x13e02b60},
      {0x08b82801, 0xe1935486, 0x3baca289, 0x923ac9cc, 0x5160d12c, 0x6d429a69, 0x8cbdd3a7, 0xadfd9baa, 0xda2e351a, 0x8cc9cdc6, 0x727d6e11, 0x0ce5d527},
      {0xf05f79be, 0xaaa9075f, 0x5cec1da1, 0x3f370d27, 0x572e99ab, 0x267492ab, 0x85a763af, 0xcb3e287e, 0x2bc28b99, 0x32acd2b0, 0x2ea734cc, 0x0606c4a0}}},
    {{{0x00000004, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}},
    {{{0x00000004, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {0x00000004, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}},
    {
        {{0x00000002, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000},
         {{{0x29bf0f4e, 0xc39a8c55, 0x8f1c7c42, 0xe28f75bb, 0xc358a62a, 0x43902d0a, 0x91280125, 0x9721db30, 0x50a9450c, 0x8808c8eb, 0x904d6746, 0x0572cbea},
           {0x79749d28, 0xba868819, 0xcd16bd1b, 0x4c56d9d4, 0x1d5fd76a, 0xf73bb902, 0x8670e461, 0x22ba3ecb, 0x779d8e38, 0x22fda673, 0xabc673a3, 0x166a9d8c}}},
         {{{0xb827a053, 0xc952aaca, 0xf3611b78, 0x81f14b0b, 0x4d00dbae, 0xe1ea1e1e, 0xb8825e0e, 0x3bc0b995, 0xcc7ed586, 0xd2370f17, 0x57d540a9, 0x16385339},
           {0x47c33577, 0x6178288c, 0xb57ec72a, 0xc6c886f6, 0x031e1572, 0x728114d1, 0x04ba1074, 0xd70662a9, 0x730a124f, 0x9f520e47, 0xc1ed7f72, 0x0a4edef9},
           {0x1e4c9899, 0x999d95d7, 0x764bf3bd, 0xe88dece9, 0x1e47aa8a, 0xbfe6bd22, 0xbf91009c, 0x9a66da69, 0x2b525678, 0x0aeb8dca, 0x0d82b063, 0x0468fb44},
           {0x6e36ccf3, 0xacdefd8b, 0xa59c8967, 0x422e1aa0, 0x13c308f5, 0x97003f7a, 0xc66c4116, 0xa43253d9, 0x3f887136, 0x38b36154, 0xfa65dd26, 0x0f6d4552}}}},
        {{0x00000003, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000},
         {{{0x024e5224, 0x96d2c0c9, 0x2ca2179b, 0x81747a0b, 0x335b3ff9, 0xf3780a51, 0x9be9a5f1, 0xb112d61f, 0xeca99697, 0x1765212d, 0xf9d1f013, 0x09ece308},
           {0x90ae30d1, 0xa3473b05, 0x634af45c, 0xe745256c, 0x0fd43be6, 0x9d9c2731, 0xabc3097f, 0xa69a0cdd, 0x89c5f80c, 0x8a846233, 0xa6f5b09f, 0x032b80d3}}},
         {{{0x2324afae, 0x16020ef8, 0x866f09d5, 0x50a030fc, 0xc04d6d7a, 0xa0c75df1, 0x29781315, 0x691ae543, 0xdccb23ae, 0x2ee414a3, 0x24a0857e, 0x122915c8},
           {0x56ca66dc, 0xd6a44aaa, 0x937cc6d9, 0xeb480673, 0x8d251c96, 0x5062650f, 0x5396eda5, 0x2ac48090, 0x7e0550ff, 0xea7dc4dd, 0xbbc8e5dc, 0x09380275},
           {0x3ecfd892, 0x455e4481, 0x8b52fdf2, 0x479dfd94, 0xfef5c721, 0x326ac738, 0x3b20b1a7, 0x36961d1e, 0xbc1a6f01, 0x010c7a1a, 0x55969e61, 0x0b21da79},
           {0x23a0e849, 0xea56d53f, 0xb975b9ed, 0xcf6b3b58, 0x66bfbd6b, 0x714150a1, 0x0bf1c1ed, 0x62a7e42e, 0xa36cfe5f, 0xfe48d718, 0x329b3967, 0x08f239ba}}}},
        {{0x000f4243, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000},
         {{{0xe25056d3, 0xf4081d18, 0xb669b14f, 0x10bcf583, 0x2934499a, 0x8a9d2faf, 0xbe2f7a06, 0x9a2d2ddd, 0x6223d723, 0x54ab0f40, 0xffe54103, 0x17b96ad5},
           {0x756794bd, 0x7262e7cd, 0xc3bbb08c, 0x09cc4787, 0xe120e214, 0xd5a45912, 0xd1e8c2fb, 0xda1a5020, 0xa43147fe, 0x1c3d02be, 0x51874495, 0x03dee11f}}},
         {{{0x245a622d, 0xbcab56f8, 0x7f548cd9, 0xfc2d6b3a, 0xd800a2f8, 0xed3cc5d0, 0x5b7041ad, 0x5d0dfd05, 0x39598bfa, 0x9455087c, 0xa33a5a00, 0x14c23fb3},
           {0xe2ca7dc2, 0xbcd62b94, 0x6309b1c6, 0xee6f4235, 0x700b44ad, 0x0a6e9a6c, 0x8712713d, 0x73d060d1, 0x3a9489d3, 0x7f765f34, 0x83a585d6, 0x0759e400},
           {0x5fbf901d, 0x8a2ac420, 0x214ff1a2, 0xa34b0d74, 0x64a0002e, 0xd4484f15, 0x350d2f11, 0xc88be59f, 0xcfb8533c, 0xa2e06a73, 0xd627267b, 0x0b7ca535},
           {0x5ad9d9d9, 0xb085dfa5, 0x13eff37b, 0x71fb6551, 0xc18aad54, 0x9fc00db3, 0xd793fdc2, 0x9108e367, 0x5af7eeb3, 0xe51ca49c, 0x4a476172, 0x0471460b}}}},
        {{0x7890abcd, 0xef123456, 0x7890abcd, 0xef123456, 0x7890abcd, 0xef123456, 0x7890abcd, 0x00123456},
         {{{0x4f833f49, 0x1f049f4b, 0x2c626955, 0x9ce10bb1, 0x06adf40c, 0x668b519e, 0x099fe8aa, 0xe1438d20, 0x88de7585, 0xf2115ebd, 0x77df4794, 0x000b7ec0},
           {0x0acf20f0, 0xe8ae6ba4, 0xb81b90c8, 0x2e9c3548, 0x04d65b32, 0x3b291069, 0x0f68d462, 0xeded65e1, 0x107eff3f, 0x1e500c28, 0xb4c5dc15, 0x0b5b855f}}},
         {{{0xec76b332, 0x50a572cd, 0xcefdfc1f, 0x5cfd659a, 0x7b6eabfc, 0x8af3cb46, 0xccf1cffe, 0x46c90963, 0xa0f78bba, 0xc4e15cf0, 0x5d3e2df8, 0x022e247f},
           {0x47f6e253, 0x24a0cadf, 0x131e08b1, 0x895dc9af, 0xa7e555b2, 0x825a9ce0, 0x457b3fd3, 0xbccd0ceb, 0x5c74285d, 0xa4d7653f, 0xd8f0da84, 0x02db10c1},
           {0xc0eedccd, 0x4027cc30, 0x30ea6f78, 0x2723f19f, 0x6225a16a, 0x51de2034, 0x528d1371, 0xcb2271f2, 0x34dae778, 0x8aaca2f8, 0x1dd6fa45, 0x108fc99e},
           {0x8556c5ab, 0xcbe270af, 0xf1e1b5dd, 0xf0f040d1, 0x57284c5e, 0x5aae1909, 0x379e692e, 0xb32bd007, 0x19441478, 0xe88beac1, 0x23d1fa2f, 0x148909a0}}}},
    },
    4,
};

inline const curve_desc<fq_params>& desc_of(fq_params*) { return bls12_381; }
inline const curve_desc<bn254_fq_params>& desc_of(bn254_fq_params*) {
    return bn254;
}

// gen is the generator of the group over F; curve_b is its b.
template <class P>
static affine_t<mont_t<P>> gen(mont_t<P>*) {
    affine_t<mont_t<P>> g;
    to_field<P>(desc_of((P*)nullptr).g1, &g);
    return g;
}
template <class P>
static affine_t<ext2_t<P>> gen(ext2_t<P>*) {
    affine_t<ext2_t<P>> g;
    to_field<P>(desc_of((P*)nullptr).g2, &g);
    return g;
}
template <class P>
static mont_t<P> curve_b(mont_t<P>*) {
    return fq_of<P>(desc_of((P*)nullptr).b1.c[0]);
}
template <class P>
static ext2_t<P> curve_b(ext2_t<P>*) {
    ext2_t<P> b;
    b.c0 = fq_of<P>(desc_of((P*)nullptr).b2.c[0]);
    b.c1 = fq_of<P>(desc_of((P*)nullptr).b2.c[1]);
    return b;
}

// CHECK counts a failed check in failures and says which, going on with the
// others; a test's main returns 1 when any failed.
static int failures = 0;

#define CHECK(cond, ...)                                \
    do {                                                \
        if (!(cond)) {                                  \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);                        \
            printf("\n");                               \
            failures++;                                 \
        }                                               \
    } while (0)

template <class F>
static affine_t<F> to_affine(const xyzz_t<F>& p) {
    affine_t<F> a;
    if (p.is_inf()) {
        a.x = F::zero();
        a.y = F::zero();
        return a;
    }
    a.x = fmul(p.x, zk_msm::finv(p.zz));
    a.y = fmul(p.y, zk_msm::finv(p.zzz));
    return a;
}

// scalar_mul is [k]P by double-and-add from the top bit, k canonical in nk
// 32-bit limbs: the formulas an MSM's buckets use (dbl, add_affine). The
// host tests' reference for a point times a scalar.
template <class F>
static xyzz_t<F> scalar_mul(const affine_t<F>& p, const uint32_t* k, int nk) {
    xyzz_t<F> acc = xyzz_t<F>::inf();
    if (p.is_inf()) return acc;
    for (int bit = 32 * nk - 1; bit >= 0; bit--) {
        acc.dbl();
        if ((k[bit / 32] >> (bit % 32)) & 1) acc.add_affine(p.x, p.y);
    }
    return acc;
}

// on_curve says y^2 = x^3 + b for the group of F (infinity included).
template <class F>
static bool on_curve(const affine_t<F>& a) {
    if (a.is_inf()) return true;
    return fsqr(a.y) == fadd(fmul(fsqr(a.x), a.x), curve_b((F*)nullptr));
}
