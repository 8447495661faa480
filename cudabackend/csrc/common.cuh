// common.cuh: internal helpers for zkhost CUDA modules: error reporting into
// the caller's buffer and CUDA call checking. Not part of the C ABI.
#pragma once

#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>

#include "common.h"

// zk_fail formats a message into err (when not NULL) and returns code.
int zk_fail(char* err, size_t errlen, int code, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

// zk_cuda_fail reports a failed CUDA call: it maps the CUDA error to a zk
// code (no device / old driver -> ZK_ENODEV, allocation -> ZK_ENOMEM, else
// ZK_ECUDA), clears the non-sticky error state and names the call and place.
int zk_cuda_fail(char* err, size_t errlen, cudaError_t e, const char* what, const char* file,
                 int line);

// ZK_CUDA checks a CUDA call inside a function with err/errlen parameters
// and returns the zk error code from it on failure.
#define ZK_CUDA(call)                                                           \
    do {                                                                        \
        cudaError_t zk_e_ = (call);                                             \
        if (zk_e_ != cudaSuccess)                                               \
            return zk_cuda_fail(err, errlen, zk_e_, #call, __FILE__, __LINE__); \
    } while (0)

// ZK_LAUNCHED checks the launch of the kernel just enqueued.
#define ZK_LAUNCHED() ZK_CUDA(cudaGetLastError())

// zk_use_device validates the ordinal and makes it current.
int zk_use_device(int device, char* err, size_t errlen);
