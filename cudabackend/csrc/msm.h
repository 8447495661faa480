/* msm.h: C ABI of the multi-scalar multiplication (msm.cu), BLS12-381's and
 * BN254's groups (zk_msm_group).
 *
 * Points cross the ABI in gnark-crypto's in-memory layout of the curve:
 * bases are G1Affine (BLS12-381 96 bytes, BN254 64) or G2Affine (192, 128)
 * with the point at infinity stored as all zero; scalars are fr.Element (32
 * bytes, Montgomery form); the result is a G1Jac (144, 96) or G2Jac (288,
 * 192), Montgomery form, infinity as (1, 1, 0). Go reinterprets these bytes
 * without arithmetic.
 *
 * Every function returns ZK_MSM_OK or an error code and, on error, writes a
 * NUL-terminated message into err (errlen bytes) when err is not NULL.
 */
#ifndef ZK_MSM_H
#define ZK_MSM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    ZK_MSM_OK = 0,
    /* ZK_MSM_EINVAL: a bad argument (nil pointer, size out of range). */
    ZK_MSM_EINVAL = 1,
    /* ZK_MSM_ECUDA: a CUDA call failed (no device, launch failure...). */
    ZK_MSM_ECUDA = 2,
    /* ZK_MSM_ENOMEM: device memory could not be allocated. */
    ZK_MSM_ENOMEM = 3,
    /* ZK_MSM_ENODEV: no usable device (no GPU, driver too old). The codes
     * are common.h's ZK_* codes. */
    ZK_MSM_ENODEV = 4
};

/* zk_msm_group selects the curve and group: ZK_MSM_G1 and ZK_MSM_G2 are
 * BLS12-381's (points over Fq, over Fq2), ZK_MSM_BN254_G1 and
 * ZK_MSM_BN254_G2 BN254's. Points are in gnark-crypto's affine layout of the
 * curve, scalars its fr elements (32 bytes, Montgomery form). A split run
 * (zk_msm_run_split) takes a classification of its group's curve's scalars
 * (zk_msm_split_classify_group). */
enum { ZK_MSM_G1 = 1, ZK_MSM_G2 = 2, ZK_MSM_BN254_G1 = 3, ZK_MSM_BN254_G2 = 4 };

/* zk_msm_timing is the device-busy time of one MSM in milliseconds, read
 * from CUDA events. Phases are summed over chunks; total runs from the first
 * event to the last. Host scalars copied in pieces (zk_msm_set_pieces)
 * overlap the work, so the phases add up to more than total: upload runs
 * from the first piece's copy to the last one's, sort counts only what
 * delays a piece's accumulation (from its arrival, or from the end of the
 * accumulation before), accum the accumulations' spans. */
typedef struct zk_msm_timing {
    float upload_ms; /* host scalars to device (0 for device scalars) */
    float sort_ms;   /* signed digits and the radix sort by bucket */
    float accum_ms;  /* bucket accumulation */
    float reduce_ms; /* bucket reduction, window combination */
    float total_ms;  /* first event to last */
    int window_bits; /* the window size c chosen */
    int chunks;      /* how many chunks the scalars were split into */
    float ones_ms;   /* split runs: summing the points of the scalars equal to 1 */
    size_t pippenger_n; /* scalars that went through Pippenger */
    int depth;       /* precomputed copies of the bases read (1: none; 0: no Pippenger) */
} zk_msm_timing;

/* zk_msm_upload copies n affine points of the group to the device and
 * returns an opaque handle in *handle. The points go to the calling
 * thread's current device (cudaSetDevice / zk_use_device); later calls on
 * the handle make that device current themselves. With skip != NULL the resident set
 * has nskip points: entry i is infinity where skip[i] != 0 and otherwise the
 * next of the n given points in order (n must equal the count of zero
 * skip bytes). This expands a gnark proving key's pk.G1.A / pk.G1.B /
 * pk.G2.B, which omit the points that InfinityA / InfinityB mark, to the
 * full wire list, so MSMs run on the unfiltered wire vector. */
