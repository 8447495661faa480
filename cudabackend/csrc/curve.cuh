// curve.cuh: G1 and G2 point arithmetic for the MSM kernels, for any curve
// whose base field is a field.cuh mont_t<P>.
//
// Fields: mont_t<P> for G1, ext2_t<P> = Fq[u]/(u^2+1) for G2 (fq_t and fq2_t
// for BLS12-381, bn254_fq_t and bn254_fq2_t for BN254, whose Fq2 is the same
// extension). Every such curve has a = 0 (y^2 = x^3 + b), which the doubling
// formulas rely on; the curve's b appears in no formula.
//
// Point forms:
//   affine_t<F>  (x, y), bit for bit gnark-crypto's G1Affine / G2Affine; the
//                point at infinity is all zero, as gnark stores it.
//   xyzz_t<F>    extended Jacobian (X, Y, ZZ, ZZZ), x = X/ZZ, y = Y/ZZZ,
//                ZZ^3 = ZZZ^2; ZZ == 0 is infinity. Bucket accumulators:
//                a mixed add costs 8M+2S and needs no inversion.
//   jac_t<F>     Jacobian (X, Y, Z), x = X/Z^2, y = Y/Z^3; gnark-crypto's
//                G1Jac / G2Jac layout, infinity = (1, 1, 0). MSM results.
//
// Formulas: EFD "xyzz" madd-2008-s, add-2008-s, dbl-2008-s-1, mdbl-2008-s-1;
// Jacobian dbl-2009-l. Special cases (P == Q, P == -Q, infinity) are handled
// explicitly: MSM inputs repeat points and hit them.
#pragma once

#include "field.cuh"

// ---- field primitives ------------------------------------------------------
//
// The point formulas use fadd, fsub, fdbl, fneg, fmul, fsqr and fmul_sub,
// never the field's operators directly. On the host these are field.cuh's
// (portable, correct) operators. On the device they are field.cuh's carry
// chains (every instruction an `asm volatile`: a borrow read `subc.u32 r,
// 0, 0` has no inputs, and plain asm let the compiler merge or hoist it,
// once making every device sum wrong), in the lazy form below.
namespace zk_dev {
#ifdef __CUDA_ARCH__
// ---- lazy reduction (ZK_FQ_LAZY) --------------------------------------------
//
// The device keeps Fq values in [0, 2p) instead of [0, p) (ZK_FQ_LAZY, default
// 1; 0 restores full reduction after every operation for comparisons):
// a Montgomery product of two such values is again below 2p when 4p < R
// (BLS12-381: p < 2^381, R = 2^384), so the product skips its final
// subtraction (mont_t::mul_lazy); a sum subtracts 2p when it reaches 2p, a
// difference adds 2p when it borrows (add_chain, sub_chain with K = 2). Zero tests
// (fzero) and values leaving the device (fcanon) reduce once to [0, p).
// After Matter Labs' ZPrize 2022 MSM (ff_dispatch_st.cuh: values in [0, 2p),
// mul<0> without the final subtraction, sub adding 2p). Faster than full
// reduction on the G1 MSM (BENCHMARKS.md, "G1 MSM: the product inlined, lazy
// reduction, a dedicated squaring").
#ifndef ZK_FQ_LAZY
#define ZK_FQ_LAZY 1
#endif
constexpr int FQ_K = ZK_FQ_LAZY ? 2 : 1;  // Fq values lie below FQ_K * p

// The Fq product for Fq2 arithmetic is one out-of-line function: inlining
// its ~600 instructions at every use made G2 kernels take minutes to
// compile, spill, and overflow the instruction cache. Arguments and result
// travel in registers (no stack frame), so a call costs a few dozen moves.
// G1 inlines it (fmul), so the compiler schedules across its products
// (BENCHMARKS.md, "G1 MSM: the product inlined, lazy reduction, a dedicated squaring").
template <class P>
__device__ __noinline__ mont_t<P> fq_mul_call(mont_t<P> a, mont_t<P> b) {
    return ZK_FQ_LAZY ? mont_t<P>::mul_lazy(a, b) : mont_t<P>::mul_eo(a, b);
}
#endif
}  // namespace zk_dev

