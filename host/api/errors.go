package api

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
	"github.com/zkhost/zkhost/sdk"
)

// Sentinel errors. The daemon returns errors that wrap one of them (build them with
// NotFoundf and its siblings, or TooLarge); the gRPC layer turns each into a status code
// with an ErrorDetail, and the client turns it back, so errors.Is works on both sides.
var (
	// ErrNotFound: no job with that id (or no such device).
	ErrNotFound = errors.New("not found")
	// ErrInvalidArgument: a malformed request (no witness, unknown circuit, bad enum).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrConflict: a request id reused with different content.
	ErrConflict = errors.New("conflict")
	// ErrResourceExhausted: the job can never fit the memory budget, or the
	// state directory has too little space for it now.
	ErrResourceExhausted = errors.New("resource exhausted")
	// ErrUnavailable: the daemon is shutting down, or not running at all (client side),
	// or no device can serve the job now. It is the SDK's sdk.ErrUnavailable, one
	// value for the idea across the client API, the backend contract and the CUDA
	// driver wrapper: errors.Is(err, api.ErrUnavailable) holds for each.
	ErrUnavailable error = sdk.ErrUnavailable
	// ErrUnauthenticated: a TCP request without the right bearer token.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrPermissionDenied: a client that is not an admin asked for an admin
	// action (preload, evict, enable), one that changes devices or keys for
	// every tenant.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrInternal: a failure inside the daemon.
	ErrInternal = errors.New("internal error")
)

// kinds pairs each sentinel with its gRPC code and its ErrorDetail kind.
var kinds = []struct {
	err  error
	code codes.Code
	name string
}{
	{ErrNotFound, codes.NotFound, "not_found"},
	{ErrInvalidArgument, codes.InvalidArgument, "invalid_argument"},
	{ErrConflict, codes.AlreadyExists, "conflict"},
	{ErrResourceExhausted, codes.ResourceExhausted, "resource_exhausted"},
	{ErrUnavailable, codes.Unavailable, "unavailable"},
	{ErrUnauthenticated, codes.Unauthenticated, "unauthenticated"},
	{ErrPermissionDenied, codes.PermissionDenied, "permission_denied"},
	{ErrInternal, codes.Internal, "internal"},
}

// Error is an error of one kind (a sentinel above) with a message for people.
type Error struct {
	// Kind is one of the sentinel errors.
	Kind    error
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the kind, so errors.Is(err, ErrNotFound) works.
func (e *Error) Unwrap() error { return e.Kind }

func newError(kind error, format string, args []any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// NotFoundf returns an error wrapping ErrNotFound.
func NotFoundf(format string, args ...any) error { return newError(ErrNotFound, format, args) }

// InvalidArgumentf returns an error wrapping ErrInvalidArgument.
func InvalidArgumentf(format string, args ...any) error {
	return newError(ErrInvalidArgument, format, args)
}

// Conflictf returns an error wrapping ErrConflict.
func Conflictf(format string, args ...any) error { return newError(ErrConflict, format, args) }

// Unavailablef returns an error wrapping ErrUnavailable.
func Unavailablef(format string, args ...any) error {
	return newError(ErrUnavailable, format, args)
}

// ResourceExhaustedError says a job needs more memory than the budget can ever grant it,
// or more disk than the state directory has free now (TooLittleSpace). It wraps
// ErrResourceExhausted.
type ResourceExhaustedError struct {
	// Need is what the job needs at least, Limit the most the budget can grant it
	// or the space free (bytes).
	Need, Limit uint64
	Message     string
}

// TooLarge returns a ResourceExhaustedError for what (e.g. `job of circuit "merkle"`).
func TooLarge(what string, need, limit uint64) *ResourceExhaustedError {
	return &ResourceExhaustedError{
		Need:  need,
		Limit: limit,
		Message: fmt.Sprintf("%s needs %s of host memory, more than the %s the budget can ever grant it",
			what, FormatBytes(need), FormatBytes(limit)),
	}
}

// TooLittleSpace returns a ResourceExhaustedError for a job refused because the
// state directory is short of space; msg says where and what to do.
func TooLittleSpace(need, free uint64, msg string) *ResourceExhaustedError {
	return &ResourceExhaustedError{Need: need, Limit: free, Message: msg}
}

// Error returns the message.
func (e *ResourceExhaustedError) Error() string { return e.Message }

// Unwrap returns ErrResourceExhausted.
func (e *ResourceExhaustedError) Unwrap() error { return ErrResourceExhausted }

// ToStatus turns an error from a Service into a gRPC status error carrying an
// ErrorDetail. Errors that wrap no sentinel become Internal; context errors become
// Canceled and DeadlineExceeded; a status error passes through unchanged.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return withDetail(codes.Canceled, err.Error(), &zkhostv1.ErrorDetail{Kind: "canceled"})
	case errors.Is(err, context.DeadlineExceeded):
		return withDetail(codes.DeadlineExceeded, err.Error(), &zkhostv1.ErrorDetail{Kind: "deadline_exceeded"})
	}
	detail := &zkhostv1.ErrorDetail{Kind: "internal"}
	code := codes.Internal
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			code, detail.Kind = k.code, k.name
			break
		}
	}
	var re *ResourceExhaustedError
	if errors.As(err, &re) {
		detail.NeedBytes, detail.LimitBytes = re.Need, re.Limit
	}
	return withDetail(code, err.Error(), detail)
}

