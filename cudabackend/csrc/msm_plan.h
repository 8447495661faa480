/* msm_plan.h: the plan of one multi-scalar multiplication (window size,
 * digit pairs, thread counts) and the device working memory it allocates,
 * in plain C so that three users share one formula:
 *  - msm.cu sizes every allocation of zk_msm_run and zk_msm_run_split (dense,
 *    split, overlapped upload) from zk_msm_work, and zk_msm_split_classify's
 *    from zk_msm_classify_work;
 *  - the Go package cudabackend/gpu computes its admission estimate with the
 *    same arithmetic (memplan.go) and its tests compare the two through cgo
 *    (plan_cgo.go), on a machine without a GPU;
 *  - the GPU tests check the estimate against cudaMemGetInfo.
 * Every count that depends on the device (the threads k_accum0 and k_reduce
 * keep resident) is an input: the real values give the exact allocation, an
 * upper bound (every SM full, 2048 threads) gives an upper bound, since every
 * size grows with them.
 */
#ifndef ZK_MSM_PLAN_H
#define ZK_MSM_PLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ZK_MSM_MAX_CHUNK: scalars beyond it are processed in chunks whose window
 * sums add up; the workspace is sized for one chunk. */
#define ZK_MSM_MAX_CHUNK ((size_t)1 << 25)
#define ZK_MSM_MIN_SEG 32u  /* fewest digit pairs per level-0 accumulation thread */
#define ZK_MSM_K_MERGE 32u  /* entries per thread in the later merge levels */
#define ZK_MSM_TREE_G 16u   /* points summed per thread in the reduction tree (msm_core.cuh) */
/* ZK_MSM_POOL_ROUND: what one stream-ordered allocation may take beyond its
 * size in the pool (its physical granularity, 2 MiB). */
#define ZK_MSM_POOL_ROUND ((uint64_t)2 << 20)

typedef struct zk_msm_plan {
    int c, nwin;        /* window bits, windows */
    uint32_t m;         /* buckets per window, 2^(c-1) */
    uint32_t sentinel;  /* sort key of a zero digit */
    int keybits;        /* bits the radix sort looks at */
    size_t chunk;       /* scalars per chunk */
    size_t M;           /* digit pairs of a full chunk */
    uint32_t T0;        /* k_accum0 threads of a full chunk */
    uint32_t T1max;     /* threads of the first merge level */
    uint32_t Tred, L;   /* reduction segments per window and their length */
    int logL;
} zk_msm_plan;

/* zk_msm_work is the device memory of one zk_msm_run (or zk_msm_run_split),
 * per allocation. */
typedef struct zk_msm_work {
    uint64_t scalars;       /* host scalars copied over (0 for device scalars) */
    uint64_t keys, vals;    /* each of the two sort key and two value buffers */
    uint64_t sort_tmp;      /* the radix sort's temporary storage */
    uint64_t buckets;
    uint64_t part_a, part_ka, part_b, part_kb; /* partial runs of the merge levels */
    uint64_t red, tree, wacc, out;
    uint64_t ones_part, ones_tree; /* split runs: the ones' segment sums and their tree */
    int allocs;             /* how many stream-ordered allocations */
    uint64_t total;         /* the sum, each allocation as the pool rounds it up */
} zk_msm_work;

static inline int zk_msm_ceil_log2(uint64_t v) {
    int b = 0;
    while (((uint64_t)1 << b) < v) b++;
    return b;
}

/* zk_msm_choose_c minimises a field-product count: nwin*n mixed additions
 * (~10 products) plus nwin*2^(c-1)*2 full additions (~14) in the reduction,
 * plus a per-window cost standing for the serial tail. */
static inline int zk_msm_choose_c(size_t n) {
    int best = 4;
    double bestcost = 1e300;
    for (int c = 4; c <= 21; c++) {
        double nwin = (256 + c - 1) / c;
        double cost = nwin * ((double)n * 10.0 + (double)(1u << (c - 1)) * 28.0 + 20000.0);
        if (cost < bestcost) {
            bestcost = cost;
            best = c;
        }
    }
    return best;
}