template <class P>
ZK_HD mont_t<P> fadd(const mont_t<P>& a, const mont_t<P>& b) {
    static_assert(mont_t<P>::four_p_below_R, "the lazy device form needs 4p < R");
#ifdef __CUDA_ARCH__
    return mont_t<P>::template add_chain<zk_dev::FQ_K>(a, b);
#else
    return a + b;
#endif
}
template <class P>
ZK_HD mont_t<P> fsub(const mont_t<P>& a, const mont_t<P>& b) {
#ifdef __CUDA_ARCH__
    return mont_t<P>::template sub_chain<zk_dev::FQ_K>(a, b);
#else
    return a - b;
#endif
}
// fcanon returns a in [0, p): the lazy device form reduced once; otherwise a.
template <class P>
ZK_HD mont_t<P> fcanon(const mont_t<P>& a) {
#if defined(__CUDA_ARCH__) && ZK_FQ_LAZY
    mont_t<P> r = a;
    mont_t<P>::reduce_chain(r.l);
    return r;
#else
    return a;
#endif
}
// fzero reports a == 0 in the field (the lazy form of zero may be p).
template <class P>
ZK_HD bool fzero(const mont_t<P>& a) {
    return fcanon(a).is_zero();
}
template <class P>
ZK_HD mont_t<P> fdbl(const mont_t<P>& a) {
    return fadd(a, a);
}
template <class P>
ZK_HD mont_t<P> fneg(const mont_t<P>& a) {
    return fsub(mont_t<P>::zero(), a);
}
// fmul is the Fq product, inlined on the device (see fq_mul_call).
template <class P>
ZK_HD mont_t<P> fmul(const mont_t<P>& a, const mont_t<P>& b) {
#if defined(__CUDA_ARCH__) && ZK_FQ_LAZY
    return mont_t<P>::mul_lazy(a, b);
#elif defined(__CUDA_ARCH__)
    return mont_t<P>::mul_eo(a, b);
#else
    return a * b;
#endif
}
// fq2_mul is the Fq product inside Fq2 arithmetic: the out-of-line call on
// the device.
template <class P>
ZK_HD mont_t<P> fq2_mul(const mont_t<P>& a, const mont_t<P>& b) {
#ifdef __CUDA_ARCH__
    return zk_dev::fq_mul_call(a, b);
#else
    return a * b;
#endif
}
// fsqr is field.cuh's dedicated squaring on the device (78 products before
// the reduction instead of 144), two of a mixed addition's ten products being
// squares (BENCHMARKS.md, "G1 MSM: the product inlined, lazy reduction, a
// dedicated squaring").
template <class P>
ZK_HD mont_t<P> fsqr(const mont_t<P>& a) {
#if defined(__CUDA_ARCH__) && ZK_FQ_LAZY
    return mont_t<P>::sqr_lazy(a);
#elif defined(__CUDA_ARCH__)
    return mont_t<P>::sqr_eo(a);
#else
    return a * a;
#endif
}
// fmul_sub is a*b - c*d (the Y coordinates of G1's point formulas): on the
// device with the lazy form, two wide products and one reduction (field.cuh's
// mul_sub_lazy, which needs the 4p < R that fadd checks of every field here;
// BENCHMARKS.md, "G1 MSM: the product inlined, lazy reduction, a dedicated
// squaring"), else the two products and their difference.
template <class P>
ZK_HD mont_t<P> fmul_sub(const mont_t<P>& a, const mont_t<P>& b, const mont_t<P>& c,
                         const mont_t<P>& d) {
#if defined(__CUDA_ARCH__) && ZK_FQ_LAZY
    return mont_t<P>::mul_sub_lazy(a, b, c, d);
#else
    return fsub(fmul(a, b), fmul(c, d));
#endif
}

// fr_from_mont returns the integer a (canonical limbs) of a Montgomery form
// a*R.
template <class P>
ZK_HD mont_t<P> fr_from_mont(const mont_t<P>& a) {
    return a.from_montgomery();
}

// ext2_t<P> is an element c0 + c1*u of Fq2 = Fq[u]/(u^2+1) over Fq =
// mont_t<P>, laid out as gnark's E2 {A0, A1}. Its arithmetic is the free
// functions below.
template <class P>
struct ext2_t {
    using fq = mont_t<P>;
    fq c0, c1;

    ZK_HD static ext2_t zero() {
        ext2_t r;
        r.c0 = fq::zero();
        r.c1 = fq::zero();
        return r;
    }
    ZK_HD static ext2_t one() {
        ext2_t r;
        r.c0 = fq::one();
        r.c1 = fq::zero();
        return r;
    }
    ZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    ZK_HD friend bool operator==(const ext2_t& a, const ext2_t& b) { return a.c0 == b.c0 && a.c1 == b.c1; }
    ZK_HD friend bool operator!=(const ext2_t& a, const ext2_t& b) { return !(a == b); }
};

// fq2_t is BLS12-381's Fq2 (gnark-crypto bls12-381 E2); bn254_fq2_t is
// BN254's (bn254 E2).
using fq2_t = ext2_t<fq_params>;
using bn254_fq2_t = ext2_t<bn254_fq_params>;

