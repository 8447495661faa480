// groth16.cu: one Groth16 proof's device work (see groth16.h): upload the
// partition, H on the device, five MSMs against resident bases. One code
// path for both curves: a key holds its curve's sizes and MSM groups, and
// H's curve and form, which the NTT and MSM entry points take.

#include <cuda_runtime.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <new>
#include <stdio.h>
#include <stdlib.h>
#include <string>
#include <thread>
#include <vector>

#include "common.cuh"
#include "compact.cuh"
#include "groth16.h"
#include "msm.h"
#include "msm_plan.h"
#include "ntt.h"

// streamer is one group's chunk pipeline of a streamed key: two MSM handles
// whose chunk points are refilled from pinned host memory (one buffer loads on
// the copy stream while the MSM of the other runs), the gathered scalars of
// each, and the lock that lets one proof at a time use them.
struct streamer {
    size_t S = 0;      // points per chunk
    size_t elem = 0;   // bytes per point
    void* h[2] = {};   // MSM handles of S points each
    void* sc[2] = {};  // device: S scalars each, gathered for masked sets
    cudaStream_t copy = nullptr;
    cudaEvent_t loaded[2] = {};
    std::mutex mu;
};

struct zk_g16_key {
    int device;
    // The key's curve (ntt.h's zk_ntt_curve) and what follows from it, and
    // its H points' form (zk_h_form).
    int curve, h_form;
    int group1, group2;          // msm.h's groups of its G1 and G2
    size_t g1, g2, jac1, jac2;   // bytes of an affine and a Jacobian point of each
    uint32_t log_n;
    size_t nwires, nb_public, nk, nz;
    // Resident (chunk == 0): the point sets on the device.
    void* a;  // G1, nwires points (infinity where InfinityA)
    void* b;  // G1, nwires points (infinity where InfinityB)
    void* k;  // G1, nk points
    void* z;  // G1, nz points
    void* b2; // G2, nwires points
    uint64_t bytes;
    // Streamed (chunk > 0): the point sets stay in pinned host memory, as the
    // key file stores them (A and B without their infinity points), and go to
    // the device chunk by chunk at every proof.
    size_t chunk;
    size_t na, nb;
    const char *h_a, *h_b, *h_k, *h_z, *h_b2;  // pinned host
    uint32_t *idx_a, *idx_b;  // device: the wire of each A (B) point (not lean)
    // Lean (h_block > 0): the proofs stream too; the wire index stays here.
    uint64_t h_block;
    int stream_c;  // their MSMs' window cap (zk_msm_run_stream)
    std::vector<uint32_t> hidx_a, hidx_b;
    streamer *s1, *s2;        // G1, G2
    std::vector<void*> registered;  // host ranges registered in place
    std::vector<void*> copies;      // pinned copies where registration failed
    uint64_t pinned_copy_bytes;
    uint64_t work_g1, work_g2;      // MSM working memory of one proof, per stream
    // The constraint system (zk_g16_key_set_constraints), resident whether
    // the point sets are or not: cs_n rows (0: none), the coefficient table
    // and A, B, C in compressed sparse rows.
    size_t cs_n;
    void* cs_coeffs;
    uint32_t* cs_start[3];
    uint32_t* cs_wire[3];
    uint32_t* cs_coeff[3];
    uint64_t cs_bytes;
    // zk_g16_key_set_options: read once at the start of every proof, so a
    // change takes effect at the next one.
    std::atomic<int> binary_split{1};  // MSMs over W split (1) or dense (0)
    std::atomic<int> ntt_radix{0};     // H's NTTs (ntt.h; 0: the default)
    std::atomic<int> lean_split{0};    // a lean key's MSMs over W classified on the host (1)
};

static const size_t kFr = 32;

extern "C" uint64_t zk_g16_key_device_bytes(const zk_g16_key* key) {
    return key ? key->bytes : 0;
}

extern "C" int zk_g16_host_register_read_only(int device) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrHostRegisterReadOnlySupported, device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return v;
}

static size_t chunks_of(size_t n, size_t S) { return S ? (n + S - 1) / S : (n ? 1 : 0); }

extern "C" void zk_g16_key_info(const zk_g16_key* key, zk_g16_key_info_t* info) {
    memset(info, 0, sizeof *info);
    if (!key) return;
    info->device_bytes = key->bytes;
    info->chunk = key->chunk;
    info->work_g1 = key->work_g1;
    info->work_g2 = key->work_g2;
    info->pinned_copy_bytes = key->pinned_copy_bytes;
    info->registered = key->registered.size();
    const size_t S = key->chunk;
    if (S && !key->h_block) {
        info->partials[0] = chunks_of(key->na, S);
        info->partials[1] = chunks_of(key->nb, S);
        info->partials[2] = chunks_of(key->nk, S);
        info->partials[3] = chunks_of(key->nz, S);
        info->partials[4] = chunks_of(key->nb, S);
    } else {
        for (int i = 0; i < 5; i++) info->partials[i] = 1;
    }
    void* sets[] = {key->a, key->b, key->k, key->z, key->b2};
    for (int i = 0; i < 5; i++) {
        int c = 0, d = 1;
        if (!S && sets[i]) zk_msm_precomputed(sets[i], &c, &d);
        info->copies[i] = (uint64_t)d;
        info->copies_c[i] = (uint64_t)c;
    }
    info->constraints = key->cs_n;
    info->constraint_bytes = key->cs_bytes;
    info->h_block = key->h_block;
    info->stream_c = (uint64_t)key->stream_c;
}

static int msm_fail(int rc, const char* what, char* err, size_t errlen, const char* inner) {
    int code = rc == ZK_MSM_ENOMEM ? ZK_ENOMEM : rc == ZK_MSM_EINVAL ? ZK_EINVAL : ZK_ECUDA;
    return zk_fail(err, errlen, code, "%s: %s", what, inner);
}

// cs_release frees the key's constraint system, whatever of it was
// allocated, and returns the first error.
static cudaError_t cs_release(zk_g16_key* key) {
    cudaError_t first = cudaSuccess;
    auto drop = [&](void* p) {
        cudaError_t e = p ? cudaFree(p) : cudaSuccess;
        if (first == cudaSuccess) first = e;
    };
    drop(key->cs_coeffs);
    key->cs_coeffs = nullptr;
    for (int i = 0; i < 3; i++) {
        drop(key->cs_start[i]);
        drop(key->cs_wire[i]);
        drop(key->cs_coeff[i]);
        key->cs_start[i] = key->cs_wire[i] = key->cs_coeff[i] = nullptr;
    }
    key->cs_n = 0;
    key->bytes -= key->cs_bytes;
    key->cs_bytes = 0;
    return first;
}

extern "C" int zk_g16_key_free(zk_g16_key* key, char* err, size_t errlen) {
    if (!key) return ZK_OK;
    char inner[256] = {0};
    void* sets[] = {key->a, key->b, key->k, key->z, key->b2};
    int rc = ZK_OK;
    if (zk_use_device(key->device, err, errlen) == ZK_OK) {
        auto msm_free = [&](void* h) {
            if (h && zk_msm_free(h, inner, sizeof inner) != ZK_MSM_OK && rc == ZK_OK)
                rc = zk_fail(err, errlen, ZK_ECUDA, "free key bases: %s", inner);
        };
        auto note = [&](cudaError_t e, const char* what) {
            if (e != cudaSuccess && rc == ZK_OK)
                rc = zk_cuda_fail(err, errlen, e, what, __FILE__, __LINE__);
        };
        for (void* s : sets) msm_free(s);
        for (streamer* st : {key->s1, key->s2}) {
            if (!st) continue;
            if (st->copy) note(cudaStreamSynchronize(st->copy), "free key: sync");
            for (int i = 0; i < 2; i++) {
                msm_free(st->h[i]);
                if (st->sc[i]) note(cudaFree(st->sc[i]), "free key: scalars");
                if (st->loaded[i]) note(cudaEventDestroy(st->loaded[i]), "free key: event");
            }
            if (st->copy) note(cudaStreamDestroy(st->copy), "free key: stream");
        }
        note(cs_release(key), "free key: constraints");
        if (key->idx_a) note(cudaFree(key->idx_a), "free key: index");
        if (key->idx_b) note(cudaFree(key->idx_b), "free key: index");
        for (void* p : key->registered) note(cudaHostUnregister(p), "free key: unregister");
        for (void* p : key->copies) note(cudaFreeHost(p), "free key: pinned copy");
    }
    delete key->s1;
    delete key->s2;
    delete key;
    return rc;
}

