package sdk

import (
	"context"
	"time"

	"google.golang.org/grpc"

	backendv1 "github.com/zkhost/zkhost/sdk/internal/proto/backendv1"
)

// NewBackendClient returns a Backend, which is also a UtilizationReporter, that
// calls the backend served on conn (BackendPlugin.GRPCClient calls it on the
// connection go-plugin made; the host's plugins.Process.Backend returns its
// result), so the host deals only in sdk types, as Nomad's device plugin
// client returns a DevicePlugin.
//
// Errors come back as they left the backend: errors.As finds an *Error with
// the backend's Kind, Retryable and Message. A call cancelled through its
// context returns an *Error of kind ErrCanceled that also matches ctx.Err()
// with errors.Is, and the backend's context is cancelled too. A call that
// fails because the backend process went away returns an *Error of kind
// ErrUnavailable that also matches ErrPluginShutdown.
func NewBackendClient(conn grpc.ClientConnInterface) Backend {
	return &grpcClient{c: backendv1.NewBackendClient(conn)}
}

// grpcClient is deliberately parallel to synth_grpc.go's synthClient: each
// translates its own service's messages, which share no Go types.
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
	r, err := g.c.LoadKey(ctx, &backendv1.LoadKeyRequest{Key: keyRefToProto(key), Constraints: constraintsToProto(key.Constraints)})
	if err != nil {
		return KeyInfo{}, errorFromStatus(ctx, err)
	}
	return KeyInfo{HostBytes: r.GetHostBytes(), DeviceBytes: r.GetDeviceBytes(), CompactW: r.GetCompactW()}, nil
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
