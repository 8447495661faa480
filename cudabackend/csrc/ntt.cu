// ntt.cu: NTT over the scalar fields of BLS12-381 and BN254, and Groth16's
// H over either, in gnark's form (H = (A·B-C)/Z on a coset, matching
// gnark-crypto's fr/fft and gnark's computeH bit for bit) or snarkjs's (the C
// ABI of ntt.h). The pass structure and butterflies are in ntt_core.cuh; this
// file holds the kernels, the per-size table cache and the entry points. The
// kernels, tables and cache are templates over the field's element type F,
// instantiated for fr_t and bn254_fr_t (ntt.h's zk_ntt_curve picks one); H
// out of core is fr_t's.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <utility>

#include "common.cuh"
#include "ntt.h"
#include "ntt_core.cuh"
#include "on_curve.cuh"

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
template <class F, bool DIT, bool R4>
__device__ __forceinline__ void ntt_pass_body(F* X, const pass_params<F>& p,
                                              const scale_spec<F>& pre,
                                              const scale_spec<F>& post) {
    extern __shared__ uint4 smem_raw[];
    F* sm = reinterpret_cast<F*>(smem_raw);
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

template <class F, bool DIT>
__global__ void __launch_bounds__(THREADS)
    k_ntt_pass(F* X, pass_params<F> p, scale_spec<F> pre, scale_spec<F> post) {
    ntt_pass_body<F, DIT, false>(X, p, pre, post);
}

template <class F, bool DIT>
__global__ void __launch_bounds__(THREADS, 3)
    k_ntt_pass4(F* X, pass_params<F> p, scale_spec<F> pre, scale_spec<F> post) {
    ntt_pass_body<F, DIT, true>(X, p, pre, post);
}

// k_scale applies pre then post to every element (the N = 1 transform).
template <class F>
__global__ void k_scale(F* X, uint32_t n, uint32_t L, scale_spec<F> pre, scale_spec<F> post) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        wr_fr(X + i, scale_apply(post, scale_apply(pre, rd_fr(X + i), i, L), i, L));
}

// k_powers writes out[j] = c·base^j for j < n, 64 consecutive j per thread.
template <class F>
__global__ void k_powers(F* out, uint32_t n, F base, F c) {
    uint64_t j0 = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) * 64;
    if (j0 >= n) return;
    uint32_t cnt = n - j0 < 64 ? (uint32_t)(n - j0) : 64u;
    powers_chunk(out + j0, (uint32_t)j0, cnt, base, c);
}

// k_gather writes out[t] = src[t·stride] for t < n.
template <class F>
__global__ void k_gather(F* out, const F* src, uint32_t n, uint32_t stride) {
    for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x)
        wr_fr(out + t, rd_fr(src + (uint64_t)t * stride));
}

// k_mul writes c[i] = a[i]·b[i].
template <class F>
__global__ void k_mul(F* c, const F* a, const F* b, uint32_t n) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        wr_fr(c + i, rd_fr(a + i) * rd_fr(b + i));
}

// k_h_pointwise writes a[i] = (a[i]·b[i] - c[i])·den.
template <class F>
__global__ void k_h_pointwise(F* a, const F* b, const F* c, F den, uint32_t n) {
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

// domain_t holds one size's device tables and constants, of field F, for
// H's form (ntt.h's zk_h_form): gnark-crypto's roots of unity and shift g
// (ZK_H_GNARK, every transform's), or snarkjs's roots and its shift ρ, the
// primitive 2N-th root whose square is ω (ZK_H_SNARKJS, snarkjs's H alone).
template <class F>
struct domain_t {
    uint32_t L = 0;
    int form = ZK_H_GNARK;
    plan_t plan;
    F* mem = nullptr;      // one allocation for every table below
    F* tw[2];              // [ZK_NTT_FORWARD / ZK_NTT_INVERSE] stage-major twiddles
    uint32_t lo_bits = 0;  // coset tables split the exponent at this bit
    F* coset_lo[2];        // [0]: g^j, [1]: g^-j, j < 2^lo_bits
    F* coset_hi[2][2];     // [base][scaled by 1/N]: c·base^(j << lo_bits)
    F n_inv, den;          // 1/N and H's factor: 1/(g^N - 1) (gnark's), 1 (snarkjs's)
};

// Every field the NTT is built for has 32-byte elements, the size ntt.h's
// byte counts assume, and roots of unity of every order up to
// 2^ZK_NTT_MAX_LOG.
template <class F>
constexpr bool ntt_field_fits() {
    return sizeof(F) == 32 && F::params::TWO_ADICITY >= ZK_NTT_MAX_LOG;
}
static_assert(ntt_field_fits<fr_t>() && ntt_field_fits<bn254_fr_t>(),
              "ntt.h's sizes and ZK_NTT_MAX_LOG hold for every field");

// domain_elems is the elements of a domain's tables: ntt.h's
// zk_ntt_domain_bytes_of, which fixes lo_bits at (L + 1) / 2 as build_domain does.
template <class F>
uint64_t domain_elems(uint32_t L) { return zk_ntt_domain_bytes_of(L) / sizeof(F); }

// The tables are cached per process and field, keyed by (device, size and
// form, domain_key): they depend on nothing but the field, the size and the
// form (no setting of any caller changes them), every key and test of one
// size on a device shares them, and zk_ntt_release frees a device's. A
// per-key copy would hold the same bytes once per key.
template <class F>
struct domain_cache {
    std::mutex mu;
    std::map<std::pair<int, uint32_t>, domain_t<F>*> domains;
};
template <class F>
domain_cache<F> g_domains;

// release_cached frees every entry of device in a table cache (the NTT's of
// a field, H out of core's) under its lock: the entry's device memory, then
// the entry; it returns the first cudaFree's error.
template <class T>
cudaError_t release_cached(std::mutex& mu, std::map<std::pair<int, uint32_t>, T*>& m, int device) {
    std::lock_guard<std::mutex> lock(mu);
    cudaError_t first = cudaSuccess;
    for (auto it = m.begin(); it != m.end();) {
        if (it->first.first == device) {
            cudaError_t e = cudaFree(it->second->mem);
            if (first == cudaSuccess) first = e;
            delete it->second;
            it = m.erase(it);
        } else {
            ++it;
        }
    }
    return first;
}

// tables_built waits for the table kernels queued on s and destroys s; on
// failure it frees mem, the tables' memory, and reports what failed (the
// caller deletes its struct). Both table caches (the NTT's, H out of
// core's) end their build so.
int tables_built(cudaStream_t s, void* mem, const char* what, char* err, size_t errlen) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    if (e == cudaSuccess) return ZK_OK;
    cudaFree(mem);
    return zk_cuda_fail(err, errlen, e, what, __FILE__, __LINE__);
}

