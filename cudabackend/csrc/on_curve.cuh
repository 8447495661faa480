// on_curve.cuh: one dispatch from a curve number (ntt.h's zk_ntt_curve) to
// the element type of its scalar field, for the kernels that are templates
// over the field (ntt.cu, compact.cu): a curve is a field, not a copy of the
// kernels.
#pragma once

#include <stddef.h>

#include "common.cuh"
#include "field.cuh"
#include "ntt.h"

// on_curve calls f with a value of the element type of curve, whose type
// picks f's instantiation, or fails ZK_EINVAL naming what was asked.
template <class Fn>
int on_curve(int curve, const char* what, char* err, size_t errlen, Fn&& f) {
    switch (curve) {
    case ZK_NTT_BLS12_381: return f(fr_t{});
    case ZK_NTT_BN254: return f(bn254_fr_t{});
    }
    return zk_fail(err, errlen, ZK_EINVAL, "%s: curve %d: want ZK_NTT_BLS12_381 (%d) or ZK_NTT_BN254 (%d)",
                   what, curve, ZK_NTT_BLS12_381, ZK_NTT_BN254);
}
