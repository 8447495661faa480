// common.cu: error reporting, device information, memory, streams and events
// (the C ABI of common.h).
#include <string.h>

#include "common.cuh"

int zk_fail(char* err, size_t errlen, int code, const char* fmt, ...) {
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

int zk_cuda_fail(char* err, size_t errlen, cudaError_t e, const char* what, const char* file,
                 int line) {
    // Reset the non-sticky error so the next call starts clean; sticky errors
    // (a faulted context) keep failing, which is the truth.
    (void)cudaGetLastError();
    int code = ZK_ECUDA;
    const char* hint = "";
    switch (e) {
    case cudaErrorNoDevice:
        code = ZK_ENODEV;
        hint = " (no CUDA GPU is visible)";
        break;
    case cudaErrorInsufficientDriver:
        code = ZK_ENODEV;
        hint = " (no NVIDIA driver, or one older than this CUDA runtime)";
        break;
    case cudaErrorInvalidDevice:
        code = ZK_ENODEV;
        break;
    case cudaErrorMemoryAllocation:
        code = ZK_ENOMEM;
        break;
    default:
        break;
    }
    const char* base = strrchr(file, '/');
    return zk_fail(err, errlen, code, "%s: %s (cuda error %d)%s at %s:%d", what,
                   cudaGetErrorString(e), (int)e, hint, base ? base + 1 : file, line);
}

int zk_device_count(int* n, char* err, size_t errlen) {
    if (n == NULL) return zk_fail(err, errlen, ZK_EINVAL, "zk_device_count: n is NULL");
    *n = 0;
    int count = 0;
    ZK_CUDA(cudaGetDeviceCount(&count));
    if (count <= 0) return zk_fail(err, errlen, ZK_ENODEV, "no CUDA device found");
    *n = count;
    return ZK_OK;
}

int zk_use_device(int device, char* err, size_t errlen) {
    int n = 0;
    int rc = zk_device_count(&n, err, errlen);
    if (rc != ZK_OK) return rc;
    if (device < 0 || device >= n)
        return zk_fail(err, errlen, ZK_ENODEV, "CUDA device %d does not exist (%d visible)", device,
                       n);
    ZK_CUDA(cudaSetDevice(device));
    return ZK_OK;
}

int zk_device_info(int device, zk_device_props* out, char* err, size_t errlen) {
    if (out == NULL) return zk_fail(err, errlen, ZK_EINVAL, "zk_device_info: out is NULL");
    memset(out, 0, sizeof(*out));
    // Versions first: they explain a missing device.
    cudaDriverGetVersion(&out->driver_version);
    cudaRuntimeGetVersion(&out->runtime_version);
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    cudaDeviceProp p;
    ZK_CUDA(cudaGetDeviceProperties(&p, device));
    snprintf(out->model, sizeof(out->model), "%s", p.name);
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->sm_count = p.multiProcessorCount;
    size_t free_b = 0, total_b = 0;
    ZK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    out->free_bytes = free_b;
    out->total_bytes = total_b;
    return ZK_OK;
}

int zk_malloc(int device, size_t bytes, void** ptr, char* err, size_t errlen) {
    if (ptr == NULL) return zk_fail(err, errlen, ZK_EINVAL, "zk_malloc: ptr is NULL");
    *ptr = NULL;
    if (bytes == 0) return zk_fail(err, errlen, ZK_EINVAL, "zk_malloc: zero bytes");
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    cudaError_t e = cudaMalloc(ptr, bytes);
    if (e != cudaSuccess) {
        *ptr = NULL;
        return zk_cuda_fail(err, errlen, e, "cudaMalloc", __FILE__, __LINE__);
    }
    return ZK_OK;
}

int zk_free(int device, void* ptr, char* err, size_t errlen) {
    if (ptr == NULL) return ZK_OK;
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    ZK_CUDA(cudaFree(ptr));
    return ZK_OK;
}

int zk_memcpy(int device, void* dst, const void* src, size_t bytes, int kind, void* stream,
              char* err, size_t errlen) {
    if (bytes == 0) return ZK_OK;
    if (dst == NULL || src == NULL) return zk_fail(err, errlen, ZK_EINVAL, "zk_memcpy: NULL pointer");
    cudaMemcpyKind k;
    switch (kind) {
    case 1: k = cudaMemcpyHostToDevice; break;
    case 2: k = cudaMemcpyDeviceToHost; break;
    case 3: k = cudaMemcpyDeviceToDevice; break;
    default: return zk_fail(err, errlen, ZK_EINVAL, "zk_memcpy: bad kind %d", kind);
    }
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    if (stream == NULL) {
        ZK_CUDA(cudaMemcpy(dst, src, bytes, k));
    } else {
        ZK_CUDA(cudaMemcpyAsync(dst, src, bytes, k, (cudaStream_t)stream));
    }
    return ZK_OK;
}

int zk_memset(int device, void* dst, int value, size_t bytes, void* stream, char* err,
              size_t errlen) {
    if (bytes == 0) return ZK_OK;
    if (dst == NULL) return zk_fail(err, errlen, ZK_EINVAL, "zk_memset: NULL pointer");
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    if (stream == NULL) {
        ZK_CUDA(cudaMemset(dst, value, bytes));
    } else {
        ZK_CUDA(cudaMemsetAsync(dst, value, bytes, (cudaStream_t)stream));
    }
    return ZK_OK;
}

int zk_stream_create(int device, void** stream, char* err, size_t errlen) {
    if (stream == NULL) return zk_fail(err, errlen, ZK_EINVAL, "zk_stream_create: stream is NULL");
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    cudaStream_t s;
    ZK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = (void*)s;
    return ZK_OK;
}

// Deliberately parallel to zk_event_destroy: see why there.
int zk_stream_destroy(int device, void* stream, char* err, size_t errlen) {
    if (stream == NULL) return ZK_OK;
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    ZK_CUDA(cudaStreamDestroy((cudaStream_t)stream));
    return ZK_OK;
}

int zk_stream_sync(int device, void* stream, char* err, size_t errlen) {
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    if (stream == NULL) {
        ZK_CUDA(cudaDeviceSynchronize());
    } else {
        ZK_CUDA(cudaStreamSynchronize((cudaStream_t)stream));
    }
    return ZK_OK;
}

int zk_event_create(int device, void** event, char* err, size_t errlen) {
    if (event == NULL) return zk_fail(err, errlen, ZK_EINVAL, "zk_event_create: event is NULL");
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    cudaEvent_t e;
    ZK_CUDA(cudaEventCreate(&e));
    *event = (void*)e;
    return ZK_OK;
}

// Deliberately parallel to zk_stream_destroy: streams and events are CUDA
// handles of different types with their own destroy calls, and each is a
// C entry point of its own for cgo.
int zk_event_destroy(int device, void* event, char* err, size_t errlen) {
    if (event == NULL) return ZK_OK;
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    ZK_CUDA(cudaEventDestroy((cudaEvent_t)event));
    return ZK_OK;
}

int zk_event_record(int device, void* event, void* stream, char* err, size_t errlen) {
    if (event == NULL) return zk_fail(err, errlen, ZK_EINVAL, "zk_event_record: event is NULL");
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    ZK_CUDA(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream));
    return ZK_OK;
}

int zk_event_elapsed(int device, void* start, void* end, float* ms, char* err, size_t errlen) {
    if (start == NULL || end == NULL || ms == NULL)
        return zk_fail(err, errlen, ZK_EINVAL, "zk_event_elapsed: NULL argument");
    int rc = zk_use_device(device, err, errlen);
    if (rc != ZK_OK) return rc;
    ZK_CUDA(cudaEventSynchronize((cudaEvent_t)end));
    ZK_CUDA(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end));
    return ZK_OK;
}
