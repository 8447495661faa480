// ntt.cu: NTT over the BLS12-381 scalar field and Groth16's H = (A·B-C)/Z on
// a coset, matching gnark-crypto's fr/fft and gnark's computeH bit for bit
// (the C ABI of ntt.h). The pass structure and butterflies are in
// ntt_core.cuh; this file holds the kernels, the per-size table cache and
// the entry points.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "common.cuh"
#include "ntt.h"
#include "ntt_core.cuh"

using namespace zk_ntt;

namespace {

constexpr int THREADS = 256;

// ---- kernels ----------------------------------------------------------------

// k_ntt_pass runs one pass: the block's elements into shared memory (with
// the pre scaling), the pass's stages, and back (with the post scaling).
// With R4 the stages go in pairs (pass_butterfly4): half the shared-memory
// round trips and synchronizations, but more registers per thread, so R4 is
// its own instantiation, bounded to three blocks per SM (80 registers; the
// radix-2 one keeps its 64 and four blocks); each call's radix picks.
template <bool DIT, bool R4>
__device__ __forceinline__ void ntt_pass_body(fr_t* X, const pass_params& p, const scale_spec& pre,
                                              const scale_spec& post) {
    extern __shared__ uint4 smem_raw[];
    fr_t* sm = reinterpret_cast<fr_t*>(smem_raw);
    const uint32_t E = 1u << (p.k + p.logG);
    const uint32_t block = blockIdx.x;
    for (uint32_t e = threadIdx.x; e < E; e += blockDim.x) {
        uint32_t i = pass_gidx(p, block, e);
        wr_fr(sm + e, scale_apply(pre, rd_fr(X + i), i, p.L));
    }
    __syncthreads();
    for (uint32_t l = 0; l < p.k;) {
        if (pass_pairs(p, l, R4)) {
            for (uint32_t u = threadIdx.x; u < E / 4; u += blockDim.x)
                pass_butterfly4<DIT>(sm, p, block, l, u);
            l += 2;
        } else {
            for (uint32_t u = threadIdx.x; u < E / 2; u += blockDim.x)
                pass_butterfly<DIT>(sm, p, block, l, u);
            l++;
        }
        __syncthreads();
    }
    for (uint32_t e = threadIdx.x; e < E; e += blockDim.x) {
        uint32_t i = pass_gidx(p, block, e);
        wr_fr(X + i, scale_apply(post, rd_fr(sm + e), i, p.L));
    }
}

template <bool DIT>
__global__ void __launch_bounds__(THREADS)
    k_ntt_pass(fr_t* X, pass_params p, scale_spec pre, scale_spec post) {
    ntt_pass_body<DIT, false>(X, p, pre, post);
}

template <bool DIT>
__global__ void __launch_bounds__(THREADS, 3)
    k_ntt_pass4(fr_t* X, pass_params p, scale_spec pre, scale_spec post) {
    ntt_pass_body<DIT, true>(X, p, pre, post);
}

// k_scale applies pre then post to every element (the N = 1 transform).
__global__ void k_scale(fr_t* X, uint32_t n, uint32_t L, scale_spec pre, scale_spec post) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        wr_fr(X + i, scale_apply(post, scale_apply(pre, rd_fr(X + i), i, L), i, L));
}

// k_powers writes out[j] = c·base^j for j < n, 64 consecutive j per thread.
__global__ void k_powers(fr_t* out, uint32_t n, fr_t base, fr_t c) {
    uint64_t j0 = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) * 64;
    if (j0 >= n) return;
    uint32_t cnt = n - j0 < 64 ? (uint32_t)(n - j0) : 64u;
    powers_chunk(out + j0, (uint32_t)j0, cnt, base, c);
}

// k_gather writes out[t] = src[t·stride] for t < n.
__global__ void k_gather(fr_t* out, const fr_t* src, uint32_t n, uint32_t stride) {
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x)
        wr_fr(out + t, rd_fr(src + (uint64_t)t * stride));
}

// k_mul writes c[i] = a[i]·b[i].
__global__ void k_mul(fr_t* c, const fr_t* a, const fr_t* b, uint32_t n) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        wr_fr(c + i, rd_fr(a + i) * rd_fr(b + i));
}