/* zk_msm_make_plan plans an MSM of n scalars (chunks of at most
 * ZK_MSM_MAX_CHUNK) on a device that keeps resident_accum threads of k_accum0
 * and resident_reduce of k_reduce at once. The window is chosen for cfor
 * scalars, 0 meaning one chunk: the overlapped upload's pieces share one set
 * of buckets, so it plans pieces of n scalars with the window of the whole
 * MSM (cfor = its length). */
static inline zk_msm_plan zk_msm_make_plan(size_t n, size_t cfor, uint32_t resident_accum,
                                           uint32_t resident_reduce) {
    zk_msm_plan p;
    size_t chunk = n < ZK_MSM_MAX_CHUNK ? n : ZK_MSM_MAX_CHUNK;
    if (chunk == 0) chunk = 1;
    p.chunk = chunk;
    p.c = zk_msm_choose_c(cfor ? cfor : chunk);
    p.nwin = (256 + p.c - 1) / p.c;
    p.m = 1u << (p.c - 1);
    p.sentinel = (uint32_t)p.nwin * p.m;
    p.keybits = zk_msm_ceil_log2((uint64_t)p.sentinel + 1);
    p.M = (size_t)p.nwin * chunk;
    size_t want = (p.M + ZK_MSM_MIN_SEG - 1) / ZK_MSM_MIN_SEG;
    p.T0 = (uint32_t)(want < resident_accum ? want : resident_accum);
    if (p.T0 == 0) p.T0 = 1;
    p.T1max = (2 * p.T0 + ZK_MSM_K_MERGE - 1) / ZK_MSM_K_MERGE;
    uint32_t per_win = resident_reduce / (uint32_t)p.nwin;
    uint32_t T = 1;
    while (T * 2 <= per_win && T * 2 <= p.m / 8) T *= 2;
    p.Tred = T;
    p.L = p.m / T;
    p.logL = zk_msm_ceil_log2(p.L);
    return p;
}

/* zk_msm_sort_bytes_bound is the temporary storage CUB's onesweep radix sort
 * (CUB 1.x as CUDA 11.8 ships it, SM80 policy, which SM90 uses: 384 threads
 * of 21 items, 8-bit digits, int offsets) asks for M key-value pairs over
 * keybits bits with a DoubleBuffer. msm.cu allocates the larger of this and
 * what CUB says, and the GPU tests check that CUB never says more. */
static inline uint64_t zk_msm_sort_bytes_bound(size_t M, int keybits) {
    const uint64_t tile = 384 * 21, digits = 256, align = 256;
    const uint64_t portion = (((uint64_t)1 << 28) - 1) / tile * tile;
    uint64_t passes = (uint64_t)(keybits + 7) / 8;
    uint64_t portions = (M + portion - 1) / portion;
    uint64_t blocks = ((M < portion ? M : portion) + tile - 1) / tile;
    uint64_t sizes[3] = {portions * passes * digits * 4, blocks * digits * 4, portions * passes * 4};
    uint64_t total = align - 1;
    for (int i = 0; i < 3; i++) total += (sizes[i] + align - 1) / align * align;
    return total;
}

/* zk_msm_ones_threads is how many threads sum the points of a split run's
 * nones scalars equal to 1 (k_ones, a segment of the list each): 0 for none. */
static inline uint32_t zk_msm_ones_threads(size_t nones, uint32_t resident_accum) {
    if (nones == 0) return 0;
    uint64_t T = (nones + ZK_MSM_MIN_SEG - 1) / ZK_MSM_MIN_SEG;
    if (T > resident_accum) T = resident_accum;
    if (T == 0) T = 1;
    uint64_t K = (nones + T - 1) / T;
    return (uint32_t)((nones + K - 1) / K);
}

/* zk_msm_work_of is the device memory zk_msm_run allocates for plan p of
 * group (1 = G1, 2 = G2) over n scalars, host scalars (copied over) unless
 * scalars_on_device, with sort_bytes of radix sort storage. A split run
 * (zk_msm_run_split) has ones_threads = zk_msm_ones_threads of its ones
 * (0: none) and pippenger = 0 when none of its scalars needs Pippenger (then
 * only the output and the ones' buffers are allocated); a dense run has
 * ones_threads = 0 and pippenger = 1. */