// domain_key is the cache's second key: the size, and the form above it.
uint32_t domain_key(uint32_t L, int form) { return L | (uint32_t)form << 16; }

template <class F>
int build_domain(int device, uint32_t L, int form, domain_t<F>** out, char* err, size_t errlen) {
    domain_t<F>* d = new domain_t<F>();
    d->L = L;
    d->form = form;
    if (!make_plan(L, &d->plan)) {
        delete d;
        return zk_fail(err, errlen, ZK_EINVAL, "ntt: no pass plan for log_n %u", L);
    }
    d->lo_bits = (L + 1) / 2;
    const uint64_t N = 1ull << L;
    const uint64_t twn = N > 1 ? N - 1 : 1;
    const uint64_t elems = domain_elems<F>(L);
    cudaError_t e = cudaMalloc(&d->mem, elems * sizeof(F));
    if (e != cudaSuccess) {
        delete d;
        return zk_cuda_fail(err, errlen, e, "ntt tables: cudaMalloc", __FILE__, __LINE__);
    }
    F* p = d->mem;
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
    const F one = F::one();
    const bool snarkjs = form == ZK_H_SNARKJS;
    F w[2];
    w[0] = root_of_unity<F>(L, snarkjs);
    w[1] = w[0].inverse();
    F g[2];
    g[0] = snarkjs ? root_of_unity<F>(L + 1, true) : coset_gen<F>();
    g[1] = g[0].inverse();
    d->n_inv = fr_from_u64<F>(N).inverse();
    d->den = snarkjs ? one : (g[0].pow(N) - one).inverse();

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
            F* top = d->tw[dir] + (half - 1);
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
        F step = g[b].pow(nlo);
        k_powers<<<(nhi + 64 * 128 - 1) / (64 * 128), 128, 0, s>>>(d->coset_hi[b][0], nhi, step,
                                                                   one);
        k_powers<<<(nhi + 64 * 128 - 1) / (64 * 128), 128, 0, s>>>(d->coset_hi[b][1], nhi, step,
                                                                   d->n_inv);
    }
    if (int rc = tables_built(s, d->mem, "ntt tables: build", err, errlen)) {
        delete d;
        return rc;
    }
    *out = d;
    return ZK_OK;
}

// get_domain returns the cached tables of (device, L, form) of field F,
// building them once. The caller has made device current. Deliberately
// parallel to get_hs: see why there.
template <class F>
int get_domain(int device, uint32_t L, domain_t<F>** out, char* err, size_t errlen,
               int form = ZK_H_GNARK) {
    if (L > ZK_NTT_MAX_LOG)
        return zk_fail(err, errlen, ZK_EINVAL, "ntt: log_n %u exceeds the maximum %d", L,
                       ZK_NTT_MAX_LOG);
    if (form != ZK_H_GNARK && form != ZK_H_SNARKJS)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "H: form %d: want ZK_H_GNARK (%d) or ZK_H_SNARKJS (%d)", form, ZK_H_GNARK,
                       ZK_H_SNARKJS);
    if (form == ZK_H_SNARKJS && L >= F::params::TWO_ADICITY)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "H in snarkjs's form: a domain of 2^%u needs a root of unity of order "
                       "2^%u, and the field's largest is 2^%u",
                       L, L + 1, (uint32_t)F::params::TWO_ADICITY);
    domain_cache<F>& c = g_domains<F>;
    std::lock_guard<std::mutex> lock(c.mu);
    auto key = std::make_pair(device, domain_key(L, form));
    auto it = c.domains.find(key);
    if (it != c.domains.end()) {
        *out = it->second;
        return ZK_OK;
    }
    domain_t<F>* d = nullptr;
    int rc = build_domain(device, L, form, &d, err, errlen);
    if (rc != ZK_OK) return rc;
    c.domains[key] = d;
    *out = d;
    return ZK_OK;
}

// release_domains frees device's cached tables of field F.
template <class F>
cudaError_t release_domains(int device) {
    return release_cached(g_domains<F>.mu, g_domains<F>.domains, device);
}

// coset_spec: factor c·base^e, base g (inv = 0) or g^-1 (inv = 1), c = 1 or
// 1/N (ninv), e = i or bitrev(i).
template <class F>
scale_spec<F> coset_spec(const domain_t<F>* d, int inv, int ninv, int bitrev_idx) {
    scale_spec<F> s = scale_none<F>();
    s.kind = 2;
    s.bitrev = bitrev_idx;
    s.lo_bits = d->lo_bits;
    s.hi = d->coset_hi[inv][ninv];
    s.lo = d->coset_lo[inv];
    return s;
}

