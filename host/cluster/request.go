package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// requestTimeout bounds one request to NATS: a read, a write, a publish's
// acknowledgement. A request in flight when a NATS server dies, or sent in the
// moment after, gets no reply at all (the server that would have answered is
// gone; NATS does not send a request again on another route or after a
// reconnect), and the JetStream client then waits for the caller's deadline:
// an Await's is minutes, which is how a job whose every partition was
// recorded seemed never to end. Five seconds is the JetStream
// client's own default for a request without a deadline.
const requestTimeout = 5 * time.Second

// retryFor bounds how long request retries an unanswered request: long enough
// for JetStream to elect new leaders after the loss of a server (a few
// seconds), short enough that a cluster without a majority of its servers
// turns into an error the caller sees.
const retryFor = 30 * time.Second

// retryPause is the wait between two attempts of a request.
const retryPause = 250 * time.Millisecond

// request runs op, each attempt within requestTimeout, and tries again while
// the attempt got no answer or found JetStream between two leaders, for up to
// retryFor or until ctx ends. op must be safe to repeat: every write of this
// package is (a Create finds its own key, an Update on a revision finds it
// moved on, a publish carries a message id JetStream deduplicates).
//
// A request NATS refuses (a permission the user lacks) gets no answer either:
// NATS sends the refusal apart, to the connection's error handler. A request
// waiting for its answer is ended by such a refusal and returns it at once, in
// NATS's words, rather than being retried for retryFor and reported as
// unanswered (connState.attempt).
func (c *Cluster) request(ctx context.Context, op func(ctx context.Context) error) error {
	deadline := time.Now().Add(retryFor)
	for {
		err := c.conn.attempt(ctx, requestTimeout, op)
		var refused *refusedError
		if err == nil || !transient(err) || errors.As(err, &refused) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer from NATS JetStream for %v: %w", retryFor, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w)", err, ctx.Err())
		case <-time.After(retryPause):
		}
	}
}

// transient reports whether err says only that a request got no answer now:
// no reply within its time, nobody listening (no leader yet), the connection
// between two servers, or JetStream saying it is briefly unavailable.
func transient(err error) bool {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, nats.ErrTimeout),
		errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, nats.ErrConnectionReconnecting),
		errors.Is(err, jetstream.ErrNoStreamResponse),
		errors.Is(err, jetstream.ErrAsyncPublishTimeout):
		return true
	case errors.As(err, &apiErr):
		return apiErr.Code == 503 // "JetStream system temporarily unavailable"
	}
	return false
}
