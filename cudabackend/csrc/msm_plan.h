/* msm_plan.h: the plan of one multi-scalar multiplication (window size,
 * digit pairs, thread counts) and the device working memory it allocates,
 * in plain C (no CUDA: any C compiler builds it) so that every user reads
 * one formula:
 *  - msm.cu sizes every allocation of zk_msm_run and zk_msm_run_split (dense
 *    and split) from zk_msm_work, and zk_msm_split_classify's
 *    from zk_msm_classify_work;
 *  - the Go package cudabackend/gpu computes its admission estimate by
 *    calling these functions through cgo (memplan.go), on any machine;
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

/* ZK_MSM_MAX_CHUNK: scalars beyond it are processed in chunks that share
 * one set of buckets; the workspace is sized for one chunk. */
#define ZK_MSM_MAX_CHUNK ((size_t)1 << 25)
#define ZK_MSM_MIN_SEG 32u  /* fewest digit pairs per level-0 accumulation thread */
/* ZK_MSM_SHORT_SEG: the same in a streamed chunk with too few pairs (or ones)
 * to fill the device at ZK_MSM_MIN_SEG a thread: a split chunk's rest and
 * ones, a few thousand entries, ran on a hundred threads of 32 dependent
 * additions each, latency-bound (zk_msm_short_threads; BENCHMARKS.md, "A
 * streamed chunk's timeline"). */
#ifndef ZK_MSM_SHORT_SEG /* 32: the thread counts before it, for an A/B run of kernel variants */
#define ZK_MSM_SHORT_SEG 4u
#endif
#define ZK_MSM_RUN_SEG 32u  /* a streamed chunk's merge: slots a leader sums (msm_core.cuh's
                             * merge_lead_one) */
#define ZK_MSM_K_MERGE 8u   /* entries per thread in the later merge levels (at least 4:
                              * a level of T threads leaves 2T/K_MERGE, which must shrink) */
#define ZK_MSM_TREE_G 4u    /* points summed per thread in the reduction tree (msm_core.cuh) */
/* ZK_MSM_POOL_ROUND: what one stream-ordered allocation may take beyond its
 * size in the pool (its physical granularity, 2 MiB). */
#define ZK_MSM_POOL_ROUND ((uint64_t)2 << 20)
/* ZK_MSM_MAX_C_PRE: the largest window with precomputed copies (bucket memory
 * 2^(c-1) per set: 400 MiB of G1 buckets at 22). Without copies the window
 * stays at most 21, as before. */
#define ZK_MSM_MAX_C_PRE 22
#define ZK_MSM_MAX_C 21

typedef struct zk_msm_plan {
    int c, nwin;        /* window bits, windows of digits */
    int depth;          /* copies of the bases read (1: the bases alone) */
    int G;              /* bucket sets reduced: ceil(nwin / depth); window
                         * w = g*G + r reads copy g (P * 2^(c*G*g)) and lands
                         * in set r */
    uint32_t m;         /* buckets per set, 2^(c-1) */
    uint32_t sentinel;  /* sort key of a zero digit: G*m */
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
    uint64_t idx;           /* streamed runs: the two chunks' index lists (one allocation) */
    int sort_sets;          /* sets of sort buffers (keys, keys, vals, vals): 2 when host
                             * scalars come in more than one chunk, whose pieces msm.cu
                             * sorts beside the accumulation */
    int allocs;             /* how many stream-ordered allocations */
    uint64_t total;         /* the sum, each allocation as the pool rounds it up */
} zk_msm_work;

/* zk_msm_pool_rounded is what one allocation of bytes takes from the MSM
 * pool (16 bytes for 0, as msm.cu asks). */
static inline uint64_t zk_msm_pool_rounded(uint64_t bytes) {
    if (bytes == 0) bytes = 16;
    return (bytes + ZK_MSM_POOL_ROUND - 1) / ZK_MSM_POOL_ROUND * ZK_MSM_POOL_ROUND;
}

static inline int zk_msm_ceil_log2(uint64_t v) {
    int b = 0;
    while (((uint64_t)1 << b) < v) b++;
    return b;
}