// pin makes bytes at p readable by the device's DMA engines without a copy
// where it can: the range, rounded out to whole pages, is registered in place
// (read-only, as a key file's shared mapping is: every backend of the machine
// then pins the same page-cache pages, one copy in host memory). Where the
// device cannot register read-only memory, or registration fails (a range
// sharing a page with one already registered), the bytes are copied into a
// pinned buffer of the key's own. *out receives the address to copy from.
static int pin(zk_g16_key* key, const void* p, size_t bytes, const char** out, char* err,
               size_t errlen) {
    *out = (const char*)p;
    if (!p || bytes == 0) return ZK_OK;
    int ro = 0;
    if (cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, key->device) !=
        cudaSuccess)
        ro = 0;
    cudaGetLastError();
    if (ro) {
        const uintptr_t page = 4096;
        uintptr_t lo = (uintptr_t)p & ~(page - 1);
        uintptr_t hi = ((uintptr_t)p + bytes + page - 1) & ~(page - 1);
        if (cudaHostRegister((void*)lo, hi - lo, cudaHostRegisterPortable | cudaHostRegisterReadOnly) ==
            cudaSuccess) {
            key->registered.push_back((void*)lo);
            return ZK_OK;
        }
        cudaGetLastError();  // not sticky; fall back to a copy
    }
    void* copy = nullptr;
    ZK_CUDA(cudaHostAlloc(&copy, bytes, cudaHostAllocPortable));
    key->copies.push_back(copy);
    memcpy(copy, p, bytes);
    key->pinned_copy_bytes += bytes;
    *out = (const char*)copy;
    return ZK_OK;
}

// index_of makes the wire index of every point a mask keeps (skip[i] ==
// 0) in idx, and uploads it to *out unless out is NULL (a lean key gathers
// on the host).
static int index_of(const uint8_t* skip, size_t nwires, size_t n, std::vector<uint32_t>& idx,
                    uint32_t** out, char* err, size_t errlen) {
    idx.clear();
    idx.reserve(n);
    for (size_t i = 0; i < nwires; i++)
        if (!skip || !skip[i]) idx.push_back((uint32_t)i);
    if (idx.size() != n)
        return zk_fail(err, errlen, ZK_EINVAL, "mask keeps %zu of %zu wires but %zu points were given",
                       idx.size(), nwires, n);
    if (!out) return ZK_OK;
    *out = nullptr;
    ZK_CUDA(cudaMalloc((void**)out, (n ? n : 1) * sizeof(uint32_t)));
    if (n) ZK_CUDA(cudaMemcpy(*out, idx.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    std::vector<uint32_t>().swap(idx);  // the device's copy serves
    return ZK_OK;
}

// streamer_init allocates a group's chunk buffers for chunks of S points of
// elem bytes.
static int streamer_init(streamer* s, int group, size_t elem, size_t S, char* err,
                         size_t errlen) {
    s->S = S;
    s->elem = elem;
    // A handle of S points at infinity (all skipped): its bases are refilled.
    std::vector<uint8_t> skip(S, 1);
    char inner[512] = {0};
    for (int i = 0; i < 2; i++) {
        int mrc = zk_msm_upload(group, nullptr, 0, skip.data(), S, &s->h[i], inner, sizeof inner);
        if (mrc != ZK_MSM_OK) return msm_fail(mrc, "chunk buffer", err, errlen, inner);
        ZK_CUDA(cudaMalloc(&s->sc[i], S * kFr));
        ZK_CUDA(cudaEventCreateWithFlags(&s->loaded[i], cudaEventDisableTiming));
    }
    ZK_CUDA(cudaStreamCreateWithFlags(&s->copy, cudaStreamNonBlocking));
    return ZK_OK;
}

// g1_order lists a key's G1 MSMs, the longest first: they run one after
// another on the proof's stream and each takes its working memory from the
// MSM pool that the one before returned, so the first is the largest and the
// pool never grows past it (gpu.ProofWorkBytes counts the largest).
struct g1_msm {
    int which;  // 0 A, 1 B, 2 K, 3 Z: the output's position
    size_t n;   // points (resident: A and B expanded to every wire)
};
static std::vector<g1_msm> g1_order(const zk_g16_key* key) {
    size_t na = key->chunk ? key->na : key->nwires, nb = key->chunk ? key->nb : key->nwires;
    std::vector<g1_msm> v = {{0, na}, {1, nb}, {2, key->nk}, {3, key->nz}};
    std::stable_sort(v.begin(), v.end(), [](const g1_msm& x, const g1_msm& y) { return x.n > y.n; });
    return v;
}

// key_work_init records the MSM working memory one proof on key takes, per
// stream, from msm.cu's own sizing (zk_msm_work_bytes, zk_msm_split_work_bytes
// and msm_plan.h), and returns the upload's scratch to the device. A resident
// key's MSMs over W may run split (the key's binary_split, which can change between
// proofs): counted split whether or not it is on now, the bound of both; the
// proof stream's figure holds W's classification too (its lists live for the
// whole proof, read by both streams). Streamed keys run dense.
static int key_work_init(zk_g16_key* key, char* err, size_t errlen) {
    char inner[512] = {0};
    int mrc = zk_msm_trim(key->device, inner, sizeof inner);
    if (mrc != ZK_MSM_OK) return msm_fail(mrc, "trim", err, errlen, inner);
    zk_g16_run runs[5];
    const uint64_t classify = zk_g16_proof_runs(key->nwires, key->na, key->nb, key->nk, key->nz,
                                                key->chunk, key->h_block > 0, runs);
    // The handle each set's MSM runs on: its points when resident, else the
    // group's chunk buffers (whose handles size a run of any length).
    void* resident[5] = {key->a, key->b, key->k, key->z, key->b2};
    key->work_g1 = key->work_g2 = 0;
    for (int set = ZK_G16_SET_A; set <= ZK_G16_SET_B2; set++) {
        const zk_g16_run& r = runs[set];
        const bool g2 = set == ZK_G16_SET_B2;
        void* h = key->chunk ? (g2 ? key->s2 : key->s1)->h[0] : resident[set];
        if (r.kind == ZK_G16_RUN_NONE || !h) continue;
        uint64_t w = 0;
        switch (r.kind) {
        case ZK_G16_RUN_STREAM:
            mrc = zk_msm_stream_work_bytes(h, r.n, key->chunk, key->stream_c, &w, inner,
                                           sizeof inner);
            break;
        case ZK_G16_RUN_SPLIT:
            mrc = zk_msm_split_work_bytes(h, r.n, &w, inner, sizeof inner);
            break;
        default:
            mrc = zk_msm_work_bytes(h, r.n, 1, &w, inner, sizeof inner);
        }
        if (mrc != ZK_MSM_OK) return msm_fail(mrc, "work bytes", err, errlen, inner);
        if (g2)
            key->work_g2 = w;
        else
            key->work_g1 = std::max(key->work_g1, w);
    }
    if (classify) key->work_g1 += zk_msm_classify_work(classify);
    return ZK_OK;
}

// key_stream_init sets a streamed key up: its point sets pinned where they
// are (or copied into pinned memory), the wire index of the A and B points,
// and the two groups' chunk buffers.
static int key_stream_init(zk_g16_key* key, const void* g1a, const uint8_t* inf_a,
                           const void* g1b, const uint8_t* inf_b, const void* g1k,
                           const void* g1z, const void* g2b, char* err, size_t errlen) {
    int rc;
    struct {
        const void* p;
        size_t bytes;
        const char** out;
    } sets[] = {
        {g1a, key->na * key->g1, &key->h_a}, {g1b, key->nb * key->g1, &key->h_b},
        {g1k, key->nk * key->g1, &key->h_k}, {g1z, key->nz * key->g1, &key->h_z},
        {g2b, key->nb * key->g2, &key->h_b2},
    };
    for (auto& st : sets)
        if ((rc = pin(key, st.p, st.bytes, st.out, err, errlen)) != ZK_OK) return rc;
    const bool lean = key->h_block > 0;
    if ((rc = index_of(inf_a, key->nwires, key->na, key->hidx_a, lean ? nullptr : &key->idx_a, err,
                       errlen)) != ZK_OK)
        return rc;
    if ((rc = index_of(inf_b, key->nwires, key->nb, key->hidx_b, lean ? nullptr : &key->idx_b, err,
                       errlen)) != ZK_OK)
        return rc;
    key->s1 = new (std::nothrow) streamer();
    key->s2 = new (std::nothrow) streamer();
    if (!key->s1 || !key->s2) return zk_fail(err, errlen, ZK_ENOMEM, "host allocation");
    if ((rc = streamer_init(key->s1, key->group1, key->g1, key->chunk, err, errlen)) != ZK_OK)
        return rc;
    if ((rc = streamer_init(key->s2, key->group2, key->g2, key->chunk, err, errlen)) != ZK_OK)
        return rc;
    static_assert(kFr == 32, "groth16.h counts these sizes");
    key->bytes = zk_g16_stream_key_device_bytes(key->curve, key->chunk, key->na, key->nb, lean);
    return ZK_OK;
}

extern "C" int zk_g16_key_load(int device, int curve, int h_form, uint32_t log_n, size_t nwires,
                               size_t nb_public, const void* g1a, size_t na, const uint8_t* inf_a, const void* g1b,
                               size_t nb, const uint8_t* inf_b, const void* g1k, size_t nk,
                               const void* g1z, size_t nz, const void* g2b, size_t chunk,
                               int depth, uint64_t h_block, int stream_c, zk_g16_key** out,
                               char* err, size_t errlen) {
    if (curve != ZK_NTT_BLS12_381 && curve != ZK_NTT_BN254)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "key on curve %d: want ZK_NTT_BLS12_381 (%d) or ZK_NTT_BN254 (%d)", curve,
                       ZK_NTT_BLS12_381, ZK_NTT_BN254);
    if (h_form != ZK_H_GNARK && h_form != ZK_H_SNARKJS)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "key's H in form %d: want ZK_H_GNARK (%d) or ZK_H_SNARKJS (%d)", h_form,
                       ZK_H_GNARK, ZK_H_SNARKJS);
    // Z pairs with H: N-1 points in gnark's form (deg H <= N-2), N in snarkjs's
    // (H's values on the coset).
    const uint64_t want_z = (1ull << log_n) - (h_form == ZK_H_GNARK ? 1 : 0);
    if (!out || log_n > ZK_NTT_MAX_LOG || nb_public > nwires || nk != nwires - nb_public ||
        nz != want_z)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "bad key shape: log_n %u, %zu wires, %zu public, %zu K points, %zu Z points "
                       "(H's form %d wants %llu)",
                       log_n, nwires, nb_public, nk, nz, h_form, (unsigned long long)want_z);
    if (h_form == ZK_H_SNARKJS && log_n >= zk_ntt_two_adicity(curve))
        return zk_fail(err, errlen, ZK_EINVAL,
                       "H in snarkjs's form on a domain of 2^%u needs a root of unity of order "
                       "2^%u; the curve's scalar field has none above 2^%u",
                       log_n, log_n + 1, zk_ntt_two_adicity(curve));
    if (h_block && curve != ZK_NTT_BLS12_381)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "streamed proofs (H out of core) are BLS12-381's: a BN254 key is resident "
                       "or streamed");
    if (h_block && h_form != ZK_H_GNARK)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "streamed proofs (H out of core) compute gnark's H: a key in snarkjs's form "
                       "is resident or streamed");
    if (chunk > ZK_MSM_MAX_CHUNK)
        return zk_fail(err, errlen, ZK_EINVAL, "streamed chunk of %zu points: at most %zu", chunk,
                       (size_t)ZK_MSM_MAX_CHUNK);
    if (depth < 1 || depth > ZK_MSM_MAX_DEPTH)
        return zk_fail(err, errlen, ZK_EINVAL, "precomputed copies: depth %d outside [1, %d]",
                       depth, ZK_MSM_MAX_DEPTH);
    if (h_block && !chunk)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "streamed proofs (H in blocks of %llu) need a streamed key (chunk > 0)",
                       (unsigned long long)h_block);
    if (h_block && (h_block < zk_h_stream_min_block(log_n) || h_block > (1ull << log_n) ||
                    (h_block & (h_block - 1)) != 0))
        return zk_fail(err, errlen, ZK_EINVAL,
                       "H in blocks of %llu elements: a domain of 2^%u takes a power of two from "
                       "%llu to %llu",
                       (unsigned long long)h_block, log_n,
                       (unsigned long long)zk_h_stream_min_block(log_n), 1ull << log_n);
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    zk_g16_key* key = new (std::nothrow) zk_g16_key();
    if (!key) return zk_fail(err, errlen, ZK_ENOMEM, "host allocation");
    key->device = device;
    key->curve = curve;
    key->h_form = h_form;
    const bool bn = curve == ZK_NTT_BN254;
    key->group1 = bn ? ZK_MSM_BN254_G1 : ZK_MSM_G1;
    key->group2 = bn ? ZK_MSM_BN254_G2 : ZK_MSM_G2;
    key->g1 = zk_g16_g1_bytes(curve);
    key->g2 = zk_g16_g2_bytes(curve);
    key->jac1 = key->g1 / 2 * 3;
    key->jac2 = key->g2 / 2 * 3;
    key->log_n = log_n;
    key->nwires = nwires;
    key->nb_public = nb_public;
    key->nk = nk;
    key->nz = nz;
    key->na = na;
    key->nb = nb;
    key->chunk = chunk;
    key->h_block = h_block;
    key->stream_c = h_block ? stream_c : 0;
    char inner[512] = {0};
    // The MSM pool keeps what earlier proofs freed, for the next ones; the
    // admission counted it free when they ended, so hand it back before this
    // key's cudaMallocs need it.
    if (int mrc = zk_msm_trim(device, inner, sizeof inner)) {
        zk_g16_key_free(key, nullptr, 0);
        return msm_fail(mrc, "trim", err, errlen, inner);
    }
    if (chunk) {
        rc = key_stream_init(key, g1a, inf_a, g1b, inf_b, g1k, g1z, g2b, err, errlen);
        if (rc == ZK_OK) rc = key_work_init(key, err, errlen);
        if (rc != ZK_OK) {
            zk_g16_key_free(key, nullptr, 0);
            return rc;
        }
        *out = key;
        return ZK_OK;
    }
    struct {
        int group;
        const void* pts;
        size_t n;
        const uint8_t* skip;
        void** dst;
        size_t size;
        const char* name;
    } sets[] = {
        {key->group1, g1a, na, inf_a, &key->a, key->g1, "G1 A"},
        {key->group1, g1b, nb, inf_b, &key->b, key->g1, "G1 B"},
        {key->group1, g1k, nk, nullptr, &key->k, key->g1, "G1 K"},
        {key->group1, g1z, nz, nullptr, &key->z, key->g1, "G1 Z"},
        {key->group2, g2b, nb, inf_b, &key->b2, key->g2, "G2 B"},
    };
    for (auto& s : sets) {
        if (s.n == 0 && !s.skip) continue;
        int mrc = zk_msm_upload_depth(s.group, s.pts, s.n, s.skip, s.skip ? nwires : 0, depth,
                                      s.dst, inner, sizeof inner);
        if (mrc != ZK_MSM_OK) {
            int code = msm_fail(mrc, s.name, err, errlen, inner);
            zk_g16_key_free(key, nullptr, 0);
            return code;
        }
        int copies = 1;
        zk_msm_precomputed(*s.dst, nullptr, &copies);
        key->bytes +=
            zk_g16_resident_set_bytes(curve, int(&s - sets), nwires, nk, nz) * (uint64_t)copies;
    }
    if ((rc = key_work_init(key, err, errlen)) != ZK_OK) {
        zk_g16_key_free(key, nullptr, 0);
        return rc;
    }
    *out = key;
    return ZK_OK;
}