template <class P>
ZK_HD ext2_t<P> fadd(const ext2_t<P>& a, const ext2_t<P>& b) {
    ext2_t<P> r;
    r.c0 = fadd(a.c0, b.c0);
    r.c1 = fadd(a.c1, b.c1);
    return r;
}
template <class P>
ZK_HD ext2_t<P> fsub(const ext2_t<P>& a, const ext2_t<P>& b) {
    ext2_t<P> r;
    r.c0 = fsub(a.c0, b.c0);
    r.c1 = fsub(a.c1, b.c1);
    return r;
}
template <class P>
ZK_HD ext2_t<P> fdbl(const ext2_t<P>& a) { return fadd(a, a); }
template <class P>
ZK_HD ext2_t<P> fneg(const ext2_t<P>& a) {
    ext2_t<P> r;
    r.c0 = fneg(a.c0);
    r.c1 = fneg(a.c1);
    return r;
}
// fmul is Karatsuba: 3 Fq products instead of 4.
template <class P>
ZK_HD ext2_t<P> fmul(const ext2_t<P>& a, const ext2_t<P>& b) {
    mont_t<P> v0 = fq2_mul(a.c0, b.c0);
    mont_t<P> v1 = fq2_mul(a.c1, b.c1);
    mont_t<P> s = fq2_mul(fadd(a.c0, a.c1), fadd(b.c0, b.c1));
    ext2_t<P> r;
    r.c0 = fsub(v0, v1);
    r.c1 = fsub(fsub(s, v0), v1);
    return r;
}
// fsqr is (c0+c1)(c0-c1) + 2 c0 c1 u: 2 Fq products.
template <class P>
ZK_HD ext2_t<P> fsqr(const ext2_t<P>& a) {
    mont_t<P> t = fq2_mul(a.c0, a.c1);
    ext2_t<P> r;
    r.c0 = fq2_mul(fadd(a.c0, a.c1), fsub(a.c0, a.c1));
    r.c1 = fdbl(t);
    return r;
}

// fmul_sub in Fq2: the two products and their difference.
template <class P>
ZK_HD ext2_t<P> fmul_sub(const ext2_t<P>& a, const ext2_t<P>& b, const ext2_t<P>& c, const ext2_t<P>& d) {
    return fsub(fmul(a, b), fmul(c, d));
}

template <class P>
ZK_HD ext2_t<P> fcanon(const ext2_t<P>& a) {
    ext2_t<P> r;
    r.c0 = fcanon(a.c0);
    r.c1 = fcanon(a.c1);
    return r;
}
template <class P>
ZK_HD bool fzero(const ext2_t<P>& a) { return fzero(a.c0) && fzero(a.c1); }

// scalar_params<F>::type is the scalar field of the curve whose points have
// coordinates in F (its MSMs' scalars): the base field's scalar_field.
template <class F>
struct scalar_params;
template <class P>
struct scalar_params<mont_t<P>> {
    using type = typename P::scalar_field;
};
template <class P>
struct scalar_params<ext2_t<P>> {
    using type = typename P::scalar_field;
};

// affine_t is a point in gnark's affine layout; all-zero is infinity.
template <class F>
struct affine_t {
    F x, y;
    ZK_HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

// jac_t is a point in gnark's Jacobian layout; Z == 0 is infinity.
template <class F>
struct jac_t {
    F x, y, z;

    ZK_HD static jac_t inf() {
        jac_t r;
        r.x = F::one();
        r.y = F::one();
        r.z = F::zero();
        return r;
    }
    // canon is this with every coordinate in [0, p) (fcanon): what leaves
    // the device.
    ZK_HD jac_t canon() const {
        jac_t r;
        r.x = fcanon(x);
        r.y = fcanon(y);
        r.z = fcanon(z);
        return r;
    }
    // dbl is dbl-2009-l (a = 0): 2M + 5S. Infinity (Z = 0) stays Z = 0.
    ZK_HD jac_t dbl() const {
        F a = fsqr(x);
        F b = fsqr(y);
        F c = fsqr(b);
        F d = fdbl(fsub(fsub(fsqr(fadd(x, b)), a), c));
        F e = fadd(fdbl(a), a);
        F f = fsqr(e);
        jac_t r;
        r.x = fsub(f, fdbl(d));
        F c8 = fdbl(fdbl(fdbl(c)));
        r.y = fsub(fmul(e, fsub(d, r.x)), c8);
        r.z = fdbl(fmul(y, z));
        return r;
    }
};

// xyzz_t is a point in extended Jacobian coordinates; ZZ == 0 is infinity.
template <class F>
struct xyzz_t {
    F x, y, zz, zzz;

    ZK_HD static xyzz_t inf() {
        xyzz_t r;
        r.x = F::zero();
        r.y = F::zero();
        r.zz = F::zero();
        r.zzz = F::zero();
        return r;
    }
    // is_inf tests ZZ for exact zero, not fzero: ZZ is 0 only as set_inf or
    // inf wrote it, or as a product with such a 0 (the lazy product of 0 is
    // 0); a product of nonzero values is never 0 mod p, and these groups have
    // no points of order 2.
    ZK_HD bool is_inf() const { return zz.is_zero(); }
    ZK_HD void set_inf() {
        zz = F::zero();
        zzz = F::zero();
    }