int zk_msm_upload(int group, const void* points, size_t n, const uint8_t* skip, size_t nskip,
                  void** handle, char* err, size_t errlen);

/* zk_msm_upload_depth is zk_msm_upload with precomputed copies of the
 * points (see zk_msm_precompute), at most maxdepth (1: none), allocated with
 * the points in one array and computed in place: no transient second copy.
 * Synchronizes. */
int zk_msm_upload_depth(int group, const void* points, size_t n, const uint8_t* skip,
                        size_t nskip, int maxdepth, void** handle, char* err, size_t errlen);

/* zk_msm_upload_on is zk_msm_upload on device ordinal device, which it
 * makes current first (for callers whose threads migrate, as Go's do). */
int zk_msm_upload_on(int device, int group, const void* points, size_t n, const uint8_t* skip,
                     size_t nskip, void** handle, char* err, size_t errlen);

/* zk_msm_len returns the number of resident points of a handle. */
size_t zk_msm_len(void* handle);

/* zk_msm_free releases a handle and its device memory. NULL is a no-op. */
int zk_msm_free(void* handle, char* err, size_t errlen);

/* zk_msm_run computes sum_i scalars[i] * bases[i] for i < n (n <= the
 * resident length: the first n bases are used) and writes the Jacobian
 * result to out (host memory). scalars is a host pointer when
 * scalars_on_device == 0 (copied on the stream), else a device pointer. The
 * work runs on stream (a cudaStream_t; NULL: the handle's own stream) and
 * the call returns once the result is on the host. */
int zk_msm_run(void* handle, const void* scalars, size_t n, int scalars_on_device, void* stream,
               void* out, zk_msm_timing* timing, char* err, size_t errlen);

/* zk_msm_run_stream is zk_msm_run over points that stay in host memory: n
 * points and n scalars, both in pinned host memory, pass through the
 * device chunk points at a time, chunk k's into pbuf[k % 2] and sbuf[k % 2]
 * (device buffers of chunk points and chunk scalars each, the caller's) on
 * the handle's copy stream, each copy beside the sort and accumulation of the
 * chunk before. Every chunk accumulates into one set of buckets, reduced
 * once: the cost of one MSM of n points (its window chosen for n), not of
 * n/chunk MSMs. The handle gives the group, the device and the streams; its
 * own points are not read. The window is at most max_c bits (msm_plan.h's
 * zk_msm_make_plan_stream; 0: no cap). Returns once the result is on the
 * host. One run per pair of buffers at a time. */
int zk_msm_run_stream(void* handle, const void* host_points, const void* host_scalars, size_t n,
                      void* const pbuf[2], void* const sbuf[2], size_t chunk, int max_c,
                      void* stream, void* out, zk_msm_timing* timing, char* err, size_t errlen);

/* zk_msm_stream_split is a streamed MSM's scalars classified on the host,
 * chunk by chunk (zk_msm_classify_chunk): chunk k, scalars [k*chunk,
 * k*chunk + cn), owns idx[k*chunk .. k*chunk + cn), which holds the
 * chunk-local indices of its ones[k] scalars equal to 1, then those of its
 * rest[k] scalars neither 0 nor 1; its zeros are in neither. idx is pinned
 * host memory (n entries); ones and rest have a count per chunk. */
typedef struct zk_msm_stream_split {
    const uint32_t* idx;
    const uint32_t* ones;
    const uint32_t* rest;
} zk_msm_stream_split;

/* zk_msm_classify_chunk classifies cn scalars of group's scalar field
 * (gnark's Montgomery form, host memory) into idx, *nones and *nrest as
 * zk_msm_stream_split describes one chunk. On the calling thread. */
int zk_msm_classify_chunk(int group, const void* scalars, size_t cn, uint32_t* idx,
                          uint32_t* nones, uint32_t* nrest, char* err, size_t errlen);