// k_h_pointwise writes a[i] = (a[i]·b[i] - c[i])·den.
__global__ void k_h_pointwise(fr_t* a, const fr_t* b, const fr_t* c, fr_t den, uint32_t n) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        wr_fr(a + i, (rd_fr(a + i) * rd_fr(b + i) - rd_fr(c + i)) * den);
}

template <class F>
__global__ void k_field_op(int op, const F* a, const F* b, F* out, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    F x = a[i], y = b[i], r;
    switch (op) {
    case 0: r = x + y; break;
    case 1: r = x - y; break;
    case 2: r = x * y; break;
    case 3: r = x.sqr(); break;
    case 4: r = -x; break;
    case 5: r = x.inverse(); break;
    case 6: r = F::mul_ref(x, y); break;
    case 7: r = x.from_montgomery(); break;
    case 8: r = x.to_montgomery(); break;
    default: r = x.dbl(); break;
    }
    out[i] = r;
}

// grid_for sizes a grid-stride launch.
unsigned grid_for(uint64_t n) {
    uint64_t g = (n + THREADS - 1) / THREADS;
    if (g > 65535 * 4) g = 65535 * 4;
    return (unsigned)(g ? g : 1);
}

// ---- per-size tables ----------------------------------------------------------

// domain_t holds one size's device tables and constants.
struct domain_t {
    uint32_t L = 0;
    plan_t plan;
    fr_t* mem = nullptr;   // one allocation for every table below
    fr_t* tw[2];           // [ZK_NTT_FORWARD / ZK_NTT_INVERSE] stage-major twiddles
    uint32_t lo_bits = 0;  // coset tables split the exponent at this bit
    fr_t* coset_lo[2];     // [0]: g^j, [1]: g^-j, j < 2^lo_bits
    fr_t* coset_hi[2][2];  // [base][scaled by 1/N]: c·base^(j << lo_bits)
    fr_t n_inv, den;       // 1/N and 1/(g^N - 1), Montgomery form
};

uint64_t domain_elems(uint32_t L, uint32_t lo_bits) {
    uint64_t N = 1ull << L;
    uint64_t tw = N > 1 ? N - 1 : 1;
    return 2 * tw + 2 * (1ull << lo_bits) + 4 * (1ull << (L - lo_bits));
}

// The tables are cached per process, keyed by (device, size): they depend on
// nothing but the size (no setting of any caller changes them), every key
// and test of one size on a device shares them, and zk_ntt_release frees a
// device's. A per-key copy would hold the same bytes once per key.
std::mutex g_mu;
std::map<std::pair<int, uint32_t>, domain_t*> g_domains;

