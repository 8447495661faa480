package daemon

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/host/config"
)

// witnessCounts reads the public and secret counts from a gnark full witness.
func witnessCounts(w []byte) (public, secret uint32) {
	return binary.BigEndian.Uint32(w[0:]), binary.BigEndian.Uint32(w[4:])
}

// TestBadInputs sends each bad request while a normal job is in flight: each gets
// its own clear error (or, for a witness that parses but does not satisfy the
// circuit, a failed job saying why), and the job in flight completes with valid
// proofs on its first attempts.
func TestBadInputs(t *testing.T) {
	f := start(t, opts{circuits: []string{small, big}})
	ctx := testCtx(t, 3*time.Minute)

	normalWs := witnesses(t, big, 2, 21)
	normal := f.submit(ctx, big, api.ClassNormal, normalWs)

	good := witnesses(t, small, 2, 22)
	merkleW := witnesses(t, merkle, 1, 23)[0]
	mPub, mSec := witnessCounts(merkleW)
	cPub, cSec := witnessCounts(good[0])
	// Same number of values as a chain witness, split differently.
	shifted := append([]byte(nil), good[0]...)
	binary.BigEndian.PutUint32(shifted[0:], cPub+1)
	binary.BigEndian.PutUint32(shifted[4:], cSec-1)
	truncated := good[1][:len(good[1])-5]

	cases := []struct {
		name  string
		req   api.SubmitRequest
		kind  error
		wants []string // substrings of the message
	}{
		{"unknown circuit", api.SubmitRequest{Circuit: "nope", Witnesses: good},
			api.ErrNotFound, []string{`"nope"`, small, big}},
		{"garbage witness", api.SubmitRequest{Circuit: small, Witnesses: [][]byte{[]byte("this is not a witness")}},
			api.ErrInvalidArgument, []string{"witness 0"}},
		{"short witness", api.SubmitRequest{Circuit: small, Witnesses: [][]byte{{1, 2, 3}}},
			api.ErrInvalidArgument, []string{"witness 0", "truncated"}},
		{"truncated second witness", api.SubmitRequest{Circuit: small, Witnesses: [][]byte{good[0], truncated}},
			api.ErrInvalidArgument, []string{"witness 1", fmt.Sprint(len(truncated))}},
		{"witness of another circuit", api.SubmitRequest{Circuit: small, Witnesses: [][]byte{merkleW}},
			api.ErrInvalidArgument, []string{"witness 0", fmt.Sprintf("%d public and %d secret", mPub, mSec), fmt.Sprintf("wants %d public and %d secret", cPub, cSec)}},
		{"wrong public-input count", api.SubmitRequest{Circuit: small, Witnesses: [][]byte{good[0], shifted}},
			api.ErrInvalidArgument, []string{"witness 1", fmt.Sprintf("%d public and %d secret", cPub+1, cSec-1), fmt.Sprintf("wants %d public and %d secret", cPub, cSec)}},
		{"no witness", api.SubmitRequest{Circuit: small},
			api.ErrInvalidArgument, []string{"no witness"}},
		{"empty witness", api.SubmitRequest{Circuit: small, Witnesses: [][]byte{good[0], {}}},
			api.ErrInvalidArgument, []string{"witness 1 is empty"}},
		{"unknown class", api.SubmitRequest{Circuit: small, Witnesses: good, Class: api.Class(9)},
			api.ErrInvalidArgument, []string{"priority class"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.c.Submit(ctx, tc.req)
			checkErr(t, err, tc.kind, tc.wants...)
		})
	}

	t.Run("request id", func(t *testing.T) {
		req := api.SubmitRequest{Circuit: small, Witnesses: good, RequestID: "rid-1"}
		first, err := f.c.Submit(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		// The same content (the default class spelled out) is the same job.
		same := req
		same.Class = api.ClassNormal
		for _, r := range []api.SubmitRequest{req, same} {
			again, err := f.c.Submit(ctx, r)
			if err != nil || again.ID != first.ID {
				t.Errorf("resubmitting request rid-1: job %q, %v; want job %s", again.ID, err, first.ID)
			}
		}
		otherWs, otherClass := req, req
		otherWs.Witnesses = witnesses(t, small, 2, 99)
		otherClass.Class = api.ClassLow
		for _, r := range []api.SubmitRequest{otherWs, otherClass} {
			_, err := f.c.Submit(ctx, r)
			checkErr(t, err, api.ErrConflict, `"rid-1"`, first.ID)
		}
		jobs, err := f.c.List(ctx, api.ListFilter{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, j := range jobs {
			if j.RequestID == "rid-1" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d jobs carry request id rid-1, want 1", n)
		}
		verifyProofs(t, small, f.await(ctx, first.ID), good)
	})

	t.Run("unsatisfied witness fails its job", func(t *testing.T) {
		// A chain witness with another public output parses but does not satisfy
		// the circuit: the job is accepted and fails at synthesis, once.
		bad := append([]byte(nil), good[0]...)
		bad[12+31] ^= 1 // the last byte of the first (public) value
		job := f.submit(ctx, small, api.ClassHigh, [][]byte{good[0], bad})
		final, err := f.c.Await(ctx, job.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if final.State != api.JobFailed {
			t.Fatalf("job with an unsatisfied witness is %s, want failed", final.State)
		}
		for _, s := range []string{"partition 1", "synthesis", "does not satisfy"} {
			if !strings.Contains(final.Error, s) {
				t.Errorf("job error %q does not say %q", final.Error, s)
			}
		}
		if p := final.Partitions[1]; p.State != api.PartitionFailed || p.Attempts != 0 {
			t.Errorf("partition 1: %s after %d device attempts, want failed without reaching a device", p.State, p.Attempts)
		}
	})

	t.Run("unknown job", func(t *testing.T) {
		const id = "0123456789abcdef0123456789abcdef"
		_, err := f.c.Get(ctx, id)
		checkErr(t, err, api.ErrNotFound, id)
		_, err = f.c.Cancel(ctx, id)
		checkErr(t, err, api.ErrNotFound, id)
		_, err = f.c.Await(ctx, id, nil)
		checkErr(t, err, api.ErrNotFound, id)
	})

	t.Run("keys", func(t *testing.T) {
		_, err := f.c.PreloadKey(ctx, "nope", "")
		checkErr(t, err, api.ErrNotFound, `"nope"`)
		_, err = f.c.EvictKey(ctx, small, "gpu7")
		checkErr(t, err, api.ErrNotFound, `"gpu7"`)
	})

	final := f.await(ctx, normal.ID)
	verifyProofs(t, big, final, normalWs)
	for _, p := range final.Partitions {
		if p.Attempts != 1 {
			t.Errorf("the job in flight: partition %d took %d attempts; bad inputs must not disturb it", p.Index, p.Attempts)
		}
	}
}

// checkErr fails unless err wraps kind and its message holds every want.
func checkErr(t *testing.T, err error, kind error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %v", kind)
	}
	if !errors.Is(err, kind) {
		t.Errorf("error %q is not %v", err, kind)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

// TestJobTooLargeForBudget configures a budget whose critical reserve leaves the
// other classes less than one partition: a normal job is refused at submit with the
// numbers, a critical one of the same witnesses runs, and the refusal disturbs
// nothing.
func TestJobTooLargeForBudget(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	probe := start(t, opts{})
	need := probe.d.circuits[small].partitionBytes()
	probe.shutdown()

	total := 4*need + keyBytes(t, small)
	limit := need / 2
	f := start(t, opts{budget: fmt.Sprintf("bytes = %d\ncritical_reserve = %d", total, total-limit)})
	ws := witnesses(t, small, 2, 31)
	_, err := f.c.Submit(ctx, api.SubmitRequest{Circuit: small, Witnesses: ws, Class: api.ClassNormal})
	checkErr(t, err, api.ErrResourceExhausted, small, "normal", api.FormatBytes(need), api.FormatBytes(limit))
	var re *api.ResourceExhaustedError
	if !errors.As(err, &re) || re.Need != need || re.Limit != limit {
		t.Errorf("error %#v: want need %d and limit %d in its detail", err, need, limit)
	}
	job := f.submit(ctx, small, api.ClassCritical, ws)
	verifyProofs(t, small, f.await(ctx, job.ID), ws)
}

// TestNewErrors starts daemons on broken setups: each fails in New with an error
// naming what is wrong and where, and leaves no backend process behind.
func TestNewErrors(t *testing.T) {
	emptyKeys := t.TempDir()
	cases := []struct {
		name  string
		toml  func(stateDir string) string
		wants []string
	}{
		{"missing key directory", func(s string) string {
			return strings.Replace(configText(s, opts{}), keysDir, "/nonexistent/zkhost-keys", 1)
		}, []string{small, "/nonexistent/zkhost-keys"}},
		{"no keys for the circuit", func(s string) string {
			return strings.Replace(configText(s, opts{}), keysDir, emptyKeys, 1)
		}, []string{small, emptyKeys, "zkhost keygen"}},
		{"missing backend binary", func(s string) string {
			return strings.Replace(configText(s, opts{}), backendBin, "/nonexistent/zkhost-backend-x", 1)
		}, []string{"device[0]", "/nonexistent/zkhost-backend-x"}},
		{"budget below one partition", func(s string) string {
			return configText(s, opts{budget: "bytes = \"300KiB\"\ncritical_reserve = \"0B\""})
		}, []string{small, "budget"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stateDir := apitest.ShortTempDir(t)
			cfg, err := config.Parse([]byte(tc.toml(stateDir)), filepath.Join(stateDir, "zkhost.toml"))
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			d, err := New(context.Background(), cfg, nil)
			if err == nil {
				d.Close()
				t.Fatal("New succeeded")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			apitest.WaitFor(t, 5*time.Second, "no backend process left", func() bool { return len(backendChildren(t, os.Getpid())) == 0 })
		})
	}

	t.Run("state directory in use", func(t *testing.T) {
		f := start(t, opts{})
		_, err := New(context.Background(), f.cfg, nil)
		if err == nil {
			t.Fatal("a second daemon on the same state directory started")
		}
		if !strings.Contains(err.Error(), f.cfg.Journal.Path) || !strings.Contains(err.Error(), "another zkhost") {
			t.Errorf("error %q does not name the journal and say it is in use", err)
		}
		// The first daemon is unharmed.
		ws := witnesses(t, small, 1, 41)
		ctx := testCtx(t, time.Minute)
		verifyProofs(t, small, f.await(ctx, f.submit(ctx, small, api.ClassNormal, ws).ID), ws)
	})
}

// TestBadConfig checks that config errors name the key and its line, from
// config.Parse and from `zkhost serve --config`, which refuses to start.
func TestBadConfig(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		wants []string
	}{
		{"unknown key", "[api]\nsocket = \"/tmp/x.sock\"\n\n[budget]\nbytez = \"1GiB\"\n", []string{":5:", "budget.bytez"}},
		{"bad value", "[synthesis]\nworkers = -2\n", []string{":2:", "synthesis.workers"}},
		{"wrong type", "[[circuit]]\nname = \"chain\"\nkeys = 7\n", []string{":3:", "circuit[0].keys"}},
		{"bad class", "[[circuit]]\nname = \"chain\"\nkeys = \"/k\"\nclass = \"urgent\"\n", []string{":4:", "circuit[0].class", "urgent"}},
		{"bad size", "[budget]\nbytes = \"lots\"\n", []string{":2:", "budget.bytes", "lots"}},
		{"not TOML", "log_level = \"info\"\nlog_json = = true\n", []string{":2:", "invalid TOML"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "zkhost.toml")
			_, err := config.Parse([]byte(tc.text), path)
			if err == nil {
				t.Fatal("config accepted")
			}
			for _, w := range append([]string{path}, tc.wants...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if testing.Short() {
		return
	}
	t.Run("zkhost serve refuses it", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "zkhost.toml")
		if err := os.WriteFile(path, []byte(cases[0].text), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(zkhostBin, "serve", "--config", path).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("zkhost serve with a bad config: %v\n%s", err, out)
		}
		if want := path + ":5: budget.bytez"; !strings.Contains(string(out), want) {
			t.Errorf("zkhost serve said %q; want it to name %q", out, want)
		}
	})
}

// TestNoCircuits: a daemon with no [[circuit]] and no key set in <state_dir>/keys
// starts, and a submission says what to do rather than listing nothing.
func TestNoCircuits(t *testing.T) {
	f := start(t, opts{noCircuits: true})
	ctx := testCtx(t, time.Minute)
	_, err := f.c.Submit(ctx, api.SubmitRequest{Circuit: "merkle", Witnesses: witnesses(t, small, 1, 1)})
	if !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("submit to a daemon with no circuits: %v, want not found", err)
	}
	for _, want := range []string{`"merkle"`, "serves no circuits", "[[circuit]]", filepath.Join(f.stateDir, "keys"), "restart"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
