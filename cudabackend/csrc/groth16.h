/* groth16.h: C ABI of the Groth16 prover on one GPU (groth16.cu), built on the
 * NTT (ntt.h) and MSM (msm.h) kernels.
 *
 * A key is uploaded once (zk_g16_key_load): the G1 point sets A, B (expanded to
 * the full wire list, infinity where the proving key's masks say so), K, Z and
 * the G2 set B stay resident in device memory. A proof (zk_g16_prove) uploads
 * only the partition (W, A, B), computes H = (A·B − C)/Z on the device and runs
 * the five MSMs against the resident bases; the host assembles the proof with
 * fresh r and s from the five sums it gets back (cheap: a few scalar
 * multiplications). A key that also holds its circuit's constraint matrices
 * proves compact partitions (zk_g16_prove_compact): W as two bitmaps and the
 * few values neither 0 nor 1, from which the device evaluates A, B and C.
 *
 * A proof runs in a slot (zk_g16_slot_create): everything one proof in flight
 * needs, allocated once per key and reused by every proof, so nothing between
 * two proofs' device work allocates, frees or pins (cudaFree and
 * cudaHostUnregister synchronize the whole device; pinning costs time in
 * proportion to the bytes). A slot holds device buffers for W, A, B and C sized
 * for the key, two streams, the timing events, and a pinned host staging buffer
 * for W, A and B: the caller copies the partition into it (on CPU threads,
 * while other slots compute) and zk_g16_prove DMAs it from there. Several slots
 * of one key prove at once, each on its own streams, so one's upload and H
 * overlap another's MSMs. Points and scalars use gnark-crypto's in-memory layout
 * (see msm.h). Errors: ZK_OK or a code of common.h, with a message in err.
 */
#ifndef ZK_GROTH16_H
#define ZK_GROTH16_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "ntt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zk_g16_key zk_g16_key;

/* zk_g16_g1_bytes and zk_g16_g2_bytes are the bytes of one affine point of
 * curve's G1 and G2 (ntt.h's zk_ntt_curve), in gnark-crypto's layout (msm.h):
 * 96 and 192 on BLS12-381, 64 and 128 on BN254; 0 for another value. */
static inline uint64_t zk_g16_g1_bytes(int curve) {
    return curve == ZK_NTT_BLS12_381 ? 96 : curve == ZK_NTT_BN254 ? 64 : 0;
}
static inline uint64_t zk_g16_g2_bytes(int curve) { return 2 * zk_g16_g1_bytes(curve); }

/* zk_g16_key_load uploads a proving key's point sets to device. The key is on
 * curve (ntt.h's zk_ntt_curve: its points, scalars and MSM groups) and its H
 * points want H in h_form (ntt.h's zk_h_form: gnark's, or snarkjs's for a
 * key imported from a .zkey). g1a holds na
 * points for the wires where inf_a[i] == 0 (nwires mask bytes); likewise g1b,
 * g2b with inf_b. g1k holds nk points (wires nb_public..nwires-1), g1z nz points
 * (for a domain of N = 2^log_n: N-1 in gnark's form, N in snarkjs's, whose
 * log_n must be below the field's two-adicity, zk_ntt_two_adicity).
 *
 * With chunk > 0 the key is streamed instead, for a device too small to hold
 * it: the point sets stay in host memory, registered in place where the device
 * can read them there (cudaHostRegister, read-only: a key file's shared
 * mapping, one copy in the page cache for every backend of the machine) or
 * else copied into pinned buffers; every proof copies them to the device chunk
 * by chunk (chunk points), double-buffered, each chunk's copy overlapping the
 * MSM of the one before, and returns one sum per chunk. The caller keeps the
 * host memory mapped until zk_g16_key_free.
 *
 * A resident key (chunk == 0) keeps up to depth precomputed copies of each
 * point set (msm.h's zk_msm_upload_depth: copy g = P * 2^(c*G*g), the window
 * and count msm_plan.h's zk_msm_precompute_choice picks for the set's
 * length), which every MSM of its proofs reads when they pay; depth 1: none.
 * A streamed key has none (depth is ignored).
 *
 * A streamed key with h_block > 0 streams its proofs too, for a device too
 * small for even one proof's W, A, B and C: a slot then holds nothing on the
 * device but H's blocks (ntt.h's zk_h_stream, blocks of h_block elements),
 * H is computed out of core from the slot's pinned staging, and every MSM
 * copies its scalars to the device chunk by chunk beside its points (A's and
 * B's gathered from W on the host first, through the wire index, which stays
 * in host memory), every chunk into one set of buckets (msm.h's
 * zk_msm_run_stream, windows of at most stream_c bits; 0: no cap), one sum
 * per MSM. Such a key takes no constraint system. h_block 0: a slot holds the
 * proof's W, A, B and C on the device (stream_c is ignored).
 *
 * BLS12-381 keys take everything above. A BN254 key is resident or streamed,
 * its proofs not streamed (H out of core is BLS12-381's): ZK_EINVAL. Either
 * curve's resident key takes a constraint system (compact partitions). */
