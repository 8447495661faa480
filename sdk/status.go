package sdk

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	backendv1 "github.com/zkhost/zkhost/sdk/internal/proto/backendv1"
)

// ErrPluginShutdown is wrapped into the error of a call that failed because the
// backend process went away (it crashed, was killed, or closed its connection).
// The host's supervisor restarts the backend and requeues its work.
var ErrPluginShutdown = errors.New("backend plugin shut down")

// kindCodes pairs each error kind with the gRPC status code that carries it.
// codeOf and kindOfCode both read it, so the two directions cannot drift apart.
var kindCodes = []struct {
	kind backendv1.ErrorKind
	code codes.Code
}{
	{backendv1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, codes.InvalidArgument},
	{backendv1.ErrorKind_ERROR_KIND_DIGEST_MISMATCH, codes.DataLoss},
	{backendv1.ErrorKind_ERROR_KIND_KEY_NOT_LOADED, codes.FailedPrecondition},
	{backendv1.ErrorKind_ERROR_KIND_RESOURCE_EXHAUSTED, codes.ResourceExhausted},
	{backendv1.ErrorKind_ERROR_KIND_UNAVAILABLE, codes.Unavailable},
	{backendv1.ErrorKind_ERROR_KIND_CANCELED, codes.Canceled},
	{backendv1.ErrorKind_ERROR_KIND_UNIMPLEMENTED, codes.Unimplemented},
	// The backend refuses, on integrity grounds, to prove from a file whose bytes
	// could change; every other code already stands for another kind.
	{backendv1.ErrorKind_ERROR_KIND_UNSEALED, codes.PermissionDenied},
}

// codeOf returns the gRPC status code that carries an error of the given kind.
// Unknown kinds, and the unspecified kind, are Internal.
func codeOf(kind backendv1.ErrorKind) codes.Code {
	for _, kc := range kindCodes {
		if kc.kind == kind {
			return kc.code
		}
	}
	return codes.Internal
}

// kindOfCode returns the error kind a status code stands for when the status
// carries no ErrorDetail (it came from gRPC itself, not from a backend): the
// inverse of codeOf, with DeadlineExceeded read as a cancellation and every code
// codeOf never produces read as internal.
func kindOfCode(code codes.Code) backendv1.ErrorKind {
	if code == codes.DeadlineExceeded {
		return backendv1.ErrorKind_ERROR_KIND_CANCELED
	}
	for _, kc := range kindCodes {
		if kc.code == code {
			return kc.kind
		}
	}
	return backendv1.ErrorKind_ERROR_KIND_INTERNAL
}

// statusError returns a gRPC status error whose code follows detail's kind and
// whose details hold detail, so the other end recovers the kind and the
// retryable flag exactly.
func statusError(detail *backendv1.ErrorDetail) error {
	st := status.New(codeOf(detail.GetKind()), detail.GetMessage())
	withDetail, err := st.WithDetails(detail)
	if err != nil {
		// Only a message that cannot be marshalled fails here; the code and the
		// message still cross.
		return st.Err()
	}
	return withDetail.Err()
}

// detailOf returns the gRPC status of err and the ErrorDetail it carries, or a
// nil detail when the status has none (the failure came from gRPC or the
// transport, not from the backend). An err that is not a status error yields a
// status of code Unknown.
func detailOf(err error) (*status.Status, *backendv1.ErrorDetail) {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if detail, ok := d.(*backendv1.ErrorDetail); ok {
			return st, detail
		}
	}
	return st, nil
}
