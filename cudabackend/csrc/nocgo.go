//go:build !cgo

package csrc

// The device-memory plan is C (msm_plan.h, groth16.h), compiled by cgo:
// without cgo there is none. This undefined name stops the build with the
// reason in it; build with CGO_ENABLED=1 (any C compiler, no CUDA needed).
var _ = theDeviceMemoryPlanIsCAndNeedsCgo
