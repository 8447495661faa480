/* ntt.h: C ABI of the scalar-field NTT of BLS12-381 and BN254
 * (zk_ntt_curve) and Groth16's H computation over either (ntt.cu), in
 * gnark's form or snarkjs's (zk_h_form).
 *
 * Elements are gnark-crypto fr.Element bytes of the curve: 32 bytes, four
 * little-endian uint64 limbs, Montgomery form. Every transform matches
 * gnark-crypto v0.19.0's fr/fft Domain of the curve, of cardinality
 * N = 2^log_n with the default shift (FrMultiplicativeGen: 7 for BLS12-381,
 * 5 for BN254) bit for bit:
 *   direction ZK_NTT_FORWARD = Domain.FFT, ZK_NTT_INVERSE = Domain.FFTInverse
 *   (scaled by 1/N); decimation ZK_NTT_DIF takes natural order and leaves
 *   bit-reversed order, ZK_NTT_DIT the reverse; coset != 0 is fft.OnCoset().
 *
 * Twiddle tables are built on first use of a (curve, device, log_n) and
 * cached on the device: 2·N·32 bytes (zk_ntt_domain_bytes), until
 * zk_ntt_release.
 *
 * Errors: every function returns ZK_OK or a code of common.h and, on error,
 * writes a NUL-terminated message into err (errlen bytes) when err is not
 * NULL. Streams are cudaStream_t passed as void* (NULL: legacy default).
 */
#ifndef ZK_NTT_H
#define ZK_NTT_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Decimation, numbered as gnark-crypto's fft.DIT (0) and fft.DIF (1). */
enum { ZK_NTT_DIT = 0, ZK_NTT_DIF = 1 };
/* Direction. */
enum { ZK_NTT_FORWARD = 0, ZK_NTT_INVERSE = 1 };
/* ZK_NTT_MAX_LOG is the largest supported log_n, for every curve (BN254's
 * scalar field has no root of unity of order 2^29). */
enum { ZK_NTT_MAX_LOG = 28 };

/* zk_ntt_curve names the scalar field a transform runs over by its curve, as
 * msm.h's zk_msm_group names a group: ZK_NTT_BLS12_381 (gnark-crypto's
 * bls12-381 fr) or ZK_NTT_BN254 (bn254 fr). The functions with a curve
 * argument (the _curve ones) take either; those without take BLS12-381's.
 * Any other value is ZK_EINVAL. */
enum { ZK_NTT_BLS12_381 = 1, ZK_NTT_BN254 = 2 };

/* zk_ntt_two_adicity is the largest s with 2^s dividing r - 1 for curve's
 * scalar field r (32 for BLS12-381, 28 for BN254; 0 for another value): its
 * largest domain is 2^s, and H in snarkjs's form, which needs a root of
 * order 2N, takes domains below it. field.cuh's TWO_ADICITY, for C. */
static inline uint32_t zk_ntt_two_adicity(int curve) {
    return curve == ZK_NTT_BLS12_381 ? 32 : curve == ZK_NTT_BN254 ? 28 : 0;
}

/* zk_h_form is how a proving key's H points want H computed (sdk/keyfile's
 * HForm): ZK_H_GNARK, gnark's computeH (the quotient's coefficients, over
 * gnark-crypto's domain); ZK_H_SNARKJS, snarkjs's prover (A·B − C on the
 * odd coset of snarkjs's own domain, no division: zk_compute_h_device_curve
 * says how). Each form has its own cached tables of a size, of the same
 * bytes (zk_ntt_domain_bytes_of). Any other value is ZK_EINVAL. */
enum { ZK_H_GNARK = 0, ZK_H_SNARKJS = 1 };

/* zk_ntt_domain_bytes_of is the device memory the cached tables of one size
 * of one curve take (the same for both: 32-byte elements; plain C, for the
 * Go side's accounting): the stage-major twiddles of
 * both directions (N-1 each, 1 for N = 1), and the coset tables split at
 * lo = ceil(log_n/2) bits (2^lo for g and g^-1, 2^(log_n-lo) four times). */