// cs_check verifies one matrix of a constraint system on the host, as
// sdk/constraints' Matrix.check does: the device kernels index with these
// values unchecked, so nothing out of range may reach them, whatever the
// caller passed.
static int cs_check(const char* name, size_t rows, size_t nwires, size_t nb_coeffs,
                    const uint32_t* start, const uint32_t* wire, const uint32_t* coeff,
                    size_t terms, char* err, size_t errlen) {
    if (!start || (terms && (!wire || !coeff)))
        return zk_fail(err, errlen, ZK_EINVAL, "constraints: %s: nil row index or terms", name);
    if (terms > UINT32_MAX)
        return zk_fail(err, errlen, ZK_EINVAL, "constraints: %s has %zu terms, at most %u", name,
                       terms, UINT32_MAX);
    if (start[0] != 0)
        return zk_fail(err, errlen, ZK_EINVAL, "constraints: %s's row 0 starts at term %u", name,
                       start[0]);
    for (size_t i = 1; i <= rows; i++)
        if (start[i] < start[i - 1])
            return zk_fail(err, errlen, ZK_EINVAL,
                           "constraints: %s's row %zu starts at term %u, before row %zu's %u", name,
                           i, start[i], i - 1, start[i - 1]);
    if (start[rows] != terms)
        return zk_fail(err, errlen, ZK_EINVAL, "constraints: %s's rows end at term %u of %zu",
                       name, start[rows], terms);
    for (size_t k = 0; k < terms; k++) {
        if (wire[k] >= nwires)
            return zk_fail(err, errlen, ZK_EINVAL,
                           "constraints: %s's term %zu is on wire %u, the key has %zu", name, k,
                           wire[k], nwires);
        if (coeff[k] >= nb_coeffs)
            return zk_fail(err, errlen, ZK_EINVAL,
                           "constraints: %s's term %zu has coefficient %u, the table has %zu",
                           name, k, coeff[k], nb_coeffs);
    }
    return ZK_OK;
}