int build_domain(int device, uint32_t L, domain_t** out, char* err, size_t errlen) {
    domain_t* d = new domain_t();
    d->L = L;
    if (!make_plan(L, &d->plan)) {
        delete d;
        return zk_fail(err, errlen, ZK_EINVAL, "ntt: no pass plan for log_n %u", L);
    }
    d->lo_bits = (L + 1) / 2;
    const uint64_t N = 1ull << L;
    const uint64_t twn = N > 1 ? N - 1 : 1;
    const uint64_t elems = domain_elems(L, d->lo_bits);
    cudaError_t e = cudaMalloc(&d->mem, elems * sizeof(fr_t));
    if (e != cudaSuccess) {
        delete d;
        return zk_cuda_fail(err, errlen, e, "ntt tables: cudaMalloc", __FILE__, __LINE__);
    }
    fr_t* p = d->mem;
    d->tw[0] = p; p += twn;
    d->tw[1] = p; p += twn;
    d->coset_lo[0] = p; p += 1ull << d->lo_bits;
    d->coset_lo[1] = p; p += 1ull << d->lo_bits;
    for (int b = 0; b < 2; b++)
        for (int s = 0; s < 2; s++) {
            d->coset_hi[b][s] = p;
            p += 1ull << (L - d->lo_bits);
        }

    // Constants on the host (field.cuh's portable path).
    const fr_t one = fr_t::one();
    fr_t w[2];
    w[0] = root_of_unity(L);
    w[1] = w[0].inverse();
    fr_t g[2];
    g[0] = fr_from_u64(COSET_GEN);
    g[1] = g[0].inverse();
    d->n_inv = fr_from_u64(N).inverse();
    d->den = (g[0].pow(N) - one).inverse();

    cudaStream_t s;
    e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        cudaFree(d->mem);
        delete d;
        return zk_cuda_fail(err, errlen, e, "ntt tables: stream", __FILE__, __LINE__);
    }
    if (N > 1) {
        for (int dir = 0; dir < 2; dir++) {
            // The half-size N/2 stage: ω^t, t < N/2; smaller stages gather
            // from it (ω_2m^t = ω^(t·N/2m)).
            uint32_t half = (uint32_t)(N / 2);
            fr_t* top = d->tw[dir] + (half - 1);
            k_powers<<<(unsigned)((half + 64 * 128 - 1) / (64 * 128)), 128, 0, s>>>(top, half,
                                                                                  w[dir], one);
            for (uint32_t m = 1; m < half; m <<= 1)
                k_gather<<<grid_for(m), THREADS, 0, s>>>(d->tw[dir] + (m - 1), top, m, half / m);
        }
    } else {
        k_powers<<<1, 1, 0, s>>>(d->tw[0], 1, one, one);
        k_powers<<<1, 1, 0, s>>>(d->tw[1], 1, one, one);
    }
    for (int b = 0; b < 2; b++) {
        uint32_t nlo = 1u << d->lo_bits, nhi = 1u << (L - d->lo_bits);
        k_powers<<<(nlo + 64 * 128 - 1) / (64 * 128), 128, 0, s>>>(d->coset_lo[b], nlo, g[b], one);
        fr_t step = g[b].pow(nlo);
        k_powers<<<(nhi + 64 * 128 - 1) / (64 * 128), 128, 0, s>>>(d->coset_hi[b][0], nhi, step,
                                                                   one);
        k_powers<<<(nhi + 64 * 128 - 1) / (64 * 128), 128, 0, s>>>(d->coset_hi[b][1], nhi, step,
                                                                   d->n_inv);
    }
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    if (e != cudaSuccess) {
        cudaFree(d->mem);
        delete d;
        return zk_cuda_fail(err, errlen, e, "ntt tables: build", __FILE__, __LINE__);
    }
    *out = d;
    return ZK_OK;
}

// get_domain returns the cached tables of (device, L), building them once.
// The caller has made device current.
int get_domain(int device, uint32_t L, domain_t** out, char* err, size_t errlen) {
    if (L > ZK_NTT_MAX_LOG)
        return zk_fail(err, errlen, ZK_EINVAL, "ntt: log_n %u exceeds the maximum %d", L,
                       ZK_NTT_MAX_LOG);
    std::lock_guard<std::mutex> lock(g_mu);
    auto key = std::make_pair(device, L);
    auto it = g_domains.find(key);
    if (it != g_domains.end()) {
        *out = it->second;
        return ZK_OK;
    }
    domain_t* d = nullptr;
    int rc = build_domain(device, L, &d, err, errlen);
    if (rc != ZK_OK) return rc;
    g_domains[key] = d;
    *out = d;
    return ZK_OK;
}

// coset_spec: factor c·base^e, base g (inv = 0) or g^-1 (inv = 1), c = 1 or
// 1/N (ninv), e = i or bitrev(i).
scale_spec coset_spec(const domain_t* d, int inv, int ninv, int bitrev_idx) {
    scale_spec s = scale_none();
    s.kind = 2;
    s.bitrev = bitrev_idx;
    s.lo_bits = d->lo_bits;
    s.hi = d->coset_hi[inv][ninv];
    s.lo = d->coset_lo[inv];
    return s;
}

scale_spec const_spec(const fr_t& c) {
    scale_spec s = scale_none();
    s.kind = 1;
    s.c = c;
    return s;
}

