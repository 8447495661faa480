package sdk

import (
	"context"
	"errors"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	backendv1 "github.com/zkhost/zkhost/sdk/internal/proto/backendv1"
	synthv1 "github.com/zkhost/zkhost/sdk/internal/proto/synthv1"
)

// ProtocolVersion is the go-plugin protocol version of the backend and
// synthesizer contracts. It changes only when the transport itself changes
// incompatibly; the API version inside it (APIVersion) is negotiated separately
// through Describe.
const ProtocolVersion = 1

// Names the two plugin kinds are dispensed under.
const (
	BackendPluginName     = "backend"
	SynthesizerPluginName = "synthesizer"
)

// Handshake is the go-plugin handshake both ends of either contract use. The
// magic cookie is not a secret: it only stops a plugin binary run by hand from
// waiting for a host that is not there, and tells the user what the binary is.
// Synthesizers share it with backends: a binary of the wrong kind starts, and
// its first call fails with gRPC's "unknown service", which the host reports.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "ZKHOST_BACKEND_PLUGIN",
	MagicCookieValue: "3f1c0b7e9d2a4c58a6e1f0b2d4c6e8a0",
}

// BackendPlugins returns the backend's go-plugin sets for every protocol
// version this package speaks, keyed by version. A backend's Serve passes its
// implementation; the host passes nil and dispenses a Backend.
func BackendPlugins(impl Backend) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {BackendPluginName: &BackendPlugin{Impl: impl}},
	}
}

// SynthesizerPlugins is BackendPlugins for synthesizers.
func SynthesizerPlugins(impl Synthesizer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {SynthesizerPluginName: &SynthesizerPlugin{Impl: impl}},
	}
}

// BackendPlugin is the go-plugin wrapper of the backend contract, as Nomad's
// device.PluginDevice is of its device plugins. It speaks gRPC only: net/rpc
// is refused. On the backend's side it serves Impl; on the host's side
// (Impl nil) it dispenses a Backend that calls the process (NewBackendClient).
// Deliberately parallel to SynthesizerPlugin: go-plugin wants one type per
// plugin kind, and each registers and dispenses its own contract's service.
type BackendPlugin struct {
	plugin.NetRPCUnsupportedPlugin

	// Impl is the backend. It is set on the backend's side only.
	Impl Backend
}

var _ plugin.GRPCPlugin = (*BackendPlugin)(nil)

// GRPCServer registers Impl, translated to the wire, on s.
func (p *BackendPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("sdk: BackendPlugin has no Impl to register")
	}
	backendv1.RegisterBackendServer(s, &grpcServer{b: p.Impl})
	return nil
}

// GRPCClient returns a Backend (also a UtilizationReporter) on the plugin's
// connection.
func (p *BackendPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewBackendClient(conn), nil
}

// SynthesizerPlugin is the go-plugin wrapper of the synthesizer contract; see
// BackendPlugin. Deliberately parallel to BackendPlugin: see why there.
type SynthesizerPlugin struct {
	plugin.NetRPCUnsupportedPlugin

	// Impl is the synthesizer. It is set on the synthesizer's side only.
	Impl Synthesizer
}

var _ plugin.GRPCPlugin = (*SynthesizerPlugin)(nil)

// GRPCServer registers Impl, translated to the wire, on s.
func (p *SynthesizerPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("sdk: SynthesizerPlugin has no Impl to register")
	}
	synthv1.RegisterSynthesizerServer(s, &synthServer{s: p.Impl})
	return nil
}

// GRPCClient returns a Synthesizer on the plugin's connection.
func (p *SynthesizerPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewSynthesizerClient(conn), nil
}