static inline uint64_t zk_ntt_domain_bytes_of(uint32_t log_n) {
    const uint64_t n = (uint64_t)1 << log_n, tw = n > 1 ? n - 1 : 1;
    const uint32_t lo = (log_n + 1) / 2;
    return (2 * tw + 2 * ((uint64_t)1 << lo) + 4 * ((uint64_t)1 << (log_n - lo))) * 32;
}

/* zk_ntt_domain_bytes is zk_ntt_domain_bytes_of, from the library. */
uint64_t zk_ntt_domain_bytes(uint32_t log_n);

/* Every transform takes a radix: how its passes run their stages in shared
 * memory, 2 (one stage per step) or 4 (two stages per step, pass_butterfly4,
 * its own kernel), the same result bit for bit; 0 is the default, 4. Any
 * other value is ZK_EINVAL. */

/* zk_ntt_prepare_curve builds (once) the tables of curve for log_n on
 * device. Optional: every transform prepares its size itself, but the first
 * call pays for it. */
int zk_ntt_prepare_curve(int curve, int device, uint32_t log_n, char* err, size_t errlen);

/* zk_ntt_release frees every cached table of device, of every curve. Not
 * safe while transforms of that device are in flight. */
int zk_ntt_release(int device, char* err, size_t errlen);

/* zk_ntt_device_curve transforms 2^log_n elements of curve's scalar field in
 * place in device memory, enqueued on stream; returns without waiting. */
int zk_ntt_device_curve(int curve, int device, void* d_data, uint32_t log_n, int direction,
                        int decimation, int coset, int radix, void* stream, char* err,
                        size_t errlen);

/* zk_ntt_host_curve transforms 2^log_n elements of curve's scalar field in
 * place in host memory (copy in, transform, copy out); returns when done. */
int zk_ntt_host_curve(int curve, int device, void* data, uint32_t log_n, int direction,
                      int decimation, int coset, int radix, char* err, size_t errlen);

/* zk_h_prepare builds (once) the tables H of form on curve's domain of
 * 2^log_n reads on device: zk_ntt_prepare_curve's for ZK_H_GNARK. */
int zk_h_prepare(int curve, int form, int device, uint32_t log_n, char* err, size_t errlen);

/* zk_ntt_prepare, zk_ntt_device and zk_ntt_host are the _curve functions
 * for ZK_NTT_BLS12_381. */
int zk_ntt_prepare(int device, uint32_t log_n, char* err, size_t errlen);
int zk_ntt_device(int device, void* d_data, uint32_t log_n, int direction, int decimation,
                  int coset, int radix, void* stream, char* err, size_t errlen);
int zk_ntt_host(int device, void* data, uint32_t log_n, int direction, int decimation, int coset,
                int radix, char* err, size_t errlen);

/* zk_h_timing holds device-busy times (ms) of one H computation, from CUDA
 * events recorded on its stream. */
typedef struct zk_h_timing {
    float upload_ms;     /* host A, B to device (zk_compute_h_host only) */
    float intt_ms;       /* C = A∘B, then the three inverse NTTs (+ coset shift) */
    float coset_ntt_ms;  /* the three forward NTTs on the coset */
    float pointwise_ms;  /* (A·B - C) / (g^N - 1) */
    float coset_intt_ms; /* the final inverse coset NTT */
    float download_ms;   /* H to host (zk_compute_h_host only) */
    float total_ms;      /* first event to last */
} zk_h_timing;

