//go:build !cuda

package gpu

// PCIBusID returns the PCI bus id of CUDA device dev ("0000:18:00.0");
// without CUDA an error wrapping ErrUnavailable.
func PCIBusID(dev int) (string, error) { return "", errNoCUDABuild }
