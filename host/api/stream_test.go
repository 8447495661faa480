package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
)

// openStream serves fake with cfg and opens a SubmitStream on it under ctx.
func openStream(t *testing.T, ctx context.Context, fake *apitest.Fake, cfg api.Config) grpc.BidiStreamingClient[zkhostv1.SubmitStreamRequest, zkhostv1.SubmitStreamReply] {
	t.Helper()
	srv := apitest.Serve(t, fake, cfg)
	conn, err := grpc.NewClient("unix://"+srv.SocketPath(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	stream, err := zkhostv1.NewZkhostClient(conn).SubmitStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return stream
}

// TestSubmitStreamMemory: a stream's declared bytes are admitted (reserved)
// before READY invites them, held while they arrive, and released once the
// job is created, when the client goes away, and when it stalls past the idle
// deadline, which ends the stream naming what it waited for; a stream the
// memory cannot hold is refused before READY.
func TestSubmitStreamMemory(t *testing.T) {
	header := &zkhostv1.SubmitStreamRequest{Header: &zkhostv1.SubmitHeader{Circuit: "c", InputSizes: []uint64{4, 4}}}
	chunk := func(s string) *zkhostv1.SubmitStreamRequest { return &zkhostv1.SubmitStreamRequest{Chunk: []byte(s)} }
	// ready sends the header and waits for READY.
	ready := func(t *testing.T, s grpc.BidiStreamingClient[zkhostv1.SubmitStreamRequest, zkhostv1.SubmitStreamReply]) {
		t.Helper()
		if err := s.Send(header); err != nil {
			t.Fatal(err)
		}
		if r, err := s.Recv(); err != nil || !r.GetReady() {
			t.Fatalf("after the header: %v, %v; want READY", r, err)
		}
	}
	noJobs := func(t *testing.T, fake *apitest.Fake) {
		t.Helper()
		if jobs, _ := fake.List(context.Background(), api.ListFilter{}); len(jobs) != 0 {
			t.Errorf("%d jobs created, want none", len(jobs))
		}
	}

	t.Run("held while the bytes arrive, released once the job is in", func(t *testing.T) {
		ctx := testCtx(t)
		fake := apitest.NewFake("gpu0")
		s := openStream(t, ctx, fake, api.Config{})
		ready(t, s)
		if held := fake.StreamHeld(); held != 8 {
			t.Errorf("at READY the stream holds %d bytes, want the 8 declared", held)
		}
		for _, m := range []*zkhostv1.SubmitStreamRequest{chunk("abcd"), chunk("efgh")} {
			if err := s.Send(m); err != nil {
				t.Fatal(err)
			}
		}
		s.CloseSend()
		r, err := s.Recv()
		if err != nil || r.GetJob() == nil {
			t.Fatalf("%v, %v; want a job", r, err)
		}
		if held := fake.StreamHeld(); held != 0 {
			t.Errorf("the job is in and the stream still holds %d bytes", held)
		}
	})

	t.Run("released when the client goes away", func(t *testing.T) {
		ctx := testCtx(t)
		fake := apitest.NewFake("gpu0")
		sctx, cancel := context.WithCancel(ctx)
		s := openStream(t, sctx, fake, api.Config{})
		ready(t, s)
		if err := s.Send(chunk("ab")); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := fake.WaitStreamHeld(ctx, 0); err != nil {
			t.Fatalf("the client went away and the stream still holds %d bytes", fake.StreamHeld())
		}
		noJobs(t, fake)
	})

	for _, tc := range []struct {
		name  string
		send  []*zkhostv1.SubmitStreamRequest
		ready bool
		want  string
	}{
		{"a stalled stream is ended", []*zkhostv1.SubmitStreamRequest{chunk("abcdef")}, true, "no message for 200ms while waiting for witness 1 (2 of its 4 bytes in)"},
		{"a stream stalled before its end is ended", []*zkhostv1.SubmitStreamRequest{chunk("abcdefgh")}, true, "while waiting for the end of the stream"},
		{"a stream that never sends its header is ended", nil, false, "no message for 200ms while waiting for the header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			fake := apitest.NewFake("gpu0")
			s := openStream(t, ctx, fake, api.Config{StreamIdleTimeout: 200 * time.Millisecond})
			if tc.ready {
				ready(t, s)
			}
			for _, m := range tc.send {
				if err := s.Send(m); err != nil {
					t.Fatal(err)
				}
			}
			// The client neither sends more nor ends the stream: the daemon must.
			_, err := s.Recv()
			if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(status.Convert(err).Message(), tc.want) {
				t.Fatalf("%v; want DeadlineExceeded saying %q", err, tc.want)
			}
			if err := fake.WaitStreamHeld(ctx, 0); err != nil {
				t.Fatalf("the stream was ended and still holds %d bytes", fake.StreamHeld())
			}
			noJobs(t, fake)
		})
	}

	t.Run("refused before READY when the memory cannot hold it", func(t *testing.T) {
		ctx := testCtx(t)
		fake := apitest.NewFake("gpu0")
		fake.StreamBudget = 7
		s := openStream(t, ctx, fake, api.Config{})
		if err := s.Send(header); err != nil {
			t.Fatal(err)
		}
		r, err := s.Recv()
		if status.Code(err) != codes.ResourceExhausted || r.GetReady() {
			t.Fatalf("%v, %v; want ResourceExhausted before READY", r, err)
		}
		if held := fake.StreamHeld(); held != 0 {
			t.Errorf("a refused stream holds %d bytes", held)
		}
	})
}