// check_radix resolves a call's radix: 0 is the default, 4 (its own kernel
// measured faster than radix 2 at every size, BENCHMARKS.md); 2 and 4 are
// themselves, for with/without comparisons. Both give the same result bit
// for bit.
int check_radix(int* radix, char* err, size_t errlen) {
    if (*radix == 0) *radix = 4;
    if (*radix != 2 && *radix != 4)
        return zk_fail(err, errlen, ZK_EINVAL, "ntt: radix %d: want 2, 4 or 0 (the default, 4)",
                       *radix);
    return ZK_OK;
}

// run_ntt enqueues one transform with explicit pre/post scaling; dir picks
// the twiddles, dit the stage order, radix (2 or 4) the passes' kernel.
int run_ntt(const domain_t* d, fr_t* X, int dir, bool dit, int radix, const scale_spec& pre,
            const scale_spec& post, cudaStream_t s, char* err, size_t errlen) {
    const uint32_t L = d->L;
    const plan_t& pl = d->plan;
    if (pl.passes == 0) {
        k_scale<<<1, 32, 0, s>>>(X, 1u << L, L, pre, post);
        ZK_LAUNCHED();
        return ZK_OK;
    }
    const uint32_t logE = L < LOG_E ? L : LOG_E;
    const uint32_t E = 1u << logE;
    const unsigned blocks = (unsigned)((1ull << L) >> logE);
    const unsigned threads = E / 2 < (uint32_t)THREADS ? E / 2 : THREADS;
    const size_t smem = (size_t)E * sizeof(fr_t);
    const scale_spec none = scale_none();
    const bool r4 = radix == 4;
    for (int n = 0; n < pl.passes; n++) {
        // DIT runs the stage groups in reverse (half-sizes ascending).
        const int idx = dit ? pl.passes - 1 - n : n;
        const pass_params p = pass_setup(pl, idx, L, d->tw[dir]);
        const scale_spec& first = n == 0 ? pre : none;
        const scale_spec& last = n == pl.passes - 1 ? post : none;
        if (r4 && dit)
            k_ntt_pass4<true><<<blocks, threads, smem, s>>>(X, p, first, last);
        else if (r4)
            k_ntt_pass4<false><<<blocks, threads, smem, s>>>(X, p, first, last);
        else if (dit)
            k_ntt_pass<true><<<blocks, threads, smem, s>>>(X, p, first, last);
        else
            k_ntt_pass<false><<<blocks, threads, smem, s>>>(X, p, first, last);
        ZK_LAUNCHED();
    }
    return ZK_OK;
}

// gnark_specs maps gnark's FFT / FFTInverse options to pre/post scaling.
void gnark_specs(const domain_t* d, int dir, int dec, int coset, scale_spec* pre,
                 scale_spec* post) {
    *pre = scale_none();
    *post = scale_none();
    if (dir == ZK_NTT_FORWARD) {
        // FFT on a coset scales the input by g^i in its own order: natural
        // for DIF, bit-reversed for DIT.
        if (coset) *pre = coset_spec(d, 0, 0, dec == ZK_NTT_DIT);
        return;
    }
    // FFTInverse scales the output by 1/N, and on a coset by g^-i in the
    // output's order: bit-reversed for DIF, natural for DIT.
    if (coset)
        *post = coset_spec(d, 1, 1, dec == ZK_NTT_DIF);
    else
        *post = const_spec(d->n_inv);
}

int check_ntt_args(void* data, uint32_t log_n, int direction, int decimation, char* err,
                   size_t errlen) {
    if (data == NULL) return zk_fail(err, errlen, ZK_EINVAL, "ntt: data is NULL");
    if (log_n > ZK_NTT_MAX_LOG)
        return zk_fail(err, errlen, ZK_EINVAL, "ntt: log_n %u exceeds the maximum %d", log_n,
                       ZK_NTT_MAX_LOG);
    if (direction != ZK_NTT_FORWARD && direction != ZK_NTT_INVERSE)
        return zk_fail(err, errlen, ZK_EINVAL, "ntt: bad direction %d", direction);
    if (decimation != ZK_NTT_DIT && decimation != ZK_NTT_DIF)
        return zk_fail(err, errlen, ZK_EINVAL, "ntt: bad decimation %d", decimation);
    return ZK_OK;
}