// upload_words copies n words to new device memory (none for n == 0).
static int upload_words(const void* src, size_t bytes, void** dst, char* err, size_t errlen) {
    *dst = nullptr;
    if (bytes == 0) return ZK_OK;
    ZK_CUDA(cudaMalloc(dst, bytes));
    ZK_CUDA(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
    return ZK_OK;
}

extern "C" int zk_g16_key_set_constraints(
    zk_g16_key* key, size_t nwires, size_t nb_constraints, size_t nb_coeffs, const void* coeffs,
    const uint32_t* a_start, const uint32_t* a_wire, const uint32_t* a_coeff, size_t a_terms,
    const uint32_t* b_start, const uint32_t* b_wire, const uint32_t* b_coeff, size_t b_terms,
    const uint32_t* c_start, const uint32_t* c_wire, const uint32_t* c_coeff, size_t c_terms,
    char* err, size_t errlen) {
    if (!key) return zk_fail(err, errlen, ZK_EINVAL, "constraints: nil key");
    if (key->h_block)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "constraints: the key's proofs stream (no W on the device to evaluate "
                       "them from): it proves full partitions");
    if (key->cs_n)
        return zk_fail(err, errlen, ZK_EINVAL, "constraints: the key has %zu constraints already",
                       key->cs_n);
    const size_t N = size_t(1) << key->log_n;
    if (nwires != key->nwires)
        return zk_fail(err, errlen, ZK_EINVAL, "constraints over %zu wires, the key has %zu", nwires,
                       key->nwires);
    if (nb_constraints == 0 || nb_constraints > N)
        return zk_fail(err, errlen, ZK_EINVAL, "%zu constraints; the key's domain takes 1 to %zu",
                       nb_constraints, N);
    if (nb_coeffs && !coeffs) return zk_fail(err, errlen, ZK_EINVAL, "constraints: nil coefficients");
    const uint32_t* start[3] = {a_start, b_start, c_start};
    const uint32_t* wire[3] = {a_wire, b_wire, c_wire};
    const uint32_t* coeff[3] = {a_coeff, b_coeff, c_coeff};
    const size_t terms[3] = {a_terms, b_terms, c_terms};
    const char* names[3] = {"A", "B", "C"};
    int rc;
    for (int i = 0; i < 3; i++)
        if ((rc = cs_check(names[i], nb_constraints, nwires, nb_coeffs, start[i], wire[i], coeff[i],
                           terms[i], err, errlen)) != ZK_OK)
            return rc;
    if ((rc = zk_use_device(key->device, err, errlen)) != ZK_OK) return rc;
    // As at key load: the MSM pool hands back what earlier proofs left in it.
    char inner[512] = {0};
    if (int mrc = zk_msm_trim(key->device, inner, sizeof inner))
        return msm_fail(mrc, "trim", err, errlen, inner);
    rc = upload_words(coeffs, nb_coeffs * kFr, &key->cs_coeffs, err, errlen);
    for (int i = 0; i < 3 && rc == ZK_OK; i++) {
        rc = upload_words(start[i], (nb_constraints + 1) * 4, (void**)&key->cs_start[i], err, errlen);
        if (rc == ZK_OK) rc = upload_words(wire[i], terms[i] * 4, (void**)&key->cs_wire[i], err, errlen);
        if (rc == ZK_OK)
            rc = upload_words(coeff[i], terms[i] * 4, (void**)&key->cs_coeff[i], err, errlen);
    }
    if (rc != ZK_OK) {
        cs_release(key);
        return rc;
    }
    key->cs_n = nb_constraints;
    key->cs_bytes = zk_g16_constraints_device_bytes(nb_constraints, nb_coeffs,
                                                    (uint64_t)a_terms + b_terms + c_terms);
    key->bytes += key->cs_bytes;
    return ZK_OK;
}

// zk_g16_slot is what one proof in flight needs, allocated once (groth16.h).
struct zk_g16_slot {
    int device = 0;
    size_t nwires = 0, N = 0;
    // Device: W, and A, B, C in one allocation of 3N (a, b, c point into
    // it), which a compact partition's values borrow until A and B are
    // evaluated.
    void *w = nullptr, *a = nullptr, *b = nullptr, *c = nullptr;
    void* compact = nullptr;  // device: a compact W's bitmaps, ranks and flags
    void* staging = nullptr;  // pinned host: W (nwires) then A, B (N each)
    // Lean (the key's h_block > 0): none of the device buffers above; H is
    // computed out of core by hs, and the staging goes on with H's scratch C
    // (N) and A's and B's gathered scalars (na, nb).
    zk_h_stream* hs = nullptr;
    size_t na = 0, nb = 0;
    cudaStream_t stream = nullptr, stream2 = nullptr;
    // ev[0..5] time a proof (zk_g16_prove); ev[6]: W is on the device;
    // ev[7]: W's classification is made (on stream2); ev[8]: a compact W's
    // upload is done.
    cudaEvent_t ev[9] = {};
};

extern "C" int zk_g16_slot_free(zk_g16_slot* slot, char* err, size_t errlen) {
    if (!slot) return ZK_OK;
    int rc = ZK_OK;
    if (zk_use_device(slot->device, err, errlen) == ZK_OK) {
        // Only at unload: the synchronizing frees are off the proofs' path.
        // Everything is released even after an error; the first one is told.
        cudaError_t first = cudaSuccess;
        auto note = [&](cudaError_t e) {
            if (first == cudaSuccess) first = e;
        };
        if (slot->stream) note(cudaStreamSynchronize(slot->stream));
        if (slot->stream2) note(cudaStreamSynchronize(slot->stream2));
        void* bufs[] = {slot->w, slot->a, slot->compact};  // b and c are in a's allocation
        for (void* p : bufs)
            if (p) note(cudaFree(p));
        if (slot->hs && zk_h_stream_free(slot->hs, nullptr, 0) != ZK_OK && first == cudaSuccess)
            first = cudaErrorUnknown;
        if (slot->staging) note(cudaFreeHost(slot->staging));
        for (auto ev : slot->ev)
            if (ev) note(cudaEventDestroy(ev));
        if (slot->stream) note(cudaStreamDestroy(slot->stream));
        if (slot->stream2) note(cudaStreamDestroy(slot->stream2));
        if (first != cudaSuccess) rc = zk_cuda_fail(err, errlen, first, "free slot", __FILE__, __LINE__);
    }
    delete slot;
    return rc;
}

// slot_init allocates the slot's members; on failure the caller frees the slot.
static int slot_init(zk_g16_slot* s, const zk_g16_key* key, char* err, size_t errlen) {
    ZK_CUDA(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    ZK_CUDA(cudaStreamCreateWithFlags(&s->stream2, cudaStreamNonBlocking));
    for (auto& e : s->ev) ZK_CUDA(cudaEventCreate(&e));
    if (key->h_block) {
        int rc = zk_h_stream_create(key->device, key->log_n, key->h_block, &s->hs, err, errlen);
        if (rc != ZK_OK) return rc;
        s->na = key->na;
        s->nb = key->nb;
        // W, A, B, C, the gathered scalars and their index lists, as
        // zk_g16_lean_slot_host_bytes counts them (prove_lean's layout).
        ZK_CUDA(cudaHostAlloc(&s->staging,
                              zk_g16_lean_slot_host_bytes(s->nwires, key->log_n, s->na, s->nb),
                              cudaHostAllocPortable));
        return ZK_OK;
    }
    ZK_CUDA(cudaMalloc(&s->w, s->nwires * kFr));
    ZK_CUDA(cudaMalloc(&s->a, 3 * s->N * kFr));
    s->b = (char*)s->a + s->N * kFr;
    s->c = (char*)s->b + s->N * kFr;
    ZK_CUDA(cudaMalloc(&s->compact, zk_g16_compact_device_bytes(s->nwires)));
    // Portable: the Go threads that fill it and the one that proves vary.
    ZK_CUDA(cudaHostAlloc(&s->staging, (s->nwires + 2 * s->N) * kFr, cudaHostAllocPortable));
    return ZK_OK;
}

extern "C" int zk_g16_slot_create(zk_g16_key* key, zk_g16_slot** out, void** w, void** a,
                                  void** b, uint64_t* device_bytes, uint64_t* host_bytes,
                                  char* err, size_t errlen) {
    if (!key || !out || !w || !a || !b || !device_bytes || !host_bytes)
        return zk_fail(err, errlen, ZK_EINVAL, "nil argument");
    int rc = zk_use_device(key->device, err, errlen);
    if (rc != ZK_OK) return rc;
    zk_g16_slot* s = new (std::nothrow) zk_g16_slot();
    if (!s) return zk_fail(err, errlen, ZK_ENOMEM, "host allocation");
    s->device = key->device;
    s->nwires = key->nwires;
    s->N = size_t(1) << key->log_n;
    // The domain's NTT tables too (cached per device and size): built here,
    // at key load, not inside the key's first proof. A lean slot's H builds
    // its own, smaller ones.
    if ((rc = slot_init(s, key, err, errlen)) != ZK_OK ||
        (!key->h_block &&
         (rc = zk_h_prepare(key->curve, key->h_form, key->device, key->log_n, err, errlen)) !=
             ZK_OK)) {
        zk_g16_slot_free(s, nullptr, 0);
        return rc;
    }
    *out = s;
    *w = s->staging;
    *a = (char*)s->staging + s->nwires * kFr;
    *b = (char*)s->staging + (s->nwires + s->N) * kFr;
    *device_bytes = key->h_block ? zk_g16_lean_slot_device_bytes(key->h_block)
                                 : zk_g16_slot_device_bytes(s->nwires, key->log_n);
    *host_bytes = key->h_block
                      ? zk_g16_lean_slot_host_bytes(s->nwires, key->log_n, key->na, key->nb)
                      : zk_g16_slot_host_bytes(s->nwires, key->log_n);
    return ZK_OK;
}

extern "C" int zk_g16_key_set_options(zk_g16_key* key, const zk_g16_options* opts, char* err,
                                      size_t errlen) {
    if (!key || !opts) return zk_fail(err, errlen, ZK_EINVAL, "set options: nil argument");
    if (opts->binary_split != 0 && opts->binary_split != 1)
        return zk_fail(err, errlen, ZK_EINVAL, "set options: binary_split %d: want 0 or 1",
                       opts->binary_split);
    if (opts->ntt_radix != 0 && opts->ntt_radix != 2 && opts->ntt_radix != 4)
        return zk_fail(err, errlen, ZK_EINVAL, "set options: ntt_radix %d: want 2, 4 or 0 (the default)",
                       opts->ntt_radix);
    if (opts->lean_split != 0 && opts->lean_split != 1)
        return zk_fail(err, errlen, ZK_EINVAL, "set options: lean_split %d: want 0 or 1",
                       opts->lean_split);
    key->binary_split.store(opts->binary_split);
    key->lean_split.store(opts->lean_split);
    key->ntt_radix.store(opts->ntt_radix);
    return ZK_OK;
}

namespace {

// SplitGuard frees W's classification on every return path, once both of
// the slot's streams are idle: the lists are made on the G2 MSM's stream and
// read there and by the G1 MSMs on the proof's stream (after an error either
// may have left work queued that reads them).
struct SplitGuard {
    zk_g16_slot* slot;
    zk_msm_split* split = nullptr;
    ~SplitGuard() {
        if (!split) return;
        cudaStreamSynchronize(slot->stream);
        cudaStreamSynchronize(slot->stream2);
        zk_msm_split_free(split, nullptr, 0);
    }
};

// Drain waits for a slot's streams when it goes out of scope: after an error
// midway, work still queued would otherwise read the staging buffer the next
// proof in the slot refills. On success the streams are idle and this is free.
struct Drain {
    zk_g16_slot* slot;
    ~Drain() {
        cudaStreamSynchronize(slot->stream);
        cudaStreamSynchronize(slot->stream2);
    }
};

// Joiner joins a thread when it goes out of scope, on every return path.
struct Joiner {
    std::thread t;
    ~Joiner() {
        if (t.joinable()) t.join();
    }
};

float elapsed(cudaEvent_t from, cudaEvent_t to) {
    float ms = 0;
    cudaEventElapsedTime(&ms, from, to);
    return ms;
}

}  // namespace

// k_gather: out[j] = scalars[idx[j]], the wire scalars of a chunk of a
// streamed A or B set (which leaves out the wires whose point is infinity).
__global__ void k_gather(const uint32_t* __restrict__ idx, const uint4* __restrict__ scalars,
                         uint32_t n, uint4* __restrict__ out) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) {
        const uint4* s = scalars + 2 * (size_t)idx[j];
        out[2 * (size_t)j] = s[0];
        out[2 * (size_t)j + 1] = s[1];
    }
}