/* zk_msm_cost is the field-product count the window choice minimises for n
 * scalars, window c and G bucket sets: nwin*n mixed additions (~10 products)
 * plus G*2^(c-1)*2 full additions (~14) in the reduction, plus a per-set cost
 * standing for the serial tail (window combination). Without copies G = nwin. */
static inline double zk_msm_cost(size_t n, int c, int G) {
    double nwin = (256 + c - 1) / c;
    return nwin * (double)n * 10.0 + (double)G * ((double)(1u << (c - 1)) * 28.0 + 20000.0);
}

/* zk_msm_choose_c picks the window without copies. */
static inline int zk_msm_choose_c(size_t n) {
    int best = 4;
    double bestcost = 1e300;
    for (int c = 4; c <= ZK_MSM_MAX_C; c++) {
        double cost = zk_msm_cost(n, c, (256 + c - 1) / c);
        if (cost < bestcost) {
            bestcost = cost;
            best = c;
        }
    }
    return best;
}

/* zk_msm_groups_of is G = ceil(nwin / depth) for window c, and in *used the
 * copies that G needs, ceil(nwin / G) (never more than asked). */
static inline int zk_msm_groups_of(int c, int depth, int* used) {
    int nwin = (256 + c - 1) / c;
    if (depth < 1) depth = 1;
    if (depth > nwin) depth = nwin;
    int G = (nwin + depth - 1) / depth;
    if (used) *used = (nwin + G - 1) / G;
    return G;
}

/* zk_msm_choose_pre picks the window c and the copies d (at most maxdepth)
 * for an MSM of n scalars over precomputed bases: the least zk_msm_cost, and
 * among equal costs the fewest copies. *d is 1 when copies do not pay. */
static inline void zk_msm_choose_pre(size_t n, int maxdepth, int* c, int* d) {
    int bc = zk_msm_choose_c(n), bd = 1;
    double bestcost = zk_msm_cost(n, bc, (256 + bc - 1) / bc);
    for (int cc = 4; cc <= ZK_MSM_MAX_C_PRE && maxdepth > 1; cc++) {
        int used = 1;
        int G = zk_msm_groups_of(cc, maxdepth, &used);
        double cost = zk_msm_cost(n, cc, G);
        if (cost < bestcost) {
            bestcost = cost;
            bc = cc;
            bd = used;
        }
    }
    *c = bc;
    *d = bd;
}

/* ZK_MSM_MAX_DEPTH: the most copies zk_msm_precompute makes (no window has
 * more than 64 digits). */
#define ZK_MSM_MAX_DEPTH 64

/* zk_msm_precompute_choice is the window c and copies d zk_msm_precompute
 * makes for n resident points and at most maxdepth copies: zk_msm_choose_pre
 * for the points' first chunk, with d*n below 2^31 (a digit's point index
 * in copy g is g*n + i, 31 bits). d = 1 (c = 0): no copies. */
static inline void zk_msm_precompute_choice(size_t n, int maxdepth, int* c, int* d) {
    *c = 0;
    *d = 1;
    if (n == 0 || maxdepth < 2) return;
    if (maxdepth > ZK_MSM_MAX_DEPTH) maxdepth = ZK_MSM_MAX_DEPTH;
    if ((uint64_t)maxdepth * n > (((uint64_t)1 << 31) - 1))
        maxdepth = (int)((((uint64_t)1 << 31) - 1) / n);
    if (maxdepth < 2) return;
    zk_msm_choose_pre(n < ZK_MSM_MAX_CHUNK ? n : ZK_MSM_MAX_CHUNK, maxdepth, c, d);
    if (*d < 2) *c = 0, *d = 1;
}

/* zk_msm_make_plan_chunk plans an MSM of n scalars whose workspace holds
 * chunks of at most chunk scalars (and at most ZK_MSM_MAX_CHUNK): msm.cu
 * copies host scalars in pieces of that size, which share one set of
 * buckets and one reduction, so the window and the copies are chosen for n
 * (its first ZK_MSM_MAX_CHUNK scalars), as zk_msm_make_plan_pre does, and
 * only the digit pairs and the threads follow the chunk. */
