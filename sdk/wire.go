package sdk

// This file translates between the sdk types and the wire types of the
// backend contract (proto/backend/v1, generated into sdk/internal/proto),
// both ways, errors included. As in Nomad's plugins/device (util.go beside
// client.go and server.go), the translation is unexported code of the package
// that defines the Go types: an internal translation package would have to
// import package sdk for the types while sdk imports it for the adapters.
// Neither the host nor an author sees a protobuf type. The functions are
// alike in shape, deliberately, as host/api's conversions are: each copies one
// message's fields by name, which the compiler checks.

import (
	"context"
	"errors"
	"math"
	"time"

	"google.golang.org/grpc/codes"

	backendv1 "github.com/zkhost/zkhost/sdk/internal/proto/backendv1"
)

func describeToProto(d Description) *backendv1.DescribeResponse {
	curves := make([]string, len(d.Curves))
	for i, c := range d.Curves {
		curves[i] = string(c)
	}
	return &backendv1.DescribeResponse{
		Name:        d.Name,
		Version:     d.Version,
		ApiVersions: append([]uint32(nil), d.APIVersions...),
		Device: &backendv1.DeviceInfo{
			Kind:        d.Device.Kind,
			Model:       d.Device.Model,
			Index:       clampInt32(d.Device.Index),
			Available:   d.Device.Available,
			Reason:      d.Device.Reason,
			MemoryTotal: d.Device.MemoryTotal,
			MemoryFree:  d.Device.MemoryFree,
		},
		Curves:                   curves,
		MaxInFlight:              clampUint32(d.MaxInFlight),
		HostBytesPerConstraint:   d.HostBytesPerConstraint,
		CompactW:                 d.CompactW,
		DeviceBytesPerConstraint: d.DeviceBytesPerConstraint,
	}
}

func describeFromProto(r *backendv1.DescribeResponse) Description {
	curves := make([]Curve, len(r.GetCurves()))
	for i, c := range r.GetCurves() {
		curves[i] = Curve(c)
	}
	dev := r.GetDevice()
	return Description{
		Name:        r.GetName(),
		Version:     r.GetVersion(),
		APIVersions: append([]uint32(nil), r.GetApiVersions()...),
		Device: DeviceInfo{
			Kind:        dev.GetKind(),
			Model:       dev.GetModel(),
			Index:       int(dev.GetIndex()),
			Available:   dev.GetAvailable(),
			Reason:      dev.GetReason(),
			MemoryTotal: dev.GetMemoryTotal(),
			MemoryFree:  dev.GetMemoryFree(),
		},
		Curves:                   curves,
		MaxInFlight:              int(r.GetMaxInFlight()),
		HostBytesPerConstraint:   r.GetHostBytesPerConstraint(),
		CompactW:                 r.GetCompactW(),
		DeviceBytesPerConstraint: r.GetDeviceBytesPerConstraint(),
	}
}

func keyRefToProto(k KeyRef) *backendv1.KeyRef {
	return &backendv1.KeyRef{Id: k.ID, Path: k.Path, Digest: k.Digest[:]}
}

func keyRefFromProto(k *backendv1.KeyRef) (KeyRef, error) {
	if k == nil {
		return KeyRef{}, Errorf(ErrInvalidArgument, "load key: no key given")
	}
	d, err := digestFromProto("key digest", k.GetDigest())
	if err != nil {
		return KeyRef{}, err
	}
	return KeyRef{ID: k.GetId(), Path: k.GetPath(), Digest: d}, nil
}

func handleToProto(h PartitionHandle) *backendv1.PartitionHandle {
	return &backendv1.PartitionHandle{
		Path:          h.Path,
		Inode:         h.Inode,
		Size:          h.Size,
		Curve:         string(h.Curve),
		NbWires:       h.NbWires,
		NbConstraints: h.NbConstraints,
		WOffset:       h.WOffset,
		AOffset:       h.AOffset,
		BOffset:       h.BOffset,
		Format:        uint32(h.Format),
		NbOther:       h.NbOther,
		OtherOffset:   h.OtherOffset,
		BitsOffset:    h.BitsOffset,
		ValuesOffset:  h.ValuesOffset,
	}
}

func handleFromProto(h *backendv1.PartitionHandle) (PartitionHandle, error) {
	if h == nil {
		return PartitionHandle{}, Errorf(ErrInvalidArgument, "prove: no partition handle given")
	}
	return PartitionHandle{
		Path:          h.GetPath(),
		Inode:         h.GetInode(),
		Size:          h.GetSize(),
		Curve:         Curve(h.GetCurve()),
		NbWires:       h.GetNbWires(),
		NbConstraints: h.GetNbConstraints(),
		WOffset:       h.GetWOffset(),
		AOffset:       h.GetAOffset(),
		BOffset:       h.GetBOffset(),
		Format:        PartitionFormat(h.GetFormat()),
		NbOther:       h.GetNbOther(),
		OtherOffset:   h.GetOtherOffset(),
		BitsOffset:    h.GetBitsOffset(),
		ValuesOffset:  h.GetValuesOffset(),
	}, nil
}

