package supervise

import (
	"context"
	"time"
)

// loopHooks is what runLoop needs to watch one plugin process and bring it
// back; a Supervisor supplies them. Apart from it, the loop can be tested
// without a process.
type loopHooks struct {
	Stop                    <-chan struct{} // closed to end the loop
	PollInterval            time.Duration   // how often Exited is asked
	BackoffBase, BackoffMax time.Duration   // restart delays, doubling from base, capped at max
	// Exited reports whether the current process has exited (false when there is none).
	Exited func() bool
	// OnExit records the exit, fails the calls in flight and reports whether the
	// plugin crashed too often and is out of service.
	OnExit func() (unhealthy bool)
	// WaitHealthy blocks until the crash window has passed (true) or Stop closed (false).
	WaitHealthy func() bool
	// Restart starts a new process; RestartFailed is told of each failed start and
	// the delay before the next.
	Restart       func(ctx context.Context) error
	RestartFailed func(err error, retryIn time.Duration)
}

// runLoop polls the process, and after an exit restarts it with capped
// exponential backoff (consecutive exits lengthen the first delay; a plugin out
// of service waits out its crash window, then restarts at once). It returns when
// Stop is closed.
func runLoop(s loopHooks) {
	tick := time.NewTicker(s.PollInterval)
	defer tick.Stop()
	consecutive := 0
	for {
		select {
		case <-s.Stop:
			return
		case <-tick.C:
		}
		if !s.Exited() {
			continue
		}
		consecutive++
		delay := capDelay(s.BackoffBase<<min(consecutive-1, 16), s.BackoffMax)
		if s.OnExit() {
			if !s.WaitHealthy() {
				return
			}
			consecutive, delay = 0, 0
		}
		for {
			select {
			case <-s.Stop:
				return
			case <-time.After(delay):
			}
			// A stop ends a restart in progress: a plugin stopped before it
			// answers its handshake would otherwise hold the stop for the
			// whole start timeout.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			go func() {
				select {
				case <-s.Stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			err := s.Restart(ctx)
			cancel()
			if err == nil {
				break
			}
			delay = capDelay(max(delay, s.BackoffBase)*2, s.BackoffMax)
			s.RestartFailed(err, delay)
		}
	}
}

// capDelay bounds a backoff delay by max (an overflowed shift counts as above it).
func capDelay(d, max time.Duration) time.Duration {
	if d > max || d <= 0 {
		return max
	}
	return d
}