/* zk_msm_run_stream_split is zk_msm_run_stream (same buffers, chunk and
 * window) with the scalars classified (split, for this chunk): each chunk's
 * index list is copied beside its points; its ones are summed apart (a
 * segment of the list per thread, into sums shared by every chunk) and only
 * its rest goes through the digits, the sort and the accumulation, as the
 * resident split run does with a device classification (zk_msm_run_split).
 * A chunk with no ones and no rest copies nothing. The result is the same
 * sum. */
int zk_msm_run_stream_split(void* handle, const void* host_points, const void* host_scalars,
                            size_t n, void* const pbuf[2], void* const sbuf[2], size_t chunk,
                            int max_c, const zk_msm_stream_split* split, void* stream, void* out,
                            zk_msm_timing* timing, char* err, size_t errlen);

/* zk_msm_stream_work_bytes is zk_msm_work_bytes for zk_msm_run_stream of n
 * points in chunks of chunk (msm_plan.h's zk_msm_stream_work_of). */
int zk_msm_stream_work_bytes(void* handle, size_t n, size_t chunk, int max_c, uint64_t* out,
                             char* err, size_t errlen);

/* zk_msm_work_bytes writes to *out the device working memory zk_msm_run
 * allocates (from the device's stream-ordered pool, which keeps it for the
 * next MSM) for n scalars on handle: the sizes come from msm_plan.h, as the
 * allocations do, each rounded up to the pool's granularity. */
int zk_msm_work_bytes(void* handle, size_t n, int scalars_on_device, uint64_t* out, char* err,
                      size_t errlen);

/* zk_msm_split_work_bytes writes to *out a bound of what zk_msm_run_split
 * allocates on handle over a classification of n scalars, whatever their
 * counts: every one of them through Pippenger (one plan of n scalars) and
 * every one a 1 (the ones' buffers for n). The classification's own lists
 * are msm_plan.h's zk_msm_classify_work. */
int zk_msm_split_work_bytes(void* handle, size_t n, uint64_t* out, char* err, size_t errlen);

/* zk_msm_residency writes how many threads of the MSM's accumulation and
 * reduction kernels for group device holds at once: msm_plan.h's inputs,
 * for an estimate equal to what zk_msm_run allocates there. */
int zk_msm_residency(int device, int group, uint32_t* accum, uint32_t* reduce, char* err,
                     size_t errlen);

/* zk_msm_bases returns the device address of a handle's resident points,
 * for callers that refill them (groth16.cu's streamed keys). */
void* zk_msm_bases(void* handle);

/* zk_msm_trim returns the device's MSM pool memory not in use to the device
 * (after a key upload's scratch, before a measurement). Synchronizes the
 * device. */
int zk_msm_trim(int device, char* err, size_t errlen);

/* zk_msm_split is the classification of a device scalar vector W into
 * zeros, ones and the rest (the witness-aware MSM): two ascending index
 * lists on the device, the indices i with W[i] == 1 (Montgomery form: R mod
 * r) and those with W[i] neither 0 nor 1. A split MSM over W drops the zeros,
 * sums the points of the ones by plain point additions, and sends only the
 * rest through Pippenger; a Groth16 witness is mostly bits, so most of its
 * scalars need no Pippenger work. One classification serves every MSM over
 * the same W (A, B and K in G1, B in G2). */
typedef struct zk_msm_split zk_msm_split;

/* zk_msm_split_classify classifies the n scalars at scalars (device memory
 * of device ordinal device, which it makes current; gnark fr.Element
 * layout) on stream (NULL: the legacy default stream) and returns when the counts are on the host: it
 * synchronizes the stream. The lists come from the device's stream-ordered
 * memory pool (8 bytes per scalar at most). The scalars must stay unchanged
 * on the device until zk_msm_split_free: split MSMs read the rest's scalars
 * from there. */
int zk_msm_split_classify(int device, const void* scalars, size_t n, void* stream,
                          zk_msm_split** out, char* err, size_t errlen);

