/* common.h: C ABI shared by every zkhost CUDA module: error codes, device
 * information, device memory, streams and events.
 *
 * Every function returns ZK_OK or an error code and, on error, writes a
 * NUL-terminated message into err (errlen bytes) when err is not NULL. No
 * function keeps per-thread state, so callers whose threads migrate (Go) need
 * no thread pinning. Every function that touches a device takes its ordinal
 * and makes it current first. Streams and events cross the ABI as opaque
 * pointers (cudaStream_t, cudaEvent_t); a NULL stream is the legacy default
 * stream.
 */
#ifndef ZK_COMMON_H
#define ZK_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes; the numbers match msm.h's ZK_MSM_* codes. */
enum {
    ZK_OK = 0,
    /* ZK_EINVAL: a bad argument (nil pointer, size out of range). */
    ZK_EINVAL = 1,
    /* ZK_ECUDA: a CUDA call failed (launch failure, bad device state). */
    ZK_ECUDA = 2,
    /* ZK_ENOMEM: device memory could not be allocated. */
    ZK_ENOMEM = 3,
    /* ZK_ENODEV: no usable CUDA device: no GPU, no driver, or a driver
     * older than the CUDA runtime this library was built with. */
    ZK_ENODEV = 4,
    /* ZK_EUNSAT: the witness does not satisfy a constraint (compact
     * partitions, whose constraints the device checks). */
    ZK_EUNSAT = 5
};

/* zk_device_props describes one CUDA device. */
typedef struct zk_device_props {
    char model[256];        /* e.g. "NVIDIA H200" */
    uint64_t total_bytes;   /* device memory */
    uint64_t free_bytes;    /* free device memory now */
    int cc_major, cc_minor; /* compute capability */
    int sm_count;           /* multiprocessors */
    int driver_version;     /* CUDA version the driver supports, e.g. 13000 */
    int runtime_version;    /* CUDA runtime linked in, e.g. 11080 */
} zk_device_props;

/* zk_device_count stores the number of CUDA devices in *n; ZK_ENODEV (and
 * *n = 0) when there is none or the driver is missing or too old. */
int zk_device_count(int* n, char* err, size_t errlen);

/* zk_device_info fills *out for device ordinal device. */
int zk_device_info(int device, zk_device_props* out, char* err, size_t errlen);

/* zk_malloc allocates bytes of device memory (cudaMalloc) into *ptr. */
int zk_malloc(int device, size_t bytes, void** ptr, char* err, size_t errlen);
/* zk_free releases memory from zk_malloc; NULL is a no-op. */
int zk_free(int device, void* ptr, char* err, size_t errlen);
/* zk_memcpy copies bytes between host and device memory. kind: 1 host to
 * device, 2 device to host, 3 device to device. With a stream the copy is
 * enqueued on it (host memory must then stay valid until the stream
 * reaches it); with stream NULL the call returns when the copy is done. */
int zk_memcpy(int device, void* dst, const void* src, size_t bytes, int kind, void* stream,
              char* err, size_t errlen);
/* zk_memset sets bytes of device memory to the byte value (enqueued on the
 * stream; NULL: synchronous). */
int zk_memset(int device, void* dst, int value, size_t bytes, void* stream, char* err,
              size_t errlen);

/* zk_stream_create creates a non-blocking stream on device. */
int zk_stream_create(int device, void** stream, char* err, size_t errlen);
int zk_stream_destroy(int device, void* stream, char* err, size_t errlen);
/* zk_stream_sync waits until all work on the stream is done (NULL: the whole
 * device). */
int zk_stream_sync(int device, void* stream, char* err, size_t errlen);

/* zk_event_create creates a timing event on device. */
int zk_event_create(int device, void** event, char* err, size_t errlen);
int zk_event_destroy(int device, void* event, char* err, size_t errlen);
/* zk_event_record records event on stream. */
int zk_event_record(int device, void* event, void* stream, char* err, size_t errlen);
/* zk_event_elapsed waits for end and stores the device time between start
 * and end in milliseconds (CUDA events, ~0.5 us resolution). */
int zk_event_elapsed(int device, void* start, void* end, float* ms, char* err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* ZK_COMMON_H */