int zk_g16_key_load(int device, int curve, int h_form, uint32_t log_n, size_t nwires,
                    size_t nb_public,
                    const void* g1a, size_t na, const uint8_t* inf_a,
                    const void* g1b, size_t nb, const uint8_t* inf_b,
                    const void* g1k, size_t nk, const void* g1z, size_t nz,
                    const void* g2b, size_t chunk, int depth, uint64_t h_block, int stream_c,
                    zk_g16_key** out, char* err, size_t errlen);

/* zk_g16_key_device_bytes is the device memory the key holds: its point sets,
 * or, streamed, its chunk buffers and the wire index of the A and B points. */
uint64_t zk_g16_key_device_bytes(const zk_g16_key* key);

/* zk_g16_key_info_t describes a loaded key. */
typedef struct zk_g16_key_info_t {
    uint64_t device_bytes;      /* as zk_g16_key_device_bytes */
    uint64_t chunk;             /* points per streamed chunk; 0: resident */
    uint64_t partials[5];       /* sums zk_g16_prove returns for A, B, K, Z (G1) and B (G2) */
    uint64_t work_g1, work_g2;  /* MSM working memory of one proof on each of its streams (a
                                 * resident key's G1 figure holds W's classification) */
    uint64_t pinned_copy_bytes; /* host memory pinned in copies (0 when registered in place) */
    uint64_t registered;        /* host ranges registered in place */
    uint64_t copies[5];         /* precomputed copies of A, B, K, Z (G1) and B (G2); 1: none */
    uint64_t copies_c[5];       /* the window they were made for (0: none) */
    uint64_t constraints;       /* rows of the constraint system set (0: none) */
    uint64_t constraint_bytes;  /* device memory they take (in device_bytes) */
    uint64_t h_block;           /* streamed proofs: H's block (zk_g16_key_load); 0: none */
    uint64_t stream_c;          /* streamed proofs: their MSMs' window cap (0: none) */
} zk_g16_key_info_t;

/* zk_g16_host_register_read_only is 1 when device can read host memory
 * registered read-only (cudaDevAttrHostRegisterReadOnlySupported): a streamed
 * key then pins its file's mapping in place instead of copying it. */
int zk_g16_host_register_read_only(int device);

/* zk_g16_key_info fills info for key. */
void zk_g16_key_info(const zk_g16_key* key, zk_g16_key_info_t* info);

/* zk_g16_key_free releases a key. Not while proofs on it are running. */
int zk_g16_key_free(zk_g16_key* key, char* err, size_t errlen);

/* zk_g16_timing holds device-busy milliseconds per phase, from CUDA events on
 * the proof's stream. */
typedef struct zk_g16_timing {
    float upload_ms; /* W, A, B host to device (compact: the bitmaps and values) */
    float eval_ms;   /* compact only: W expanded, A, B, C evaluated and checked */
    float ntt_ms;    /* H (a lean key's: on its own streams, beside the G1 MSMs) */
    float msm_g1_ms;       /* the four G1 MSMs, after H on the main stream (a lean
                            * key's: from the proof's start to Z's end, H inside) */
    float msm_g2_start_ms; /* when the G2 MSM started on its own stream (after W's upload) */
    float msm_g2_ms;       /* W's classification and the G2 MSM, beside H and the G1 MSMs */
    float total_ms;        /* first event to the last, on either stream: the device-busy time */
} zk_g16_timing;