/* zk_msm_plan_fill sets what follows from a plan's window, sets and chunk
 * (c, nwin, G, chunk): its buckets, sort key, digit pairs and thread counts. */
static inline void zk_msm_plan_fill(zk_msm_plan* p, uint32_t resident_accum,
                                    uint32_t resident_reduce) {
    p->m = 1u << (p->c - 1);
    p->sentinel = (uint32_t)p->G * p->m;
    p->keybits = zk_msm_ceil_log2((uint64_t)p->sentinel + 1);
    p->M = (size_t)p->nwin * p->chunk;
    size_t want = (p->M + ZK_MSM_MIN_SEG - 1) / ZK_MSM_MIN_SEG;
    p->T0 = (uint32_t)(want < resident_accum ? want : resident_accum);
    if (p->T0 == 0) p->T0 = 1;
    p->T1max = (2 * p->T0 + ZK_MSM_K_MERGE - 1) / ZK_MSM_K_MERGE;
    uint32_t per_win = resident_reduce / (uint32_t)p->G;
    uint32_t T = 1;
    while (T * 2 <= per_win && T * 2 <= p->m / 8) T *= 2;
    p->Tred = T;
    p->L = p->m / T;
    p->logL = zk_msm_ceil_log2(p->L);
}

static inline zk_msm_plan zk_msm_make_plan_chunk(size_t n, size_t chunk, int pre_c,
                                                 int pre_depth, uint32_t resident_accum,
                                                 uint32_t resident_reduce) {
    zk_msm_plan p;
    size_t wn = n < ZK_MSM_MAX_CHUNK ? n : ZK_MSM_MAX_CHUNK; /* the window's chunk */
    if (wn == 0) wn = 1;
    if (chunk > wn) chunk = wn;
    if (chunk == 0) chunk = 1;
    p.chunk = chunk;
    p.c = zk_msm_choose_c(wn);
    p.nwin = (256 + p.c - 1) / p.c;
    p.depth = 1;
    p.G = p.nwin;
    if (pre_depth > 1 && pre_c >= 4) {
        int G = zk_msm_groups_of(pre_c, pre_depth, NULL);
        if (zk_msm_cost(wn, pre_c, G) < zk_msm_cost(wn, p.c, p.nwin)) {
            p.c = pre_c;
            p.nwin = (256 + p.c - 1) / p.c;
            p.G = G;
            p.depth = (p.nwin + G - 1) / G;
        }
    }
    zk_msm_plan_fill(&p, resident_accum, resident_reduce);
    return p;
}

/* zk_msm_make_plan_stream plans a streamed MSM (msm.h's zk_msm_run_stream) of
 * n points in chunks of chunk, no copies: the window zk_msm_choose_c picks
 * for n (its first ZK_MSM_MAX_CHUNK), at most max_c bits (from 4; 0: no cap):
 * its buckets, 2^(c-1) per window, are what a device too small for the
 * points may not hold at the cheapest window. */
static inline zk_msm_plan zk_msm_make_plan_stream(size_t n, size_t chunk, int max_c,
                                                  uint32_t resident_accum,
                                                  uint32_t resident_reduce) {
    zk_msm_plan p = zk_msm_make_plan_chunk(n, chunk, 0, 1, resident_accum, resident_reduce);
    if (max_c < 4 || p.c <= max_c) return p;
    size_t wn = n < ZK_MSM_MAX_CHUNK ? n : ZK_MSM_MAX_CHUNK;
    if (wn == 0) wn = 1;
    int best = 4;
    double bestcost = 1e300;
    for (int c = 4; c <= max_c; c++) {
        double cost = zk_msm_cost(wn, c, (256 + c - 1) / c);
        if (cost < bestcost) bestcost = cost, best = c;
    }
    p.c = best;
    p.nwin = (256 + best - 1) / best;
    p.G = p.nwin;
    p.depth = 1;
    zk_msm_plan_fill(&p, resident_accum, resident_reduce);
    return p;
}