/* zk_msm_split_classify_group is zk_msm_split_classify of the scalars of
 * group's curve (either group of a curve: 1 is that field's Montgomery one);
 * zk_msm_split_classify classifies BLS12-381's. A split run refuses a
 * classification of another curve's scalars than its handle's (ZK_MSM_EINVAL). */
int zk_msm_split_classify_group(int group, int device, const void* scalars, size_t n,
                                void* stream, zk_msm_split** out, char* err, size_t errlen);

/* zk_msm_split_counts stores how many of the classified scalars are 0, 1
 * and neither (any pointer may be NULL). */
void zk_msm_split_counts(const zk_msm_split* split, size_t* zeros, size_t* ones, size_t* rest);

/* zk_msm_split_free releases a classification; NULL is a no-op. Only once
 * every MSM using it has returned. */
int zk_msm_split_free(zk_msm_split* split, char* err, size_t errlen);

/* zk_msm_run_split is zk_msm_run over the classified scalars W[lo .. lo+n)
 * (device scalars): sum_i W[lo+i] * bases[i] for i < n, n <= the resident
 * length, lo + n <= the classified length. Pippenger runs over the rest's
 * entries, the ones' points are summed apart and added in, zeros cost
 * nothing. Entries outside [lo, lo+n) count as zero, at the cost of their
 * slots: meant for ranges covering most of W (Groth16's K skips only the
 * public wires). On the handle's device; stream as zk_msm_run. */
int zk_msm_run_split(void* handle, const zk_msm_split* split, size_t lo, size_t n, void* stream,
                     void* out, zk_msm_timing* timing, char* err, size_t errlen);

/* zk_msm_precompute keeps up to maxdepth copies of the handle's points on
 * the device (maxdepth in [1, 64]): copy g is P * 2^(c*G*g), computed from
 * the resident points (c*G doublings per point per copy), with the window c
 * and the copies d <= maxdepth that msm_plan.h's zk_msm_precompute_choice
 * picks for the handle's length, G = ceil(nwin/d). Later runs read copy g for
 * windows g*G .. g*G+G-1 and reduce only G bucket sets, when msm_plan.h's
 * cost model says the copies pay for their length. The points then take d
 * times their memory (zk_msm_bases_bytes); maxdepth 1 returns to the points
 * alone. Transiently, the old and the new arrays are both allocated.
 * Synchronizes the handle's stream; not concurrently with a run. */
int zk_msm_precompute(void* handle, int maxdepth, char* err, size_t errlen);

/* zk_msm_precomputed stores the copies' window (0: none) and count (1: the
 * points alone). */
void zk_msm_precomputed(void* handle, int* c, int* depth);

/* zk_msm_host_alloc allocates bytes of pinned (page-locked) host memory,
 * for scalars the MSM copies at full speed; zk_msm_host_free releases it. */
int zk_msm_host_alloc(size_t bytes, void** out, char* err, size_t errlen);
int zk_msm_host_free(void* p, char* err, size_t errlen);

/* zk_msm_set_pieces sets how many pieces zk_msm_run on handle copies host
 * scalars in (G1's by default; G2's too while pieces > 0 is set here): each piece's
 * digits, sort and accumulation start when it has arrived, the next piece's
 * copy running beside them, and the pieces share one set of buckets and one
 * reduction. A piece keeps at least min_piece scalars (fewer pieces for
 * short MSMs); each piece is sorted on a second stream while the piece before
 * is accumulated (a second set of sort buffers). pieces 0 returns to the
 * default count (4, for G1 only: G2's later chunks spill registers) and
 * min_piece 0 to the default least (2^23). For with/without comparisons and
 * tests; the handle's own setting, for its later runs. NULL is a no-op. */
void zk_msm_set_pieces(void* handle, int pieces, size_t min_piece);

/* zk_msm_window_bits returns the window size zk_msm_run picks for n
 * scalars of the group over bases without precomputed copies (for tests and
 * benchmarks; with copies, zk_msm_timing's window_bits says). */
int zk_msm_window_bits(int group, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* ZK_MSM_H */
