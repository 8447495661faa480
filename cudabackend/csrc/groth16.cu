// groth16.cu: one Groth16 proof's device work (see groth16.h): upload the
// partition, H on the device, five MSMs against resident bases.

#include <cuda_runtime.h>
#include <string.h>

#include <atomic>
#include <new>
#include <stdlib.h>
#include <thread>

#include "common.cuh"
#include "groth16.h"
#include "msm.h"
#include "ntt.h"

struct zk_g16_key {
    int device;
    uint32_t log_n;
    size_t nwires, nb_public, nk, nz;
    void* a;  // G1, nwires points (infinity where InfinityA)
    void* b;  // G1, nwires points (infinity where InfinityB)
    void* k;  // G1, nk points
    void* z;  // G1, nz points
    void* b2; // G2, nwires points
    uint64_t bytes;
};

static const size_t kFr = 32, kG1 = 96, kG2 = 192;

extern "C" uint64_t zk_g16_key_device_bytes(const zk_g16_key* key) {
    return key ? key->bytes : 0;
}

static int msm_fail(int rc, const char* what, char* err, size_t errlen, const char* inner) {
    int code = rc == ZK_MSM_ENOMEM ? ZK_ENOMEM : rc == ZK_MSM_EINVAL ? ZK_EINVAL : ZK_ECUDA;
    return zk_fail(err, errlen, code, "%s: %s", what, inner);
}

extern "C" int zk_g16_key_free(zk_g16_key* key, char* err, size_t errlen) {
    if (!key) return ZK_OK;
    char inner[256] = {0};
    void* sets[] = {key->a, key->b, key->k, key->z, key->b2};
    int rc = ZK_OK;
    if (zk_use_device(key->device, err, errlen) == ZK_OK) {
        for (void* s : sets) {
            if (s && zk_msm_free(s, inner, sizeof inner) != ZK_MSM_OK && rc == ZK_OK)
                rc = zk_fail(err, errlen, ZK_ECUDA, "free key bases: %s", inner);
        }
    }
    delete key;
    return rc;
}

extern "C" int zk_g16_key_load(int device, uint32_t log_n, size_t nwires, size_t nb_public,
                               const void* g1a, size_t na, const uint8_t* inf_a, const void* g1b,
                               size_t nb, const uint8_t* inf_b, const void* g1k, size_t nk,
                               const void* g1z, size_t nz, const void* g2b, zk_g16_key** out,
                               char* err, size_t errlen) {
    if (!out || log_n > ZK_NTT_MAX_LOG || nb_public > nwires || nk != nwires - nb_public ||
        nz + 1 != (1ull << log_n))
        return zk_fail(err, errlen, ZK_EINVAL,
                       "bad key shape: log_n %u, %zu wires, %zu public, %zu K points, %zu Z points",
                       log_n, nwires, nb_public, nk, nz);
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    zk_g16_key* key = new (std::nothrow) zk_g16_key();
    if (!key) return zk_fail(err, errlen, ZK_ENOMEM, "host allocation");
    key->device = device;
    key->log_n = log_n;
    key->nwires = nwires;
    key->nb_public = nb_public;
    key->nk = nk;
    key->nz = nz;
    char inner[512] = {0};
    struct {
        int group;
        const void* pts;
        size_t n;
        const uint8_t* skip;
        void** dst;
        size_t size;
        const char* name;
    } sets[] = {
        {ZK_MSM_G1, g1a, na, inf_a, &key->a, kG1, "G1 A"},
        {ZK_MSM_G1, g1b, nb, inf_b, &key->b, kG1, "G1 B"},
        {ZK_MSM_G1, g1k, nk, nullptr, &key->k, kG1, "G1 K"},
        {ZK_MSM_G1, g1z, nz, nullptr, &key->z, kG1, "G1 Z"},
        {ZK_MSM_G2, g2b, nb, inf_b, &key->b2, kG2, "G2 B"},
    };
    for (auto& s : sets) {
        if (s.n == 0 && !s.skip) continue;
        int mrc = zk_msm_upload(s.group, s.pts, s.n, s.skip, s.skip ? nwires : 0, s.dst, inner,
                                sizeof inner);
        if (mrc != ZK_MSM_OK) {
            int code = msm_fail(mrc, s.name, err, errlen, inner);
            zk_g16_key_free(key, nullptr, 0);
            return code;
        }
        key->bytes += (uint64_t)(s.skip ? nwires : s.n) * s.size;
    }
    *out = key;
    return ZK_OK;
}

