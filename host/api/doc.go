// Package api is the client-facing API of the zkhost daemon (`zkhost serve`): the plain Go
// types of a proof job and of the daemon's status, the Service interface the daemon
// implements, and the gRPC layer that serves a Service (proto/zkhost/v1) on a unix socket
// or, with TLS and a bearer token, on TCP.
//
// Nothing outside this package and host/client sees protobuf types: the daemon works with
// Job, JobEvent and StatusReport, and the adapters here translate at the edge, errors
// included (ErrNotFound and the other sentinels become gRPC status codes with a typed
// detail, and back again in the client).
package api
