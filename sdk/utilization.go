package sdk

import (
	"context"
	"time"
)

// Utilization sources the built-in backends report.
const (
	// UtilizationNVML is NVML's GPU utilization: the share of each driver
	// sample period during which one or more kernels ran on the device.
	UtilizationNVML = "nvml"
	// UtilizationProcessCPU is the backend process's CPU time over the
	// period, divided by the threads it proves with (as top counts it).
	UtilizationProcessCPU = "process-cpu"
)

// UtilizationSample is how busy the device was over the Period that ends at
// Time.
type UtilizationSample struct {
	Time   time.Time
	Period time.Duration
	// Percent is 0 to 100.
	Percent float64
}

// Utilization is a UtilizationReporter's answer: where the figures come from
// and the samples taken after the moment asked about, oldest first.
type Utilization struct {
	Source  string
	Samples []UtilizationSample
}

// UtilizationReporter is an optional interface of a Backend: one that
// implements it tells the host how busy its device is, measured by the
// device's own driver where there is one. The host calls it about ten times a
// second with the time of the last sample it has, so it must be cheap and
// answer only newer samples. A backend without it answers the call with
// ErrUnimplemented and the host records no utilization for its device; a
// backend with it but no way to measure (a GPU without NVML) returns an
// ErrUnavailable error whose message says why.
type UtilizationReporter interface {
	Utilization(ctx context.Context, since time.Time) (Utilization, error)
}