// stream_msm runs one MSM of a streamed key over npts points at host (pinned):
// chunk k+1 is copied into one buffer on the copy stream while the MSM of
// chunk k runs on st from the other, and each chunk's sum goes to out[k] (the
// caller adds them: an MSM is the sum of its chunks' MSMs). scalars is the
// device scalar vector: with idx, point j's scalar is scalars[idx[j]];
// without, scalars[j]. The caller holds s->mu.
static int stream_msm(streamer* s, const char* host, size_t npts, const uint32_t* idx,
                      const void* scalars, cudaStream_t st, char* out, size_t jac, char* err,
                      size_t errlen) {
    const size_t S = s->S, nch = chunks_of(npts, S);
    // On every return the copy stream is idle: after an error midway no copy
    // may still write a buffer the next proof fills.
    struct Idle {
        cudaStream_t c;
        ~Idle() { cudaStreamSynchronize(c); }
    } idle{s->copy};
    auto enqueue = [&](size_t k) -> int {
        const size_t b = k % 2, off = k * S, cnt = std::min(S, npts - off);
        ZK_CUDA(cudaMemcpyAsync(zk_msm_bases(s->h[b]), host + off * s->elem, cnt * s->elem,
                                cudaMemcpyHostToDevice, s->copy));
        ZK_CUDA(cudaEventRecord(s->loaded[b], s->copy));
        return ZK_OK;
    };
    int rc;
    for (size_t k = 0; k < nch && k < 2; k++)
        if ((rc = enqueue(k)) != ZK_OK) return rc;
    char inner[512] = {0};
    for (size_t k = 0; k < nch; k++) {
        const size_t b = k % 2, off = k * S, cnt = std::min(S, npts - off);
        ZK_CUDA(cudaStreamWaitEvent(st, s->loaded[b], 0));
        const void* sc = (const char*)scalars + off * kFr;
        if (idx) {
            k_gather<<<(unsigned)((cnt + 255) / 256), 256, 0, st>>>(
                idx + off, (const uint4*)scalars, (uint32_t)cnt, (uint4*)s->sc[b]);
            ZK_LAUNCHED();
            sc = s->sc[b];
        }
        // Returns when the chunk's sum is on the host: buffer b is free again.
        int mrc = zk_msm_run(s->h[b], sc, cnt, 1, st, out + k * jac, nullptr, inner, sizeof inner);
        if (mrc != ZK_MSM_OK) return msm_fail(mrc, "streamed chunk", err, errlen, inner);
        if (k + 2 < nch && (rc = enqueue(k + 2)) != ZK_OK) return rc;
    }
    // The copies are done too (each was waited for); nothing is left queued.
    return ZK_OK;
}

// prove_check validates a proof's arguments: a slot made for key, n
// constraints within its domain.
static int prove_check(const zk_g16_key* key, const zk_g16_slot* slot, size_t n, char* err,
                       size_t errlen) {
    if (!key || !slot) return zk_fail(err, errlen, ZK_EINVAL, "nil argument");
    const size_t N = size_t(1) << key->log_n;
    if (slot->nwires != key->nwires || slot->N != N || slot->device != key->device)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "slot made for %zu wires and domain %zu on device %d, the key has %zu "
                       "wires and domain %zu on device %d",
                       slot->nwires, slot->N, slot->device, key->nwires, N, key->device);
    if (n == 0 || n > N)
        return zk_fail(err, errlen, ZK_EINVAL, "%zu constraints; the key wants 1 to %zu", n, N);
    return ZK_OK;
}

static int prove_tail(zk_g16_key* key, zk_g16_slot* slot, void* out_g1, void* out_g2,
                      zk_g16_timing* timing, char* err, size_t errlen);
static int prove_lean(zk_g16_key* key, zk_g16_slot* slot, size_t n, void* out_g1, void* out_g2,
                      zk_g16_timing* timing, char* err, size_t errlen);

extern "C" int zk_g16_prove(zk_g16_key* key, zk_g16_slot* slot, size_t n, void* out_g1,
                            void* out_g2, zk_g16_timing* timing, char* err, size_t errlen) {
    int rc = prove_check(key, slot, n, err, errlen);
    if (rc != ZK_OK) return rc;
    if (!out_g1 || !out_g2) return zk_fail(err, errlen, ZK_EINVAL, "nil argument");
    if ((rc = zk_use_device(key->device, err, errlen)) != ZK_OK) return rc;
    if (key->h_block) return prove_lean(key, slot, n, out_g1, out_g2, timing, err, errlen);
    const size_t N = slot->N, nwires = key->nwires;
    const char* hw = (const char*)slot->staging;
    const char* ha = hw + nwires * kFr;
    const char* hb = ha + N * kFr;
    cudaStream_t st = slot->stream;
    cudaEvent_t* ev = slot->ev;
    Drain drain{slot};  // after an error below, nothing queued may read the staging

    // From pinned staging: asynchronous DMAs, beside whatever other slots run.
    // W first: the G2 MSM and W's classification start as soon as it is on the
    // device (ev[6]), while A and B are still copied for H.
    ZK_CUDA(cudaEventRecord(ev[0], st));
    ZK_CUDA(cudaMemcpyAsync(slot->w, hw, nwires * kFr, cudaMemcpyHostToDevice, st));
    ZK_CUDA(cudaEventRecord(ev[6], st));
    ZK_CUDA(cudaMemcpyAsync(slot->a, ha, n * kFr, cudaMemcpyHostToDevice, st));
    ZK_CUDA(cudaMemcpyAsync(slot->b, hb, n * kFr, cudaMemcpyHostToDevice, st));
    if (n < N) {
        ZK_CUDA(cudaMemsetAsync((char*)slot->a + n * kFr, 0, (N - n) * kFr, st));
        ZK_CUDA(cudaMemsetAsync((char*)slot->b + n * kFr, 0, (N - n) * kFr, st));
    }
    ZK_CUDA(cudaEventRecord(ev[1], st));
    return prove_tail(key, slot, out_g1, out_g2, timing, err, errlen);
}

// proof_timing waits for a proof's last events, the G1 MSMs' end on the
// slot's stream (ev[3]) and the G2 MSM's on its second (ev[5]), and fills
// timing (optional) from its events: ev[0] the start, ev[1] the partition in
// place, ev[2] H done, ev[4] the G2 MSM's start.
static int proof_timing(zk_g16_slot* slot, zk_g16_timing* timing, char* err, size_t errlen) {
    cudaEvent_t* ev = slot->ev;
    ZK_CUDA(cudaEventSynchronize(ev[3]));
    ZK_CUDA(cudaEventSynchronize(ev[5]));
    if (timing) {
        *timing = zk_g16_timing{};
        timing->upload_ms = elapsed(ev[0], ev[1]);
        timing->ntt_ms = elapsed(ev[1], ev[2]);
        timing->msm_g1_ms = elapsed(ev[2], ev[3]);
        timing->msm_g2_start_ms = elapsed(ev[0], ev[4]);
        timing->msm_g2_ms = elapsed(ev[4], ev[5]);
        float g1_end = elapsed(ev[0], ev[3]), g2_end = elapsed(ev[0], ev[5]);
        timing->total_ms = g1_end > g2_end ? g1_end : g2_end;
    }
    return ZK_OK;
}