/* zk_msm_make_plan_pre plans an MSM of n scalars (chunks of at most
 * ZK_MSM_MAX_CHUNK) on a device that keeps resident_accum threads of k_accum0
 * and resident_reduce of k_reduce at once, the window chosen for one chunk.
 * The bases have pre_depth precomputed copies for
 * window pre_c (zk_msm_precompute; pre_depth 1: none): the plan reads them
 * when that costs less (zk_msm_cost) than the best window without, which a
 * run of few scalars (a split run's rest) may not. */
static inline zk_msm_plan zk_msm_make_plan_pre(size_t n, int pre_c, int pre_depth,
                                               uint32_t resident_accum,
                                               uint32_t resident_reduce) {
    return zk_msm_make_plan_chunk(n, n, pre_c, pre_depth, resident_accum, resident_reduce);
}

/* zk_msm_make_plan is zk_msm_make_plan_pre over bases without copies. */
static inline zk_msm_plan zk_msm_make_plan(size_t n, uint32_t resident_accum,
                                           uint32_t resident_reduce) {
    return zk_msm_make_plan_pre(n, 0, 1, resident_accum, resident_reduce);
}

/* zk_msm_plain_below is the largest m <= n for which zk_msm_make_plan_pre(m,
 * pre_c, pre_depth, ...) reads no copies (0: every m from 1 reads them; n:
 * none does). The copies cost a fixed reduction and save per scalar, so the
 * plans of fewer scalars than a crossover read none and of more read them: a
 * bisection finds it. A split run's rest of m <= n scalars then takes at most
 * the larger of the plan of n (with copies) and the plain plan of this m. */
static inline size_t zk_msm_plain_below(size_t n, int pre_c, int pre_depth) {
    if (n == 0 || zk_msm_make_plan_pre(n, pre_c, pre_depth, 1, 1).depth < 2) return n;
    size_t lo = 0, hi = n; /* plan(hi) reads copies; lo = 0 or plan(lo) reads none */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (zk_msm_make_plan_pre(mid, pre_c, pre_depth, 1, 1).depth < 2)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* zk_msm_fq_bytes is one coordinate of group's points (msm.h's numbers):
 * Fq for a G1, Fq2 for a G2; BLS12-381's Fq is 48 bytes, BN254's 32. */
static inline uint64_t zk_msm_fq_bytes(int group) {
    switch (group) {
    case 2: return 96;
    case 3: return 32;
    case 4: return 64;
    default: return 48;
    }
}

/* zk_msm_bases_bytes is the device memory of n resident points of group
 * with depth copies (1: the points alone), as zk_msm_upload and
 * zk_msm_precompute allocate them: one array, 16 bytes of slack. */
