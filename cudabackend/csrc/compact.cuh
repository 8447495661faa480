// compact.cuh: the device side of compact partitions (compact.cu), for
// groth16.cu. Not part of the C ABI (groth16.h holds that).
//
// A compact partition carries W as two bitmaps and the values that are
// neither 0 nor 1 (groth16.h, "Compact partitions"). The device expands it
// into the full W (zk_compact_expand), then evaluates every constraint's
// A·W, B·W and C·W from the circuit's matrices, resident beside the key, and
// checks A_i·B_i == C_i (zk_compact_eval): sdk/constraints' Eval, word for
// word, on the device, over either curve's scalar field.
#pragma once

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "groth16.h"

// zk_cs_matrix is one matrix of a constraint system on the device, in
// compressed sparse rows as sdk/constraints.Matrix: row i's terms are
// wire[k] times coeffs[coeff[k]] for k in start[i]..start[i+1].
struct zk_cs_matrix {
    const uint32_t* start;  // rows + 1
    const uint32_t* wire;   // per term, below the key's wires
    const uint32_t* coeff;  // per term, into the coefficient table
};

// zk_compact_dev is a slot's device area for one compact partition: the two
// bitmaps as the host staged them, the ranks the expansion builds, and the
// flags the host reads back. Its layout is groth16.h's
// zk_g16_compact_device_bytes: other, bits (words each), flags (4 words),
// wpre (words), bsum (one per ZK_G16_COMPACT_RANK_WORDS words).
struct zk_compact_dev {
    uint64_t* other;
    uint64_t* bits;
    // flags[0]: the first constraint found unsatisfied (UINT32_MAX: none);
    // flags[1]: the set bits of other below nwires (the values it takes).
    uint32_t* flags;
    uint32_t* wpre;  // per word: set bits of other before it in its group
    uint32_t* bsum;  // per group of ZK_G16_COMPACT_RANK_WORDS words: set bits before it
};

// zk_compact_at lays the area out from its base (device memory of
// zk_g16_compact_device_bytes(nwires) bytes).
zk_compact_dev zk_compact_at(void* base, size_t nwires);

// zk_compact_expand resets d's flags, then writes W (nwires scalars of
// curve, ntt.h's zk_ntt_curve) to w from d's bitmaps and values (nb_other
// scalars, device memory): wire i is values[rank(i)] where other's bit i is
// set (rank(i): other's set bits below i), else 1 (the curve's Montgomery
// one) where bits' bit i is set, else 0. A rank at or past nb_other reads
// nothing and gives 0; flags[1] tells the host. Enqueued on st.
int zk_compact_expand(int curve, const zk_compact_dev& d, const void* values, size_t nb_other,
                      size_t nwires, void* w, cudaStream_t st, char* err, size_t errlen);

// zk_compact_eval writes A·W, B·W (and C·W when c is not NULL) of rows 0..n-1
// into a, b (c), from the matrices m (A, B, C), the coefficient table coeffs,
// d's bitmaps and the expanded w, all over curve's scalar field, and records
// the first row where A_i·B_i != C_i in d.flags[0] (atomicMin). Rows past n
// are not written. Enqueued on st.
int zk_compact_eval(int curve, const zk_cs_matrix m[3], const void* coeffs,
                    const zk_compact_dev& d, const void* w, size_t n, void* a, void* b, void* c,
                    cudaStream_t st, char* err, size_t errlen);
