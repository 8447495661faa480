package sdk

import (
	"errors"
	"fmt"
	"testing"
)

func TestPermanentf(t *testing.T) {
	for _, kind := range []ErrorKind{ErrInternal, ErrResourceExhausted, ErrUnavailable, ErrInvalidArgument} {
		e := Permanentf(kind, "x %d", 1)
		if e.Kind != kind || e.Retryable || IsRetryable(e) || e.Message != "x 1" {
			t.Errorf("Permanentf(%v) = %+v, want that kind, not retryable", kind, e)
		}
	}
}

func TestKindIsAnError(t *testing.T) {
	wrapped := fmt.Errorf("gpu: device 0: %w", ErrUnavailable)
	tests := []struct {
		name string
		err  error
		kind ErrorKind
	}{
		{"an *Error", Errorf(ErrUnavailable, "no GPU"), ErrUnavailable},
		{"a wrapped *Error", fmt.Errorf("load: %w", Errorf(ErrCanceled, "stop")), ErrCanceled},
		{"a wrapped kind", wrapped, ErrUnavailable},
		{"another error", errors.New("boom"), ErrInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KindOf(tt.err); got != tt.kind {
				t.Errorf("KindOf = %v, want %v", got, tt.kind)
			}
			if tt.kind != ErrInternal && !errors.Is(tt.err, tt.kind) {
				t.Errorf("errors.Is(%v, %v) = false", tt.err, tt.kind)
			}
			for _, other := range []ErrorKind{ErrResourceExhausted, ErrInvalidArgument} {
				if errors.Is(tt.err, other) {
					t.Errorf("errors.Is(%v, %v) = true", tt.err, other)
				}
			}
		})
	}
	if ErrUnavailable.Error() != "unavailable" {
		t.Errorf("ErrUnavailable.Error() = %q", ErrUnavailable.Error())
	}
}