func withDetail(code codes.Code, msg string, detail *zkhostv1.ErrorDetail) error {
	st, derr := status.New(code, msg).WithDetails(detail)
	if derr != nil {
		// Only a detail that cannot be marshalled fails here; the code still says enough.
		return status.Error(code, msg)
	}
	return st.Err()
}

// FromStatus turns an error from a gRPC call back into the error the daemon returned: an
// *Error or *ResourceExhaustedError wrapping the sentinel, or a context error. A status
// without an ErrorDetail did not come from the daemon's Service (a transport failure:
// the daemon is not running, the connection broke) and is returned unchanged, so the
// caller can say where it tried to connect.
func FromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	var detail *zkhostv1.ErrorDetail
	for _, d := range st.Details() {
		if ed, ok := d.(*zkhostv1.ErrorDetail); ok {
			detail = ed
			break
		}
	}
	switch st.Code() {
	case codes.Canceled:
		return fmt.Errorf("%s: %w", st.Message(), context.Canceled)
	case codes.DeadlineExceeded:
		return fmt.Errorf("%s: %w", st.Message(), context.DeadlineExceeded)
	}
	if detail == nil {
		return err
	}
	if detail.Kind == "resource_exhausted" {
		return &ResourceExhaustedError{Need: detail.NeedBytes, Limit: detail.LimitBytes, Message: st.Message()}
	}
	for _, k := range kinds {
		if k.name == detail.Kind {
			return &Error{Kind: k.err, Message: st.Message()}
		}
	}
	return &Error{Kind: ErrInternal, Message: st.Message()}
}

// FormatBytes formats n bytes with a binary unit ("1.5 GiB").
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// witnessIndex finds the daemon's "witness N" (or "wire assignment N") in a submit
// error.
var witnessIndex = regexp.MustCompile(`\b(witness|wire assignment) (\d+)\b`)

// NameInputFiles replaces the daemon's "witness N" (or "wire assignment N") in a
// submit error by the file the user gave for input N, keeping the error's kind: a
// client that read its inputs from files names the file that is wrong.
func NameInputFiles(err error, files []string) error {
	var ae *Error
	if !errors.As(err, &ae) {
		return err
	}
	msg := witnessIndex.ReplaceAllStringFunc(ae.Message, func(m string) string {
		sub := witnessIndex.FindStringSubmatch(m)
		i, _ := strconv.Atoi(sub[2])
		if i < 0 || i >= len(files) {
			return m
		}
		return sub[1] + " " + files[i]
	})
	if msg == ae.Message {
		return err
	}
	return &Error{Kind: ae.Kind, Message: msg}
}
