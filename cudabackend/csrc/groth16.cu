// groth16.cu: one Groth16 proof's device work (see groth16.h): upload the
// partition, H on the device, five MSMs against resident bases.

#include <cuda_runtime.h>
#include <string.h>

#include <new>
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

namespace {

// Buffers is one proof's device memory, freed on every path.
struct Buffers {
    int device = 0;
    void *w = nullptr, *a = nullptr, *b = nullptr, *c = nullptr;
    cudaStream_t stream = nullptr, stream2 = nullptr;
    cudaEvent_t ev[6] = {};
    ~Buffers() {
        cudaSetDevice(device);
        if (stream) cudaStreamSynchronize(stream);
        if (stream2) cudaStreamSynchronize(stream2);
        if (stream2) cudaStreamDestroy(stream2);
        cudaFree(w);
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
        for (auto e : ev)
            if (e) cudaEventDestroy(e);
        if (stream) cudaStreamDestroy(stream);
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

extern "C" int zk_g16_prove(zk_g16_key* key, const void* w, size_t nwires, const void* a,
                            const void* b, size_t n, void* out_g1, void* out_g2,
                            zk_g16_timing* timing, char* err, size_t errlen) {
    if (!key || !w || !a || !b || !out_g1 || !out_g2)
        return zk_fail(err, errlen, ZK_EINVAL, "nil argument");
    const size_t N = 1ull << key->log_n;
    if (nwires != key->nwires || n > N)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "partition has %zu wires and %zu constraints; the key wants %zu wires "
                       "and at most %zu constraints",
                       nwires, n, key->nwires, N);
    int rc = zk_use_device(key->device, err, errlen);
    if (rc != ZK_OK) return rc;
    Buffers buf;
    buf.device = key->device;
    ZK_CUDA(cudaStreamCreateWithFlags(&buf.stream, cudaStreamNonBlocking));
    for (auto& e : buf.ev) ZK_CUDA(cudaEventCreate(&e));
    ZK_CUDA(cudaMalloc(&buf.w, nwires * kFr));
    ZK_CUDA(cudaMalloc(&buf.a, N * kFr));
    ZK_CUDA(cudaMalloc(&buf.b, N * kFr));
    ZK_CUDA(cudaMalloc(&buf.c, N * kFr));
    cudaStream_t st = buf.stream;

    ZK_CUDA(cudaEventRecord(buf.ev[0], st));
    ZK_CUDA(cudaMemcpyAsync(buf.w, w, nwires * kFr, cudaMemcpyHostToDevice, st));
    ZK_CUDA(cudaMemcpyAsync(buf.a, a, n * kFr, cudaMemcpyHostToDevice, st));
    ZK_CUDA(cudaMemcpyAsync(buf.b, b, n * kFr, cudaMemcpyHostToDevice, st));
    if (n < N) {
        ZK_CUDA(cudaMemsetAsync((char*)buf.a + n * kFr, 0, (N - n) * kFr, st));
        ZK_CUDA(cudaMemsetAsync((char*)buf.b + n * kFr, 0, (N - n) * kFr, st));
    }
    ZK_CUDA(cudaEventRecord(buf.ev[1], st));

    // The G2 MSM needs only W: it runs on a second stream (and host thread) from the
    // moment W is on the device, beside H and the G1 MSMs, filling the gaps they
    // leave (sorts, reductions, small kernels). ev[4], ev[5] time it.
    ZK_CUDA(cudaStreamCreateWithFlags(&buf.stream2, cudaStreamNonBlocking));
    ZK_CUDA(cudaStreamWaitEvent(buf.stream2, buf.ev[1], 0));
    ZK_CUDA(cudaEventRecord(buf.ev[4], buf.stream2));
    int g2rc = ZK_MSM_OK;
    char g2err[512] = {0};
    Joiner g2;  // declared after buf: joined before buf is freed
    g2.t = std::thread([&] {
        cudaSetDevice(key->device);
        if (key->b2)
            g2rc = zk_msm_run(key->b2, buf.w, nwires, 1, buf.stream2, out_g2, nullptr, g2err,
                              sizeof g2err);
        else
            memset(out_g2, 0, 288);
        if (g2rc == ZK_MSM_OK) cudaEventRecord(buf.ev[5], buf.stream2);
    });

    char inner[512] = {0};
    rc = zk_compute_h_device(key->device, buf.a, buf.b, buf.c, key->log_n, st, nullptr, inner,
                             sizeof inner);
    if (rc != ZK_OK) return zk_fail(err, errlen, rc, "H: %s", inner);
    ZK_CUDA(cudaEventRecord(buf.ev[2], st));

    const size_t jac1 = 144;
    struct {
        void* bases;
        const void* scalars;
        size_t n;
        void* out;
        const char* name;
    } g1[] = {
        {key->a, buf.w, nwires, (char*)out_g1 + 0 * jac1, "MSM A"},
        {key->b, buf.w, nwires, (char*)out_g1 + 1 * jac1, "MSM B1"},
        {key->k, (const char*)buf.w + key->nb_public * kFr, key->nk, (char*)out_g1 + 2 * jac1,
         "MSM K"},
        {key->z, buf.a, key->nz, (char*)out_g1 + 3 * jac1, "MSM Z"},
    };
    for (auto& m : g1) {
        if (m.n == 0 || !m.bases) {
            // The empty sum: infinity in Jacobian coordinates is (1, 1, 0); a
            // zeroed output is turned into that on the Go side.
            memset(m.out, 0, jac1);
            continue;
        }
        int mrc = zk_msm_run(m.bases, m.scalars, m.n, 1, st, m.out, nullptr, inner, sizeof inner);
        if (mrc != ZK_MSM_OK) return msm_fail(mrc, m.name, err, errlen, inner);
    }
    ZK_CUDA(cudaEventRecord(buf.ev[3], st));
    g2.t.join();
    if (g2rc != ZK_MSM_OK) return msm_fail(g2rc, "MSM B2", err, errlen, g2err);
    ZK_CUDA(cudaEventSynchronize(buf.ev[3]));
    ZK_CUDA(cudaEventSynchronize(buf.ev[5]));
    if (timing) {
        timing->upload_ms = elapsed(buf.ev[0], buf.ev[1]);
        timing->ntt_ms = elapsed(buf.ev[1], buf.ev[2]);
        timing->msm_g1_ms = elapsed(buf.ev[2], buf.ev[3]);
        timing->msm_g2_start_ms = elapsed(buf.ev[0], buf.ev[4]);
        timing->msm_g2_ms = elapsed(buf.ev[4], buf.ev[5]);
        float g1_end = elapsed(buf.ev[0], buf.ev[3]), g2_end = elapsed(buf.ev[0], buf.ev[5]);
        timing->total_ms = g1_end > g2_end ? g1_end : g2_end;
    }
    return ZK_OK;
}

extern "C" int zk_host_register(void* p, size_t bytes, char* err, size_t errlen) {
    ZK_CUDA(cudaHostRegister(p, bytes, cudaHostRegisterPortable | cudaHostRegisterReadOnly));
    return ZK_OK;
}

extern "C" int zk_host_unregister(void* p, char* err, size_t errlen) {
    ZK_CUDA(cudaHostUnregister(p));
    return ZK_OK;
}