// event_set records up to 8 events on a stream for phase timings.
struct event_set {
    cudaEvent_t ev[8];
    int n = 0;
    ~event_set() {
        for (int i = 0; i < n; i++) cudaEventDestroy(ev[i]);
    }
    cudaError_t record(cudaStream_t s) {
        cudaError_t e = cudaEventCreate(&ev[n]);
        if (e != cudaSuccess) return e;
        n++;
        return cudaEventRecord(ev[n - 1], s);
    }
    float between(int a, int b) const {
        float ms = 0;
        cudaEventElapsedTime(&ms, ev[a], ev[b]);
        return ms;
    }
};

// enqueue_h runs computeH's phases on the stream; ev (optional) receives an
// event before and after each phase group.
int enqueue_h(const domain_t* d, fr_t* a, fr_t* b, fr_t* c, int radix, cudaStream_t s,
              event_set* ev, char* err, size_t errlen) {
    const uint32_t n = 1u << d->L;
    const scale_spec none = scale_none();
    // After FFTInverse(DIF) (1/N) comes FFT(DIT, OnCoset) whose first step
    // scales bit-reversed input by g^bitrev(i): fused into one post-scale.
    const scale_spec to_coset = coset_spec(d, 0, 1, 1);
    int rc;
#define ZK_EV()                         \
    if (ev != nullptr) ZK_CUDA(ev->record(s))
    ZK_EV();
    k_mul<<<grid_for(n), THREADS, 0, s>>>(c, a, b, n);
    ZK_LAUNCHED();
    fr_t* v[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if ((rc = run_ntt(d, v[i], ZK_NTT_INVERSE, false, radix, none, to_coset, s, err, errlen)) != ZK_OK)
            return rc;
    ZK_EV();
    for (int i = 0; i < 3; i++)
        if ((rc = run_ntt(d, v[i], ZK_NTT_FORWARD, true, radix, none, none, s, err, errlen)) != ZK_OK)
            return rc;
    ZK_EV();
    k_h_pointwise<<<grid_for(n), THREADS, 0, s>>>(a, b, c, d->den, n);
    ZK_LAUNCHED();
    ZK_EV();
    // FFTInverse(DIF, OnCoset): bit-reversed output scaled by g^-bitrev(i)/N.
    if ((rc = run_ntt(d, a, ZK_NTT_INVERSE, false, radix, none, coset_spec(d, 1, 1, 1), s,
                      err, errlen)) != ZK_OK)
        return rc;
    ZK_EV();
#undef ZK_EV
    return ZK_OK;
}

}  // namespace

// ---- C ABI ------------------------------------------------------------------

extern "C" uint64_t zk_ntt_domain_bytes(uint32_t log_n) {
    if (log_n > ZK_NTT_MAX_LOG) return 0;
    return domain_elems(log_n, (log_n + 1) / 2) * sizeof(fr_t);
}

extern "C" int zk_ntt_prepare(int device, uint32_t log_n, char* err, size_t errlen) {
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    domain_t* d;
    return get_domain(device, log_n, &d, err, errlen);
}

extern "C" int zk_ntt_release(int device, char* err, size_t errlen) {
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto it = g_domains.begin(); it != g_domains.end();) {
        if (it->first.first == device) {
            ZK_CUDA(cudaFree(it->second->mem));
            delete it->second;
            it = g_domains.erase(it);
        } else {
            ++it;
        }
    }
    return ZK_OK;
}

extern "C" int zk_ntt_device(int device, void* d_data, uint32_t log_n, int direction,
                             int decimation, int coset, int radix, void* stream, char* err,
                             size_t errlen) {
    int rc = check_ntt_args(d_data, log_n, direction, decimation, err, errlen);
    if (rc != ZK_OK) return rc;
    if ((rc = check_radix(&radix, err, errlen)) != ZK_OK) return rc;
    if ((rc = zk_use_device(device, err, errlen)) != ZK_OK) return rc;
    domain_t* d;
    if ((rc = get_domain(device, log_n, &d, err, errlen)) != ZK_OK) return rc;
    scale_spec pre, post;
    gnark_specs(d, direction, decimation, coset, &pre, &post);
    return run_ntt(d, (fr_t*)d_data, direction, decimation == ZK_NTT_DIT, radix, pre, post,
                   (cudaStream_t)stream, err, errlen);
}