typedef struct zk_g16_slot zk_g16_slot;

/* zk_g16_slot_create allocates a slot for proofs on key: device buffers for W
 * (the key's wires), for A, B, C (the key's domain N) and for a compact W
 * (zk_g16_compact_device_bytes), two streams, the events, and pinned host
 * staging for W (nwires scalars) then A and B (N scalars each), or a compact W. *w, *a and *b receive the staging addresses the caller fills.
 * *device_bytes and *host_bytes receive what the slot holds. */
int zk_g16_slot_create(zk_g16_key* key, zk_g16_slot** out, void** w, void** a, void** b,
                       uint64_t* device_bytes, uint64_t* host_bytes, char* err, size_t errlen);

/* zk_g16_slot_free releases a slot. Not while a proof runs in it. */
int zk_g16_slot_free(zk_g16_slot* slot, char* err, size_t errlen);

/* zk_g16_prove runs one proof's device work in slot, whose staging holds the
 * partition: the key's nwires scalars of W, n scalars each of A and B (n <= N;
 * zero-padded on the device). It returns when the sums are on the host, and the
 * staging may be refilled. out_g1 receives G1Jac sums (144 bytes each on
 * BLS12-381, 96 on BN254; out_g2's G2Jac 288 and 192): for A
 * (Ar), B (Bs1), K (Krs) and Z (Krs2) in that order, partials[i] of each
 * (zk_g16_key_info: one each for a resident key, one per chunk for a streamed
 * one, to be added up), out_g2 partials[4] G2Jac (Bs2). One proof per slot at
 * a time; proofs in different slots may run at once (a streamed key's chunk
 * buffers serve one proof's G1 and one proof's G2 MSMs at a time). */
int zk_g16_prove(zk_g16_key* key, zk_g16_slot* slot, size_t n, void* out_g1, void* out_g2,
                 zk_g16_timing* timing, char* err, size_t errlen);

/* ---- Compact partitions ---------------------------------------------------
 *
 * A key that holds its circuit's constraint matrices (zk_g16_key_set_constraints)
 * also proves compact partitions (zk_g16_prove_compact): the slot's staging holds
 * W compactly instead of W, A and B, and the device evaluates A, B and C itself,
 * checking every constraint on the way.
 *
 * Compact W of nwires wires, in the slot's staging from its start (the area that
 * holds W, A and B for zk_g16_prove): `other`, then `bits`, bitmaps of
 * zk_g16_compact_words(nwires) uint64 words each (wire i is bit i % 64 of word
 * i / 64), then from zk_g16_compact_values_offset(nwires) bytes on the nb_other
 * values (the key's curve's scalars, Montgomery form, gnark-crypto's layout) of
 * the wires whose `other` bit is set, in wire order. Wire i is values[rank(i)]
 * where other's bit i is set (rank(i): other's set bits below i), else 1 (the
 * curve's Montgomery one) where bits' bit i is set, else 0. Bits at or past
 * nwires are ignored. */

/* ZK_G16_COMPACT_RANK_WORDS is how many bitmap words one rank block of the
 * expansion covers (a device detail, in the slot's device bytes). */
#define ZK_G16_COMPACT_RANK_WORDS 1024

/* zk_g16_compact_words is the words of each bitmap of a compact W. */
static inline size_t zk_g16_compact_words(size_t nwires) { return (nwires + 63) / 64; }

/* zk_g16_compact_values_offset is where a compact W's values start in the
 * staging, in bytes: after both bitmaps. */
static inline size_t zk_g16_compact_values_offset(size_t nwires) {
    return 16 * zk_g16_compact_words(nwires);
}

/* zk_g16_compact_device_bytes is the device memory a slot holds for a compact W
 * besides W, A, B and C: the bitmaps, four flag words and the ranks (a word per
 * bitmap word, and one per ZK_G16_COMPACT_RANK_WORDS of them). The values go to
 * the slot's A, B and C buffers (one allocation of 3N elements), free until A and
 * B are evaluated: at most 3N values. */
