/* probe.h: C ABI of the arithmetic throughput probes (probe.cu).
 *
 * zk_probe_madd measures how many G1 mixed additions a second the device
 * does with no memory traffic to speak of: every thread keeps one XYZZ
 * accumulator and adds points of a small table (L1-resident) to it, iters
 * times. It bounds what the MSM's accumulation (msm.cu's k_accum0, one
 * mixed addition per sorted pair, the same code) can reach at the same
 * occupancy. zk_probe_fmul measures the Fq products the addition is made
 * of, alone.
 *
 * Thread t's accumulator starts at point s = t mod npts and adds points
 * (s + 1 + i) mod npts for i < iters; out receives every accumulator as
 * affine (x, y), gnark-crypto's G1Affine bytes, so the caller checks the
 * sums against gnark-crypto.
 */
#ifndef ZK_PROBE_H
#define ZK_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* zk_probe_threads is how many threads a probe of blocks_per_sm blocks
 * a multiprocessor launches on device (zk_probe_madd's out receives one
 * point a thread, zk_probe_fmul's ilp elements). */
int zk_probe_threads(int device, int blocks_per_sm, uint32_t* threads, char* err,
                          size_t errlen);

/* zk_probe_madd runs the probe: reg_blocks the blocks per multiprocessor
 * the kernel's registers are sized for (2, as k_accum0, or 3:
 * __launch_bounds__), blocks_per_sm the blocks launched per multiprocessor
 * (at most what fits), npts a power of two up to 1024 of G1 affine points
 * (96 bytes each, finite, distinct). *ms is the kernel's device time (CUDA
 * events), *regs its registers a thread, *spill its local memory a thread
 * (bytes). */
int zk_probe_madd(int device, int reg_blocks, int blocks_per_sm, const void* points,
                  uint32_t npts, uint32_t iters, void* out, float* ms, int* regs, int* spill,
                  char* err, size_t errlen);

/* zk_probe_fmul measures Fq products a second, the addition's building
 * block, apart from the addition's other work and code size: every thread
 * keeps ilp (1, 2 or 4) values x_j = xs[t*ilp + j mod n] and multiplies
 * each by y = ys[same index] iters times (device Montgomery products, the
 * accumulation's); blocks_per_sm blocks of 128 threads a multiprocessor,
 * registers sized for 2 blocks. n a power of two up to 1024 of canonical
 * Fq elements (gnark fp.Element bytes); out receives every thread's ilp
 * results, canonical. */
int zk_probe_fmul(int device, int ilp, int blocks_per_sm, const void* xs, const void* ys,
                  uint32_t n, uint32_t iters, void* out, float* ms, char* err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* ZK_PROBE_H */
