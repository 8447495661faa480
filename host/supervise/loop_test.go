package supervise

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestStopEndsRestart stops supervision while a restart waits (a plugin that
// never answers its handshake): the restart's context must end with the stop,
// so the loop returns at once rather than after the restart's own timeout.
func TestStopEndsRestart(t *testing.T) {
	stop := make(chan struct{})
	restarting := make(chan struct{})
	restartErr := make(chan error, 1)
	exited := true
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		runLoop(loopHooks{
			Stop: stop, PollInterval: 10 * time.Millisecond,
			BackoffBase: time.Millisecond, BackoffMax: time.Millisecond,
			Exited:      func() bool { e := exited; exited = false; return e },
			OnExit:      func() bool { return false },
			WaitHealthy: func() bool { return true },
			Restart: func(ctx context.Context) error {
				close(restarting)
				<-ctx.Done()
				restartErr <- ctx.Err()
				return ctx.Err()
			},
			RestartFailed: func(error, time.Duration) {},
		})
	}()
	select {
	case <-restarting:
	case <-time.After(time.Minute):
		t.Fatal("the loop never restarted the exited process")
	}
	close(stop)
	// Well below the restart's own minute, generous for a loaded machine.
	select {
	case <-loopDone:
	case <-time.After(30 * time.Second):
		t.Fatal("the loop did not return within 30s of its stop while a restart waited")
	}
	if err := <-restartErr; !errors.Is(err, context.Canceled) {
		t.Errorf("the restart's context ended with %v, want context.Canceled", err)
	}
}
