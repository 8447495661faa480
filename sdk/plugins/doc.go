// Package plugins is the host's side of go-plugin: it launches plugin binaries
// and hands back the sdk.Backend or sdk.Synthesizer they serve.
//
// There are two kinds of plugin (Kind): backends, which own a device, and
// synthesizers, which own a circuit's synthesis. Launch starts a binary of either
// kind with the same checks: the binary must exist and be executable, its SHA-256
// is pinned when configured (checked before the start and again by go-plugin just
// before exec), gRPC only, automatic mutual TLS over a unix socket in a directory
// of the host's (SocketDir, ReapSockets), the host's pid for the plugin's parent
// watchdog (sdk.ParentPIDEnv), the plugin's stderr into the host's log with its
// levels (and its last lines quoted when it fails to start). Attach connects to a
// plugin served in debug mode (sdk.WithDebug).
//
// It is the one launcher: the zkhost host (host/device, host/synth) and the SDK's
// conformance suites (sdktest, synthtest) both start plugins through Launch, so a
// plugin that passes its suite was started exactly as the host will start it. That
// is why it lives in the SDK's module, which the host imports and which imports
// nothing of the host's.
//
// The layering follows Nomad's plugins/device: everything both ends must agree on
// (the Go interfaces, the handshake, the go-plugin wrappers, the wire code and its
// translation) is in package sdk; this package imports sdk and adds only what a
// host needs. Process.Backend returns an sdk.Backend, never a protobuf client.
package plugins