static inline zk_msm_work zk_msm_work_of(int group, const zk_msm_plan* p, size_t n,
                                         int scalars_on_device, uint64_t sort_bytes,
                                         uint32_t ones_threads, int pippenger) {
    const uint64_t fp = group == 2 ? 96 : 48;  /* one coordinate: Fq or Fq2 */
    const uint64_t xyzz = 4 * fp, jac = 3 * fp;
    const uint64_t groups = 2 * (uint64_t)p->nwin;
    zk_msm_work w;
    w.scalars = scalars_on_device ? 0 : (uint64_t)n * 32;
    w.keys = (uint64_t)p->M * 4;
    w.vals = (uint64_t)p->M * 4;
    w.sort_tmp = sort_bytes;
    w.buckets = (uint64_t)p->nwin * p->m * xyzz;
    w.part_a = 2 * (uint64_t)p->T0 * xyzz;
    w.part_ka = 2 * (uint64_t)p->T0 * 4;
    w.part_b = 2 * (uint64_t)p->T1max * xyzz;
    w.part_kb = 2 * (uint64_t)p->T1max * 4;
    w.red = groups * p->Tred * xyzz;
    w.tree = groups * ((p->Tred + ZK_MSM_TREE_G - 1) / ZK_MSM_TREE_G) * xyzz;
    w.wacc = (uint64_t)p->nwin * xyzz;
    w.out = jac;
    w.ones_part = (uint64_t)ones_threads * xyzz;
    w.ones_tree = (uint64_t)((ones_threads + ZK_MSM_TREE_G - 1) / ZK_MSM_TREE_G) * xyzz;
    if (!pippenger) {
        w.keys = w.vals = w.sort_tmp = w.buckets = 0;
        w.part_a = w.part_ka = w.part_b = w.part_kb = w.red = w.tree = w.wacc = 0;
    }
    /* In run_impl's order: scalars, output, the ones', then Pippenger's. */
    uint64_t sizes[] = {w.scalars, w.out, w.ones_part, w.ones_tree, w.keys, w.keys, w.vals,
                        w.vals, w.sort_tmp, w.buckets, w.part_a, w.part_ka, w.part_b, w.part_kb,
                        w.red, w.tree, w.wacc};
    w.allocs = 0;
    w.total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (i == 0 && scalars_on_device) continue;
        if ((i == 2 || i == 3) && ones_threads == 0) continue;
        if (i >= 4 && !pippenger) continue;
        uint64_t b = sizes[i] ? sizes[i] : 16; /* work_t::alloc asks 16 bytes for 0 */
        w.total += (b + ZK_MSM_POOL_ROUND - 1) / ZK_MSM_POOL_ROUND * ZK_MSM_POOL_ROUND;
        w.allocs++;
    }
    return w;
}

/* zk_msm_select_bytes_bound bounds the temporary storage of CUB's
 * DeviceSelect::If over n items (CUB 1.x: the scan tile states, 8 bytes a
 * tile of 1280 items plus 32 of padding, aligned): counted with 16 bytes a
 * tile of 64 items. zk_msm_split_classify allocates the larger of this and
 * what CUB says. */
static inline uint64_t zk_msm_select_bytes_bound(size_t n) {
    return ((uint64_t)n / 64 + 1 + 32) * 16 + 512;
}

/* zk_msm_classify_work is the device memory zk_msm_split_classify takes for
 * n scalars: the two index lists (kept until zk_msm_split_free, 4 bytes a
 * scalar each), the classes (1 byte a scalar), the two counts and the
 * selection's storage (freed when it returns), each as the pool rounds it. */
static inline uint64_t zk_msm_classify_work(size_t n) {
    if (n == 0) return 0;
    uint64_t sizes[] = {(uint64_t)n * 4, (uint64_t)n * 4, (uint64_t)n, 8,
                        zk_msm_select_bytes_bound(n)};
    uint64_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        total += (sizes[i] + ZK_MSM_POOL_ROUND - 1) / ZK_MSM_POOL_ROUND * ZK_MSM_POOL_ROUND;
    return total;
}

#ifdef __cplusplus
}
#endif

#endif /* ZK_MSM_PLAN_H */