static inline uint64_t zk_g16_compact_device_bytes(size_t nwires) {
    uint64_t w = zk_g16_compact_words(nwires);
    return 16 * w + 16 + 4 * w +
           4 * ((w + ZK_G16_COMPACT_RANK_WORDS - 1) / ZK_G16_COMPACT_RANK_WORDS);
}

/* zk_g16_slot_device_bytes is the device memory a slot (zk_g16_slot_create)
 * of a key with nwires wires and a domain of 2^log_n holds: W, then A, B and C
 * (fr elements, 32 bytes each), and the area of a compact W. */
static inline uint64_t zk_g16_slot_device_bytes(size_t nwires, uint32_t log_n) {
    return ((uint64_t)nwires + 3 * ((uint64_t)1 << log_n)) * 32 +
           zk_g16_compact_device_bytes(nwires);
}

/* zk_g16_slot_host_bytes is the pinned host staging a slot holds: W, A and
 * B. */
static inline uint64_t zk_g16_slot_host_bytes(size_t nwires, uint32_t log_n) {
    return ((uint64_t)nwires + 2 * ((uint64_t)1 << log_n)) * 32;
}

/* A key's five point sets, in the order zk_g16_key_load takes them: G1 A,
 * B, K, Z, then G2 B. */
enum { ZK_G16_SET_A = 0, ZK_G16_SET_B = 1, ZK_G16_SET_K = 2, ZK_G16_SET_Z = 3, ZK_G16_SET_B2 = 4 };

/* zk_g16_resident_set_bytes is the device memory set `set` of a resident key
 * on curve takes without copies: A, B and G2 B expanded to every wire
 * (infinity where the key leaves a point out), K and Z as they are. */
static inline uint64_t zk_g16_resident_set_bytes(int curve, int set, uint64_t nwires,
                                                 uint64_t nk, uint64_t nz) {
    const uint64_t g1 = zk_g16_g1_bytes(curve);
    switch (set) {
    case ZK_G16_SET_A:
    case ZK_G16_SET_B:
        return nwires * g1;
    case ZK_G16_SET_K:
        return nk * g1;
    case ZK_G16_SET_Z:
        return nz * g1;
    default:
        return nwires * zk_g16_g2_bytes(curve);
    }
}

/* zk_g16_resident_key_device_bytes is the device memory of a resident key's
 * five sets without copies. */
static inline uint64_t zk_g16_resident_key_device_bytes(int curve, uint64_t nwires, uint64_t nk,
                                                        uint64_t nz) {
    uint64_t total = 0;
    for (int set = ZK_G16_SET_A; set <= ZK_G16_SET_B2; set++)
        total += zk_g16_resident_set_bytes(curve, set, nwires, nk, nz);
    return total;
}

/* How one of a proof's MSMs runs, for its working memory: over n device
 * scalars (dense), over a classification of W's n values (split: its 0s and
 * 1s apart), or streamed from host memory in chunks into one set of buckets. */
enum { ZK_G16_RUN_NONE = 0, ZK_G16_RUN_DENSE = 1, ZK_G16_RUN_SPLIT = 2, ZK_G16_RUN_STREAM = 3 };

typedef struct zk_g16_run {
    int kind; /* ZK_G16_RUN_*; NONE: the set is empty */
    uint64_t n;
} zk_g16_run;

/* zk_g16_proof_runs says how each of a proof's five MSMs runs (runs[set],
 * zk_g16_key_load's order; the G1 ones one after another on the proof's
 * stream, G2's on its second) for a key of nwires wires with na A and nb B
 * points (the key file's, without their infinity points; a resident key
 * expands them), nk K and nz Z, on either curve:
 *  - resident (chunk 0): A, B and K over W split, each walking all of W's
 *    lists; Z dense over H; G2 B split over W;
 *  - streamed (chunk > 0): each dense over at most one chunk of its points;
 *  - lean (also its proofs stream): each streamed over all its points.
 * Returns the values W's classification covers (it lives for the whole
 * proof, on the proof's stream): nwires when resident, else 0. groth16.cu
 * sizes a key's per-proof work from this with the handles' own figures;
 * the Go planner with msm_plan.h's bounds. */