/* zk_compute_h_device_curve computes the scalars of Groth16's H MSM on curve
 * in form (zk_h_form), for N = 2^log_n.
 *
 * ZK_H_GNARK: exactly as gnark v0.14.0 backend/groth16/<curve> computeH does:
 *   h = FFTInverse_DIF_coset((FFT_DIT_coset(FFTInverse_DIF(A))
 *       ∘ FFT_DIT_coset(FFTInverse_DIF(B)) - FFT_DIT_coset(FFTInverse_DIF(C)))
 *       / (g^N - 1))  with C = A∘B,
 * leaving h bit-reversed, as gnark does (h[:N-1] pairs with pk.G1.Z).
 * d_a and d_b hold A and B, N elements each (zero-padded past the
 * constraints); d_c is N elements of scratch. H is written to d_a; d_b and
 * d_c are clobbered. Enqueued on stream. With timing == NULL the call
 * returns without waiting; otherwise it records events, waits for the last
 * one and fills *timing.
 *
 * ZK_H_SNARKJS: as snarkjs 0.7.6's prover (src/groth16_prove.js) does, over
 * snarkjs's domain (ω: field.cuh's snarkjs_root raised to 2^(S−log_n); for
 * BN254 gnark-crypto's ω, for BLS12-381 another root) and ρ, its primitive
 * 2N-th root with ρ² = ω:
 *   h_i = (A·B − C)(ρ·ω^i) for i in [0, N), in natural order, C = A∘B,
 * each of A, B, C interpolated (FFTInverse, DIF) and evaluated on the coset
 * ρ·<ω> (FFT, DIT, with the shift ρ), no division (x^N − 1 is −2 on that
 * coset: snarkjs's setup folded it into the H points), no last transform.
 * The same buffers; log_n below the field's two-adicity (ρ must exist).
 * coset_intt_ms is 0. refprover.ComputeHSnarkjs is the CPU's reference. */
int zk_compute_h_device_curve(int curve, int form, int device, void* d_a, void* d_b, void* d_c,
                              uint32_t log_n, int radix, void* stream, zk_h_timing* timing,
                              char* err, size_t errlen);

/* zk_compute_h_device is zk_compute_h_device_curve for BLS12-381, gnark's
 * form. */
int zk_compute_h_device(int device, void* d_a, void* d_b, void* d_c, uint32_t log_n, int radix,
                        void* stream, zk_h_timing* timing, char* err, size_t errlen);

/* zk_compute_h_host is zk_compute_h_device on host memory: a and b hold n
 * <= 2^log_n elements each (zero-padded on the device), h receives 2^log_n
 * elements. It allocates 3·2^log_n·32 bytes of device memory for the call.
 * timing may be NULL. */
int zk_compute_h_host(int device, const void* a, const void* b, uint64_t n, void* h,
                      uint32_t log_n, int radix, zk_h_timing* timing, char* err, size_t errlen);

/* zk_compute_h_host_curve is zk_compute_h_host on curve in form. */
int zk_compute_h_host_curve(int curve, int form, int device, const void* a, const void* b,
                            uint64_t n, void* h, uint32_t log_n, int radix, zk_h_timing* timing,
                            char* err, size_t errlen);

/* ---- H out of core ---------------------------------------------------------
 *
 * zk_h_stream computes the same H as zk_compute_h_device, bit for bit, for a
 * device too small to hold A, B and C: they stay in pinned host memory and
 * pass through the device in blocks. Each NTT of N = 2^log_n = N1·N2 is done
 * as four-step transforms over the N1 x N2 matrix of the vector, row-major:
 * size-N1 transforms down its columns (blocks of whole columns, copied as 2D
 * strided copies), a twiddle ω^(m·bitrev(j)) at row j, column m, and size-N2
 * transforms along its rows (blocks of whole rows). Natural order in,
 * bit-reversed out (DIF), as gnark's FFTInverse(DIF) leaves it, and the
 * reverse (DIT); the whole of computeH then takes four passes over the
 * host's vectors: columns (C = A∘B, then the inverse NTTs' column steps),
 * rows (their row steps, the coset shift, the forward NTTs' row steps),
 * columns (their column steps, (A·B-C)/Z, the last inverse NTT's column
 * step), rows (its row step and the coset shift back).
 *
 * N1 = 2^zk_h_stream_l1(log_n) (at most 2^10, so a column transform fits one
 * block of shared memory). A block holds `block` elements of each vector:
 * whole columns (block/N1 of them) or whole rows (block/N2), so block is a
 * power of two from zk_h_stream_min_block(log_n) to N. */
