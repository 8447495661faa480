package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/host/client"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, addr string, opts client.Options) *client.Client {
	t.Helper()
	c, err := client.Dial(addr, opts)
	if err != nil {
		t.Fatalf("Dial(%s): %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// serveAndDial serves svc on a unix socket and dials it with opts.
func serveAndDial(t *testing.T, svc api.Service, opts client.Options) *client.Client {
	t.Helper()
	return dial(t, apitest.Serve(t, svc, api.Config{}).SocketPath(), opts)
}

func TestParseAddress(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	wd, _ := os.Getwd()
	tests := []struct {
		addr, target string
		unix         bool
		err          string
	}{
		{"", "/state/zkhost/zkhost.sock", true, ""},
		{"unix:///run/zkhost.sock", "/run/zkhost.sock", true, ""},
		{"unix:rel.sock", filepath.Join(wd, "rel.sock"), true, ""},
		{"/run/zkhost.sock", "/run/zkhost.sock", true, ""},
		{"./z.sock", filepath.Join(wd, "z.sock"), true, ""},
		{"zk.sock", filepath.Join(wd, "zk.sock"), true, ""},
		{"prover1:7443", "prover1:7443", false, ""},
		{"[::1]:7443", "[::1]:7443", false, ""},
		{"unix://", "", false, "names no socket path"},
		{"prover1", "", false, "neither a socket path nor host:port"},
	}
	for _, tt := range tests {
		target, unix, err := client.ParseAddress(tt.addr)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseAddress(%q) error = %v, want %q", tt.addr, err, tt.err)
			}
			continue
		}
		if err != nil || target != tt.target || unix != tt.unix {
			t.Errorf("ParseAddress(%q) = %q, %v, %v; want %q, %v", tt.addr, target, unix, err, tt.target, tt.unix)
		}
	}
}

func TestDialNoDaemon(t *testing.T) {
	dir := apitest.ShortTempDir(t)
	missing := filepath.Join(dir, "zkhost.sock")
	_, err := client.Dial(missing, client.Options{})
	want := "no zkhost daemon at " + missing + ": no such socket — is `zkhost serve` running?"
	if err == nil || err.Error() != want || !errors.Is(err, api.ErrUnavailable) {
		t.Fatalf("Dial(missing) = %v\nwant %s", err, want)
	}

	// A socket file nobody listens on: a daemon that died.
	stale := filepath.Join(dir, "stale.sock")
	apitest.StaleSocket(t, stale)
	_, err = client.Dial("unix://"+stale, client.Options{})
	if err == nil || !strings.Contains(err.Error(), "no zkhost daemon at "+stale+": connection refused") {
		t.Fatalf("Dial(stale) = %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := testCtx(t)
	fake := apitest.NewFake("gpu0", "gpu1")
	fake.Circuits = map[string]bool{"merkle": true}
	fake.BudgetLimit = 1000
	fake.Report.SynthesisCapacity = 4
	fake.Report.Budget = api.BudgetStatus{UsedBytes: 10, TotalBytes: 1000, CriticalReserveBytes: 100}
	srv := apitest.Serve(t, fake, api.Config{})
	c := dial(t, srv.SocketPath(), client.Options{})
	if c.Target() != srv.SocketPath() {
		t.Errorf("Target = %s", c.Target())
	}

	req := api.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{[]byte("w0"), []byte("w1"), []byte("w2")}, Class: api.ClassHigh, RequestID: "req-1"}
	job, err := c.Submit(ctx, req)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if job.Class != api.ClassHigh || job.State != api.JobQueued || len(job.Partitions) != 3 || job.RequestID != "req-1" {
		t.Fatalf("Submit = %+v", job)
	}
	if again, err := c.Submit(ctx, req); err != nil || again.ID != job.ID {
		t.Fatalf("idempotent resubmit = %v, %v", again.ID, err)
	}
	other := req
	other.Witnesses = [][]byte{[]byte("x")}
	if _, err := c.Submit(ctx, other); !errors.Is(err, api.ErrConflict) || !strings.Contains(err.Error(), "req-1") {
		t.Errorf("reused request id = %v, want ErrConflict naming it", err)
	}
	_, err = c.Submit(ctx, api.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{make([]byte, 1001)}})
	var re *api.ResourceExhaustedError
	if !errors.As(err, &re) || re.Need != 1001 || re.Limit != 1000 {
		t.Errorf("too large = %v, want ResourceExhaustedError 1001/1000", err)
	}
	if _, err := c.Submit(ctx, api.SubmitRequest{Circuit: "sha", Witnesses: [][]byte{{1}}}); !errors.Is(err, api.ErrInvalidArgument) {
		t.Errorf("unknown circuit = %v", err)
	}
	// Caught in the client, before anything travels.
	if _, err := c.Submit(ctx, api.SubmitRequest{Circuit: "merkle"}); !errors.Is(err, api.ErrInvalidArgument) {
		t.Errorf("no witness = %v", err)
	}

	if err := fake.Finish(job.ID, "gpu1"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, job.ID)
	if err != nil || got.State != api.JobDone || got.Count(api.PartitionVerified) != 3 {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	for _, p := range got.Partitions {
		if !strings.HasPrefix(string(p.Proof), "proof:") || p.Device != "gpu1" || p.VerifiedAt.IsZero() {
			t.Errorf("partition %d = %+v", p.Index, p)
		}
	}
	if _, err := c.Get(ctx, "job-404"); !errors.Is(err, api.ErrNotFound) || !strings.Contains(err.Error(), "job-404") {
		t.Errorf("Get(unknown) = %v", err)
	}

	second, err := c.Submit(ctx, api.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{{1}}})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := c.Cancel(ctx, second.ID); err != nil || j.State != api.JobCancelled {
		t.Errorf("Cancel = %+v, %v", j, err)
	}
	jobs, err := c.List(ctx, api.ListFilter{})
	if err != nil || len(jobs) != 2 || jobs[0].ID != second.ID || jobs[1].Partitions[0].Proof != nil {
		t.Errorf("List = %+v, %v", jobs, err)
	}
	if jobs, err := c.List(ctx, api.ListFilter{State: api.JobDone, Limit: 5}); err != nil || len(jobs) != 1 || jobs[0].ID != job.ID {
		t.Errorf("List(done) = %+v, %v", jobs, err)
	}

	if devs, err := c.PreloadKey(ctx, "merkle", ""); err != nil || strings.Join(devs, ",") != "gpu0,gpu1" {
		t.Errorf("PreloadKey = %v, %v", devs, err)
	}
	if devs, err := c.EvictKey(ctx, "merkle", "gpu0"); err != nil || strings.Join(devs, ",") != "gpu0" {
		t.Errorf("EvictKey = %v, %v", devs, err)
	}
	if _, err := c.EvictKey(ctx, "merkle", "gpu7"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("EvictKey(unknown device) = %v", err)
	}
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.SynthesisCapacity != 4 || st.Budget.TotalBytes != 1000 || len(st.Devices) != 2 ||
		len(st.Devices[0].KeysResident) != 0 || st.Devices[1].KeysResident[0] != "merkle" {
		t.Errorf("Status = %+v", st)
	}
}