template <class F>
scale_spec<F> const_spec(const F& c) {
    scale_spec<F> s = scale_none<F>();
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
//
// With count > 1 it transforms count vectors of the domain's size lying back
// to back in X, each on its own (the stages of a size-2^L transform never mix
// elements of different 2^L-aligned runs, and their twiddles depend on the
// position within the run only): pre and post must then be scale_none(),
// whose indices would run over the whole batch.
template <class F>
int run_ntt(const domain_t<F>* d, F* X, int dir, bool dit, int radix, const scale_spec<F>& pre,
            const scale_spec<F>& post, cudaStream_t s, char* err, size_t errlen,
            uint32_t count = 1) {
    const uint32_t L = d->L;
    const plan_t& pl = d->plan;
    if (pl.passes == 0) {
        if (count == 1) k_scale<<<1, 32, 0, s>>>(X, 1u << L, L, pre, post);
        ZK_LAUNCHED();
        return ZK_OK;
    }
    const uint32_t logE = L < LOG_E ? L : LOG_E;
    const uint32_t E = 1u << logE;
    const unsigned blocks = (unsigned)(((1ull << L) >> logE) * count);
    const unsigned threads = E / 2 < (uint32_t)THREADS ? E / 2 : THREADS;
    const size_t smem = (size_t)E * sizeof(F);
    const scale_spec<F> none = scale_none<F>();
    const bool r4 = radix == 4;
    for (int n = 0; n < pl.passes; n++) {
        // DIT runs the stage groups in reverse (half-sizes ascending).
        const int idx = dit ? pl.passes - 1 - n : n;
        const pass_params<F> p = pass_setup<F>(pl, idx, L, d->tw[dir]);
        const scale_spec<F>& first = n == 0 ? pre : none;
        const scale_spec<F>& last = n == pl.passes - 1 ? post : none;
        if (r4 && dit)
            k_ntt_pass4<F, true><<<blocks, threads, smem, s>>>(X, p, first, last);
        else if (r4)
            k_ntt_pass4<F, false><<<blocks, threads, smem, s>>>(X, p, first, last);
        else if (dit)
            k_ntt_pass<F, true><<<blocks, threads, smem, s>>>(X, p, first, last);
        else
            k_ntt_pass<F, false><<<blocks, threads, smem, s>>>(X, p, first, last);
        ZK_LAUNCHED();
    }
    return ZK_OK;
}

// gnark_specs maps gnark's FFT / FFTInverse options to pre/post scaling.
template <class F>
void gnark_specs(const domain_t<F>* d, int dir, int dec, int coset, scale_spec<F>* pre,
                 scale_spec<F>* post) {
    *pre = scale_none<F>();
    *post = scale_none<F>();
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

// enqueue_h runs H's phases on the stream, in the form of d's tables
// (ntt.h's zk_compute_h_device_curve); ev (optional) receives an event
// before and after each phase group, five in all in either form.
template <class F>
int enqueue_h(const domain_t<F>* d, F* a, F* b, F* c, int radix, cudaStream_t s,
              event_set* ev, char* err, size_t errlen) {
    const uint32_t n = 1u << d->L;
    const scale_spec<F> none = scale_none<F>();
    // After FFTInverse(DIF) (1/N) comes FFT(DIT, OnCoset) whose first step
    // scales bit-reversed input by g^bitrev(i) (snarkjs's: ρ^bitrev(i)):
    // fused into one post-scale.
    const scale_spec<F> to_coset = coset_spec(d, 0, 1, 1);
    int rc;
#define ZK_EV()                         \
    if (ev != nullptr) ZK_CUDA(ev->record(s))
    ZK_EV();
    k_mul<<<grid_for(n), THREADS, 0, s>>>(c, a, b, n);
    ZK_LAUNCHED();
    F* v[3] = {a, b, c};
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
    // gnark's: FFTInverse(DIF, OnCoset), bit-reversed output scaled by
    // g^-bitrev(i)/N. snarkjs's MSM takes the values on the coset.
    if (d->form == ZK_H_GNARK &&
        (rc = run_ntt(d, a, ZK_NTT_INVERSE, false, radix, none, coset_spec(d, 1, 1, 1), s, err,
                      errlen)) != ZK_OK)
        return rc;
    ZK_EV();
#undef ZK_EV
    return ZK_OK;
}


// ---- H out of core (ntt.h's zk_h_stream) -------------------------------------

// k_transpose writes out (cols x rows) = in (rows x cols) transposed, both
// row-major, cols = 2^log_cols. Each thread moves whole 32-byte elements,
// so a write fills a whole memory sector; no shared-memory tile (not measured
// against one).
__global__ void k_transpose(fr_t* __restrict__ out, const fr_t* __restrict__ in, uint32_t rows,
                            uint32_t log_cols) {
    const uint32_t n = rows << log_cols, mask = (1u << log_cols) - 1;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        wr_fr(out + (uint64_t)(i & mask) * rows + (i >> log_cols), rd_fr(in + i));
}

// k_fourstep_twiddle multiplies element (row j, column m) of a block of the
// N1 x N2 matrix by ω^(m·bitrev(j, l1)) (w: scale_spec of ω^e or ω^-e, e
// given as is). The block is whole rows j0.. (row-major, colmajor 0: element i
// is row j0 + i/N2, column i%N2) or whole columns m0.. transposed (colmajor
// 1: element i is column m0 + i/N1, row i%N1).
__global__ void k_fourstep_twiddle(fr_t* X, uint32_t n, int colmajor, uint32_t l1, uint32_t l2,
                                   uint32_t j0, uint32_t m0, scale_spec<fr_t> w) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        uint32_t j, m;
        if (colmajor) {
            m = m0 + (i >> l1);
            j = i & ((1u << l1) - 1);
        } else {
            j = j0 + (i >> l2);
            m = i & ((1u << l2) - 1);
        }
        wr_fr(X + i, scale_apply(w, rd_fr(X + i), m * bitrev(j, l1), l1 + l2));
    }
}

