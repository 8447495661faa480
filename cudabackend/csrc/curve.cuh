// curve.cuh: BLS12-381 G1 and G2 point arithmetic for the MSM kernels.
//
// Fields: fq_t (field.cuh) for G1, fq2_t = Fq[u]/(u^2+1) for G2. Both curves
// have a = 0 (y^2 = x^3 + b), which the doubling formulas rely on.
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

// fmul / fsqr are the field products the point formulas use. On the device
// the Fq product is one out-of-line function: inlining its ~600 instructions
// at every use made G2 kernels take minutes to compile, spill, and overflow
// the instruction cache; arguments and result travel in registers (no stack
// frame), so a call costs a few dozen moves.
#ifdef __CUDA_ARCH__
__device__ __noinline__ fq_t fq_mul_call(fq_t a, fq_t b) { return a * b; }
#endif
ZK_HD fq_t fmul(const fq_t& a, const fq_t& b) {
#ifdef __CUDA_ARCH__
    return fq_mul_call(a, b);
#else
    return a * b;
#endif
}
ZK_HD fq_t fsqr(const fq_t& a) { return fmul(a, a); }

// fq2_t is an element c0 + c1*u of Fq2 = Fq[u]/(u^2+1), laid out as gnark's
// E2 {A0, A1}.
struct fq2_t;
ZK_HD fq2_t fmul(const fq2_t& a, const fq2_t& b);
ZK_HD fq2_t fsqr(const fq2_t& a);

struct fq2_t {
    fq_t c0, c1;

    ZK_HD static fq2_t zero() {
        fq2_t r;
        r.c0 = fq_t::zero();
        r.c1 = fq_t::zero();
        return r;
    }
    ZK_HD static fq2_t one() {
        fq2_t r;
        r.c0 = fq_t::one();
        r.c1 = fq_t::zero();
        return r;
    }
    ZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    ZK_HD friend bool operator==(const fq2_t& a, const fq2_t& b) { return a.c0 == b.c0 && a.c1 == b.c1; }
    ZK_HD friend bool operator!=(const fq2_t& a, const fq2_t& b) { return !(a == b); }

    ZK_HD friend fq2_t operator+(const fq2_t& a, const fq2_t& b) {
        fq2_t r;
        r.c0 = a.c0 + b.c0;
        r.c1 = a.c1 + b.c1;
        return r;
    }
    ZK_HD friend fq2_t operator-(const fq2_t& a, const fq2_t& b) {
        fq2_t r;
        r.c0 = a.c0 - b.c0;
        r.c1 = a.c1 - b.c1;
        return r;
    }
    ZK_HD fq2_t operator-() const {
        fq2_t r;
        r.c0 = -c0;
        r.c1 = -c1;
        return r;
    }
    ZK_HD fq2_t dbl() const {
        fq2_t r;
        r.c0 = c0.dbl();
        r.c1 = c1.dbl();
        return r;
    }
    // operator* is Karatsuba: 3 Fq products instead of 4.
    ZK_HD friend fq2_t operator*(const fq2_t& a, const fq2_t& b) {
        fq_t v0 = fmul(a.c0, b.c0);
        fq_t v1 = fmul(a.c1, b.c1);
        fq_t s = fmul(a.c0 + a.c1, b.c0 + b.c1);
        fq2_t r;
        r.c0 = v0 - v1;
        r.c1 = s - v0 - v1;
        return r;
    }
    // sqr is (c0+c1)(c0-c1) + 2 c0 c1 u: 2 Fq products.
    ZK_HD fq2_t sqr() const {
        fq_t t = fmul(c0, c1);
        fq2_t r;
        r.c0 = fmul(c0 + c1, c0 - c1);
        r.c1 = t.dbl();
        return r;
    }
};

ZK_HD fq2_t fmul(const fq2_t& a, const fq2_t& b) { return a * b; }
ZK_HD fq2_t fsqr(const fq2_t& a) { return a.sqr(); }

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
    // dbl is dbl-2009-l (a = 0): 2M + 5S. Infinity (Z = 0) stays Z = 0.
    ZK_HD jac_t dbl() const {
        F a = fsqr(x);
        F b = fsqr(y);
        F c = fsqr(b);
        F d = (fsqr(x + b) - a - c).dbl();
        F e = a.dbl() + a;
        F f = fsqr(e);
        jac_t r;
        r.x = f - d.dbl();
        F c8 = c.dbl().dbl().dbl();
        r.y = fmul(e, d - r.x) - c8;
        r.z = fmul(y, z).dbl();
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
        F u = ay.dbl();
        F v = fsqr(u);
        F w = fmul(u, v);
        F s = fmul(ax, v);
        F xx = fsqr(ax);
        F m = xx.dbl() + xx;
        x = fsqr(m) - s.dbl();
        y = fmul(m, s - x) - fmul(w, ay);
        zz = v;
        zzz = w;
    }

    // dbl doubles this in place (dbl-2008-s-1, a = 0).
    ZK_HD void dbl() {
        if (is_inf()) return;
        F u = y.dbl();
        F v = fsqr(u);
        F w = fmul(u, v);
        F s = fmul(x, v);
        F xx = fsqr(x);
        F m = xx.dbl() + xx;
        F x3 = fsqr(m) - s.dbl();
        y = fmul(m, s - x3) - fmul(w, y);
        x = x3;
        zz = fmul(v, zz);
        zzz = fmul(w, zzz);
    }

    // add_affine adds a finite affine point (ax, ay) (madd-2008-s). The
    // caller filters the affine infinity out.
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
        F p = u2 - x;
        F r = s2 - y;
        if (p.is_zero()) {
            if (r.is_zero()) {
                dbl_affine(ax, ay);
            } else {
                set_inf();
            }
            return;
        }
        F pp = fsqr(p);
        F ppp = fmul(p, pp);
        F q = fmul(x, pp);
        F x3 = fsqr(r) - ppp - q.dbl();
        y = fmul(r, q - x3) - fmul(y, ppp);
        x = x3;
        zz = fmul(zz, pp);
        zzz = fmul(zzz, ppp);
    }

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
        F p = u2 - u1;
        F r = s2 - s1;
        if (p.is_zero()) {
            if (r.is_zero()) {
                dbl();
            } else {
                set_inf();
            }
            return;
        }
        F pp = fsqr(p);
        F ppp = fmul(p, pp);
        F q = fmul(u1, pp);
        F x3 = fsqr(r) - ppp - q.dbl();
        y = fmul(r, q - x3) - fmul(s1, ppp);
        x = x3;
        zz = fmul(fmul(zz, o.zz), pp);
        zzz = fmul(fmul(zzz, o.zzz), ppp);
    }
};
