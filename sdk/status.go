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

// codeOf returns the gRPC status code that carries an error of the given kind.
// Unknown kinds, and the unspecified kind, are Internal.
func codeOf(kind backendv1.ErrorKind) codes.Code {
	switch kind {
	case backendv1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT:
		return codes.InvalidArgument
	case backendv1.ErrorKind_ERROR_KIND_DIGEST_MISMATCH:
		return codes.DataLoss
	case backendv1.ErrorKind_ERROR_KIND_KEY_NOT_LOADED:
		return codes.FailedPrecondition
	case backendv1.ErrorKind_ERROR_KIND_RESOURCE_EXHAUSTED:
		return codes.ResourceExhausted
	case backendv1.ErrorKind_ERROR_KIND_UNAVAILABLE:
		return codes.Unavailable
	case backendv1.ErrorKind_ERROR_KIND_CANCELED:
		return codes.Canceled
	case backendv1.ErrorKind_ERROR_KIND_UNIMPLEMENTED:
		return codes.Unimplemented
	case backendv1.ErrorKind_ERROR_KIND_UNSEALED:
		// The backend refuses, on integrity grounds, to prove from a file whose
		// bytes could change; every other code already stands for another kind.
		return codes.PermissionDenied
	}
	return codes.Internal
}

// kindOfCode returns the error kind a status code stands for when the status
// carries no ErrorDetail (it came from gRPC itself, not from a backend): the
// inverse of codeOf, with DeadlineExceeded read as a cancellation and every code
// codeOf never produces read as internal.
func kindOfCode(code codes.Code) backendv1.ErrorKind {
	switch code {
	case codes.InvalidArgument:
		return backendv1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT
	case codes.DataLoss:
		return backendv1.ErrorKind_ERROR_KIND_DIGEST_MISMATCH
	case codes.FailedPrecondition:
		return backendv1.ErrorKind_ERROR_KIND_KEY_NOT_LOADED
	case codes.ResourceExhausted:
		return backendv1.ErrorKind_ERROR_KIND_RESOURCE_EXHAUSTED
	case codes.Unavailable:
		return backendv1.ErrorKind_ERROR_KIND_UNAVAILABLE
	case codes.Canceled, codes.DeadlineExceeded:
		return backendv1.ErrorKind_ERROR_KIND_CANCELED
	case codes.Unimplemented:
		return backendv1.ErrorKind_ERROR_KIND_UNIMPLEMENTED
	case codes.PermissionDenied:
		return backendv1.ErrorKind_ERROR_KIND_UNSEALED
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