// k_zero_past zeroes, in a and b (a block of whole columns m0.., row-major,
// 2^log_cols columns, rows of the whole matrix 2^l2 long), every element whose
// position in the vector is n or more: the inputs past the constraints, which
// the caller's host vectors need not hold.
__global__ void k_zero_past(fr_t* a, fr_t* b, uint32_t count, uint32_t log_cols, uint32_t l2,
                            uint32_t m0, uint64_t n) {
    const fr_t zero = fr_t::zero();
    const uint32_t mask = (1u << log_cols) - 1;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const uint64_t p = ((uint64_t)(i >> log_cols) << l2) + m0 + (i & mask);
        if (p >= n) {
            wr_fr(a + i, zero);
            wr_fr(b + i, zero);
        }
    }
}

// k_scale_from applies s to X[i] as to position p0 + i of the whole vector.
__global__ void k_scale_from(fr_t* X, uint32_t n, uint32_t p0, uint32_t L, scale_spec<fr_t> s) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        wr_fr(X + i, scale_apply(s, rd_fr(X + i), p0 + i, L));
}

// hs_tables is one size's constants for H out of core: the size-N1 and
// size-N2 transforms' domains and hi/lo tables of ω^e, ω^-e (w[dir]) and of
// g^bitrev(p)/N, g^-bitrev(p)/N (g[inv]).
struct hs_tables {
    uint32_t L = 0, l1 = 0, l2 = 0;
    domain_t<fr_t> *d1 = nullptr, *d2 = nullptr;
    fr_t* mem = nullptr;
    scale_spec<fr_t> w[2], g[2];
    fr_t den;
};

// Cached per (device, size) as the domains are, under a lock of their own
// (building one takes get_domain's).
std::mutex g_hs_mu;
std::map<std::pair<int, uint32_t>, hs_tables*> g_hs;

int build_hs(int device, uint32_t L, hs_tables** out, char* err, size_t errlen) {
    auto* t = new hs_tables();
    t->L = L;
    t->l1 = zk_h_stream_l1(L);
    t->l2 = L - t->l1;
    int rc = get_domain(device, t->l1, &t->d1, err, errlen);
    if (rc == ZK_OK) rc = get_domain(device, t->l2, &t->d2, err, errlen);
    if (rc != ZK_OK) {
        delete t;
        return rc;
    }
    const uint32_t lo = L / 2;
    const uint64_t nlo = 1ull << lo, nhi = 1ull << (L - lo);
    cudaError_t e = cudaMalloc(&t->mem, 4 * (nlo + nhi) * sizeof(fr_t));
    if (e != cudaSuccess) {
        delete t;
        return zk_cuda_fail(err, errlen, e, "h stream tables: cudaMalloc", __FILE__, __LINE__);
    }
    const fr_t one = fr_t::one();
    const fr_t n_inv = fr_from_u64<fr_t>(1ull << L).inverse();
    fr_t w[2], g[2];
    w[0] = root_of_unity<fr_t>(L);
    w[1] = w[0].inverse();
    g[0] = coset_gen<fr_t>();
    g[1] = g[0].inverse();
    t->den = (g[0].pow(1ull << L) - one).inverse();
    cudaStream_t s;
    e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        cudaFree(t->mem);
        delete t;
        return zk_cuda_fail(err, errlen, e, "h stream tables: stream", __FILE__, __LINE__);
    }
    fr_t* p = t->mem;
    auto table = [&](scale_spec<fr_t>* spec, const fr_t& base, const fr_t& c, int bitrev_idx) {
        spec->kind = 2;
        spec->bitrev = bitrev_idx;
        spec->lo_bits = lo;
        spec->lo = p;
        k_powers<<<(unsigned)((nlo + 64 * 128 - 1) / (64 * 128)), 128, 0, s>>>(p, (uint32_t)nlo,
                                                                              base, one);
        p += nlo;
        spec->hi = p;
        k_powers<<<(unsigned)((nhi + 64 * 128 - 1) / (64 * 128)), 128, 0, s>>>(
            p, (uint32_t)nhi, base.pow(nlo), c);
        p += nhi;
    };
    for (int i = 0; i < 2; i++) {
        t->w[i] = scale_none<fr_t>();
        table(&t->w[i], w[i], one, 0);
        t->g[i] = scale_none<fr_t>();
        table(&t->g[i], g[i], n_inv, 1);
    }
    if (int rc = tables_built(s, t->mem, "h stream tables: build", err, errlen)) {
        delete t;
        return rc;
    }
    *out = t;
    return ZK_OK;
}

// get_hs returns the cached tables of (device, L), building them once. The
// caller has made device current. Deliberately parallel to get_domain: the
// two caches hold different tables under their own mutexes, and a template
// over the map, the mutex and the builder would be longer than the lookup.
int get_hs(int device, uint32_t L, hs_tables** out, char* err, size_t errlen) {
    std::lock_guard<std::mutex> lock(g_hs_mu);
    auto key = std::make_pair(device, L);
    auto it = g_hs.find(key);
    if (it != g_hs.end()) {
        *out = it->second;
        return ZK_OK;
    }
    hs_tables* t = nullptr;
    int rc = build_hs(device, L, &t, err, errlen);
    if (rc != ZK_OK) return rc;
    g_hs[key] = t;
    *out = t;
    return ZK_OK;
}

// release_hs frees device's cached tables for H out of core (their domains
// are freed with the others).
cudaError_t release_hs(int device) { return release_cached(g_hs_mu, g_hs, device); }

}  // namespace

// ---- C ABI ------------------------------------------------------------------