static inline uint64_t zk_g16_proof_runs(uint64_t nwires, uint64_t na, uint64_t nb, uint64_t nk,
                                         uint64_t nz, uint64_t chunk, int lean,
                                         zk_g16_run runs[5]) {
    /* A resident key's A, B and G2 B are expanded to every wire. */
    const int resident = chunk == 0 && !lean;
    const uint64_t pts[5] = {resident ? nwires : na, resident ? nwires : nb, nk, nz,
                             resident ? nwires : nb};
    for (int set = ZK_G16_SET_A; set <= ZK_G16_SET_B2; set++) {
        zk_g16_run* r = &runs[set];
        if (pts[set] == 0) {
            r->kind = ZK_G16_RUN_NONE;
            r->n = 0;
        } else if (lean) {
            r->kind = ZK_G16_RUN_STREAM;
            r->n = pts[set];
        } else if (chunk > 0) {
            r->kind = ZK_G16_RUN_DENSE;
            r->n = pts[set] < chunk ? pts[set] : chunk;
        } else if (set == ZK_G16_SET_Z) {
            r->kind = ZK_G16_RUN_DENSE;
            r->n = nz;
        } else {
            r->kind = ZK_G16_RUN_SPLIT;
            r->n = nwires;
        }
    }
    return resident ? nwires : 0;
}

/* zk_g16_stream_key_device_bytes is the device memory a key on curve streamed
 * in chunks of chunk points holds (zk_g16_key_load with chunk > 0): two chunk
 * buffers of G1 points and two of G2 points (zk_g16_g1_bytes, g2), each an
 * MSM handle with 16 bytes beyond its points, two buffers of scalars for each
 * group, and, unless its proofs stream too (lean: the index stays on the
 * host), the wire index (4 bytes) of each of its na A and nb B points. */
static inline uint64_t zk_g16_stream_key_device_bytes(int curve, uint64_t chunk, uint64_t na,
                                                      uint64_t nb, int lean) {
    return 2 * (chunk * zk_g16_g1_bytes(curve) + 16) + 2 * (chunk * zk_g16_g2_bytes(curve) + 16) +
           4 * chunk * 32 + (lean ? 0 : (na + nb) * 4);
}

/* zk_g16_lean_slot_device_bytes is the device memory a slot of a key whose
 * proofs stream (h_block > 0) holds: H's blocks alone (their tables are
 * cached once per device and size, zk_h_stream_tables_bytes). */
static inline uint64_t zk_g16_lean_slot_device_bytes(uint64_t h_block) {
    return zk_h_stream_device_bytes(h_block);
}

/* zk_g16_lean_slot_host_bytes is the pinned host staging such a slot holds: W,
 * A, B, H's scratch C (N each), A's and B's scalars gathered from W (na,
 * nb), and the index lists of A's, B's and K's scalars classified chunk by
 * chunk (4 bytes a scalar; K's at most nwires), for lean_split
 * (zk_g16_options). */
static inline uint64_t zk_g16_lean_slot_host_bytes(size_t nwires, uint32_t log_n, uint64_t na,
                                                   uint64_t nb) {
    return ((uint64_t)nwires + 3 * ((uint64_t)1 << log_n) + na + nb) * 32 +
           (na + nb + (uint64_t)nwires) * 4;
}

/* zk_g16_constraints_device_bytes is the device memory a constraint system of
 * rows constraints, nb_coeffs coefficients and terms terms in its three matrices
 * together takes beside the key: the coefficient table, each matrix's row index
 * (rows + 1 words) and 8 bytes a term (its wire and its coefficient's index). */
static inline uint64_t zk_g16_constraints_device_bytes(uint64_t rows, uint64_t nb_coeffs,
                                                       uint64_t terms) {
    return 32 * nb_coeffs + 3 * 4 * (rows + 1) + 8 * terms;
}

