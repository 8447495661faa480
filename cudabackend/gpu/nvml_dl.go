//go:build linux && cgo

package gpu

// NVML is reached through dlopen rather than linked: the backend must start
// on a machine without the driver. github.com/NVIDIA/go-nvml does the same
// but links every binary that imports it with
// -Wl,--unresolved-symbols=ignore-in-object-files, which would turn a missing
// symbol of our CUDA library into a crash at run time instead of a link
// error; the five calls needed here are declared by hand from nvml.h.

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;              // NVML_SUCCESS is 0
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef union { double dVal; unsigned int uiVal; unsigned long ulVal; unsigned long long ullVal; long long sllVal; int siVal; } nvmlValue_t;
typedef struct { unsigned long long timeStamp; nvmlValue_t sampleValue; } nvmlSample_t;
typedef struct { unsigned int gpu; unsigned int memory; } nvmlUtilization_t;

enum {
	ZK_NVML_SUCCESS = 0,
	ZK_NVML_ERROR_NOT_SUPPORTED = 3,
	ZK_NVML_ERROR_NOT_FOUND = 6,
	ZK_NVML_ERROR_INSUFFICIENT_SIZE = 7,
	ZK_NVML_GPU_UTILIZATION_SAMPLES = 1,
	ZK_NVML_VALUE_TYPE_DOUBLE = 0,
	ZK_NVML_VALUE_TYPE_UNSIGNED_INT = 1,
	ZK_NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
	ZK_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
	ZK_NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
	ZK_NVML_VALUE_TYPE_SIGNED_INT = 5,
};

static nvmlReturn_t (*p_init)(void);
static const char *(*p_error_string)(nvmlReturn_t);
static nvmlReturn_t (*p_by_pci)(const char *, nvmlDevice_t *);
static nvmlReturn_t (*p_by_index)(unsigned int, nvmlDevice_t *);
static nvmlReturn_t (*p_samples)(nvmlDevice_t, int, unsigned long long, int *, unsigned int *, nvmlSample_t *);
static nvmlReturn_t (*p_rates)(nvmlDevice_t, nvmlUtilization_t *);

// zk_nvml_load opens libnvidia-ml.so.1 and calls nvmlInit_v2; 0 on success,
// else msg says why. The handle stays open for the life of the process.
static int zk_nvml_load(char *msg, size_t n) {
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(msg, n, "%s", dlerror());
		return -1;
	}
	p_init = (nvmlReturn_t (*)(void))dlsym(h, "nvmlInit_v2");
	p_error_string = (const char *(*)(nvmlReturn_t))dlsym(h, "nvmlErrorString");
	p_by_pci = (nvmlReturn_t (*)(const char *, nvmlDevice_t *))dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
	p_by_index = (nvmlReturn_t (*)(unsigned int, nvmlDevice_t *))dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	p_samples = (nvmlReturn_t (*)(nvmlDevice_t, int, unsigned long long, int *, unsigned int *, nvmlSample_t *))dlsym(h, "nvmlDeviceGetSamples");
	p_rates = (nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t *))dlsym(h, "nvmlDeviceGetUtilizationRates");
	if (!p_init || !p_error_string || !p_by_pci || !p_by_index || !p_samples || !p_rates) {
		snprintf(msg, n, "libnvidia-ml.so.1 lacks a function zkhost needs (driver too old?)");
		return -1;
	}
	nvmlReturn_t rc = p_init();
	if (rc != ZK_NVML_SUCCESS) {
		snprintf(msg, n, "libnvidia-ml.so.1: nvmlInit: %s", p_error_string(rc));
		return -1;
	}
	return 0;
}

static const char *zk_nvml_error(nvmlReturn_t rc) { return p_error_string(rc); }
static nvmlReturn_t zk_nvml_by_pci(const char *bus, nvmlDevice_t *d) { return p_by_pci(bus, d); }
static nvmlReturn_t zk_nvml_by_index(unsigned int i, nvmlDevice_t *d) { return p_by_index(i, d); }
static nvmlReturn_t zk_nvml_rates(nvmlDevice_t d, unsigned int *gpu) {
	nvmlUtilization_t u;
	nvmlReturn_t rc = p_rates(d, &u);
	*gpu = u.gpu;
	return rc;
}

