package sdk

import (
	"context"
	"time"

	backendv1 "github.com/zkhost/zkhost/proto/backend/v1"
)

// NewGRPCClient returns a Backend, which is also a UtilizationReporter, that calls a backend process through c (from
// plugins.Process.Backend), so the host deals only in sdk types.
//
// Errors come back as they left the backend: errors.As finds an *Error with
// the backend's Kind, Retryable and Message. A call cancelled through its
// context returns an *Error of kind ErrCanceled that also matches ctx.Err()
// with errors.Is, and the backend's context is cancelled too. A call that
// fails because the backend process went away returns an *Error of kind
// ErrUnavailable that also matches plugins.ErrPluginShutdown.
func NewGRPCClient(c backendv1.BackendClient) Backend {
	return &grpcClient{c: c}
}

type grpcClient struct {
	c backendv1.BackendClient
}

func (g *grpcClient) Describe(ctx context.Context) (Description, error) {
	r, err := g.c.Describe(ctx, &backendv1.DescribeRequest{})
	if err != nil {
		return Description{}, errorFromStatus(ctx, err)
	}
	return describeFromProto(r), nil
}

func (g *grpcClient) LoadKey(ctx context.Context, key KeyRef) (KeyInfo, error) {
	r, err := g.c.LoadKey(ctx, &backendv1.LoadKeyRequest{Key: keyRefToProto(key)})
	if err != nil {
		return KeyInfo{}, errorFromStatus(ctx, err)
	}
	return KeyInfo{HostBytes: r.GetHostBytes(), DeviceBytes: r.GetDeviceBytes()}, nil
}

func (g *grpcClient) UnloadKey(ctx context.Context, keyID string) error {
	if _, err := g.c.UnloadKey(ctx, &backendv1.UnloadKeyRequest{KeyId: keyID}); err != nil {
		return errorFromStatus(ctx, err)
	}
	return nil
}

func (g *grpcClient) Prove(ctx context.Context, req ProveRequest) (ProveResult, error) {
	r, err := g.c.Prove(ctx, &backendv1.ProveRequest{KeyId: req.KeyID, Partition: handleToProto(req.Partition)})
	if err != nil {
		return ProveResult{}, errorFromStatus(ctx, err)
	}
	return proveResultFromProto(r), nil
}

// Utilization asks the backend for its samples after since. A backend that
// does not report utilization answers an *Error of kind ErrUnimplemented.
func (g *grpcClient) Utilization(ctx context.Context, since time.Time) (Utilization, error) {
	var ns int64
	if !since.IsZero() {
		ns = since.UnixNano()
	}
	r, err := g.c.Utilization(ctx, &backendv1.UtilizationRequest{SinceUnixNs: ns})
	if err != nil {
		return Utilization{}, errorFromStatus(ctx, err)
	}
	return utilizationFromProto(r), nil
}