// zk_g16_slot is what one proof in flight needs, allocated once (groth16.h).
struct zk_g16_slot {
    int device = 0;
    size_t nwires = 0, N = 0;
    void *w = nullptr, *a = nullptr, *b = nullptr, *c = nullptr;  // device
    void* staging = nullptr;  // pinned host: W (nwires) then A, B (N each)
    cudaStream_t stream = nullptr, stream2 = nullptr;
    cudaEvent_t ev[6] = {};
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
        void* bufs[] = {slot->w, slot->a, slot->b, slot->c};
        for (void* p : bufs)
            if (p) note(cudaFree(p));
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
static int slot_init(zk_g16_slot* s, char* err, size_t errlen) {
    ZK_CUDA(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    ZK_CUDA(cudaStreamCreateWithFlags(&s->stream2, cudaStreamNonBlocking));
    for (auto& e : s->ev) ZK_CUDA(cudaEventCreate(&e));
    ZK_CUDA(cudaMalloc(&s->w, s->nwires * kFr));
    ZK_CUDA(cudaMalloc(&s->a, s->N * kFr));
    ZK_CUDA(cudaMalloc(&s->b, s->N * kFr));
    ZK_CUDA(cudaMalloc(&s->c, s->N * kFr));
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
    // at key load, not inside the key's first proof.
    if ((rc = slot_init(s, err, errlen)) != ZK_OK ||
        (rc = zk_ntt_prepare(key->device, key->log_n, err, errlen)) != ZK_OK) {
        zk_g16_slot_free(s, nullptr, 0);
        return rc;
    }
    *out = s;
    *w = s->staging;
    *a = (char*)s->staging + s->nwires * kFr;
    *b = (char*)s->staging + (s->nwires + s->N) * kFr;
    *device_bytes = (uint64_t)(s->nwires + 3 * s->N) * kFr;
    *host_bytes = (uint64_t)(s->nwires + 2 * s->N) * kFr;
    return ZK_OK;
}

// The witness-aware MSM (msm.h, zk_msm_split): -1 follows the environment
// (on unless ZKHOST_CUDA_BINARY_SPLIT=0, for with/without comparisons), 0 or
// 1 as zk_g16_set_binary_split set it.
static std::atomic<int> binary_split_mode{-1};

extern "C" void zk_g16_set_binary_split(int on) { binary_split_mode.store(on < 0 ? -1 : on != 0); }

static bool binary_split_on() {
    int m = binary_split_mode.load();
    if (m >= 0) return m != 0;
    static const bool env_on = [] {
        const char* v = getenv("ZKHOST_CUDA_BINARY_SPLIT");
        return !(v && strcmp(v, "0") == 0);
    }();
    return env_on;
}

namespace {

// SplitGuard frees W's classification on every return path, once the G2
// MSM's stream is idle (after an error the G2 thread may have left work on
// it that reads the lists).
struct SplitGuard {
    zk_g16_slot* slot;
    zk_msm_split* split = nullptr;
    ~SplitGuard() {
        if (!split) return;
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

extern "C" int zk_g16_prove(zk_g16_key* key, zk_g16_slot* slot, size_t n, void* out_g1,
                            void* out_g2, zk_g16_timing* timing, char* err, size_t errlen) {
    if (!key || !slot || !out_g1 || !out_g2)
        return zk_fail(err, errlen, ZK_EINVAL, "nil argument");
    const size_t N = 1ull << key->log_n;
    const size_t nwires = key->nwires;
    if (slot->nwires != nwires || slot->N != N || slot->device != key->device)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "slot made for %zu wires and domain %zu on device %d, the key has %zu "
                       "wires and domain %zu on device %d",
                       slot->nwires, slot->N, slot->device, nwires, N, key->device);
    if (n == 0 || n > N)
        return zk_fail(err, errlen, ZK_EINVAL, "%zu constraints; the key wants 1 to %zu", n, N);
    int rc = zk_use_device(key->device, err, errlen);
    if (rc != ZK_OK) return rc;
    const char* hw = (const char*)slot->staging;
    const char* ha = hw + nwires * kFr;
    const char* hb = ha + N * kFr;
    cudaStream_t st = slot->stream;
    cudaEvent_t* ev = slot->ev;
    Drain drain{slot};  // declared before g2: the G2 thread is joined first

    // From pinned staging: asynchronous DMAs, beside whatever other slots run.
    ZK_CUDA(cudaEventRecord(ev[0], st));
    ZK_CUDA(cudaMemcpyAsync(slot->w, hw, nwires * kFr, cudaMemcpyHostToDevice, st));
    ZK_CUDA(cudaMemcpyAsync(slot->a, ha, n * kFr, cudaMemcpyHostToDevice, st));
    ZK_CUDA(cudaMemcpyAsync(slot->b, hb, n * kFr, cudaMemcpyHostToDevice, st));
    if (n < N) {
        ZK_CUDA(cudaMemsetAsync((char*)slot->a + n * kFr, 0, (N - n) * kFr, st));
        ZK_CUDA(cudaMemsetAsync((char*)slot->b + n * kFr, 0, (N - n) * kFr, st));
    }
    ZK_CUDA(cudaEventRecord(ev[1], st));

    // W's 0s and 1s (most of a witness) get no Pippenger work in the MSMs
    // over W: classified once here, on the proof's stream, for all four (it
    // waits for the upload; its ~0.1 ms count in the H phase's time).
    SplitGuard wsplit{slot};  // declared before g2: freed after the G2 thread is joined
    if (binary_split_on()) {
        char cerr[512] = {0};
        int crc = zk_msm_split_classify(key->device, slot->w, nwires, st, &wsplit.split, cerr,
                                        sizeof cerr);
        if (crc != ZK_MSM_OK) return msm_fail(crc, "classify W", err, errlen, cerr);
    }

    // The G2 MSM needs only W: it runs on the slot's second stream (and a host
    // thread) from the moment W is on the device, beside H and the G1 MSMs,
    // filling the gaps they leave (sorts, reductions, small kernels). ev[4],
    // ev[5] time it.
    ZK_CUDA(cudaStreamWaitEvent(slot->stream2, ev[1], 0));
    ZK_CUDA(cudaEventRecord(ev[4], slot->stream2));
    int g2rc = ZK_MSM_OK;
    char g2err[512] = {0};
    Joiner g2;  // joined on every return path, before the streams are drained
    g2.t = std::thread([&] {
        cudaSetDevice(key->device);
        if (key->b2 && wsplit.split)
            g2rc = zk_msm_run_split(key->b2, wsplit.split, 0, nwires, slot->stream2, out_g2,
                                    nullptr, g2err, sizeof g2err);
        else if (key->b2)
            g2rc = zk_msm_run(key->b2, slot->w, nwires, 1, slot->stream2, out_g2, nullptr, g2err,
                              sizeof g2err);
        else
            memset(out_g2, 0, 288);
        if (g2rc == ZK_MSM_OK) cudaEventRecord(ev[5], slot->stream2);
    });

    char inner[512] = {0};
    rc = zk_compute_h_device(key->device, slot->a, slot->b, slot->c, key->log_n, st, nullptr,
                             inner, sizeof inner);
    if (rc != ZK_OK) return zk_fail(err, errlen, rc, "H: %s", inner);
    ZK_CUDA(cudaEventRecord(ev[2], st));

    const size_t jac1 = 144;
    struct {
        void* bases;
        const void* scalars;
        size_t n;
        void* out;
        const char* name;
        size_t w_lo;  // over W from this wire (split runs); Z's are over H
        bool over_w;
    } g1[] = {
        {key->a, slot->w, nwires, (char*)out_g1 + 0 * jac1, "MSM A", 0, true},
        {key->b, slot->w, nwires, (char*)out_g1 + 1 * jac1, "MSM B1", 0, true},
        {key->k, (const char*)slot->w + key->nb_public * kFr, key->nk, (char*)out_g1 + 2 * jac1,
         "MSM K", key->nb_public, true},
        {key->z, slot->a, key->nz, (char*)out_g1 + 3 * jac1, "MSM Z", 0, false},
    };
    for (auto& m : g1) {
        if (m.n == 0 || !m.bases) {
            // The empty sum: infinity in Jacobian coordinates is (1, 1, 0); a
            // zeroed output is turned into that on the Go side.
            memset(m.out, 0, jac1);
            continue;
        }
        int mrc = m.over_w && wsplit.split
                      ? zk_msm_run_split(m.bases, wsplit.split, m.w_lo, m.n, st, m.out, nullptr,
                                         inner, sizeof inner)
                      : zk_msm_run(m.bases, m.scalars, m.n, 1, st, m.out, nullptr, inner,
                                   sizeof inner);
        if (mrc != ZK_MSM_OK) return msm_fail(mrc, m.name, err, errlen, inner);
    }
    ZK_CUDA(cudaEventRecord(ev[3], st));
    g2.t.join();
    if (g2rc != ZK_MSM_OK) return msm_fail(g2rc, "MSM B2", err, errlen, g2err);
    ZK_CUDA(cudaEventSynchronize(ev[3]));
    ZK_CUDA(cudaEventSynchronize(ev[5]));
    if (timing) {
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