extern "C" uint64_t zk_ntt_domain_bytes(uint32_t log_n) {
    if (log_n > ZK_NTT_MAX_LOG) return 0;
    return zk_ntt_domain_bytes_of(log_n);
}

namespace {


template <class F>
int ntt_device(int device, void* d_data, uint32_t log_n, int direction, int decimation, int coset,
               int radix, void* stream, char* err, size_t errlen) {
    int rc = check_ntt_args(d_data, log_n, direction, decimation, err, errlen);
    if (rc != ZK_OK) return rc;
    if ((rc = check_radix(&radix, err, errlen)) != ZK_OK) return rc;
    if ((rc = zk_use_device(device, err, errlen)) != ZK_OK) return rc;
    domain_t<F>* d;
    if ((rc = get_domain(device, log_n, &d, err, errlen)) != ZK_OK) return rc;
    scale_spec<F> pre, post;
    gnark_specs(d, direction, decimation, coset, &pre, &post);
    return run_ntt(d, (F*)d_data, direction, decimation == ZK_NTT_DIT, radix, pre, post,
                   (cudaStream_t)stream, err, errlen);
}

template <class F>
int ntt_host(int device, void* data, uint32_t log_n, int direction, int decimation, int coset,
             int radix, char* err, size_t errlen) {
    int rc = check_ntt_args(data, log_n, direction, decimation, err, errlen);
    if (rc != ZK_OK) return rc;
    if ((rc = check_radix(&radix, err, errlen)) != ZK_OK) return rc;
    if ((rc = zk_use_device(device, err, errlen)) != ZK_OK) return rc;
    const size_t bytes = sizeof(F) << log_n;
    void* dev = nullptr;
    ZK_CUDA(cudaMalloc(&dev, bytes));
    cudaError_t e = cudaMemcpy(dev, data, bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        rc = ntt_device<F>(device, dev, log_n, direction, decimation, coset, radix, nullptr, err,
                           errlen);
        if (rc == ZK_OK) e = cudaMemcpy(data, dev, bytes, cudaMemcpyDeviceToHost);
    }
    cudaFree(dev);
    if (rc != ZK_OK) return rc;
    if (e != cudaSuccess) return zk_cuda_fail(err, errlen, e, "ntt: copy", __FILE__, __LINE__);
    return ZK_OK;
}

}  // namespace

extern "C" int zk_ntt_prepare_curve(int curve, int device, uint32_t log_n, char* err,
                                    size_t errlen) {
    return on_curve(curve, "ntt", err, errlen, [&](auto f) {
        int rc = zk_use_device(device, err, errlen);
        if (rc != ZK_OK) return rc;
        domain_t<decltype(f)>* d;
        return get_domain(device, log_n, &d, err, errlen);
    });
}

extern "C" int zk_ntt_prepare(int device, uint32_t log_n, char* err, size_t errlen) {
    return zk_ntt_prepare_curve(ZK_NTT_BLS12_381, device, log_n, err, errlen);
}

extern "C" int zk_ntt_release(int device, char* err, size_t errlen) {
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    ZK_CUDA(release_hs(device));
    // Every field's, each freed whatever the other's free said.
    cudaError_t e = release_domains<fr_t>(device), e2 = release_domains<bn254_fr_t>(device);
    if (e == cudaSuccess) e = e2;
    if (e != cudaSuccess)
        return zk_cuda_fail(err, errlen, e, "ntt: release tables", __FILE__, __LINE__);
    return ZK_OK;
}

extern "C" int zk_ntt_device_curve(int curve, int device, void* d_data, uint32_t log_n,
                                   int direction, int decimation, int coset, int radix,
                                   void* stream, char* err, size_t errlen) {
    return on_curve(curve, "ntt", err, errlen, [&](auto f) {
        return ntt_device<decltype(f)>(device, d_data, log_n, direction, decimation, coset, radix,
                                       stream, err, errlen);
    });
}

extern "C" int zk_ntt_device(int device, void* d_data, uint32_t log_n, int direction,
                             int decimation, int coset, int radix, void* stream, char* err,
                             size_t errlen) {
    return zk_ntt_device_curve(ZK_NTT_BLS12_381, device, d_data, log_n, direction, decimation,
                               coset, radix, stream, err, errlen);
}

extern "C" int zk_ntt_host_curve(int curve, int device, void* data, uint32_t log_n,
                                 int direction, int decimation, int coset, int radix, char* err,
                                 size_t errlen) {
    return on_curve(curve, "ntt", err, errlen, [&](auto f) {
        return ntt_host<decltype(f)>(device, data, log_n, direction, decimation, coset, radix, err,
                                     errlen);
    });
}

extern "C" int zk_ntt_host(int device, void* data, uint32_t log_n, int direction, int decimation,
                           int coset, int radix, char* err, size_t errlen) {
    return zk_ntt_host_curve(ZK_NTT_BLS12_381, device, data, log_n, direction, decimation, coset,
                             radix, err, errlen);
}

