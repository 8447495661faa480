package daemon

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/zkhost/zkhost/host/api"
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
		for _, tc := range []struct {
			name        string
			assignments bool
			sizes       []int64
			wants       []string
		}{
			{"second witness short", false, []int64{want, want - 1}, []string{"witness 1", fmt.Sprint(want - 1), fmt.Sprint(want)}},
			{"a gigabyte", false, []int64{1 << 30}, []string{"witness 0", fmt.Sprint(1 << 30), fmt.Sprint(want)}},
			{"assignment sized as a witness", true, []int64{want}, []string{"wire assignment 0",
				fmt.Sprint(circuit.InputSize(f.d.circuits[small].c, true))}},
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
}