extern "C" int zk_ntt_host(int device, void* data, uint32_t log_n, int direction, int decimation,
                           int coset, int radix, char* err, size_t errlen) {
    int rc = check_ntt_args(data, log_n, direction, decimation, err, errlen);
    if (rc != ZK_OK) return rc;
    if ((rc = check_radix(&radix, err, errlen)) != ZK_OK) return rc;
    if ((rc = zk_use_device(device, err, errlen)) != ZK_OK) return rc;
    const size_t bytes = (size_t)sizeof(fr_t) << log_n;
    void* dev = nullptr;
    ZK_CUDA(cudaMalloc(&dev, bytes));
    cudaError_t e = cudaMemcpy(dev, data, bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        rc = zk_ntt_device(device, dev, log_n, direction, decimation, coset, radix, nullptr, err,
                           errlen);
        if (rc == ZK_OK) e = cudaMemcpy(data, dev, bytes, cudaMemcpyDeviceToHost);
    }
    cudaFree(dev);
    if (rc != ZK_OK) return rc;
    if (e != cudaSuccess) return zk_cuda_fail(err, errlen, e, "ntt: copy", __FILE__, __LINE__);
    return ZK_OK;
}

extern "C" int zk_compute_h_device(int device, void* d_a, void* d_b, void* d_c, uint32_t log_n,
                                   int radix, void* stream, zk_h_timing* timing, char* err,
                                   size_t errlen) {
    if (d_a == NULL || d_b == NULL || d_c == NULL)
        return zk_fail(err, errlen, ZK_EINVAL, "compute_h: NULL buffer");
    if (log_n > ZK_NTT_MAX_LOG)
        return zk_fail(err, errlen, ZK_EINVAL, "compute_h: log_n %u exceeds the maximum %d", log_n,
                       ZK_NTT_MAX_LOG);
    int rc = check_radix(&radix, err, errlen);
    if (rc != ZK_OK) return rc;
    if ((rc = zk_use_device(device, err, errlen)) != ZK_OK) return rc;
    domain_t* d;
    if ((rc = get_domain(device, log_n, &d, err, errlen)) != ZK_OK) return rc;
    cudaStream_t s = (cudaStream_t)stream;
    if (timing == NULL)
        return enqueue_h(d, (fr_t*)d_a, (fr_t*)d_b, (fr_t*)d_c, radix, s, nullptr, err, errlen);
    event_set ev;
    if ((rc = enqueue_h(d, (fr_t*)d_a, (fr_t*)d_b, (fr_t*)d_c, radix, s, &ev, err, errlen)) != ZK_OK)
        return rc;
    ZK_CUDA(cudaEventSynchronize(ev.ev[ev.n - 1]));
    *timing = zk_h_timing{};
    timing->intt_ms = ev.between(0, 1);
    timing->coset_ntt_ms = ev.between(1, 2);
    timing->pointwise_ms = ev.between(2, 3);
    timing->coset_intt_ms = ev.between(3, 4);
    timing->total_ms = ev.between(0, 4);
    return ZK_OK;
}

