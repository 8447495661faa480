//go:build cuda

package gpu

/*
#include <cuda_runtime_api.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// PCIBusID returns the PCI bus id of CUDA device dev ("0000:18:00.0"), the
// name NVML finds the same device by.
func PCIBusID(dev int) (string, error) {
	var buf [32]C.char
	if rc := C.cudaDeviceGetPCIBusId(&buf[0], C.int(len(buf)), C.int(dev)); rc != C.cudaSuccess {
		msg := C.GoString(C.cudaGetErrorString(rc))
		return "", fmt.Errorf("gpu: device %d PCI bus id: %s: %w", dev, msg, ErrUnavailable)
	}
	return C.GoString((*C.char)(unsafe.Pointer(&buf[0]))), nil
}