/* zk_g16_key_set_constraints uploads the circuit's constraint matrices beside
 * key, resident until zk_g16_key_free and counted in its device bytes: a
 * coefficient table of nb_coeffs scalars of the key's curve, and for each of
 * A, B and C a row index of nb_constraints + 1 words (*_start) and *_terms
 * terms (*_wire: a wire
 * below nwires; *_coeff: an index into coeffs), sdk/constraints' Matrices. Every
 * index is checked here, on the host, before anything reaches the device.
 * Refused (ZK_EINVAL): nwires other than the key's, nb_constraints of 0 or above
 * the key's domain, a key that has constraints already. Streamed keys take them
 * too. Not while proofs on key run. */
int zk_g16_key_set_constraints(zk_g16_key* key, size_t nwires, size_t nb_constraints,
                               size_t nb_coeffs, const void* coeffs, const uint32_t* a_start,
                               const uint32_t* a_wire, const uint32_t* a_coeff, size_t a_terms,
                               const uint32_t* b_start, const uint32_t* b_wire,
                               const uint32_t* b_coeff, size_t b_terms, const uint32_t* c_start,
                               const uint32_t* c_wire, const uint32_t* c_coeff, size_t c_terms,
                               char* err, size_t errlen);

/* zk_g16_prove_compact is zk_g16_prove for a compact partition staged in slot
 * (see "Compact partitions" above; nb_other values): it uploads the bitmaps and
 * the values, expands W on the device, evaluates A, B and C of the
 * n_constraints rows (which must be the key's constraint system's), zero-pads
 * A and B to the domain, then proves as zk_g16_prove does (the G2 MSM starts
 * once W is expanded). Every constraint is checked: when A_i·B_i != C_i for
 * some i, it returns ZK_EUNSAT with *bad_constraint the first such i (else
 * *bad_constraint is -1; bad_constraint may be NULL). ZK_EINVAL: a key without
 * constraints, a compact W that does not fit the staging or more than 3N
 * values, or nb_other other than the set bits of `other` (found on the device,
 * which then reads no value past nb_other). timing->eval_ms is the expansion,
 * evaluation and check; upload_ms the compact upload. */
int zk_g16_prove_compact(zk_g16_key* key, zk_g16_slot* slot, size_t n_constraints,
                         size_t nb_other, void* out_g1, void* out_g2, zk_g16_timing* timing,
                         int64_t* bad_constraint, char* err, size_t errlen);

/* zk_g16_eval_compact is a test hook: the first half of zk_g16_prove_compact
 * (upload, expansion, evaluation, check) in slot, then the expanded W (nwires
 * elements) and the device's A, B and C (the key's domain N elements each,
 * zero past n_constraints) copied to host buffers w, a, b, c. *bad_constraint
 * receives the first unsatisfied constraint or -1; ZK_OK either way. */
int zk_g16_eval_compact(zk_g16_key* key, zk_g16_slot* slot, size_t n_constraints,
                        size_t nb_other, void* w, void* a, void* b, void* c,
                        int64_t* bad_constraint, char* err, size_t errlen);

/* zk_g16_options is how a key's proofs run on the device. No field
 * changes a proof's sums, only how they are computed (for with/without
 * comparisons); a loaded key starts with binary_split 1, ntt_radix 0 and
 * lean_split 0. */
typedef struct zk_g16_options {
    /* binary_split 1 (a key's default) runs a resident key's MSMs over W
     * witness-aware (msm.h's zk_msm_split: W's 0 and 1 scalars get no
     * Pippenger work), 0 dense. */
    int binary_split;
    /* ntt_radix is the radix of H's NTTs (ntt.h): 2, 4, or 0 (a key's
     * default) for ntt.h's default. */
    int ntt_radix;
    /* lean_split 1 runs a lean key's MSMs over W (A, B and K) with each
     * chunk's scalars classified on the host as they are gathered (msm.h's
     * zk_msm_run_stream_split: the 0s copy and add nothing, the 1s are summed
     * apart), 0 (a key's default) dense. */
    int lean_split;
} zk_g16_options;

/* zk_g16_key_set_options sets key's options for its later proofs (a proof
 * reads them once, when it starts). ZK_EINVAL: a value outside those above;
 * the key keeps its options. */
int zk_g16_key_set_options(zk_g16_key* key, const zk_g16_options* opts, char* err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* ZK_GROTH16_H */
