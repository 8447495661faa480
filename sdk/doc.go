// Package sdk is what a zkhost backend author imports.
//
// A backend is a separate process that owns one proving device (a GPU, the CPU, a
// vendor accelerator). The host launches it with hashicorp/go-plugin, asks it to
// Describe itself, loads proving keys into it and sends it synthesized partitions
// to prove. The Backend interface and its types are plain Go: protobuf types never
// cross this package's API. The contract's layers follow Nomad's plugins/device and
// terraform-plugin-go: the Go interfaces and types here; the go-plugin wrappers
// (BackendPlugin, SynthesizerPlugin), the handshake and the gRPC adapters here too,
// with the generated wire code internal to the SDK (the .proto sources are in the
// repository's proto/); a host dials a plugin with go-plugin and gets a Backend back
// (NewBackendClient), as zkhost's host does in package sdk/plugins. Serve serves a
// Backend and watches the host process (WatchParent): a backend whose host died
// exits rather than hold its device.
//
// The SDK is its own Go module (github.com/zkhost/zkhost/sdk), with none of the
// host's dependencies, and a backend built on it links gnark-crypto but not gnark:
// the packages that need gnark (sdk/keyconv, sdk/circuit, sdk/circomconv, sdk/synthgnark
// and the conformance suites sdktest and synthtest) are for tests, synthesizers and the
// host.
//
// Bulk data never travels in messages. A partition (the wire vector W and the
// evaluation vectors A and B, 32-byte Montgomery little-endian field elements)
// lives in a shared-memory file (a memfd) that the host writes and seals against
// any change, and that the backend maps read-only after checking the seals (see
// PartitionHandle and OpenPartition; or reads into buffers of its own,
// ReadPartition; docs/partitions.md). A proving key is a file in
// zkhost's own page-aligned format (package sdk/keyfile), mapped read-only.
//
// A backend's main is a few lines: build a value that implements Backend and pass
// it to Serve. Backends log to stderr only; go-plugin owns stdout (a library that
// prints to stdout, as gnark's logger does by default, breaks the handshake:
// silence it first).
//
// What the host hands a backend when it starts it: the [[device]]'s
// [device.options] as command-line flags (-KEY=VALUE, sorted by key) and its
// [device.env] as environment variables; ZKHOST_DEVICE_INDEX, the device's index
// when the config gives one; LogLevelEnv, the host's log level; and go-plugin's own
// variables. Nothing else: a setting such as a thread count reaches a backend only
// as an option it reads (zkhost-backend-cpu reads -threads and ZKHOST_CPU_THREADS).
//
// How the host treats errors: an *Error marked Retryable (Errorf's default for
// ErrResourceExhausted, ErrUnavailable and ErrInternal) puts the partition back for
// another attempt, on this device or another, up to the job's attempt limit; one
// that is not (Errorf's default for the other kinds, or Permanentf) fails the
// partition at once. A backend that crashes is restarted and its partitions retried.
// Whatever the backend answers, the host verifies every proof with gnark before it
// counts, so a wrong proof costs an attempt, never a client's trust.
//
// The second plugin kind is a synthesizer (Synthesizer, ServeSynthesizer): a
// process that owns a circuit's synthesis, for circuits whose solver the host
// does not have (a gnark circuit with its own hints, another stack's circuit).
// It gets a partition's witness and writes the solved partition into a file the
// host names (WritePartition); docs/synthesizer.md documents the format.
// sdk/synthgnark serves gnark circuits with their user's hints, and
// sdk/synthtest is the synthesizers' conformance suite.
package sdk