namespace {

template <class F>
int compute_h_device(int form, int device, void* d_a, void* d_b, void* d_c, uint32_t log_n,
                     int radix, void* stream, zk_h_timing* timing, char* err, size_t errlen) {
    if (d_a == NULL || d_b == NULL || d_c == NULL)
        return zk_fail(err, errlen, ZK_EINVAL, "compute_h: NULL buffer");
    int rc = check_radix(&radix, err, errlen);
    if (rc != ZK_OK) return rc;
    if ((rc = zk_use_device(device, err, errlen)) != ZK_OK) return rc;
    domain_t<F>* d;
    if ((rc = get_domain(device, log_n, &d, err, errlen, form)) != ZK_OK) return rc;
    cudaStream_t s = (cudaStream_t)stream;
    if (timing == NULL)
        return enqueue_h(d, (F*)d_a, (F*)d_b, (F*)d_c, radix, s, nullptr, err, errlen);
    event_set ev;
    if ((rc = enqueue_h(d, (F*)d_a, (F*)d_b, (F*)d_c, radix, s, &ev, err, errlen)) != ZK_OK)
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

template <class F>
int compute_h_host(int form, int device, const void* a, const void* b, uint64_t n, void* h,
                   uint32_t log_n, int radix, zk_h_timing* timing, char* err, size_t errlen) {
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
    domain_t<F>* d;
    if ((rc = get_domain(device, log_n, &d, err, errlen, form)) != ZK_OK) return rc;

    const size_t bytes = (size_t)N * sizeof(F), in_bytes = (size_t)n * sizeof(F);
    F* buf = nullptr;
    ZK_CUDA(cudaMalloc(&buf, 3 * bytes));
    F *da = buf, *db = buf + N, *dc = buf + 2 * N;
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

}  // namespace

extern "C" int zk_h_prepare(int curve, int form, int device, uint32_t log_n, char* err,
                            size_t errlen) {
    return on_curve(curve, "ntt", err, errlen, [&](auto f) {
        int rc = zk_use_device(device, err, errlen);
        if (rc != ZK_OK) return rc;
        domain_t<decltype(f)>* d;
        return get_domain(device, log_n, &d, err, errlen, form);
    });
}

extern "C" int zk_compute_h_device_curve(int curve, int form, int device, void* d_a, void* d_b,
                                         void* d_c, uint32_t log_n, int radix, void* stream,
                                         zk_h_timing* timing, char* err, size_t errlen) {
    return on_curve(curve, "ntt", err, errlen, [&](auto f) {
        return compute_h_device<decltype(f)>(form, device, d_a, d_b, d_c, log_n, radix, stream,
                                             timing, err, errlen);
    });
}

extern "C" int zk_compute_h_device(int device, void* d_a, void* d_b, void* d_c, uint32_t log_n,
                                   int radix, void* stream, zk_h_timing* timing, char* err,
                                   size_t errlen) {
    return zk_compute_h_device_curve(ZK_NTT_BLS12_381, ZK_H_GNARK, device, d_a, d_b, d_c, log_n,
                                     radix, stream, timing, err, errlen);
}

extern "C" int zk_compute_h_host_curve(int curve, int form, int device, const void* a,
                                       const void* b, uint64_t n, void* h, uint32_t log_n,
                                       int radix, zk_h_timing* timing, char* err, size_t errlen) {
    return on_curve(curve, "ntt", err, errlen, [&](auto f) {
        return compute_h_host<decltype(f)>(form, device, a, b, n, h, log_n, radix, timing, err,
                                           errlen);
    });
}

extern "C" int zk_compute_h_host(int device, const void* a, const void* b, uint64_t n, void* h,
                                 uint32_t log_n, int radix, zk_h_timing* timing, char* err,
                                 size_t errlen) {
    return zk_compute_h_host_curve(ZK_NTT_BLS12_381, ZK_H_GNARK, device, a, b, n, h, log_n, radix,
                                   timing, err, errlen);
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

// ---- H out of core: the C ABI -------------------------------------------------

struct zk_h_stream {
    int device = 0;
    uint32_t L = 0;
    uint64_t block = 0;
    hs_tables* t = nullptr;
    fr_t* mem = nullptr;  // two sets of four buffers of block elements
    cudaStream_t s[2] = {};
};

extern "C" int zk_h_stream_free(zk_h_stream* h, char* err, size_t errlen) {
    if (!h) return ZK_OK;
    int rc = zk_use_device(h->device, err, errlen);
    if (rc == ZK_OK) {
        cudaError_t first = cudaSuccess;
        auto note = [&](cudaError_t e) {
            if (first == cudaSuccess) first = e;
        };
        for (auto s : h->s) {
            if (!s) continue;
            note(cudaStreamSynchronize(s));
            note(cudaStreamDestroy(s));
        }
        if (h->mem) note(cudaFree(h->mem));
        if (first != cudaSuccess)
            rc = zk_cuda_fail(err, errlen, first, "h stream: free", __FILE__, __LINE__);
    }
    delete h;
    return rc;
}

extern "C" int zk_h_stream_create(int device, uint32_t log_n, uint64_t block, zk_h_stream** out,
                                  char* err, size_t errlen) {
    if (!out) return zk_fail(err, errlen, ZK_EINVAL, "h stream: nil argument");
    if (log_n > ZK_NTT_MAX_LOG)
        return zk_fail(err, errlen, ZK_EINVAL, "h stream: log_n %u exceeds the maximum %d", log_n,
                       ZK_NTT_MAX_LOG);
    const uint64_t N = 1ull << log_n, lo = zk_h_stream_min_block(log_n);
    if (block < lo || block > N || (block & (block - 1)) != 0)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "h stream: a block of %llu elements; a domain of 2^%u takes a power of two "
                       "from %llu to %llu",
                       (unsigned long long)block, log_n, (unsigned long long)lo,
                       (unsigned long long)N);
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    auto* h = new (std::nothrow) zk_h_stream();
    if (!h) return zk_fail(err, errlen, ZK_ENOMEM, "h stream: host allocation");
    h->device = device;
    h->L = log_n;
    h->block = block;
    auto fail = [&](int code) {
        zk_h_stream_free(h, nullptr, 0);
        return code;
    };
    if ((rc = get_hs(device, log_n, &h->t, err, errlen)) != ZK_OK) return fail(rc);
    cudaError_t e = cudaMalloc(&h->mem, 8 * block * sizeof(fr_t));
    for (int i = 0; i < 2 && e == cudaSuccess; i++)
        e = cudaStreamCreateWithFlags(&h->s[i], cudaStreamNonBlocking);
    if (e != cudaSuccess)
        return fail(zk_cuda_fail(err, errlen, e, "h stream: buffers", __FILE__, __LINE__));
    *out = h;
    return ZK_OK;
}

namespace {

// hs_block enqueues the work of one block of one pass (1 to 4, ntt.h's
// order) on stream s with the four buffers buf: block q of whole columns
// (passes 1 and 3) or of whole rows (2 and 4) of the host vectors v (A, B,
// C), copied in, transformed and copied back.
int hs_block(const zk_h_stream* h, int pass, uint64_t q, fr_t* const host[3], uint64_t n,
             fr_t* buf[4], cudaStream_t s, int radix, char* err, size_t errlen) {
    const hs_tables* t = h->t;
    const uint32_t L = h->L, l1 = t->l1, l2 = t->l2;
    const uint64_t B = h->block, N2 = 1ull << l2, N1 = 1ull << l1;
    const unsigned grid = grid_for(B);
    const scale_spec<fr_t> none = scale_none<fr_t>();
    int rc;
    if (pass == 1 || pass == 3) {
        // Whole columns m0 .. m0+cols-1: N1 rows of cols elements each, strided
        // by a row of the matrix in host memory, row-major on the device.
        const uint64_t cols = B >> l1, m0 = q * cols, row = cols * sizeof(fr_t);
        const uint32_t log_cols = (uint32_t)__builtin_ctzll(cols);
        const int nin = pass == 1 ? 2 : 3;
        for (int v = 0; v < nin; v++)
            ZK_CUDA(cudaMemcpy2DAsync(buf[v], row, host[v] + m0, N2 * sizeof(fr_t), row, N1,
                                      cudaMemcpyHostToDevice, s));
        if (pass == 1) {
            if (n < (1ull << L)) {
                k_zero_past<<<grid, THREADS, 0, s>>>(buf[0], buf[1], (uint32_t)B, log_cols, l2,
                                                     (uint32_t)m0, n);
                ZK_LAUNCHED();
            }
            k_mul<<<grid, THREADS, 0, s>>>(buf[2], buf[0], buf[1], (uint32_t)B);
            ZK_LAUNCHED();
            // Each of A, B, C: its columns' inverse transforms (DIF), the
            // inverse twiddle, back to row-major and home.
            for (int v = 0; v < 3; v++) {
                k_transpose<<<grid, THREADS, 0, s>>>(buf[3], buf[v], (uint32_t)N1, log_cols);
                ZK_LAUNCHED();
                if ((rc = run_ntt(t->d1, buf[3], ZK_NTT_INVERSE, false, radix, none, none, s, err,
                                  errlen, (uint32_t)cols)) != ZK_OK)
                    return rc;
                k_fourstep_twiddle<<<grid, THREADS, 0, s>>>(buf[3], (uint32_t)B, 1, l1, l2, 0,
                                                            (uint32_t)m0, t->w[ZK_NTT_INVERSE]);
                ZK_LAUNCHED();
                k_transpose<<<grid, THREADS, 0, s>>>(buf[v], buf[3], (uint32_t)cols, l1);
                ZK_LAUNCHED();
                ZK_CUDA(cudaMemcpy2DAsync(host[v] + m0, N2 * sizeof(fr_t), buf[v], row, row, N1,
                                          cudaMemcpyDeviceToHost, s));
            }
            return ZK_OK;
        }
        // Pass 3: the forward transforms' column steps (DIT) leave A, B and C
        // on the coset in natural order, each transposed (a column a run).
        fr_t* cm[3];
        fr_t* spare = buf[3];
        for (int v = 0; v < 3; v++) {
            k_transpose<<<grid, THREADS, 0, s>>>(spare, buf[v], (uint32_t)N1, log_cols);
            ZK_LAUNCHED();
            if ((rc = run_ntt(t->d1, spare, ZK_NTT_FORWARD, true, radix, none, none, s, err,
                              errlen, (uint32_t)cols)) != ZK_OK)
                return rc;
            cm[v] = spare;
            spare = buf[v];
        }
        // H on the coset, then the last inverse transform's column step.
        k_h_pointwise<<<grid, THREADS, 0, s>>>(cm[0], cm[1], cm[2], t->den, (uint32_t)B);
        ZK_LAUNCHED();
        if ((rc = run_ntt(t->d1, cm[0], ZK_NTT_INVERSE, false, radix, none, none, s, err, errlen,
                          (uint32_t)cols)) != ZK_OK)
            return rc;
        k_fourstep_twiddle<<<grid, THREADS, 0, s>>>(cm[0], (uint32_t)B, 1, l1, l2, 0, (uint32_t)m0,
                                                    t->w[ZK_NTT_INVERSE]);
        ZK_LAUNCHED();
        k_transpose<<<grid, THREADS, 0, s>>>(spare, cm[0], (uint32_t)cols, l1);
        ZK_LAUNCHED();
        ZK_CUDA(cudaMemcpy2DAsync(host[0] + m0, N2 * sizeof(fr_t), spare, row, row, N1,
                                  cudaMemcpyDeviceToHost, s));
        return ZK_OK;
    }
    // Whole rows j0 .. j0+rows-1: contiguous in host memory.
    const uint64_t rows = B >> l2, j0 = q * rows, p0 = j0 << l2, bytes = B * sizeof(fr_t);
    const int nv = pass == 2 ? 3 : 1;
    for (int v = 0; v < nv; v++) {
        ZK_CUDA(cudaMemcpyAsync(buf[v], host[v] + p0, bytes, cudaMemcpyHostToDevice, s));
        // The inverse transform's row step (DIF) completes it: bit-reversed,
        // scaled by g^bitrev(p)/N (the inverse, then the next transform's
        // coset shift) or by g^-bitrev(p)/N (the last inverse's coset shift).
        if ((rc = run_ntt(t->d2, buf[v], ZK_NTT_INVERSE, false, radix, none, none, s, err, errlen,
                          (uint32_t)rows)) != ZK_OK)
            return rc;
        k_scale_from<<<grid, THREADS, 0, s>>>(buf[v], (uint32_t)B, (uint32_t)p0, L,
                                              t->g[pass == 2 ? 0 : 1]);
        ZK_LAUNCHED();
        if (pass == 2) {
            // The forward transform on the coset: its row step (DIT) and
            // twiddle; its column step is pass 3's.
            if ((rc = run_ntt(t->d2, buf[v], ZK_NTT_FORWARD, true, radix, none, none, s, err,
                              errlen, (uint32_t)rows)) != ZK_OK)
                return rc;
            k_fourstep_twiddle<<<grid, THREADS, 0, s>>>(buf[v], (uint32_t)B, 0, l1, l2,
                                                        (uint32_t)j0, 0, t->w[ZK_NTT_FORWARD]);
            ZK_LAUNCHED();
        }
        ZK_CUDA(cudaMemcpyAsync(host[v] + p0, buf[v], bytes, cudaMemcpyDeviceToHost, s));
    }
    return ZK_OK;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

extern "C" int zk_h_stream_run(zk_h_stream* h, void* a, void* b, void* c, uint64_t n,
                               zk_h_timing* timing, char* err, size_t errlen) {
    if (!h || !a || !b || !c) return zk_fail(err, errlen, ZK_EINVAL, "h stream: nil argument");
    if (n == 0 || n > (1ull << h->L))
        return zk_fail(err, errlen, ZK_EINVAL, "h stream: %llu inputs for a domain of %llu",
                       (unsigned long long)n, 1ull << h->L);
    int rc = zk_use_device(h->device, err, errlen);
    if (rc != ZK_OK) return rc;
    // Every return leaves both streams idle: no copy may still write the
    // caller's vectors after an error.
    struct Idle {
        zk_h_stream* h;
        ~Idle() {
            for (auto s : h->s) cudaStreamSynchronize(s);
        }
    } idle{h};
    fr_t* const host[3] = {(fr_t*)a, (fr_t*)b, (fr_t*)c};
    const uint64_t blocks = (1ull << h->L) / h->block;
    int radix = 0;
    if ((rc = check_radix(&radix, err, errlen)) != ZK_OK) return rc;
    const auto t0 = std::chrono::steady_clock::now();
    double at[5] = {0};
    for (int pass = 1; pass <= 4; pass++) {
        // Blocks alternate between the two streams and their buffer sets: one
        // block's copies run beside the other's transforms. A pass reads what
        // the one before wrote to the host, so each ends before the next.
        for (uint64_t q = 0; q < blocks; q++) {
            const int k = (int)(q & 1);
            fr_t* buf[4];
            for (int i = 0; i < 4; i++) buf[i] = h->mem + (uint64_t)(4 * k + i) * h->block;
            if ((rc = hs_block(h, pass, q, host, n, buf, h->s[k], radix, err, errlen)) != ZK_OK)
                return rc;
        }
        for (auto s : h->s) ZK_CUDA(cudaStreamSynchronize(s));
        at[pass] = ms_since(t0);
    }
    if (timing) {
        *timing = zk_h_timing{};
        timing->intt_ms = (float)at[2];
        timing->coset_ntt_ms = (float)(at[3] - at[2]);
        timing->coset_intt_ms = (float)(at[4] - at[3]);
        timing->total_ms = (float)at[4];
    }
    return ZK_OK;
}

extern "C" int zk_compute_h_stream_host(int device, const void* a, const void* b, uint64_t n,
                                        void* h, uint32_t log_n, uint64_t block,
                                        zk_h_timing* timing, char* err, size_t errlen) {
    if (a == NULL || b == NULL || h == NULL)
        return zk_fail(err, errlen, ZK_EINVAL, "compute_h_stream: NULL buffer");
    if (log_n > ZK_NTT_MAX_LOG)
        return zk_fail(err, errlen, ZK_EINVAL, "compute_h_stream: log_n %u exceeds the maximum %d",
                       log_n, ZK_NTT_MAX_LOG);
    const uint64_t N = 1ull << log_n;
    if (n > N)
        return zk_fail(err, errlen, ZK_EINVAL,
                       "compute_h_stream: %llu inputs exceed the domain size %llu",
                       (unsigned long long)n, (unsigned long long)N);
    zk_h_stream* hs = nullptr;
    int rc = zk_h_stream_create(device, log_n, block, &hs, err, errlen);
    if (rc != ZK_OK) return rc;
    fr_t* pinned = nullptr;
    cudaError_t e = cudaHostAlloc((void**)&pinned, 3 * N * sizeof(fr_t), cudaHostAllocPortable);
    if (e == cudaSuccess) {
        // Past n the vectors hold what a slot's staging may: anything (the
        // last proof's H); the first pass zeroes it on the device.
        memset(pinned, 0xff, 2 * N * sizeof(fr_t));
        memcpy(pinned, a, n * sizeof(fr_t));
        memcpy(pinned + N, b, n * sizeof(fr_t));
        rc = zk_h_stream_run(hs, pinned, pinned + N, pinned + 2 * N, n, timing, err, errlen);
        if (rc == ZK_OK) memcpy(h, pinned, N * sizeof(fr_t));
        cudaFreeHost(pinned);
    }
    zk_h_stream_free(hs, nullptr, 0);
    if (e != cudaSuccess)
        return zk_cuda_fail(err, errlen, e, "compute_h_stream: pinned buffers", __FILE__, __LINE__);
    return rc;
}