func TestAwait(t *testing.T) {
	ctx := testCtx(t)
	fake := apitest.NewFake("gpu0")
	c := serveAndDial(t, fake, client.Options{})
	job, err := c.Submit(ctx, api.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{[]byte("a"), []byte("b")}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := fake.WaitSubscribers(ctx, job.ID, 1); err != nil {
			return
		}
		fake.Advance(job.ID, 1, api.EventPartitionProving, "gpu0", "")
		fake.Advance(job.ID, 1, api.EventPartitionRetried, "gpu0", "backend restarted")
		fake.Finish(job.ID, "gpu0")
	}()
	var kinds []string
	final, err := c.Await(ctx, job.ID, func(e api.JobEvent) error {
		if e.JobID != job.ID {
			t.Errorf("event of job %s", e.JobID)
		}
		kinds = append(kinds, e.Kind.String())
		return nil
	})
	if err != nil {
		t.Fatalf("Await: %v", err)
	}
	want := "snapshot proving retried synthesizing proving verified synthesizing proving verified job_done"
	if strings.Join(kinds, " ") != want {
		t.Errorf("events:\n got %s\nwant %s", strings.Join(kinds, " "), want)
	}
	if final.State != api.JobDone || len(final.Partitions[1].Proof) == 0 || final.Partitions[1].Attempts != 2 {
		t.Errorf("final job = %+v", final)
	}

	// A job that already ended: the snapshot, then the terminal event at once.
	kinds = nil
	if _, err := c.Await(ctx, job.ID, func(e api.JobEvent) error { kinds = append(kinds, e.Kind.String()); return nil }); err != nil ||
		strings.Join(kinds, " ") != "snapshot job_done" {
		t.Errorf("Await(ended) = %v, %v", kinds, err)
	}
	if _, err := c.Await(ctx, "nope", nil); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Await(unknown) = %v", err)
	}
}

func TestAwaitStops(t *testing.T) {
	ctx := testCtx(t)
	fake := apitest.NewFake("gpu0")
	c := serveAndDial(t, fake, client.Options{})
	job, err := c.Submit(ctx, api.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{[]byte("a")}})
	if err != nil {
		t.Fatal(err)
	}

	// The callback's error ends the Await, and the daemon's side of it.
	boom := errors.New("disk full")
	if _, err := c.Await(ctx, job.ID, func(api.JobEvent) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Await with failing callback = %v", err)
	}
	if err := fake.WaitAwaitCancelled(ctx, 1); err != nil {
		t.Fatalf("the daemon's Await did not end: %v", err)
	}

	// Cancelling the context does the same, and says so.
	actx, cancel := context.WithCancel(ctx)
	go func() {
		fake.WaitSubscribers(ctx, job.ID, 1)
		cancel()
	}()
	if _, err := c.Await(actx, job.ID, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Await after cancel = %v, want context.Canceled", err)
	}
	if err := fake.WaitAwaitCancelled(ctx, 2); err != nil {
		t.Fatalf("the daemon's Await did not end: %v", err)
	}
}

