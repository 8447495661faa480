/* groth16.h: C ABI of the Groth16 prover on one GPU (groth16.cu), built on the
 * NTT (ntt.h) and MSM (msm.h) kernels.
 *
 * A key is uploaded once (zk_g16_key_load): the G1 point sets A, B (expanded to
 * the full wire list, infinity where the proving key's masks say so), K, Z and
 * the G2 set B stay resident in device memory. A proof (zk_g16_prove) uploads
 * only the partition (W, A, B), computes H = (A·B − C)/Z on the device and runs
 * the five MSMs against the resident bases; the host assembles the proof with
 * fresh r and s from the five sums it gets back (cheap: a few scalar
 * multiplications).
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

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zk_g16_key zk_g16_key;

/* zk_g16_key_load uploads a proving key's point sets to device. g1a holds na
 * points for the wires where inf_a[i] == 0 (nwires mask bytes); likewise g1b,
 * g2b with inf_b. g1k holds nk points (wires nb_public..nwires-1), g1z nz points
 * (N-1 for a domain of N = 2^log_n).
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
 * A streamed key has none (depth is ignored). */
int zk_g16_key_load(int device, uint32_t log_n, size_t nwires, size_t nb_public,
                    const void* g1a, size_t na, const uint8_t* inf_a,
                    const void* g1b, size_t nb, const uint8_t* inf_b,
                    const void* g1k, size_t nk, const void* g1z, size_t nz,
                    const void* g2b, size_t chunk, int depth, zk_g16_key** out, char* err,
                    size_t errlen);

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
    float upload_ms; /* W, A, B host to device */
    float ntt_ms;    /* H */
    float msm_g1_ms;       /* the four G1 MSMs, after H on the main stream */
    float msm_g2_start_ms; /* when the G2 MSM started on its own stream (after W's upload) */
    float msm_g2_ms;       /* W's classification and the G2 MSM, beside H and the G1 MSMs */
    float total_ms;        /* first event to the last, on either stream: the device-busy time */
} zk_g16_timing;

typedef struct zk_g16_slot zk_g16_slot;

/* zk_g16_slot_create allocates a slot for proofs on key: device buffers for W
 * (the key's wires) and for A, B, C (the key's domain N), two streams, the
 * events, and pinned host staging for W (nwires scalars) then A and B (N
 * scalars each). *w, *a and *b receive the staging addresses the caller fills.
 * *device_bytes and *host_bytes receive what the slot holds. */
int zk_g16_slot_create(zk_g16_key* key, zk_g16_slot** out, void** w, void** a, void** b,
                       uint64_t* device_bytes, uint64_t* host_bytes, char* err, size_t errlen);

/* zk_g16_slot_free releases a slot. Not while a proof runs in it. */
int zk_g16_slot_free(zk_g16_slot* slot, char* err, size_t errlen);

/* zk_g16_prove runs one proof's device work in slot, whose staging holds the
 * partition: the key's nwires scalars of W, n scalars each of A and B (n <= N;
 * zero-padded on the device). It returns when the sums are on the host, and the
 * staging may be refilled. out_g1 receives G1Jac sums (144 bytes each): for A
 * (Ar), B (Bs1), K (Krs) and Z (Krs2) in that order, partials[i] of each
 * (zk_g16_key_info: one each for a resident key, one per chunk for a streamed
 * one, to be added up), out_g2 partials[4] G2Jac (Bs2). One proof per slot at
 * a time; proofs in different slots may run at once (a streamed key's chunk
 * buffers serve one proof's G1 and one proof's G2 MSMs at a time). */
int zk_g16_prove(zk_g16_key* key, zk_g16_slot* slot, size_t n, void* out_g1, void* out_g2,
                 zk_g16_timing* timing, char* err, size_t errlen);

/* zk_g16_set_binary_split turns the witness-aware MSM (msm.h's zk_msm_split:
 * W's 0 and 1 scalars get no Pippenger work) on (1) or off (0) for every
 * later proof, or back to the environment's choice (-1, the default: on
 * unless ZKHOST_CUDA_BINARY_SPLIT=0). */
void zk_g16_set_binary_split(int on);

#ifdef __cplusplus
}
#endif

#endif /* ZK_GROTH16_H */
