package sdk

import "testing"

func TestPermanentf(t *testing.T) {
	for _, kind := range []ErrorKind{ErrInternal, ErrResourceExhausted, ErrUnavailable, ErrInvalidArgument} {
		e := Permanentf(kind, "x %d", 1)
		if e.Kind != kind || e.Retryable || IsRetryable(e) || e.Message != "x 1" {
			t.Errorf("Permanentf(%v) = %+v, want that kind, not retryable", kind, e)
		}
	}
}