func TestDaemonGoesAway(t *testing.T) {
	ctx := testCtx(t)
	fake := apitest.NewFake()
	srv := apitest.ServeUntilStopped(t, fake)
	path := srv.SocketPath()
	c := dial(t, path, client.Options{})
	job, err := c.Submit(ctx, api.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{[]byte("a")}})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.Await(ctx, job.ID, nil)
		errc <- err
	}()
	if err := fake.WaitSubscribers(ctx, job.ID, 1); err != nil {
		t.Fatal(err)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	srv.Stop(stopCtx)
	err = <-errc
	if !errors.Is(err, api.ErrUnavailable) || !strings.Contains(err.Error(), path) {
		t.Errorf("Await when the daemon stops = %v, want ErrUnavailable naming %s", err, path)
	}
	_, err = c.Status(ctx)
	if !errors.Is(err, api.ErrUnavailable) || !strings.Contains(err.Error(), "no zkhost daemon at "+path) ||
		!strings.Contains(err.Error(), "is `zkhost serve` running?") {
		t.Errorf("Status after the daemon stopped = %v", err)
	}
}

func TestTCP(t *testing.T) {
	ctx := testCtx(t)
	const token = "tcp-token-0123456789abcdef"
	srv, certFile, tokenFile := apitest.ServeTCP(t, apitest.NewFake("gpu0"), token)
	addr := srv.TCPAddr().String()

	c := dial(t, addr, client.Options{CAFile: certFile, TokenFile: tokenFile})
	if _, err := c.Status(ctx); err != nil {
		t.Fatalf("Status over TCP: %v", err)
	}
	wrong := dial(t, addr, client.Options{CAFile: certFile, Token: token + "-not"})
	if _, err := wrong.Status(ctx); !errors.Is(err, api.ErrUnauthenticated) {
		t.Errorf("Status with a wrong token = %v, want ErrUnauthenticated", err)
	}
	// The certificate is not trusted without the CA.
	untrusted := dial(t, addr, client.Options{Token: token})
	if _, err := untrusted.Status(ctx); err == nil {
		t.Error("Status succeeded against an untrusted certificate")
	}
	if _, err := client.Dial(addr, client.Options{CAFile: certFile}); err == nil || !strings.Contains(err.Error(), "requires a bearer token") {
		t.Errorf("Dial TCP without a token = %v", err)
	}
	if _, err := client.Dial(addr, client.Options{CAFile: tokenFile, Token: token}); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("Dial with a bad CA file = %v", err)
	}
}

// TestSubmitStreamPassesMessageLimit: with a 2 MiB message limit, a job of two
// 3 MiB inputs cannot travel in one Submit, and travels whole, in order, with
// SubmitStream; an input shorter than declared abandons the call, leaving no job.
func TestSubmitStreamPassesMessageLimit(t *testing.T) {
	ctx := testCtx(t)
	fake := apitest.NewFake("gpu0")
	const size = 3 << 20
	fake.InputSize = size
	c := serveAndDial(t, fake, client.Options{MaxMessageBytes: 2 << 20})
	ins := [][]byte{bytes.Repeat([]byte{1}, size), bytes.Repeat([]byte{2}, size)}

	if _, err := c.Submit(ctx, api.SubmitRequest{Circuit: "c", Witnesses: ins}); err == nil {
		t.Fatal("a 6 MiB Submit passed a 2 MiB message limit")
	}
	h := api.SubmitHeader{Circuit: "c", InputSizes: []int64{size, size}}
	job, err := c.SubmitStream(ctx, h, []io.Reader{bytes.NewReader(ins[0]), bytes.NewReader(ins[1])})
	if err != nil {
		t.Fatal(err)
	}
	req, ok := fake.Request(job.ID)
	if !ok || len(req.Witnesses) != 2 || !bytes.Equal(req.Witnesses[0], ins[0]) || !bytes.Equal(req.Witnesses[1], ins[1]) {
		t.Fatal("the daemon did not get both inputs whole and in order")
	}

	_, err = c.SubmitStream(ctx, h, []io.Reader{bytes.NewReader(ins[0]), bytes.NewReader(ins[1][:size-1])})
	if err == nil || !strings.Contains(err.Error(), "witness 1 holds 3145727 bytes") {
		t.Errorf("a short input: %v; want an error naming witness 1 and its size", err)
	}
	jobs, err := c.List(ctx, api.ListFilter{})
	if err != nil || len(jobs) != 1 {
		t.Errorf("after an abandoned stream the daemon lists %d jobs (%v), want 1", len(jobs), err)
	}
}