extern "C" int zk_compute_h_host(int device, const void* a, const void* b, uint64_t n, void* h,
                                 uint32_t log_n, int radix, zk_h_timing* timing, char* err,
                                 size_t errlen) {
    if (a == NULL || b == NULL || h == NULL)
        return zk_fail(err, errlen, ZK_EINVAL, "compute_h: NULL buffer");
    if (log_n > ZK_NTT_MAX_LOG)
        return zk_fail(err, errlen, ZK_EINVAL, "compute_h: log_n %u exceeds the maximum %d", log_n,
                       ZK_NTT_MAX_LOG);
    const uint64_t N = 1ull << log_n;
    if (n > N)
        return zk_fail(err, errlen, ZK_EINVAL, "compute_h: %llu inputs exceed the domain size %llu",
                       (unsigned long long)n, (unsigned long long)N);
    int rc = check_radix(&radix, err, errlen);
    if (rc != ZK_OK) return rc;
    if ((rc = zk_use_device(device, err, errlen)) != ZK_OK) return rc;
    domain_t* d;
    if ((rc = get_domain(device, log_n, &d, err, errlen)) != ZK_OK) return rc;

    const size_t bytes = (size_t)N * sizeof(fr_t), in_bytes = (size_t)n * sizeof(fr_t);
    fr_t* buf = nullptr;
    ZK_CUDA(cudaMalloc(&buf, 3 * bytes));
    fr_t *da = buf, *db = buf + N, *dc = buf + 2 * N;
    cudaStream_t s = nullptr;
    event_set ev;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    const char* what = "compute_h: stream";
    if (e == cudaSuccess) {
        what = "compute_h: upload";
        e = ev.record(s);
        if (e == cudaSuccess) e = cudaMemcpyAsync(da, a, in_bytes, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaMemcpyAsync(db, b, in_bytes, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess && N > n) e = cudaMemsetAsync(da + n, 0, bytes - in_bytes, s);
        if (e == cudaSuccess && N > n) e = cudaMemsetAsync(db + n, 0, bytes - in_bytes, s);
    }
    if (e == cudaSuccess) {
        rc = enqueue_h(d, da, db, dc, radix, s, &ev, err, errlen);
        if (rc == ZK_OK) {
            what = "compute_h: download";
            e = cudaMemcpyAsync(h, da, bytes, cudaMemcpyDeviceToHost, s);
            if (e == cudaSuccess) e = ev.record(s);
            if (e == cudaSuccess) e = cudaStreamSynchronize(s);
        }
    }
    if (rc == ZK_OK && e == cudaSuccess && timing != NULL) {
        // events: 0 start, 1 uploaded, 2..5 phase ends, 6 downloaded
        *timing = zk_h_timing{};
        timing->upload_ms = ev.between(0, 1);
        timing->intt_ms = ev.between(1, 2);
        timing->coset_ntt_ms = ev.between(2, 3);
        timing->pointwise_ms = ev.between(3, 4);
        timing->coset_intt_ms = ev.between(4, 5);
        timing->download_ms = ev.between(5, 6);
        timing->total_ms = ev.between(0, 6);
    }
    if (s != nullptr) cudaStreamDestroy(s);
    cudaFree(buf);
    if (rc != ZK_OK) return rc;
    if (e != cudaSuccess) return zk_cuda_fail(err, errlen, e, what, __FILE__, __LINE__);
    return ZK_OK;
}

extern "C" int zk_field_op(int device, int field, int op, const void* a, const void* b, void* out,
                           uint64_t n, char* err, size_t errlen) {
    if (a == NULL || b == NULL || out == NULL)
        return zk_fail(err, errlen, ZK_EINVAL, "field_op: NULL buffer");
    if (field != 0 && field != 1) return zk_fail(err, errlen, ZK_EINVAL, "field_op: bad field %d", field);
    if (op < 0 || op > 9) return zk_fail(err, errlen, ZK_EINVAL, "field_op: bad op %d", op);
    if (n == 0) return ZK_OK;
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    const size_t esz = field == 0 ? sizeof(fr_t) : sizeof(fq_t);
    const size_t bytes = esz * n;
    char* buf = nullptr;
    ZK_CUDA(cudaMalloc(&buf, 3 * bytes));
    cudaError_t e = cudaMemcpy(buf, a, bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(buf + bytes, b, bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        unsigned grid = (unsigned)((n + 127) / 128);
        if (field == 0)
            k_field_op<fr_t><<<grid, 128>>>(op, (const fr_t*)buf, (const fr_t*)(buf + bytes),
                                            (fr_t*)(buf + 2 * bytes), n);
        else
            k_field_op<fq_t><<<grid, 128>>>(op, (const fq_t*)buf, (const fq_t*)(buf + bytes),
                                            (fq_t*)(buf + 2 * bytes), n);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(out, buf + 2 * bytes, bytes, cudaMemcpyDeviceToHost);
    cudaFree(buf);
    if (e != cudaSuccess) return zk_cuda_fail(err, errlen, e, "field_op", __FILE__, __LINE__);
    return ZK_OK;
}
