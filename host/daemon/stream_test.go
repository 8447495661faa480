package daemon

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/budget"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/journal"
	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// rawStream opens a SubmitStream call on f's socket with the generated client,
// so a test can play a client that misbehaves.
func (f *fixture) rawStream(ctx context.Context) grpc.BidiStreamingClient[zkhostv1.SubmitStreamRequest, zkhostv1.SubmitStreamReply] {
	f.t.Helper()
	conn, err := grpc.NewClient("unix://"+f.cfg.API.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { conn.Close() })
	stream, err := zkhostv1.NewZkhostClient(conn).SubmitStream(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return stream
}

// journalJobs returns every job the journal holds.
func (f *fixture) journalJobs() []journal.Job {
	f.t.Helper()
	jobs, err := f.d.journal.ListJobs(journal.Filter{})
	if err != nil {
		f.t.Fatal(err)
	}
	return jobs
}

func readers(ins [][]byte) []io.Reader {
	rs := make([]io.Reader, len(ins))
	for i, in := range ins {
		rs[i] = bytes.NewReader(in)
	}
	return rs
}

func sizes(ins [][]byte) []int64 {
	ns := make([]int64, len(ins))
	for i, in := range ins {
		ns[i] = int64(len(in))
	}
	return ns
}

// TestSubmitStream: a job streamed in chunks proves and verifies like one sent
// whole, with the same request-id rules; a wrong declared size is refused after
// the header, before a byte is sent, naming the input and the size the circuit
// wants; a client that goes away mid-stream leaves no job, in the daemon or its
// journal.
func TestSubmitStream(t *testing.T) {
	f := start(t, opts{})
	ctx := testCtx(t, 3*time.Minute)
	ws := witnesses(t, small, 3, 41)
	want := circuit.InputSize(f.d.circuits[small].c, false)
	if int64(len(ws[0])) != want {
		t.Fatalf("circuit.InputSize says %d bytes, a real witness has %d", want, len(ws[0]))
	}

	t.Run("proves and verifies", func(t *testing.T) {
		h := api.SubmitHeader{Circuit: small, RequestID: "stream-1", InputSizes: sizes(ws)}
		job, err := f.c.SubmitStream(ctx, h, readers(ws))
		if err != nil {
			t.Fatal(err)
		}
		if len(job.Partitions) != len(ws) {
			t.Fatalf("job has %d partitions, want %d", len(job.Partitions), len(ws))
		}
		// The same request id and content, streamed or sent whole, is the same job.
		again, err := f.c.SubmitStream(ctx, h, readers(ws))
		if err != nil || again.ID != job.ID {
			t.Errorf("streaming request stream-1 again: job %q, %v; want job %s", again.ID, err, job.ID)
		}
		whole, err := f.c.Submit(ctx, api.SubmitRequest{Circuit: small, RequestID: "stream-1", Witnesses: ws})
		if err != nil || whole.ID != job.ID {
			t.Errorf("submitting request stream-1 whole: job %q, %v; want job %s", whole.ID, err, job.ID)
		}
		other := witnesses(t, small, 3, 42)
		_, err = f.c.SubmitStream(ctx, api.SubmitHeader{Circuit: small, RequestID: "stream-1", InputSizes: sizes(other)}, readers(other))
		checkErr(t, err, api.ErrConflict, `"stream-1"`, job.ID)
		verifyProofs(t, small, f.await(ctx, job.ID), ws)
	})

	t.Run("unary submit still proves", func(t *testing.T) {
		verifyProofs(t, small, f.await(ctx, f.submit(ctx, small, api.ClassNormal, ws[:1]).ID), ws[:1])
	})

	before := len(f.journalJobs())

	t.Run("wrong size refused after the header", func(t *testing.T) {
		aLo, aHi := circuit.InputSizeRange(f.d.circuits[small].c, true)
		for _, tc := range []struct {
			name        string
			assignments bool
			sizes       []int64
			wants       []string
		}{
			{"second witness short", false, []int64{want, want - 1}, []string{"witness 1", fmt.Sprint(want - 1), fmt.Sprint(want)}},
			{"a gigabyte", false, []int64{1 << 30}, []string{"witness 0", fmt.Sprint(1 << 30), fmt.Sprint(want)}},
			{"assignment sized as a witness", true, []int64{want}, []string{"wire assignment 0",
				fmt.Sprintf("wants %d to %d", aLo, aHi)}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				stream := f.rawStream(ctx)
				h := api.SubmitHeader{Circuit: small, Assignments: tc.assignments, InputSizes: tc.sizes}
				if err := stream.Send(&zkhostv1.SubmitStreamRequest{Header: api.SubmitHeaderProto(h)}); err != nil {
					t.Fatal(err)
				}
				// The answer comes to the header alone: no chunk was sent.
				_, err := stream.Recv()
				if status.Code(err) != codes.InvalidArgument {
					t.Fatalf("answer to the header: %v; want InvalidArgument", err)
				}
				checkErr(t, api.FromStatus(err), api.ErrInvalidArgument, tc.wants...)
			})
		}
		// Through the client, the refusal reads no input.
		unread := bytes.NewReader(ws[0])
		_, err := f.c.SubmitStream(ctx, api.SubmitHeader{Circuit: small, InputSizes: []int64{want + 1}}, []io.Reader{unread})
		checkErr(t, err, api.ErrInvalidArgument, "witness 0", fmt.Sprint(want))
		if unread.Len() != len(ws[0]) {
			t.Errorf("the client read %d bytes of an input the daemon refused", len(ws[0])-unread.Len())
		}
	})

	t.Run("client gone mid-stream leaves nothing", func(t *testing.T) {
		sctx, cancel := context.WithCancel(ctx)
		stream := f.rawStream(sctx)
		h := api.SubmitHeader{Circuit: small, RequestID: "stream-gone", InputSizes: sizes(ws)}
		if err := stream.Send(&zkhostv1.SubmitStreamRequest{Header: api.SubmitHeaderProto(h)}); err != nil {
			t.Fatal(err)
		}
		if r, err := stream.Recv(); err != nil || !r.GetReady() {
			t.Fatalf("answer to the header: %v, %v; want READY", r, err)
		}
		// The first witness whole and half the second, then the client is gone.
		for _, chunk := range [][]byte{ws[0], ws[1][:len(ws[1])/2]} {
			if err := stream.Send(&zkhostv1.SubmitStreamRequest{Chunk: chunk}); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
		// A short stream closed cleanly is refused too, naming where it stopped.
		short := f.rawStream(ctx)
		if err := short.Send(&zkhostv1.SubmitStreamRequest{Header: api.SubmitHeaderProto(h)}); err != nil {
			t.Fatal(err)
		}
		if _, err := short.Recv(); err != nil {
			t.Fatal(err)
		}
		if err := short.Send(&zkhostv1.SubmitStreamRequest{Chunk: ws[0][:50]}); err != nil {
			t.Fatal(err)
		}
		if err := short.CloseSend(); err != nil {
			t.Fatal(err)
		}
		_, err := short.Recv()
		checkErr(t, api.FromStatus(err), api.ErrInvalidArgument, "witness 0", "50 of")

		// Once the abandoned call has ended in the daemon, a full submission with
		// the same request id is a new job: the first left none behind.
		job, err := f.c.SubmitStream(ctx, h, readers(ws))
		if err != nil {
			t.Fatal(err)
		}
		jobs := f.journalJobs()
		if len(jobs) != before+1 {
			t.Errorf("the journal holds %d jobs, want %d (the abandoned streams must add none)", len(jobs), before+1)
		}
		verifyProofs(t, small, f.await(ctx, job.ID), ws)
	})

	t.Run("input counted in the budget until the stream ends", func(t *testing.T) {
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream := f.rawStream(sctx)
		h := api.SubmitHeader{Circuit: small, InputSizes: sizes(ws)}
		if err := stream.Send(&zkhostv1.SubmitStreamRequest{Header: api.SubmitHeaderProto(h)}); err != nil {
			t.Fatal(err)
		}
		if r, err := stream.Recv(); err != nil || !r.GetReady() {
			t.Fatalf("answer to the header: %v, %v; want READY", r, err)
		}
		// Reserved before READY: the bytes are counted before the first arrives.
		declared := uint64(len(ws)) * uint64(want)
		if held := streamHeld(f.d); held != declared {
			t.Errorf("at READY the budget holds %d bytes for the stream, want the %d declared", held, declared)
		}
		if err := stream.Send(&zkhostv1.SubmitStreamRequest{Chunk: ws[0]}); err != nil {
			t.Fatal(err)
		}
		st, err := f.c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Budget.UsedBytes < declared {
			t.Errorf("status shows %d bytes of the budget used while a stream holds %d", st.Budget.UsedBytes, declared)
		}
		cancel() // the client goes away mid-stream
		for streamHeld(f.d) != 0 {
			if ctx.Err() != nil {
				t.Fatalf("the client went away and the budget still holds %d bytes for its stream", streamHeld(f.d))
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// streamHeld returns the bytes d's budget holds for streamed inputs.
func streamHeld(d *Daemon) uint64 {
	var n uint64
	for _, h := range d.budget.Holdings() {
		if strings.HasPrefix(h.Owner, "streamed input of ") {
			n += h.Bytes
		}
	}
	return n
}

// TestAdmitStream: a stream may declare at most limits.stream_inputs inputs;
// its declared bytes are reserved in its class (a total the class can never
// hold is refused at once, naming the numbers), wait for room behind other
// holders, are released once however often release is called, and a wait
// ends when the daemon stops.
func TestAdmitStream(t *testing.T) {
	dctx, stopDaemon := context.WithCancel(context.Background())
	defer stopDaemon()
	d := &Daemon{
		cfg:      &config.Config{Limits: config.Limits{StreamInputs: 4}},
		budget:   budget.New(1000, 100),
		circuits: map[string]*circuitEntry{"c": {name: "c", class: api.ClassNormal}},
		ctx:      dctx,
	}
	ctx := api.WithIdentity(testCtx(t, time.Minute), api.Identity{Name: "alice"})
	header := func(class api.Class, sizes ...int64) api.SubmitHeader {
		return api.SubmitHeader{Circuit: "c", Class: class, InputSizes: sizes}
	}

	_, err := d.AdmitStream(ctx, header(api.ClassUnspecified, 1, 1, 1, 1, 1))
	checkErr(t, err, api.ErrResourceExhausted, "declares 5 witnesses", "limits.stream_inputs = 4")
	_, err = d.AdmitStream(ctx, api.SubmitHeader{Circuit: "c", Assignments: true, InputSizes: []int64{1, 1, 1, 1, 1}})
	checkErr(t, err, api.ErrResourceExhausted, "declares 5 wire assignments")
	_, err = d.AdmitStream(ctx, header(api.ClassUnspecified, 500, 401))
	checkErr(t, err, api.ErrResourceExhausted, "2 streamed witnesses take 901 B", "the 900 B the budget can ever grant class normal")
	if release, err := d.AdmitStream(ctx, header(api.ClassCritical, 500, 450)); err != nil {
		t.Errorf("a critical stream may use the reserve: %v", err)
	} else {
		release()
	}

	release, err := d.AdmitStream(ctx, header(api.ClassUnspecified, 300, 300))
	if err != nil {
		t.Fatal(err)
	}
	hs := d.budget.Holdings()
	if len(hs) != 1 || hs[0].Bytes != 600 || hs[0].Class != api.ClassNormal || hs[0].Owner != "streamed input of alice (2 witnesses of circuit c)" {
		t.Errorf("holdings %+v, want alice's stream's 600 bytes, class normal", hs)
	}
	// A second stream waits for room and gets it when the first lets go.
	second := make(chan error, 1)
	go func() {
		r, err := d.AdmitStream(ctx, header(api.ClassUnspecified, 400))
		if err == nil {
			r()
		}
		second <- err
	}()
	waitForBudgetWaiter(ctx, t, d, "the second stream")
	release()
	release() // once only: the second call gives back nothing
	if err := <-second; err != nil {
		t.Errorf("the second stream: %v", err)
	}
	if used := d.budget.Stats().Used; used != 0 {
		t.Errorf("%d bytes still used after both streams released", used)
	}

	// A wait for the budget ends when the daemon stops.
	hold, err := d.AdmitStream(ctx, header(api.ClassUnspecified, 900))
	if err != nil {
		t.Fatal(err)
	}
	defer hold()
	waiting := make(chan error, 1)
	go func() {
		_, err := d.AdmitStream(ctx, header(api.ClassUnspecified, 10))
		waiting <- err
	}()
	waitForBudgetWaiter(ctx, t, d, "the stream")
	stopDaemon()
	checkErr(t, <-waiting, api.ErrUnavailable, "stopping")
}

// waitForBudgetWaiter waits until one reservation of class normal waits for
// d's budget: what, a stream admitted in another goroutine. It fails the test
// when ctx ends first.
func waitForBudgetWaiter(ctx context.Context, t *testing.T, d *Daemon, what string) {
	t.Helper()
	for d.budget.Stats().Class(api.ClassNormal).Waiters != 1 {
		if ctx.Err() != nil {
			t.Fatal(what + " never waited for the budget")
		}
		time.Sleep(time.Millisecond)
	}
}