// prove_tail is every proof's device work once its partition is in place in
// slot: W (ev[6] recorded on the slot's stream once it is there) and A and B
// zero-padded to the domain (ev[1]), with ev[0] recorded at the proof's start.
// The G2 MSM, H, the G1 MSMs; timing from ev[0] (upload_ms: ev[0] to ev[1]).
static int prove_tail(zk_g16_key* key, zk_g16_slot* slot, void* out_g1, void* out_g2,
                      zk_g16_timing* timing, char* err, size_t errlen) {
    const size_t nwires = key->nwires;
    cudaStream_t st = slot->stream;
    cudaEvent_t* ev = slot->ev;
    int rc;
    Drain drain{slot};  // declared before g2: the G2 thread is joined first

    // W's 0s and 1s (most of a witness) get no Pippenger work in the MSMs
    // over W: classified once, for all four, on the G2 MSM's stream by the G2
    // thread before its MSM (~0.1 ms, counted in the G2 MSM's time). The
    // classification returns when its counts are on the host, so it must not
    // run on this thread: H is queued meanwhile, and the host waits for the
    // lists only before the G1 MSMs that read them (ev[7] orders them on the
    // device). Resident keys only: a streamed key's A and B chunks gather
    // their scalars through the wire index (not ranges of W, which is what a
    // split run takes), and a split run over a chunk would still walk the
    // whole of W's lists; streamed keys run dense.
    SplitGuard wsplit{slot};  // declared before g2: freed after the G2 thread is joined
    const bool classify = !key->chunk && key->binary_split.load() != 0;
    std::promise<int> classified;
    std::future<int> classified_rc = classified.get_future();
    char cerr[512] = {0};

    // The G2 MSM needs only W: it runs on the slot's second stream (and a host
    // thread) from the moment W is on the device, beside H and the G1 MSMs,
    // filling the gaps they leave (sorts, reductions, small kernels). ev[4],
    // ev[5] time it.
    ZK_CUDA(cudaStreamWaitEvent(slot->stream2, ev[6], 0));
    ZK_CUDA(cudaEventRecord(ev[4], slot->stream2));
    int g2rc = ZK_MSM_OK;
    char g2err[512] = {0};
    Joiner g2;  // joined on every return path, before the streams are drained
    g2.t = std::thread([&] {
        cudaSetDevice(key->device);
        if (classify) {
            int crc = zk_msm_split_classify_group(key->group1, key->device, slot->w, nwires,
                                                  slot->stream2, &wsplit.split, cerr, sizeof cerr);
            if (crc == ZK_MSM_OK && cudaEventRecord(ev[7], slot->stream2) != cudaSuccess) {
                crc = ZK_MSM_ECUDA;
                snprintf(cerr, sizeof cerr, "record the classification's event");
            }
            classified.set_value(crc);
            if (crc != ZK_MSM_OK) return;  // the main thread reports it
        } else {
            classified.set_value(ZK_MSM_OK);
        }
        if (key->chunk) {
            // Streamed keys run dense (see the classification above).
            std::lock_guard<std::mutex> lk(key->s2->mu);
            g2rc = stream_msm(key->s2, key->h_b2, key->nb, key->idx_b, slot->w, slot->stream2,
                              (char*)out_g2, key->jac2, g2err, sizeof g2err);
        } else if (key->b2 && wsplit.split) {
            g2rc = zk_msm_run_split(key->b2, wsplit.split, 0, nwires, slot->stream2, out_g2,
                                    nullptr, g2err, sizeof g2err);
        } else if (key->b2) {
            g2rc = zk_msm_run(key->b2, slot->w, nwires, 1, slot->stream2, out_g2, nullptr, g2err,
                              sizeof g2err);
        } else {
            memset(out_g2, 0, key->jac2);
        }
        if (g2rc == ZK_MSM_OK) cudaEventRecord(ev[5], slot->stream2);
    });

    char inner[512] = {0};
    rc = zk_compute_h_device_curve(key->curve, key->h_form, key->device, slot->a, slot->b,
                                   slot->c, key->log_n, key->ntt_radix.load(), st, nullptr, inner,
                                   sizeof inner);
    if (rc != ZK_OK) return zk_fail(err, errlen, rc, "H: %s", inner);
    ZK_CUDA(cudaEventRecord(ev[2], st));

    // The four G1 MSMs, the longest first (g1_order). Resident: one sum each
    // at out_g1[which]. Streamed: one sum per chunk, the sets' partials one
    // after another in the order A, B, K, Z (zk_g16_key_info's counts).
    struct {
        void* bases;
        const char* host;
        size_t n;
        const uint32_t* idx;
        const void* scalars;
        const char* name;
        size_t w_lo;  // over W from this wire (split runs); Z's are over H
        bool over_w;
    } g1[] = {
        {key->a, key->h_a, key->chunk ? key->na : nwires, key->idx_a, slot->w, "MSM A", 0, true},
        {key->b, key->h_b, key->chunk ? key->nb : nwires, key->idx_b, slot->w, "MSM B1", 0, true},
        {key->k, key->h_k, key->nk, nullptr, (const char*)slot->w + key->nb_public * kFr, "MSM K",
         key->nb_public, true},
        {key->z, key->h_z, key->nz, nullptr, slot->a, "MSM Z", 0, false},
    };
    size_t first[4] = {0, 0, 0, 0};  // each set's first partial
    for (int i = 1; i < 4; i++)
        first[i] = first[i - 1] + (key->chunk ? chunks_of(g1[i - 1].n, key->chunk) : 1);
    // H is queued: now wait for W's classification, and order the G1 MSMs
    // after it on the device.
    int crc = classified_rc.get();
    if (crc != ZK_MSM_OK) return msm_fail(crc, "classify W", err, errlen, cerr);
    if (wsplit.split) ZK_CUDA(cudaStreamWaitEvent(st, ev[7], 0));
    std::unique_lock<std::mutex> g1lock;
    if (key->chunk) g1lock = std::unique_lock<std::mutex>(key->s1->mu);
    for (const g1_msm& o : g1_order(key)) {
        auto& m = g1[o.which];
        char* out = (char*)out_g1 + first[o.which] * key->jac1;
        if (key->chunk) {
            rc = stream_msm(key->s1, m.host, m.n, m.idx, m.scalars, st, out, key->jac1, inner,
                            sizeof inner);
            if (rc != ZK_OK) return zk_fail(err, errlen, rc, "%s: %s", m.name, inner);
            continue;
        }
        if (m.n == 0 || !m.bases) {
            // The empty sum: infinity in Jacobian coordinates is (1, 1, 0); a
            // zeroed output is turned into that on the Go side.
            memset(out, 0, key->jac1);
            continue;
        }
        int mrc = m.over_w && wsplit.split
                      ? zk_msm_run_split(m.bases, wsplit.split, m.w_lo, m.n, st, out, nullptr,
                                         inner, sizeof inner)
                      : zk_msm_run(m.bases, m.scalars, m.n, 1, st, out, nullptr, inner,
                                   sizeof inner);
        if (mrc != ZK_MSM_OK) return msm_fail(mrc, m.name, err, errlen, inner);
    }
    if (g1lock.owns_lock()) g1lock.unlock();
    ZK_CUDA(cudaEventRecord(ev[3], st));
    g2.t.join();
    if (g2rc != ZK_MSM_OK) return msm_fail(g2rc, "MSM B2", err, errlen, g2err);
    return proof_timing(slot, timing, err, errlen);
}

// lean_scalars are one lean MSM's scalars in pinned host memory and, when
// the key's proofs run split (lean_split), their classification chunk by
// chunk (msm.h's zk_msm_stream_split: idx in the slot's staging, the counts
// here).
struct lean_scalars {
    const char* host = nullptr;
    uint32_t* idx = nullptr;  // nullptr: not classified, the MSM runs dense
    std::vector<uint32_t> ones, rest;
};

// prepare_scalars makes a lean MSM's n scalars at out->host: dst[j] =
// src[gather[j]] (scalars of kFr bytes) when gather is given (A's and B's,
// from W), else the scalars are src itself (K's, a range of W); with idx it
// also classifies them in chunks of S (zk_msm_classify_chunk) into idx and
// out's counts. Up to threads host threads, each a run of whole chunks.
static int prepare_scalars(const zk_g16_key* key, char* dst, const char* src,
                           const std::vector<uint32_t>* gather, size_t n, size_t S,
                           uint32_t* idx, unsigned threads, lean_scalars* out, char* err,
                           size_t errlen) {
    out->host = gather ? dst : src;
    out->idx = idx;
    const size_t nch = chunks_of(n, S);
    out->ones.assign(idx ? nch : 0, 0);
    out->rest.assign(idx ? nch : 0, 0);
    if (!gather && !idx) return ZK_OK;
    // Threads take whole chunks when they classify; a gather alone is cut
    // into chunks of at most 65536 scalars instead, so a short MSM of one
    // chunk still gathers on every thread.
    const size_t unit = idx ? S : std::min<size_t>(S, 65536);
    const size_t nunits = chunks_of(n, unit);
    threads = (unsigned)std::max<size_t>(1, std::min<size_t>(threads, nunits));
    std::vector<int> rcs(threads, ZK_OK);
    std::vector<std::string> errs(threads);
    auto work = [&](unsigned t) {
        for (size_t k = nunits * t / threads; k < nunits * (t + 1) / threads; k++) {
            const size_t lo = k * unit, hi = std::min(n, lo + unit);
            if (gather)
                for (size_t j = lo; j < hi; j++)
                    memcpy(dst + j * kFr, src + (size_t)(*gather)[j] * kFr, kFr);
            if (!idx) continue;
            char inner[256] = {0};
            int mrc = zk_msm_classify_chunk(key->group1, out->host + lo * kFr, hi - lo, idx + lo,
                                            &out->ones[k], &out->rest[k], inner, sizeof inner);
            if (mrc != ZK_MSM_OK) {
                rcs[t] = mrc;
                errs[t] = inner;
                return;
            }
        }
    };
    std::vector<std::thread> ts;
    for (unsigned t = 1; t < threads; t++) ts.emplace_back(work, t);
    work(0);
    for (auto& th : ts) th.join();
    for (unsigned t = 0; t < threads; t++)
        if (rcs[t] != ZK_MSM_OK) return msm_fail(rcs[t], "classify", err, errlen, errs[t].c_str());
    return ZK_OK;
}

