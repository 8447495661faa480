package plugins

import (
	"context"
	"errors"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	backendv1 "github.com/zkhost/zkhost/proto/backend/v1"
)

// BackendPlugin is the go-plugin wrapper of the backend contract. It speaks gRPC
// only: net/rpc is refused.
type BackendPlugin struct {
	plugin.NetRPCUnsupportedPlugin

	// Impl is the backend's implementation of the gRPC service. It is set on the
	// backend side only; the host leaves it nil.
	Impl backendv1.BackendServer
}

var _ plugin.GRPCPlugin = (*BackendPlugin)(nil)

// GRPCServer registers the backend's server on s.
func (p *BackendPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("plugins: BackendPlugin has no Impl to register")
	}
	backendv1.RegisterBackendServer(s, p.Impl)
	return nil
}

// GRPCClient returns a backendv1.BackendClient on the plugin's connection.
func (p *BackendPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return backendv1.NewBackendClient(conn), nil
}
