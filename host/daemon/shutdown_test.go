package daemon

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
)

// followUntil follows job id in the background and returns a channel closed at the
// first event for which stop returns true, and one that receives Await's result.
func followUntil(ctx context.Context, f *fixture, id string, stop func(api.JobEvent) bool) (<-chan struct{}, <-chan error) {
	reached := make(chan struct{})
	errc := make(chan error, 1)
	var once sync.Once
	go func() {
		_, err := f.c.Await(ctx, id, func(e api.JobEvent) error {
			if stop(e) {
				once.Do(func() { close(reached) })
			}
			return nil
		})
		errc <- err
	}()
	return reached, errc
}

// TestAwaitEndsWhenDaemonStops stops the daemon while a client follows a job: the
// follower's Await ends at once with an error saying the daemon is stopping,
// rather than waiting for events that will never come.
func TestAwaitEndsWhenDaemonStops(t *testing.T) {
	f := start(t, opts{circuits: []string{big}})
	ctx := testCtx(t, time.Minute)
	job := f.submit(ctx, big, api.ClassNormal, witnesses(t, big, 2, 61))
	proving, errc := followUntil(ctx, f, job.ID, func(e api.JobEvent) bool { return reached(e, 0, api.PartitionProving) })
	<-proving
	f.stop() // the daemon's Run context; the API stays up
	select {
	case err := <-errc:
		checkErr(t, err, api.ErrUnavailable, "stopping")
	case <-time.After(10 * time.Second):
		t.Fatal("Await still waits 10s after the daemon stopped")
	}
}

// TestCallsAfterClose calls every API method of a daemon that has stopped while its
// API still listens (as `zkhost serve` does between stopping the daemon and closing
// the socket): each gets an "unavailable" error; nothing crashes.
func TestCallsAfterClose(t *testing.T) {
	f := start(t, opts{})
	ctx := testCtx(t, time.Minute)
	ws := witnesses(t, small, 1, 62)
	done := f.submit(ctx, small, api.ClassNormal, ws)
	f.await(ctx, done.ID)
	f.stop()
	select {
	case <-f.runDone:
		f.runDone <- nil // for the fixture's shutdown
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
	f.d.Close() // a second Close is harmless

	calls := map[string]func() error{
		"Submit": func() error {
			_, err := f.c.Submit(ctx, api.SubmitRequest{Circuit: small, Witnesses: ws})
			return err
		},
		"Get":     func() error { _, err := f.c.Get(ctx, done.ID); return err },
		"Cancel":  func() error { _, err := f.c.Cancel(ctx, done.ID); return err },
		"List":    func() error { _, err := f.c.List(ctx, api.ListFilter{}); return err },
		"Status":  func() error { _, err := f.c.Status(ctx); return err },
		"Await":   func() error { _, err := f.c.Await(ctx, done.ID, nil); return err },
		"Preload": func() error { _, err := f.c.PreloadKey(ctx, small, ""); return err },
		"Evict":   func() error { _, err := f.c.EvictKey(ctx, small, ""); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, api.ErrUnavailable) || !strings.Contains(err.Error(), "stopping") {
			t.Errorf("%s on a stopped daemon: %v; want unavailable, the daemon is stopping", name, err)
		}
	}
}

// TestShutdownDuringRetryBackoff kills the backend in the middle of a proof, so the
// partition waits out its retry backoff, and stops the daemon during that wait:
// the stop does not wait for the backoff, nothing runs after it (a retry timer
// firing into a closed daemon used to crash the process), and a restarted daemon
// proves the partition.
func TestShutdownDuringRetryBackoff(t *testing.T) {
	const backoff = 2 * time.Second
	o := opts{circuits: []string{big}, retry: "backoff_base = \"2s\"\nbackoff_max = \"2s\""}
	f := start(t, o)
	ctx := testCtx(t, 2*time.Minute)
	ws := witnesses(t, big, 1, 63)
	job := f.submit(ctx, big, api.ClassNormal, ws)

	fctx, stopFollowing := context.WithCancel(ctx)
	proving, _ := followUntil(fctx, f, job.ID, func(e api.JobEvent) bool { return reached(e, 0, api.PartitionProving) })
	<-proving
	stopFollowing()
	time.Sleep(100 * time.Millisecond)
	f.d.devices[0].dev.Kill()
	apitest.WaitFor(t, 10*time.Second, "the failed attempt to be recorded", func() bool {
		j, err := f.c.Get(ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		return j.Partitions[0].State == api.PartitionQueued && j.Partitions[0].Error != ""
	})

	stopAt := time.Now()
	f.shutdown()
	if took := time.Since(stopAt); took > backoff {
		t.Errorf("stopping took %s, longer than the retry backoff (%s) it should not wait for", took, backoff)
	}
	time.Sleep(backoff + 500*time.Millisecond) // a stray retry timer would fire now

	f2 := start(t, opts{circuits: []string{big}, stateDir: f.stateDir})
	final := f2.await(ctx, job.ID)
	verifyProofs(t, big, final, ws)
}