func constraintsToProto(h *ConstraintsHandle) *backendv1.ConstraintsHandle {
	if h == nil {
		return nil
	}
	return &backendv1.ConstraintsHandle{
		Path:           h.Path,
		Inode:          h.Inode,
		Size:           h.Size,
		NbConstraints:  h.NbConstraints,
		NbWires:        h.NbWires,
		NbCoefficients: h.NbCoefficients,
		NbTerms:        h.NbTerms[:],
	}
}

func constraintsFromProto(h *backendv1.ConstraintsHandle) (*ConstraintsHandle, error) {
	if h == nil {
		return nil, nil
	}
	if len(h.GetNbTerms()) != 3 {
		return nil, Errorf(ErrInvalidArgument, "load key: constraints handle has %d term counts, want 3 (A, B, C)", len(h.GetNbTerms()))
	}
	return &ConstraintsHandle{
		Path:           h.GetPath(),
		Inode:          h.GetInode(),
		Size:           h.GetSize(),
		NbConstraints:  h.GetNbConstraints(),
		NbWires:        h.GetNbWires(),
		NbCoefficients: h.GetNbCoefficients(),
		NbTerms:        [3]uint64(h.GetNbTerms()),
	}, nil
}

func proveResultToProto(r ProveResult) *backendv1.ProveResponse {
	phases := make([]*backendv1.Phase, len(r.Phases))
	for i, p := range r.Phases {
		phases[i] = &backendv1.Phase{
			Name:         p.Name,
			StartNs:      int64(p.Start),
			WallNs:       int64(p.Wall),
			DeviceBusyNs: int64(p.DeviceBusy),
		}
	}
	return &backendv1.ProveResponse{
		Proof:        r.Proof,
		WallNs:       int64(r.Wall),
		DeviceBusyNs: int64(r.DeviceBusy),
		Phases:       phases,
	}
}

func proveResultFromProto(r *backendv1.ProveResponse) ProveResult {
	var phases []Phase
	if len(r.GetPhases()) > 0 {
		phases = make([]Phase, len(r.GetPhases()))
	}
	for i, p := range r.GetPhases() {
		phases[i] = Phase{
			Name:       p.GetName(),
			Start:      time.Duration(p.GetStartNs()),
			Wall:       time.Duration(p.GetWallNs()),
			DeviceBusy: time.Duration(p.GetDeviceBusyNs()),
		}
	}
	return ProveResult{
		Proof:      r.GetProof(),
		Wall:       time.Duration(r.GetWallNs()),
		DeviceBusy: time.Duration(r.GetDeviceBusyNs()),
		Phases:     phases,
	}
}

func digestFromProto(what string, b []byte) ([32]byte, error) {
	var d [32]byte
	if len(b) != len(d) {
		return d, Errorf(ErrInvalidArgument, "%s has %d bytes, want %d (SHA-256)", what, len(b), len(d))
	}
	copy(d[:], b)
	return d, nil
}

var kindToProto = map[ErrorKind]backendv1.ErrorKind{
	ErrInternal:          backendv1.ErrorKind_ERROR_KIND_INTERNAL,
	ErrInvalidArgument:   backendv1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT,
	ErrDigestMismatch:    backendv1.ErrorKind_ERROR_KIND_DIGEST_MISMATCH,
	ErrKeyNotLoaded:      backendv1.ErrorKind_ERROR_KIND_KEY_NOT_LOADED,
	ErrResourceExhausted: backendv1.ErrorKind_ERROR_KIND_RESOURCE_EXHAUSTED,
	ErrUnavailable:       backendv1.ErrorKind_ERROR_KIND_UNAVAILABLE,
	ErrCanceled:          backendv1.ErrorKind_ERROR_KIND_CANCELED,
	ErrUnimplemented:     backendv1.ErrorKind_ERROR_KIND_UNIMPLEMENTED,
	ErrUnsealed:          backendv1.ErrorKind_ERROR_KIND_UNSEALED,
}

func kindFromProto(k backendv1.ErrorKind) ErrorKind {
	for kind, wire := range kindToProto {
		if wire == k {
			return kind
		}
	}
	return ErrInternal
}