static inline uint64_t zk_msm_bases_bytes(int group, size_t n, int depth) {
    const uint64_t aff = 2 * zk_msm_fq_bytes(group);
    return (uint64_t)(depth < 1 ? 1 : depth) * n * aff + 16;
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

/* zk_msm_short_threads is how many threads take a streamed chunk's count
 * entries (digit pairs at level 0, or ones): count / ZK_MSM_MIN_SEG while
 * that fills cap (the device's resident threads), else as many as fill it, at
 * least ZK_MSM_SHORT_SEG entries each. A chunk's entries are few when a split
 * took its 0s and 1s away; a thread's segment is a chain of dependent
 * additions, so few threads with long segments leave the device idle. */
static inline uint32_t zk_msm_short_threads(size_t count, uint32_t cap) {
    if (count == 0) return 0;
    if (cap == 0) cap = 1;
    uint64_t T = (count + ZK_MSM_MIN_SEG - 1) / ZK_MSM_MIN_SEG;
    if (T < cap) {
        uint64_t S = (count + ZK_MSM_SHORT_SEG - 1) / ZK_MSM_SHORT_SEG;
        T = S < cap ? S : cap;
    }
    if (T > cap) T = cap;
    uint64_t K = (count + T - 1) / T;
    return (uint32_t)((count + K - 1) / K);
}

/* zk_msm_work_of is the device memory zk_msm_run allocates for plan p of
 * group (msm.h's zk_msm_group) over n scalars, host scalars (copied over) unless
 * scalars_on_device, with sort_bytes of radix sort storage. A split run
 * (zk_msm_run_split) has ones_threads = zk_msm_ones_threads of its ones
 * (0: none) and pippenger = 0 when none of its scalars needs Pippenger (then
 * only the output and the ones' buffers are allocated); a dense run has
 * ones_threads = 0 and pippenger = 1. */
static inline zk_msm_work zk_msm_work_of(int group, const zk_msm_plan* p, size_t n,
                                         int scalars_on_device, uint64_t sort_bytes,
                                         uint32_t ones_threads, int pippenger) {
    const uint64_t fp = zk_msm_fq_bytes(group);
    const uint64_t xyzz = 4 * fp, jac = 3 * fp;
    const uint64_t groups = 2 * (uint64_t)p->G;
    zk_msm_work w;
    w.scalars = scalars_on_device ? 0 : (uint64_t)n * 32;
    w.keys = (uint64_t)p->M * 4;
    w.vals = (uint64_t)p->M * 4;
    w.sort_tmp = sort_bytes;
    w.buckets = (uint64_t)p->G * p->m * xyzz;
    w.part_a = 2 * (uint64_t)p->T0 * xyzz;
    w.part_ka = 2 * (uint64_t)p->T0 * 4;
    w.part_b = 2 * (uint64_t)p->T1max * xyzz;
    w.part_kb = 2 * (uint64_t)p->T1max * 4;
    w.red = groups * p->Tred * xyzz;
    w.tree = groups * ((p->Tred + ZK_MSM_TREE_G - 1) / ZK_MSM_TREE_G) * xyzz;
    w.wacc = (uint64_t)p->G * xyzz;
    w.out = jac;
    w.ones_part = (uint64_t)ones_threads * xyzz;
    w.ones_tree = (uint64_t)((ones_threads + ZK_MSM_TREE_G - 1) / ZK_MSM_TREE_G) * xyzz;
    w.idx = 0;
    if (!pippenger) {
        w.keys = w.vals = w.sort_tmp = w.buckets = 0;
        w.part_a = w.part_ka = w.part_b = w.part_kb = w.red = w.tree = w.wacc = 0;
    }
    w.sort_sets = !scalars_on_device && pippenger && p->chunk < n ? 2 : 1;
    /* In run_impl's order: scalars, output, the ones', then Pippenger's (the
     * second sort set last, when there is one). */
    uint64_t sizes[] = {w.scalars, w.out,    w.ones_part, w.ones_tree, w.keys,   w.keys,
                        w.vals,    w.vals,   w.sort_tmp,  w.buckets,   w.part_a, w.part_ka,
                        w.part_b,  w.part_kb, w.red,      w.tree,      w.wacc,   w.keys,
                        w.keys,    w.vals,   w.vals};
    w.allocs = 0;
    w.total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (i == 0 && scalars_on_device) continue;
        if ((i == 2 || i == 3) && ones_threads == 0) continue;
        if (i >= 4 && !pippenger) continue;
        if (i >= 17 && w.sort_sets < 2) continue;
        w.total += zk_msm_pool_rounded(sizes[i]); /* work_t::alloc asks 16 bytes for 0 */
        w.allocs++;
    }
    return w;
}

/* zk_msm_stream_work_of is zk_msm_work_of for a streamed run (msm.h's
 * zk_msm_run_stream): its points and scalars are copied chunk by chunk into
 * buffers of the caller's, so no scalar vector is allocated, and it sorts a
 * chunk beside the accumulation of the one before (a second sort set) when
 * it takes more than one. It also holds two chunks' index lists (a split
 * run's, zk_msm_run_stream_split: 4 bytes a scalar of the plan's chunk
 * each), allocated whether the run is split or not, so that the admission
 * need not know. A split run's ones sum into the reduction's buffers, which
 * wait unused until the last chunk. */
static inline zk_msm_work zk_msm_stream_work_of(int group, const zk_msm_plan* p, size_t n,
                                                uint64_t sort_bytes) {
    zk_msm_work w = zk_msm_work_of(group, p, n, 0, sort_bytes, 0, 1);
    w.total -= zk_msm_pool_rounded(w.scalars);
    w.scalars = 0;
    w.idx = 2 * (uint64_t)p->chunk * 4;
    w.total += zk_msm_pool_rounded(w.idx); /* instead of the scalars: as many allocations */
    return w;
}