    // from_affine lifts an affine point (infinity maps to infinity).
    ZK_HD static xyzz_t from_affine(const affine_t<F>& p) {
        xyzz_t r;
        r.x = p.x;
        r.y = p.y;
        if (p.is_inf()) {
            r.zz = F::zero();
            r.zzz = F::zero();
        } else {
            r.zz = F::one();
            r.zzz = F::one();
        }
        return r;
    }

    // from_jac: ZZ = Z^2, ZZZ = Z^3.
    ZK_HD static xyzz_t from_jac(const jac_t<F>& p) {
        xyzz_t r;
        r.x = p.x;
        r.y = p.y;
        r.zz = fsqr(p.z);
        r.zzz = fmul(r.zz, p.z);
        return r;
    }

    // to_jac: Z = ZZZ, X = X*ZZ^2, Y = Y*ZZZ^2 (as gnark's fromJacExtended).
    ZK_HD jac_t<F> to_jac() const {
        if (is_inf()) return jac_t<F>::inf();
        jac_t<F> r;
        r.x = fmul(x, fsqr(zz));
        r.y = fmul(y, fsqr(zzz));
        r.z = zzz;
        return r;
    }

    // dbl_affine sets this to 2*(ax, ay) (mdbl-2008-s-1, a = 0).
    ZK_HD void dbl_affine(const F& ax, const F& ay) {
        F u = fdbl(ay);
        F v = fsqr(u);
        F w = fmul(u, v);
        F s = fmul(ax, v);
        F xx = fsqr(ax);
        F m = fadd(fdbl(xx), xx);
        x = fsub(fsqr(m), fdbl(s));
        y = fmul_sub(m, fsub(s, x), w, ay);
        zz = v;
        zzz = w;
    }

    // dbl doubles this in place (dbl-2008-s-1, a = 0).
    ZK_HD void dbl() {
        if (is_inf()) return;
        F u = fdbl(y);
        F v = fsqr(u);
        F w = fmul(u, v);
        F s = fmul(x, v);
        F xx = fsqr(x);
        F m = fadd(fdbl(xx), xx);
        F x3 = fsub(fsqr(m), fdbl(s));
        y = fmul_sub(m, fsub(s, x3), w, y);
        x = x3;
        zz = fmul(v, zz);
        zzz = fmul(w, zzz);
    }

    // add_affine adds a finite affine point (ax, ay) (madd-2008-s). The
    // caller filters the affine infinity out. Deliberately parallel to add
    // below: see why there.
    ZK_HD void add_affine(const F& ax, const F& ay) {
        if (is_inf()) {
            x = ax;
            y = ay;
            zz = F::one();
            zzz = F::one();
            return;
        }
        F u2 = fmul(ax, zz);
        F s2 = fmul(ay, zzz);
        F p = fsub(u2, x);
        F r = fsub(s2, y);
        if (fzero(p)) {
            if (fzero(r)) {
                dbl_affine(ax, ay);
            } else {
                set_inf();
            }
            return;
        }
        F pp = fsqr(p);
        F ppp = fmul(p, pp);
        F q = fmul(x, pp);
        F x3 = fsub(fsub(fsqr(r), ppp), fdbl(q));
        y = fmul_sub(r, fsub(q, x3), y, ppp);
        x = x3;
        zz = fmul(zz, pp);
        zzz = fmul(zzz, ppp);
    }

    // Deliberately parallel to add_affine above: the mixed addition saves the
    // products by o.zz and o.zzz in the hot bucket loop, so it is not add with ones.
    // add adds another xyzz point (add-2008-s).
    ZK_HD void add(const xyzz_t& o) {
        if (o.is_inf()) return;
        if (is_inf()) {
            *this = o;
            return;
        }
        F u1 = fmul(x, o.zz);
        F u2 = fmul(o.x, zz);
        F s1 = fmul(y, o.zzz);
        F s2 = fmul(o.y, zzz);
        F p = fsub(u2, u1);
        F r = fsub(s2, s1);
        if (fzero(p)) {
            if (fzero(r)) {
                dbl();
            } else {
                set_inf();
            }
            return;
        }
        F pp = fsqr(p);
        F ppp = fmul(p, pp);
        F q = fmul(u1, pp);
        F x3 = fsub(fsub(fsqr(r), ppp), fdbl(q));
        y = fmul_sub(r, fsub(q, x3), s1, ppp);
        x = x3;
        zz = fmul(fmul(zz, o.zz), pp);
        zzz = fmul(fmul(zzz, o.zzz), ppp);
    }
};