// errorToStatus turns a Backend method's error into the gRPC status the server
// answers with. An *Error keeps its kind, retryable flag and message; a context
// error is a cancellation; anything else is internal.
func errorToStatus(err error) error {
	detail := &backendv1.ErrorDetail{}
	var e *Error
	switch {
	case errors.As(err, &e):
		wire, ok := kindToProto[e.Kind]
		if !ok {
			wire = backendv1.ErrorKind_ERROR_KIND_INTERNAL
		}
		detail.Kind, detail.Retryable, detail.Message = wire, e.Retryable, e.Message
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		detail.Kind, detail.Retryable, detail.Message = backendv1.ErrorKind_ERROR_KIND_CANCELED, false, err.Error()
	default:
		detail.Kind, detail.Retryable, detail.Message = backendv1.ErrorKind_ERROR_KIND_INTERNAL, defaultRetryable(ErrInternal), err.Error()
	}
	return statusError(detail)
}

// errorFromStatus turns the error of a gRPC call back into an *Error. With an
// ErrorDetail the backend's error is rebuilt exactly. Without one the failure
// came from gRPC itself: a cancellation of ctx, a lost connection, or a method
// the backend does not implement. A cancellation, from either side, also
// matches ctx.Err() when ctx is done. A lost connection, and a cancellation
// that is not ctx's (the host closed the connection under the call: the
// plugin is being shut down), is ErrUnavailable and also matches
// ErrPluginShutdown with errors.Is.
func errorFromStatus(ctx context.Context, err error) error {
	st, detail := detailOf(err)
	var e *Error
	if detail != nil {
		e = &Error{Kind: kindFromProto(detail.GetKind()), Retryable: detail.GetRetryable(), Message: detail.GetMessage()}
	} else {
		kind := kindFromProto(kindOfCode(st.Code()))
		e = &Error{Kind: kind, Retryable: defaultRetryable(kind), Message: st.Message()}
		switch st.Code() {
		case codes.Unavailable:
			return connectionLost(e)
		case codes.Unimplemented:
			e.Message = "plugin does not implement this call: " + e.Message
		}
	}
	if e.Kind == ErrCanceled {
		ctxErr := ctx.Err()
		// The backend's side sees the deadline gRPC sent it and may cancel the
		// stream a moment before the caller's own timer fires: that is still the
		// caller's deadline.
		if dl, ok := ctx.Deadline(); ctxErr == nil && ok && time.Until(dl) < deadlineSlack {
			ctxErr = context.DeadlineExceeded
		}
		if ctxErr != nil {
			return &causedError{e: e, causes: []error{ctxErr}}
		}
		if detail == nil {
			// Not ctx's cancellation and not the backend's: gRPC's own, as the
			// connection closed under the call ("the client connection is
			// closing") while the plugin was being stopped.
			return connectionLost(&Error{Kind: ErrUnavailable, Retryable: defaultRetryable(ErrUnavailable), Message: e.Message})
		}
	}
	return e
}

// connectionLost is e, a call's failure for want of its plugin connection, as
// an error that also matches ErrPluginShutdown.
func connectionLost(e *Error) error {
	e.Message = "plugin connection lost: " + e.Message
	return &causedError{e: e, causes: []error{ErrPluginShutdown}}
}

// deadlineSlack is how early before a caller's deadline a cancellation from the
// backend's side still counts as that deadline.
const deadlineSlack = 50 * time.Millisecond

// causedError is an *Error that also matches its causes with errors.Is, such as
// context.Canceled or ErrPluginShutdown.
type causedError struct {
	e      *Error
	causes []error
}

func (c *causedError) Error() string { return c.e.Error() }

func (c *causedError) Unwrap() []error { return append([]error{c.e}, c.causes...) }

func utilizationToProto(u Utilization) *backendv1.UtilizationResponse {
	r := &backendv1.UtilizationResponse{Source: u.Source, Samples: make([]*backendv1.UtilizationSample, len(u.Samples))}
	for i, s := range u.Samples {
		r.Samples[i] = &backendv1.UtilizationSample{TimeUnixNs: s.Time.UnixNano(), PeriodNs: int64(s.Period), Percent: s.Percent}
	}
	return r
}

func utilizationFromProto(r *backendv1.UtilizationResponse) Utilization {
	u := Utilization{Source: r.GetSource()}
	for _, s := range r.GetSamples() {
		u.Samples = append(u.Samples, UtilizationSample{Time: time.Unix(0, s.GetTimeUnixNs()), Period: time.Duration(s.GetPeriodNs()), Percent: s.GetPercent()})
	}
	return u
}

func clampInt32(v int) int32 {
	switch {
	case v > math.MaxInt32:
		return math.MaxInt32
	case v < math.MinInt32:
		return math.MinInt32
	}
	return int32(v)
}

func clampUint32(v int) uint32 {
	switch {
	case v < 0:
		return 0
	case uint64(v) > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(v)
}
