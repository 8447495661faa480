package plugins

import (
	plugin "github.com/hashicorp/go-plugin"

	backendv1 "github.com/zkhost/zkhost/proto/backend/v1"
)

// ProtocolVersion is the go-plugin protocol version of the backend contract. It
// changes only when the transport itself changes incompatibly; the API version
// inside it (sdk.APIVersion) is negotiated separately through Describe.
const ProtocolVersion = 1

// PluginName is the name the backend plugin is dispensed under.
const PluginName = "backend"

// Handshake is the go-plugin handshake both ends use. The magic cookie is not a
// secret: it only stops a backend binary run by hand from waiting for a host that
// is not there, and tells the user what the binary is.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "ZKHOST_BACKEND_PLUGIN",
	MagicCookieValue: "3f1c0b7e9d2a4c58a6e1f0b2d4c6e8a0",
}

// VersionedPlugins returns the plugin sets for every protocol version this package
// speaks, keyed by version. A backend passes its server; the host passes nil.
func VersionedPlugins(server backendv1.BackendServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginName: &BackendPlugin{Impl: server}},
	}
}
