package sdk

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	backendv1 "github.com/zkhost/zkhost/sdk/internal/proto/backendv1"
)

func TestParentWatch(t *testing.T) {
	tests := []struct {
		name      string
		ppids     []int // successive answers of getppid; the last repeats
		hostPID   int
		hostDead  bool
		wantDeath bool
	}{
		{"parent stays", []int{100}, 100, false, false},
		{"re-parented", []int{100, 100, 100, 1}, 0, false, true},
		{"re-parented to a subreaper", []int{100, 100, 4242}, 0, false, true},
		{"host already dead", []int{1}, 100, true, true},
		{"host unknown", []int{100}, 0, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			w := parentWatch{
				getppid: func() int {
					i := int(calls.Add(1)) - 1
					return tc.ppids[min(i, len(tc.ppids)-1)]
				},
				alive:    func(pid int) bool { return !(tc.hostDead && pid == tc.hostPID) },
				hostPID:  tc.hostPID,
				interval: time.Millisecond,
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			var deaths atomic.Int64
			done := make(chan struct{})
			go func() {
				w.run(ctx, func() { deaths.Add(1) })
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the watch did not return after its context ended")
			}
			if got := deaths.Load(); (got == 1) != tc.wantDeath || got > 1 {
				t.Errorf("onDeath called %d times, want death %v", got, tc.wantDeath)
			}
		})
	}
}

func TestProcessAlive(t *testing.T) {
	if !processAlive(1) {
		t.Error("pid 1 is not alive")
	}
	// Pids are below 2^22 on Linux.
	if processAlive(1<<30 - 1) {
		t.Error("an impossible pid is alive")
	}
}

func TestCodesRoundTrip(t *testing.T) {
	for v := range backendv1.ErrorKind_name {
		kind := backendv1.ErrorKind(v)
		want := kind
		if kind == backendv1.ErrorKind_ERROR_KIND_UNSPECIFIED {
			want = backendv1.ErrorKind_ERROR_KIND_INTERNAL
		}
		if got := kindOfCode(codeOf(kind)); got != want {
			t.Errorf("kindOfCode(codeOf(%v)) = %v, want %v", kind, got, want)
		}
		err := statusError(&backendv1.ErrorDetail{Kind: kind, Retryable: true, Message: "m"})
		st, detail := detailOf(err)
		if st.Code() != codeOf(kind) || detail.GetKind() != kind || !detail.GetRetryable() || detail.GetMessage() != "m" {
			t.Errorf("%v: status %v detail %v", kind, st, detail)
		}
	}
	if got := kindOfCode(codes.DeadlineExceeded); got != backendv1.ErrorKind_ERROR_KIND_CANCELED {
		t.Errorf("DeadlineExceeded reads as %v", got)
	}
	if _, detail := detailOf(status.Error(codes.Unavailable, "eof")); detail != nil {
		t.Errorf("a bare status has detail %v", detail)
	}
}

func TestBackendPluginWithoutImpl(t *testing.T) {
	if err := (&BackendPlugin{}).GRPCServer(nil, nil); err == nil {
		t.Error("GRPCServer with no Impl did not fail")
	}
}
