package sdk

import (
	"errors"
	"fmt"
)

// ErrorKind classifies a backend error. It crosses gRPC as the status code plus a
// typed detail, so the host can decide whether to retry. A kind is itself an
// error, so that one value serves an idea in every layer: errors.Is(err,
// sdk.ErrUnavailable) holds for an *Error of that kind, for an error wrapping
// the kind (the CUDA driver wrapper's errors), and for the host's client API
// errors, whose ErrUnavailable is this value.
type ErrorKind int

// Error kinds. The zero value is ErrInternal.
const (
	ErrInternal          ErrorKind = iota // a bug or an unexpected failure
	ErrInvalidArgument                    // the request is malformed (bad handle, bad size, wrong curve)
	ErrDigestMismatch                     // a file's contents do not match the digest sent
	ErrKeyNotLoaded                       // Prove named a key that is not loaded
	ErrResourceExhausted                  // not enough device or host memory right now
	ErrUnavailable                        // no usable device (no GPU, driver too old)
	ErrCanceled                           // the request's context was cancelled
	ErrUnimplemented                      // the backend does not support this request
	ErrUnsealed                           // a partition file is not sealed against change (so its bytes could differ from the host's)
)

var kindNames = map[ErrorKind]string{
	ErrInternal:          "internal",
	ErrInvalidArgument:   "invalid_argument",
	ErrDigestMismatch:    "digest_mismatch",
	ErrKeyNotLoaded:      "key_not_loaded",
	ErrResourceExhausted: "resource_exhausted",
	ErrUnavailable:       "unavailable",
	ErrCanceled:          "canceled",
	ErrUnimplemented:     "unimplemented",
	ErrUnsealed:          "unsealed",
}

// String returns the kind's wire name. Deliberately parallel to host/waterfall's
// Cause.Label: see why there.
func (k ErrorKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error is a typed backend error.
type Error struct {
	Kind ErrorKind
	// Retryable says whether the same request may succeed later or elsewhere.
	Retryable bool
	Message   string
}

// Error returns the kind's wire name: a kind is an error of its own (see ErrorKind).
func (k ErrorKind) Error() string { return k.String() }

func (e *Error) Error() string { return e.Kind.String() + ": " + e.Message }

// Is reports whether target is e's kind, so that errors.Is(err, sdk.ErrCanceled)
// works on an *Error.
func (e *Error) Is(target error) bool {
	k, ok := target.(ErrorKind)
	return ok && k == e.Kind
}

// Errorf returns an *Error of the given kind. Retryable defaults by kind:
// resource exhaustion, unavailability and internal errors may be retried.
func Errorf(kind ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Retryable: defaultRetryable(kind), Message: fmt.Sprintf(format, args...)}
}

// Permanentf returns an *Error of the given kind that is not retryable, whatever
// the kind's default: the host fails the partition at once instead of trying it
// again on this or another device. Use it for a failure the same input will meet
// everywhere (a key this backend can never prove with, a partition it can never
// fit), not for a passing one (busy, out of memory for now, a device reset).
func Permanentf(kind ErrorKind, format string, args ...any) *Error {
	e := Errorf(kind, format, args...)
	e.Retryable = false
	return e
}

func defaultRetryable(k ErrorKind) bool {
	switch k {
	case ErrResourceExhausted, ErrUnavailable, ErrInternal:
		return true
	}
	return false
}

// KindOf returns the kind of err if it is (or wraps) an *Error or a kind, and
// ErrInternal otherwise.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	var k ErrorKind
	if errors.As(err, &k) {
		return k
	}
	return ErrInternal
}

// IsRetryable reports whether err is an *Error marked retryable, or not an *Error at all
// (an unclassified failure, such as a crashed backend, may succeed elsewhere).
func IsRetryable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Retryable
	}
	return true
}