// lean_msm runs one MSM of a lean key: npts points at host and as many
// scalars at scalars (pinned host memory both) through s's buffers, one set
// of buckets for every chunk (zk_msm_run_stream); its one sum to out. The
// caller holds s->mu.
static int lean_msm(const zk_g16_key* key, streamer* s, const char* host, size_t npts,
                    const lean_scalars& sc, cudaStream_t st, void* out, char* err, size_t errlen) {
    void* pbuf[2] = {zk_msm_bases(s->h[0]), zk_msm_bases(s->h[1])};
    void* sbuf[2] = {s->sc[0], s->sc[1]};
    char inner[512] = {0};
    int mrc;
    if (sc.idx) {
        const zk_msm_stream_split split{sc.idx, sc.ones.data(), sc.rest.data()};
        mrc = zk_msm_run_stream_split(s->h[0], host, sc.host, npts, pbuf, sbuf, s->S,
                                      key->stream_c, &split, st, out, nullptr, inner, sizeof inner);
    } else {
        mrc = zk_msm_run_stream(s->h[0], host, sc.host, npts, pbuf, sbuf, s->S, key->stream_c, st,
                                out, nullptr, inner, sizeof inner);
    }
    if (mrc != ZK_MSM_OK) return msm_fail(mrc, "streamed MSM", err, errlen, inner);
    return ZK_OK;
}

// kGatherThreads is how many host threads gather each of A's and B's scalars.
static const unsigned kGatherThreads = 4;

// prove_lean is zk_g16_prove for a key whose proofs stream (groth16.h): the
// partition stays in the slot's pinned staging. Three things run at once,
// each on its own streams: H out of core (a host thread); the G2 MSM (another,
// which gathers B's scalars from W first); and, on this thread, the G1 MSMs
// that need no H (A and B over the scalars gathered from W, K over a range
// of W), then Z's over H, where H left it in A's staging. The MSMs' tails
// (sorts, merges, reductions: few threads each) and H's copies leave the
// multiprocessors gaps that the others fill; the device memory of all three
// is what the plan counts (H's blocks in the slot, a G1 and a G2 MSM's work
// per proof).
static int prove_lean(zk_g16_key* key, zk_g16_slot* slot, size_t n, void* out_g1, void* out_g2,
                      zk_g16_timing* timing, char* err, size_t errlen) {
    const size_t N = slot->N;
    char* hw = (char*)slot->staging;
    char* ha = hw + key->nwires * kFr;
    char* hb = ha + N * kFr;
    char* hc = hb + N * kFr;
    char* ga = hc + N * kFr;
    char* gb = ga + key->na * kFr;
    // The index lists of A's, B's and K's scalars when the proof runs split
    // (zk_g16_lean_slot_host_bytes counts them).
    const bool split = key->lean_split.load() != 0;
    uint32_t* ia = (uint32_t*)(gb + key->nb * kFr);
    uint32_t* ib = ia + key->na;
    uint32_t* ik = ib + key->nb;
    // One classification of B's scalars serves both groups' MSMs: their
    // chunks are the key's.
    const size_t S = key->s1->S;
    if (key->s2->S != S)
        return zk_fail(err, errlen, ZK_EINVAL, "lean key: G1 chunks of %zu points, G2 chunks of %zu",
                       S, key->s2->S);
    lean_scalars sa, sb, sk, sz;
    sz.host = ha;  // H's coefficients: dense
    cudaStream_t st = slot->stream;
    cudaEvent_t* ev = slot->ev;
    Drain drain{slot};
    // Nothing on the host comes before H: the staging past the constraints
    // (the last proof's H, say) is zeroed by H's first pass on the device, and
    // the scalars are gathered on other threads while it runs.
    // ev[1] and ev[2] at the start too: the G1 MSMs' span (ev[2] to ev[3])
    // is the proof's from its start, gathering A's scalars and waiting for H
    // included.
    ZK_CUDA(cudaEventRecord(ev[0], st));
    ZK_CUDA(cudaEventRecord(ev[1], st));
    ZK_CUDA(cudaEventRecord(ev[2], st));

    int hrc = ZK_OK;
    char herr[512] = {0};
    zk_h_timing ht{};
    Joiner h;  // joined on every return path, before the streams are drained
    h.t = std::thread([&] {
        cudaSetDevice(key->device);
        hrc = zk_h_stream_run(slot->hs, ha, hb, hc, n, &ht, herr, sizeof herr);
    });

    int g2rc = ZK_OK;
    char g2err[512] = {0};
    // B's scalars, gathered by the G2 thread first: its MSM reads them, and so
    // does the G1 MSM of B, which waits for them.
    std::promise<void> gb_gathered;
    std::future<void> gb_ready = gb_gathered.get_future();
    int gbrc = ZK_OK;  // before g2: the thread writes them until it is joined
    char gberr[512] = {0};
    Joiner g2;
    g2.t = std::thread([&] {
        cudaSetDevice(key->device);
        gbrc = prepare_scalars(key, gb, hw, &key->hidx_b, key->nb, S, split ? ib : nullptr,
                               kGatherThreads, &sb, gberr, sizeof gberr);
        gb_gathered.set_value();
        if (gbrc != ZK_OK) {
            g2rc = zk_fail(g2err, sizeof g2err, gbrc, "B's scalars: %s", gberr);
            return;
        }
        if (cudaEventRecord(ev[4], slot->stream2) != cudaSuccess) {
            g2rc = zk_fail(g2err, sizeof g2err, ZK_ECUDA, "record the G2 MSM's event");
            return;
        }
        std::lock_guard<std::mutex> lk(key->s2->mu);
        g2rc = lean_msm(key, key->s2, key->h_b2, key->nb, sb, slot->stream2, out_g2, g2err,
                        sizeof g2err);
        if (g2rc == ZK_OK && cudaEventRecord(ev[5], slot->stream2) != cudaSuccess)
            g2rc = zk_fail(g2err, sizeof g2err, ZK_ECUDA, "record the G2 MSM's event");
    });
    // K's scalars are a range of W: with the split on, classified on a thread
    // of their own beside A's and B's gathers, so the first G1 MSM does not
    // wait for them too.
    int krc = ZK_OK;  // before kt, as gbrc before g2
    char kerr[512] = {0};
    Joiner kt;
    auto prepare_k = [&] {
        krc = prepare_scalars(key, nullptr, hw + key->nb_public * kFr, nullptr, key->nk, S,
                              split ? ik : nullptr, kGatherThreads, &sk, kerr, sizeof kerr);
    };
    if (split)
        kt.t = std::thread(prepare_k);
    else
        prepare_k();  // nothing to classify: K's scalars are W's, read in place
    int rc = prepare_scalars(key, ga, hw, &key->hidx_a, key->na, S, split ? ia : nullptr,
                             kGatherThreads, &sa, err, errlen);
    gb_ready.wait();
    if (kt.t.joinable()) kt.t.join();
    if (rc != ZK_OK) return rc;
    if (gbrc != ZK_OK) return zk_fail(err, errlen, gbrc, "B's scalars: %s", gberr);
    if (krc != ZK_OK) return zk_fail(err, errlen, krc, "K's scalars: %s", kerr);

    struct {
        const char* host;
        size_t n;
        const lean_scalars& scalars;
        const char* name;
    } g1[] = {
        {key->h_a, key->na, sa, "MSM A"},
        {key->h_b, key->nb, sb, "MSM B1"},
        {key->h_k, key->nk, sk, "MSM K"},
        {key->h_z, key->nz, sz, "MSM Z"},
    };
    const int kZ = ZK_G16_SET_Z;
    char inner[512] = {0};
    {
        std::lock_guard<std::mutex> lk(key->s1->mu);
        for (const g1_msm& o : g1_order(key)) {
            if (o.which == kZ) continue;
            auto& m = g1[o.which];
            rc = lean_msm(key, key->s1, m.host, m.n, m.scalars, st,
                          (char*)out_g1 + o.which * key->jac1, inner, sizeof inner);
            if (rc != ZK_OK) return zk_fail(err, errlen, rc, "%s: %s", m.name, inner);
        }
        h.t.join();
        if (hrc != ZK_OK) return zk_fail(err, errlen, hrc, "H: %s", herr);
        auto& z = g1[kZ];
        rc = lean_msm(key, key->s1, z.host, z.n, z.scalars, st, (char*)out_g1 + kZ * key->jac1,
                      inner, sizeof inner);
        if (rc != ZK_OK) return zk_fail(err, errlen, rc, "%s: %s", z.name, inner);
    }
    ZK_CUDA(cudaEventRecord(ev[3], st));
    g2.t.join();
    if (g2rc != ZK_OK) return zk_fail(err, errlen, g2rc, "MSM B2: %s", g2err);
    if ((rc = proof_timing(slot, timing, err, errlen)) != ZK_OK) return rc;
    // H ran on its own streams, inside the G1 MSMs' span: its time is its
    // own (events on its streams).
    if (timing) timing->ntt_ms = ht.total_ms;
    return ZK_OK;
}

