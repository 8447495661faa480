package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// connState follows the host's NATS connection for Status, for the requests
// that would otherwise wait on a dead link, and for Run, which ends the host
// when the connection cannot heal.
type connState struct {
	mu sync.Mutex
	// state is "connected", "reconnecting" or "closed"; since when.
	state string
	since time.Time
	// server is the server connected to (its URL without credentials).
	server string
	// lastErr is the latest error NATS gave: why the link dropped, why a
	// reconnection failed; kept after a reconnection, for Status.
	lastErr   string
	lastErrAt time.Time
	// reconnects counts the reconnections since the host started.
	reconnects int
	// refusal is NATS's latest asynchronous refusal (a permission
	// violation) and when it came.
	refusal   error
	refusalAt time.Time
	// refusedWake is closed at the next refusal that can fail a request
	// (refusesRequests), then replaced: a request waiting for an answer NATS
	// refused stops waiting at once.
	refusedWake chan struct{}
	// failed is closed, with failure set, when the connection cannot heal:
	// it closed without Close, or its credentials changed in a way it cannot
	// follow.
	failed   chan struct{}
	failure  error
	closing  bool // Close closes the connection: not a failure
	lastWarn time.Time
}

func newConnState() *connState {
	return &connState{state: "connecting", since: time.Now(), failed: make(chan struct{})}
}

func (s *connState) connected(server string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == "reconnecting" {
		s.reconnects++
	}
	s.state, s.since, s.server = "connected", time.Now(), server
}

func (s *connState) disconnected(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == "closed" {
		return
	}
	s.state, s.since = "reconnecting", time.Now()
	if err != nil {
		s.lastErr, s.lastErrAt = err.Error(), time.Now()
	}
}

// reconnectFailed records a failed reconnection; it reports whether to log
// it (once every 10 s: a server down is retried 4 times a second).
func (s *connState) reconnectFailed(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr, s.lastErrAt = err.Error(), time.Now()
	if time.Since(s.lastWarn) < 10*time.Second {
		return false
	}
	s.lastWarn = time.Now()
	return true
}

func (s *connState) refused(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !refusesRequests(err) {
		s.lastErr, s.lastErrAt = err.Error(), time.Now()
		return
	}
	s.refusal, s.refusalAt = err, time.Now()
	s.lastErr, s.lastErrAt = err.Error(), time.Now()
	if s.refusedWake != nil {
		close(s.refusedWake)
		s.refusedWake = nil
	}
}

// refusesRequests reports whether NATS's asynchronous error can be why a
// request got no answer: a publish refused (the request itself), or the
// subscription to replies refused. A refused subscription to anything else
// (Await's wake-ups) fails no request.
func refusesRequests(err error) bool {
	e := err.Error()
	return strings.Contains(e, "Permissions Violation for Publish") || strings.Contains(e, `Subscription to "_INBOX`)
}

// nextRefusal returns a channel closed at the next refusal that can fail a
// request.
func (s *connState) nextRefusal() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refusedWake == nil {
		s.refusedWake = make(chan struct{})
	}
	return s.refusedWake
}

// attempt runs op within d and ends it as soon as NATS refuses a request,
// returning the refusal (in NATS's words, with op's error) in place of op's
// error; NATS sends a refusal apart, and the request itself is never
// answered.
func (s *connState) attempt(ctx context.Context, d time.Duration, op func(ctx context.Context) error) error {
	begun := time.Now()
	actx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	wake := s.nextRefusal()
	go func() {
		select {
		case <-wake:
			cancel()
		case <-actx.Done():
		}
	}()
	err := op(actx)
	if err == nil || ctx.Err() != nil {
		return err
	}
	if refusal := s.refusedSince(begun); refusal != nil && (transient(err) || errors.Is(err, context.Canceled)) {
		return &refusedError{refusal: refusal, err: err}
	}
	return err
}

// refusedError is a request NATS refused: its message is NATS's.
type refusedError struct{ refusal, err error }

func (e *refusedError) Error() string { return fmt.Sprintf("%v (%v)", e.refusal, e.err) }
func (e *refusedError) Unwrap() error { return e.refusal }

// refusedSince returns NATS's refusal that came at or after t, or nil.
func (s *connState) refusedSince(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refusal != nil && !s.refusalAt.Before(t) {
		return s.refusal
	}
	return nil
}

// closed records the connection's end: a failure unless Close ended it.
func (s *connState) closed(last error) {
	s.mu.Lock()
	closing := s.closing
	s.state, s.since = "closed", time.Now()
	s.mu.Unlock()
	if !closing {
		if last == nil {
			last = errors.New("no error given")
		}
		s.fatal(fmt.Errorf("the NATS connection closed and will not reconnect: %w", last))
	}
}

// fatal records why the connection cannot heal, once, and wakes Run.
func (s *connState) fatal(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failure != nil || s.closing {
		return
	}
	s.failure = err
	close(s.failed)
}

func (s *connState) close() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
}

// usable returns nil while the connection is up, or has been down for less
// than grace (a reconnection in progress, which requests ride out), and else
// why it is not: a submit then fails at once, saying so, instead of after
// every request's retries.
func (s *connState) usable(grace time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.failure != nil:
		return s.failure
	case s.state == "reconnecting" && time.Since(s.since) > grace:
		return fmt.Errorf("NATS disconnected for %v, reconnecting; last error: %s", time.Since(s.since).Round(time.Second), s.lastErr)
	}
	return nil
}

// ConnStatus is the host's NATS connection as Status shows it.
type ConnStatus struct {
	State      string    `json:"state"` // connected, reconnecting, closed
	Since      time.Time `json:"since"`
	Server     string    `json:"server,omitempty"`
	LastError  string    `json:"last_error,omitempty"`
	LastErrAt  time.Time `json:"last_error_at,omitzero"`
	Reconnects int       `json:"reconnects"`
}

func (s *connState) status() ConnStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ConnStatus{State: s.state, Since: s.since, Server: s.server, LastError: s.lastErr, LastErrAt: s.lastErrAt, Reconnects: s.reconnects}
}