/* zk_msm_stream_work_bound is zk_msm_stream_work_of's total for n points
 * streamed in chunks of chunk, the window at most max_c bits
 * (zk_msm_make_plan_stream), with the radix sort's
 * bound: what zk_msm_stream_work_bytes reports wherever CUB asks no more. */
static inline uint64_t zk_msm_stream_work_bound(int group, size_t n, size_t chunk, int max_c,
                                                uint32_t resident_accum, uint32_t resident_reduce) {
    if (n == 0) return 0;
    zk_msm_plan p = zk_msm_make_plan_stream(n, chunk, max_c, resident_accum, resident_reduce);
    return zk_msm_stream_work_of(group, &p, n, zk_msm_sort_bytes_bound(p.M, p.keybits)).total;
}

/* zk_msm_work_bound is zk_msm_work_of's total for an MSM of n device
 * scalars over bases with pre_depth copies for window pre_c (1: none), with
 * the radix sort's bound (zk_msm_sort_bytes_bound) for its storage: what
 * zk_msm_work_bytes reports wherever CUB asks no more than the bound. */
static inline uint64_t zk_msm_work_bound(int group, size_t n, int pre_c, int pre_depth,
                                         uint32_t resident_accum, uint32_t resident_reduce) {
    if (n == 0) return 0;
    zk_msm_plan p = zk_msm_make_plan_pre(n, pre_c, pre_depth, resident_accum, resident_reduce);
    return zk_msm_work_of(group, &p, n, 1, zk_msm_sort_bytes_bound(p.M, p.keybits), 0, 1).total;
}

/* zk_msm_split_plans writes the plans whose work bounds every split run over
 * a classification of n scalars (zk_msm_run_split) on bases with pre_depth
 * copies for window pre_c, and returns how many (0 for n = 0, else 1 or 2):
 * every scalar through Pippenger at once (a rest is at most n) plans as n
 * does; over copies, a rest shorter than the crossover (zk_msm_plain_below)
 * plans without them, in another window, so the plain plan of the crossover
 * bounds those. The ones' buffers are zk_msm_ones_threads(n): every scalar
 * a 1 at once. */
static inline int zk_msm_split_plans(size_t n, int pre_c, int pre_depth, uint32_t resident_accum,
                                     uint32_t resident_reduce, zk_msm_plan plans[2]) {
    if (n == 0) return 0;
    const size_t plain = pre_depth < 2 ? n : zk_msm_plain_below(n, pre_c, pre_depth);
    int k = 0;
    if (plain != 0) plans[k++] = zk_msm_make_plan(plain, resident_accum, resident_reduce);
    if (plain != n)
        plans[k++] = zk_msm_make_plan_pre(n, pre_c, pre_depth, resident_accum, resident_reduce);
    return k;
}

/* zk_msm_split_work_bound is the most device memory a split run over a
 * classification of n scalars allocates, whatever their counts: the largest
 * work of zk_msm_split_plans with every scalar a 1, the radix sort counted
 * by its bound; what zk_msm_split_work_bytes reports wherever CUB asks no
 * more than the bound. */
static inline uint64_t zk_msm_split_work_bound(int group, size_t n, int pre_c, int pre_depth,
                                               uint32_t resident_accum,
                                               uint32_t resident_reduce) {
    zk_msm_plan plans[2];
    const int k = zk_msm_split_plans(n, pre_c, pre_depth, resident_accum, resident_reduce, plans);
    const uint32_t ones = zk_msm_ones_threads(n, resident_accum);
    uint64_t most = 0;
    for (int i = 0; i < k; i++) {
        const uint64_t sb = zk_msm_sort_bytes_bound(plans[i].M, plans[i].keybits);
        const uint64_t w = zk_msm_work_of(group, &plans[i], n, 1, sb, ones, 1).total;
        if (w > most) most = w;
    }
    return most;
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
        total += zk_msm_pool_rounded(sizes[i]);
    return total;
}

#ifdef __cplusplus
}
#endif

#endif /* ZK_MSM_PLAN_H */
