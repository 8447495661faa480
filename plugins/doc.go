// Package plugins is the go-plugin glue the zkhost host and its backends share.
//
// It holds what both ends of the backend contract must agree on and nothing
// host-specific: the handshake (Handshake, ProtocolVersion), the versioned plugin
// set (VersionedPlugins), the go-plugin wrapper (BackendPlugin) that registers or
// dials the gRPC service of package proto/backend/v1, the mapping between error
// kinds and gRPC status codes (StatusError, DetailOf), the parent-death watchdog a
// backend runs (WatchParent), and Launch, which starts a backend binary for the host.
//
// The layering follows Nomad's plugins/device: the Go interface and types live in
// package sdk, the wire types in proto/backend/v1, and this package sits between
// them without importing sdk, so sdk can import it.
package plugins
