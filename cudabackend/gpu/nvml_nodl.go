//go:build !(linux && cgo)

package gpu

import "fmt"

type nvmlDevice = uintptr

func nvmlLoad() error {
	return fmt.Errorf("%w: built without cgo or not for Linux (NVML is loaded with dlopen)", ErrNoNVML)
}

func nvmlDeviceByPCI(bus string) (nvmlDevice, error) { return 0, nvmlLoad() }

func nvmlDeviceByIndex(i int) (nvmlDevice, error) { return 0, nvmlLoad() }

func nvmlUtilizationSamples(d nvmlDevice, lastSeen uint64) ([]nvmlSample, error) {
	return nil, nvmlLoad()
}

func nvmlUtilizationRate(d nvmlDevice) (float64, error) { return 0, nvmlLoad() }