// zk_nvml_samples asks for GPU utilization samples after last_seen, first
// for their count, then into a buffer of that size; the caller frees *out.
static nvmlReturn_t zk_nvml_samples(nvmlDevice_t d, unsigned long long last_seen, nvmlSample_t **out, unsigned int *count, int *type) {
	*out = NULL;
	*count = 0;
	nvmlReturn_t rc = p_samples(d, ZK_NVML_GPU_UTILIZATION_SAMPLES, last_seen, type, count, NULL);
	if (rc != ZK_NVML_SUCCESS && rc != ZK_NVML_ERROR_INSUFFICIENT_SIZE) return rc;
	if (*count == 0) return ZK_NVML_SUCCESS;
	*out = calloc(*count, sizeof(nvmlSample_t));
	if (!*out) return ZK_NVML_ERROR_INSUFFICIENT_SIZE;
	return p_samples(d, ZK_NVML_GPU_UTILIZATION_SAMPLES, last_seen, type, count, *out);
}

static double zk_nvml_value(nvmlSample_t *s, unsigned int i, int type) {
	nvmlValue_t v = s[i].sampleValue;
	switch (type) {
	case ZK_NVML_VALUE_TYPE_DOUBLE: return v.dVal;
	case ZK_NVML_VALUE_TYPE_UNSIGNED_LONG: return (double)v.ulVal;
	case ZK_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return (double)v.ullVal;
	case ZK_NVML_VALUE_TYPE_SIGNED_LONG_LONG: return (double)v.sllVal;
	case ZK_NVML_VALUE_TYPE_SIGNED_INT: return (double)v.siVal;
	default: return (double)v.uiVal;
	}
}
static unsigned long long zk_nvml_time(nvmlSample_t *s, unsigned int i) { return s[i].timeStamp; }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

type nvmlDevice = C.nvmlDevice_t

var nvmlOnce struct {
	sync.Once
	err error
}

// nvmlLoad loads and initializes NVML once per process; the error (wrapping
// ErrNoNVML) is kept and answered to every later call.
func nvmlLoad() error {
	nvmlOnce.Do(func() {
		var msg [256]C.char
		if C.zk_nvml_load(&msg[0], C.size_t(len(msg))) != 0 {
			nvmlOnce.err = fmt.Errorf("%w: %s", ErrNoNVML, C.GoString(&msg[0]))
		}
	})
	return nvmlOnce.err
}

func nvmlError(op string, rc C.nvmlReturn_t) error {
	if rc == C.ZK_NVML_ERROR_NOT_SUPPORTED {
		return fmt.Errorf("%s: %w", op, errNVMLNotSupported)
	}
	return fmt.Errorf("%s: %s (NVML error %d)", op, C.GoString(C.zk_nvml_error(rc)), int(rc))
}

func nvmlDeviceByPCI(bus string) (nvmlDevice, error) {
	cs := C.CString(bus)
	defer C.free(unsafe.Pointer(cs))
	var d C.nvmlDevice_t
	if rc := C.zk_nvml_by_pci(cs, &d); rc != C.ZK_NVML_SUCCESS {
		return nil, nvmlError("nvmlDeviceGetHandleByPciBusId "+bus, rc)
	}
	return d, nil
}

func nvmlDeviceByIndex(i int) (nvmlDevice, error) {
	var d C.nvmlDevice_t
	if rc := C.zk_nvml_by_index(C.uint(i), &d); rc != C.ZK_NVML_SUCCESS {
		return nil, nvmlError(fmt.Sprintf("nvmlDeviceGetHandleByIndex %d", i), rc)
	}
	return d, nil
}

func nvmlUtilizationSamples(d nvmlDevice, lastSeen uint64) ([]nvmlSample, error) {
	var (
		buf   *C.nvmlSample_t
		count C.uint
		typ   C.int
	)
	rc := C.zk_nvml_samples(d, C.ulonglong(lastSeen), &buf, &count, &typ)
	defer C.free(unsafe.Pointer(buf))
	switch rc {
	case C.ZK_NVML_SUCCESS:
	case C.ZK_NVML_ERROR_NOT_FOUND:
		return nil, nil // no sample after lastSeen yet
	default:
		return nil, nvmlError("nvmlDeviceGetSamples", rc)
	}
	out := make([]nvmlSample, int(count))
	for i := range out {
		out[i] = nvmlSample{micros: uint64(C.zk_nvml_time(buf, C.uint(i))), percent: float64(C.zk_nvml_value(buf, C.uint(i), typ))}
	}
	return out, nil
}

func nvmlUtilizationRate(d nvmlDevice) (float64, error) {
	var gpu C.uint
	if rc := C.zk_nvml_rates(d, &gpu); rc != C.ZK_NVML_SUCCESS {
		return 0, nvmlError("nvmlDeviceGetUtilizationRates", rc)
	}
	return float64(gpu), nil
}
