package plugins

import (
	"context"
	"errors"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	synthv1 "github.com/zkhost/zkhost/proto/synth/v1"
)

// SynthesizerPluginName is the name the synthesizer plugin is dispensed under.
const SynthesizerPluginName = "synthesizer"

// SynthesizerVersionedPlugins returns the synthesizer's plugin sets for every
// protocol version this package speaks, keyed by version. A synthesizer passes
// its server; the host passes nil. Synthesizers share the backends' handshake
// (Handshake, ProtocolVersion): a binary of the wrong kind starts, and its first
// call fails with gRPC's "unknown service", which the host reports.
func SynthesizerVersionedPlugins(server synthv1.SynthesizerServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {SynthesizerPluginName: &SynthesizerPlugin{Impl: server}},
	}
}

// SynthesizerPlugin is the go-plugin wrapper of the synthesizer contract. It
// speaks gRPC only: net/rpc is refused.
type SynthesizerPlugin struct {
	plugin.NetRPCUnsupportedPlugin

	// Impl is the synthesizer's implementation of the gRPC service. It is set on
	// the synthesizer's side only; the host leaves it nil.
	Impl synthv1.SynthesizerServer
}

var _ plugin.GRPCPlugin = (*SynthesizerPlugin)(nil)

// GRPCServer registers the synthesizer's server on s.
func (p *SynthesizerPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("plugins: SynthesizerPlugin has no Impl to register")
	}
	synthv1.RegisterSynthesizerServer(s, p.Impl)
	return nil
}

// GRPCClient returns a synthv1.SynthesizerClient on the plugin's connection.
func (p *SynthesizerPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return synthv1.NewSynthesizerClient(conn), nil
}
