package api

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zkhost/zkhost/sdk"
)

func TestErrorStatusRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code codes.Code
		is   error
	}{
		{"not found", NotFoundf("no job %q", "j1"), codes.NotFound, ErrNotFound},
		{"invalid", InvalidArgumentf("bad"), codes.InvalidArgument, ErrInvalidArgument},
		{"conflict", Conflictf("request id reused"), codes.AlreadyExists, ErrConflict},
		{"unavailable", Unavailablef("shutting down"), codes.Unavailable, ErrUnavailable},
		{"permission denied", requireAdmin(WithIdentity(context.Background(), Identity{Name: "alice"}), "evict (EvictKey)"), codes.PermissionDenied, ErrPermissionDenied},
		{"wrapped", fmt.Errorf("submit: %w", NotFoundf("no circuit")), codes.NotFound, ErrNotFound},
		{"too large", TooLarge("job", 10<<30, 8<<30), codes.ResourceExhausted, ErrResourceExhausted},
		{"plain", errors.New("disk on fire"), codes.Internal, ErrInternal},
		{"canceled", fmt.Errorf("await: %w", context.Canceled), codes.Canceled, context.Canceled},
		{"deadline", context.DeadlineExceeded, codes.DeadlineExceeded, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := ToStatus(tt.err)
			if got := status.Code(st); got != tt.code {
				t.Fatalf("code = %v, want %v", got, tt.code)
			}
			if status.Convert(st).Message() != tt.err.Error() {
				t.Errorf("message = %q, want %q", status.Convert(st).Message(), tt.err.Error())
			}
			back := FromStatus(st)
			if !errors.Is(back, tt.is) {
				t.Fatalf("FromStatus = %v (%T), does not wrap %v", back, back, tt.is)
			}
		})
	}
}

func TestResourceExhaustedKeepsNumbers(t *testing.T) {
	err := TooLarge(`job of circuit "merkle"`, 12<<30, 8<<30)
	want := `job of circuit "merkle" needs 12.0 GiB of host memory, more than the 8.0 GiB the budget can ever grant it`
	if err.Error() != want {
		t.Fatalf("message:\n got %s\nwant %s", err, want)
	}
	var re *ResourceExhaustedError
	if !errors.As(FromStatus(ToStatus(err)), &re) {
		t.Fatal("no ResourceExhaustedError after the round trip")
	}
	if re.Need != 12<<30 || re.Limit != 8<<30 || re.Error() != want {
		t.Errorf("round trip = %+v", re)
	}
}

func TestStatusWithoutDetailPassesThrough(t *testing.T) {
	// A transport failure has no ErrorDetail: the client must see it unchanged, to say
	// where it tried to connect.
	in := status.Error(codes.Unavailable, "connection refused")
	if got := FromStatus(in); got != in {
		t.Errorf("FromStatus changed a transport error: %v", got)
	}
	// A status error given to ToStatus (e.g. from a nested gRPC call) keeps its code.
	if got := ToStatus(in); status.Code(got) != codes.Unavailable {
		t.Errorf("ToStatus changed a status: %v", got)
	}
	if ToStatus(nil) != nil || FromStatus(nil) != nil {
		t.Error("nil error converted to non-nil")
	}
	plain := errors.New("x")
	if FromStatus(plain) != plain {
		t.Error("FromStatus changed a non-status error")
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 8 << 30: "8.0 GiB", 3 << 40: "3.0 TiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestNameInputFiles(t *testing.T) {
	files := []string{"a.wtns", "dir/b.wtns"}
	plain := errors.New("witness 1 is odd")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{InvalidArgumentf("witness 1 has 3 public and 0 secret values"), "witness dir/b.wtns has 3 public and 0 secret values"},
		{InvalidArgumentf("witness 0 is empty"), "witness a.wtns is empty"},
		{InvalidArgumentf("wire assignment 1 is truncated"), "wire assignment dir/b.wtns is truncated"},
		{InvalidArgumentf("witness 7 is empty"), "witness 7 is empty"}, // not one of ours: left alone
		{InvalidArgumentf("witnesses 10 is no match"), "witnesses 10 is no match"},
		{plain, "witness 1 is odd"},
	} {
		got := NameInputFiles(tc.err, files)
		if got.Error() != tc.want {
			t.Errorf("NameInputFiles(%v) = %v, want %s", tc.err, got, tc.want)
		}
		if errors.Is(tc.err, ErrInvalidArgument) && !errors.Is(got, ErrInvalidArgument) {
			t.Errorf("NameInputFiles(%v) lost the error's kind", tc.err)
		}
	}
}

// One value for "unavailable" across the client API and the backend contract
// (one type per idea): each side's errors.Is sees the other's.
func TestUnavailableIsTheSDKs(t *testing.T) {
	if !errors.Is(Unavailablef("daemon stopping"), sdk.ErrUnavailable) {
		t.Error("api's unavailable error is not sdk.ErrUnavailable")
	}
	if !errors.Is(sdk.Errorf(sdk.ErrUnavailable, "no GPU"), ErrUnavailable) {
		t.Error("the SDK's unavailable error is not api.ErrUnavailable")
	}
	if errors.Is(sdk.Errorf(sdk.ErrResourceExhausted, "full"), ErrUnavailable) {
		t.Error("a resource-exhausted error counts as unavailable")
	}
}