// compact_check validates a compact proof's arguments: a key with the
// constraint system of n rows, a compact W of nb_other values that fits the
// slot's staging and, on the device, its A, B and C buffers (where the values
// go until A and B are evaluated).
static int compact_check(const zk_g16_key* key, const zk_g16_slot* slot, size_t n,
                         size_t nb_other, char* err, size_t errlen) {
    int rc = prove_check(key, slot, n, err, errlen);
    if (rc != ZK_OK) return rc;
    if (!key->cs_n)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "the key has no constraints: compact partitions need them "
                       "(zk_g16_key_set_constraints)");
    if (n != key->cs_n)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "a compact partition of %zu constraints; the key's constraint system has %zu",
                       n, key->cs_n);
    const size_t N = slot->N, nwires = key->nwires;
    const size_t voff = zk_g16_compact_values_offset(nwires), staging = (nwires + 2 * N) * kFr;
    if (nb_other > nwires || nb_other > 3 * N || nb_other > (staging - voff) / kFr)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "a compact W of %zu values for %zu wires: the slot takes at most %zu "
                       "(its staging holds %zu bytes, the values from byte %zu; its device A, B "
                       "and C hold %zu)",
                       nb_other, nwires, std::min(nwires, std::min(3 * N, (staging - voff) / kFr)),
                       staging, voff, 3 * N);
    return ZK_OK;
}

// compact_enqueue queues a compact proof's first half on the slot's stream:
// the bitmaps (to the slot's compact area) and the values (to its A, B and C
// buffers) from the staging, W expanded into the slot's W, then A and B (and
// C with write_c, for the test hook; H makes its own C = A∘B, equal to the
// evaluated one wherever the check passes) evaluated from the matrices and
// zero-padded to the domain. Events: ev[0] at the start, ev[8] once the
// upload is done, ev[6] once W is expanded (the G2 MSM waits for it), ev[1]
// once A and B are, as zk_g16_prove records them.
static int compact_enqueue(zk_g16_key* key, zk_g16_slot* slot, size_t n, size_t nb_other,
                           bool write_c, char* err, size_t errlen) {
    const size_t N = slot->N, nwires = key->nwires;
    const size_t voff = zk_g16_compact_values_offset(nwires);
    const char* h = (const char*)slot->staging;
    cudaStream_t st = slot->stream;
    cudaEvent_t* ev = slot->ev;
    const zk_compact_dev d = zk_compact_at(slot->compact, nwires);
    ZK_CUDA(cudaEventRecord(ev[0], st));
    // other then bits: adjacent in the staging and in the compact area.
    ZK_CUDA(cudaMemcpyAsync(d.other, h, voff, cudaMemcpyHostToDevice, st));
    if (nb_other)
        ZK_CUDA(cudaMemcpyAsync(slot->a, h + voff, nb_other * kFr, cudaMemcpyHostToDevice, st));
    ZK_CUDA(cudaEventRecord(ev[8], st));
    int rc = zk_compact_expand(key->curve, d, slot->a, nb_other, nwires, slot->w, st, err, errlen);
    if (rc != ZK_OK) return rc;
    ZK_CUDA(cudaEventRecord(ev[6], st));
    zk_cs_matrix m[3];
    for (int i = 0; i < 3; i++) m[i] = {key->cs_start[i], key->cs_wire[i], key->cs_coeff[i]};
    rc = zk_compact_eval(key->curve, m, key->cs_coeffs, d, slot->w, n, slot->a, slot->b,
                         write_c ? slot->c : nullptr, st, err, errlen);
    if (rc != ZK_OK) return rc;
    if (n < N) {
        ZK_CUDA(cudaMemsetAsync((char*)slot->a + n * kFr, 0, (N - n) * kFr, st));
        ZK_CUDA(cudaMemsetAsync((char*)slot->b + n * kFr, 0, (N - n) * kFr, st));
        if (write_c) ZK_CUDA(cudaMemsetAsync((char*)slot->c + n * kFr, 0, (N - n) * kFr, st));
    }
    ZK_CUDA(cudaEventRecord(ev[1], st));
    return ZK_OK;
}

// compact_verdict reads the flags of the compact partition last evaluated in
// slot, once its stream is done, and turns them into the call's result:
// ZK_EINVAL when other's set bits are not nb_other (the expansion read no
// value past nb_other, but W is wrong), ZK_EUNSAT with *bad the first
// unsatisfied constraint, else ZK_OK with *bad -1.
static int compact_verdict(zk_g16_slot* slot, size_t nb_other, int64_t* bad, char* err,
                           size_t errlen) {
    uint32_t f[4];
    const zk_compact_dev d = zk_compact_at(slot->compact, slot->nwires);
    ZK_CUDA(cudaMemcpyAsync(f, d.flags, sizeof f, cudaMemcpyDeviceToHost, slot->stream));
    ZK_CUDA(cudaStreamSynchronize(slot->stream));
    *bad = -1;
    if (f[1] != nb_other)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "the compact W's other bitmap marks %u wires, but %zu values were staged",
                       f[1], nb_other);
    if (f[0] != UINT32_MAX) {
        *bad = f[0];
        return zk_fail(err, errlen, ZK_EUNSAT,
                       "constraint %u is not satisfied (A*B != C): the witness is wrong", f[0]);
    }
    return ZK_OK;
}

extern "C" int zk_g16_prove_compact(zk_g16_key* key, zk_g16_slot* slot, size_t n_constraints,
                                    size_t nb_other, void* out_g1, void* out_g2,
                                    zk_g16_timing* timing, int64_t* bad_constraint, char* err,
                                    size_t errlen) {
    int64_t bad = -1;
    if (bad_constraint) *bad_constraint = -1;
    if (!out_g1 || !out_g2) return zk_fail(err, errlen, ZK_EINVAL, "nil argument");
    int rc = compact_check(key, slot, n_constraints, nb_other, err, errlen);
    if (rc != ZK_OK) return rc;
    if ((rc = zk_use_device(key->device, err, errlen)) != ZK_OK) return rc;
    Drain drain{slot};  // after an error below, nothing queued may read the staging
    if ((rc = compact_enqueue(key, slot, n_constraints, nb_other, false, err, errlen)) != ZK_OK)
        return rc;
    // The proof goes on without waiting for the check (no host round trip
    // between the evaluation and H); its verdict is read at the end, and a
    // failed check throws the sums away.
    if ((rc = prove_tail(key, slot, out_g1, out_g2, timing, err, errlen)) != ZK_OK) return rc;
    rc = compact_verdict(slot, nb_other, &bad, err, errlen);
    if (bad_constraint) *bad_constraint = bad;
    if (rc != ZK_OK) return rc;
    if (timing) {
        timing->upload_ms = elapsed(slot->ev[0], slot->ev[8]);
        timing->eval_ms = elapsed(slot->ev[8], slot->ev[1]);
    }
    return ZK_OK;
}

extern "C" int zk_g16_eval_compact(zk_g16_key* key, zk_g16_slot* slot, size_t n_constraints,
                                   size_t nb_other, void* w, void* a, void* b, void* c,
                                   int64_t* bad_constraint, char* err, size_t errlen) {
    int64_t bad = -1;
    if (bad_constraint) *bad_constraint = -1;
    if (!w || !a || !b || !c) return zk_fail(err, errlen, ZK_EINVAL, "nil argument");
    int rc = compact_check(key, slot, n_constraints, nb_other, err, errlen);
    if (rc != ZK_OK) return rc;
    if ((rc = zk_use_device(key->device, err, errlen)) != ZK_OK) return rc;
    Drain drain{slot};
    if ((rc = compact_enqueue(key, slot, n_constraints, nb_other, true, err, errlen)) != ZK_OK)
        return rc;
    const size_t N = slot->N;
    cudaStream_t st = slot->stream;
    ZK_CUDA(cudaMemcpyAsync(w, slot->w, key->nwires * kFr, cudaMemcpyDeviceToHost, st));
    ZK_CUDA(cudaMemcpyAsync(a, slot->a, N * kFr, cudaMemcpyDeviceToHost, st));
    ZK_CUDA(cudaMemcpyAsync(b, slot->b, N * kFr, cudaMemcpyDeviceToHost, st));
    ZK_CUDA(cudaMemcpyAsync(c, slot->c, N * kFr, cudaMemcpyDeviceToHost, st));
    rc = compact_verdict(slot, nb_other, &bad, err, errlen);
    if (bad_constraint) *bad_constraint = bad;
    return rc == ZK_EUNSAT ? ZK_OK : rc;
}