static inline uint32_t zk_h_stream_l1(uint32_t log_n) {
    const uint32_t l1 = (log_n + 1) / 2;
    return l1 < 10 ? l1 : 10;
}

/* zk_h_stream_min_block is the smallest block: one whole row or column. */
static inline uint64_t zk_h_stream_min_block(uint32_t log_n) {
    const uint32_t l1 = zk_h_stream_l1(log_n), l2 = log_n - l1;
    return (uint64_t)1 << (l1 > l2 ? l1 : l2);
}

/* zk_h_stream_tables_bytes is the device memory of the constant tables one
 * size of H out of core reads (cached per device and size, as the NTT's):
 * the size-N1 and size-N2 transforms' tables, and the four hi/lo tables of
 * ω^e, ω^-e, g^e/N and g^-e/N split at log_n/2 bits. */
static inline uint64_t zk_h_stream_tables_bytes(uint32_t log_n) {
    const uint32_t l1 = zk_h_stream_l1(log_n), lo = log_n / 2;
    const uint64_t pow = 4 * (((uint64_t)1 << lo) + ((uint64_t)1 << (log_n - lo))) * 32;
    return pow + zk_ntt_domain_bytes_of(l1) + zk_ntt_domain_bytes_of(log_n - l1);
}

/* zk_h_stream_device_bytes is the device memory one zk_h_stream of blocks of
 * `block` elements holds besides the tables (zk_h_stream_tables_bytes, once
 * per device and size): two sets (one per stream, so one block's copies
 * overlap the other's transforms) of four buffers (A, B, C and a scratch
 * for transposes), 32 bytes an element. */
static inline uint64_t zk_h_stream_device_bytes(uint64_t block) { return 2 * 4 * block * 32; }

typedef struct zk_h_stream zk_h_stream;

/* zk_h_stream_create allocates the buffers of H out of core for domain 2^log_n
 * in blocks of `block` elements on device (ZK_EINVAL: a block that is not a
 * power of two from zk_h_stream_min_block to N) and builds its tables. */
int zk_h_stream_create(int device, uint32_t log_n, uint64_t block, zk_h_stream** out, char* err,
                       size_t errlen);

/* zk_h_stream_free releases h. Not while it runs. */
int zk_h_stream_free(zk_h_stream* h, char* err, size_t errlen);

/* zk_h_stream_run computes H from a and b (N elements each, pinned host
 * memory; past their first n, the constraints', they may hold anything: the
 * first pass zeroes that on the device, so the caller need not) with c (N
 * elements, pinned) as
 * scratch: H is left in a, bit-reversed (as zk_compute_h_device leaves it in
 * d_a); b and c are clobbered. Returns when H is in a. timing (optional):
 * intt_ms is the first two passes, coset_ntt_ms the third, coset_intt_ms the
 * fourth, total_ms all. One run per h at a time. */
int zk_h_stream_run(zk_h_stream* h, void* a, void* b, void* c, uint64_t n, zk_h_timing* timing,
                    char* err, size_t errlen);

/* zk_compute_h_stream_host is a test hook: zk_compute_h_host's contract, computed
 * by zk_h_stream_run in blocks of `block` elements (copied through pinned
 * buffers of its own). */
int zk_compute_h_stream_host(int device, const void* a, const void* b, uint64_t n, void* h,
                             uint32_t log_n, uint64_t block, zk_h_timing* timing, char* err,
                             size_t errlen);

/* zk_field_op is a test hook: out[i] = op(a[i], b[i]) for i < n computed on
 * the device, in field 0 (fr, 32-byte elements) or 1 (fq, 48-byte
 * elements). ops: 0 add, 1 sub, 2 mul, 3 sqr(a), 4 neg(a), 5 inverse(a),
 * 6 mul by the portable reference product, 7 from_montgomery(a),
 * 8 to_montgomery(a), 9 dbl(a). Host buffers. */
int zk_field_op(int device, int field, int op, const void* a, const void* b, void* out,
                uint64_t n, char* err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* ZK_NTT_H */
