// Package plugins is the go-plugin glue the zkhost host and its plugins share.
//
// There are two kinds of plugin (Kind): backends, which own a device and serve
// proto/backend/v1, and synthesizers, which own a circuit's synthesis and serve
// proto/synth/v1. This package holds what both ends of either contract must
// agree on and nothing host-specific: the handshake (Handshake, ProtocolVersion,
// shared by both kinds), the versioned plugin sets (VersionedPlugins,
// SynthesizerVersionedPlugins), the go-plugin wrappers (BackendPlugin,
// SynthesizerPlugin) that register or dial the gRPC services, the mapping
// between error kinds and gRPC status codes (StatusError, DetailOf), the
// parent-death watchdog a plugin runs (WatchParent), and Launch, which starts a
// plugin binary of either kind for the host with the same checks (SHA-256
// pinning, gRPC only, AutoMTLS, stderr into the host's log).
//
// The layering follows Nomad's plugins/device: the Go interface and types live in
// package sdk, the wire types in proto/backend/v1, and this package sits between
// them without importing sdk, so sdk can import it.
package plugins
