package api_test

import (
	"context"
	"errors"
	"io"
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

// rawClient serves svc on a unix socket and returns a generated client for it, so these
// tests see exactly what travels (host/client has its own tests).
func rawClient(t *testing.T, svc api.Service) zkhostv1.ZkhostClient {
	t.Helper()
	srv := apitest.Serve(t, svc, api.Config{})
	conn, err := grpc.NewClient("unix://"+srv.SocketPath(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return zkhostv1.NewZkhostClient(conn)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func detailOf(err error) *zkhostv1.ErrorDetail {
	for _, d := range status.Convert(err).Details() {
		if ed, ok := d.(*zkhostv1.ErrorDetail); ok {
			return ed
		}
	}
	return nil
}

func TestServerRoundTrips(t *testing.T) {
	ctx := testCtx(t)
	fake := apitest.NewFake("gpu0", "gpu1")
	c := rawClient(t, fake)

	job, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{[]byte("w0"), []byte("w1")}, RequestId: "r1"})
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if job.GetId() == "" || len(job.GetPartitions()) != 2 || job.GetState() != zkhostv1.JobState_JOB_STATE_QUEUED {
		t.Fatalf("Submit returned %v", job)
	}
	// An unspecified class reaches the service as normal.
	if job.GetClass() != zkhostv1.PriorityClass_PRIORITY_CLASS_NORMAL {
		t.Errorf("class = %v, want NORMAL", job.GetClass())
	}
	// Same request id, same content: the same job.
	again, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{[]byte("w0"), []byte("w1")}, RequestId: "r1"})
	if err != nil || again.GetId() != job.GetId() {
		t.Fatalf("resubmit = %v, %v; want job %s", again.GetId(), err, job.GetId())
	}

	if err := fake.Finish(job.GetId(), "gpu1"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, &zkhostv1.GetRequest{JobId: job.GetId()})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.GetState() != zkhostv1.JobState_JOB_STATE_DONE {
		t.Fatalf("Get state = %v", got.GetState())
	}
	for i, p := range got.GetPartitions() {
		if len(p.GetProof()) == 0 || len(p.GetPublicWitness()) == 0 || p.GetDevice() != "gpu1" || p.GetAttempts() != 1 {
			t.Errorf("partition %d of a done job: %v", i, p)
		}
	}

	// List never carries proof bytes, even when the service returns them.
	list, err := c.List(ctx, &zkhostv1.ListRequest{})
	if err != nil || len(list.GetJobs()) != 1 {
		t.Fatalf("List = %v, %v", list, err)
	}
	for _, p := range list.GetJobs()[0].GetPartitions() {
		if p.GetProof() != nil || p.GetPublicWitness() != nil {
			t.Error("List returned proof bytes")
		}
	}
	list, err = c.List(ctx, &zkhostv1.ListRequest{State: zkhostv1.JobState_JOB_STATE_RUNNING})
	if err != nil || len(list.GetJobs()) != 0 {
		t.Fatalf("List(running) = %v, %v", list, err)
	}

	second, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{[]byte("w")}, Class: zkhostv1.PriorityClass_PRIORITY_CLASS_LOW})
	if err != nil {
		t.Fatal(err)
	}
	cancelled, err := c.Cancel(ctx, &zkhostv1.CancelRequest{JobId: second.GetId()})
	if err != nil || cancelled.GetState() != zkhostv1.JobState_JOB_STATE_CANCELLED {
		t.Fatalf("Cancel = %v, %v", cancelled, err)
	}

	devs, err := c.PreloadKey(ctx, &zkhostv1.KeyRequest{Circuit: "merkle"})
	if err != nil || strings.Join(devs.GetDevices(), ",") != "gpu0,gpu1" {
		t.Fatalf("PreloadKey = %v, %v", devs, err)
	}
	if _, err := c.EvictKey(ctx, &zkhostv1.KeyRequest{Circuit: "merkle", Device: "gpu0"}); err != nil {
		t.Fatalf("EvictKey: %v", err)
	}
	st, err := c.Status(ctx, &zkhostv1.StatusRequest{})
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if len(st.GetDevices()) != 2 || len(st.GetDevices()[0].GetKeysResident()) != 0 ||
		strings.Join(st.GetDevices()[1].GetKeysResident(), ",") != "merkle" {
		t.Errorf("Status devices = %v", st.GetDevices())
	}
	if len(st.GetQueues()) != 4 || st.GetQueues()[0].GetClass() != zkhostv1.PriorityClass_PRIORITY_CLASS_CRITICAL {
		t.Errorf("Status queues = %v", st.GetQueues())
	}
}

func TestServerErrorCodes(t *testing.T) {
	ctx := testCtx(t)
	fake := apitest.NewFake("gpu0")
	fake.Circuits = map[string]bool{"merkle": true}
	fake.BudgetLimit = 100
	c := rawClient(t, fake)
	if _, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{{1}}, RequestId: "r"}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		call func() error
		code codes.Code
		kind string
		msg  string
	}{
		{"get unknown", func() error { _, err := c.Get(ctx, &zkhostv1.GetRequest{JobId: "nope"}); return err },
			codes.NotFound, "not_found", `no job "nope"`},
		{"get empty id", func() error { _, err := c.Get(ctx, &zkhostv1.GetRequest{}); return err },
			codes.InvalidArgument, "invalid_argument", "job id is empty"},
		{"cancel unknown", func() error { _, err := c.Cancel(ctx, &zkhostv1.CancelRequest{JobId: "nope"}); return err },
			codes.NotFound, "not_found", "nope"},
		{"submit no witness", func() error {
			_, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "merkle"})
			return err
		}, codes.InvalidArgument, "invalid_argument", "no witness"},
		{"submit bad class", func() error {
			_, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{{1}}, Class: 42})
			return err
		}, codes.InvalidArgument, "invalid_argument", "unknown priority class 42"},
		{"submit unknown circuit", func() error {
			_, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "sha", Witnesses: [][]byte{{1}}})
			return err
		}, codes.InvalidArgument, "invalid_argument", `unknown circuit "sha"`},
		{"submit reused id", func() error {
			_, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{{2}}, RequestId: "r"})
			return err
		}, codes.AlreadyExists, "conflict", `request id "r" was used for job job-1 with different content`},
		{"submit too large", func() error {
			_, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{make([]byte, 101)}})
			return err
		}, codes.ResourceExhausted, "resource_exhausted", "needs 101 B of host memory, more than the 100 B"},
		{"list bad state", func() error { _, err := c.List(ctx, &zkhostv1.ListRequest{State: 99}); return err },
			codes.InvalidArgument, "invalid_argument", "unknown job state 99"},
		{"list huge limit", func() error { _, err := c.List(ctx, &zkhostv1.ListRequest{Limit: api.MaxListLimit + 1}); return err },
			codes.InvalidArgument, "invalid_argument", "limit"},
		{"preload no circuit", func() error { _, err := c.PreloadKey(ctx, &zkhostv1.KeyRequest{}); return err },
			codes.InvalidArgument, "invalid_argument", "circuit name is empty"},
		{"evict unknown device", func() error {
			_, err := c.EvictKey(ctx, &zkhostv1.KeyRequest{Circuit: "merkle", Device: "gpu9"})
			return err
		}, codes.NotFound, "not_found", `no device "gpu9"`},
		{"await unknown", func() error {
			s, err := c.Await(ctx, &zkhostv1.AwaitRequest{JobId: "nope"})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}, codes.NotFound, "not_found", "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if status.Code(err) != tt.code {
				t.Fatalf("code = %v (%v), want %v", status.Code(err), err, tt.code)
			}
			if d := detailOf(err); d == nil || d.GetKind() != tt.kind {
				t.Errorf("detail = %v, want kind %q", d, tt.kind)
			}
			if !strings.Contains(status.Convert(err).Message(), tt.msg) {
				t.Errorf("message %q does not contain %q", status.Convert(err).Message(), tt.msg)
			}
		})
	}
	_, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{make([]byte, 101)}})
	if d := detailOf(err); d.GetNeedBytes() != 101 || d.GetLimitBytes() != 100 {
		t.Errorf("resource detail = %v, want need 101 limit 100", d)
	}
}

func TestServerAwaitStreams(t *testing.T) {
	ctx := testCtx(t)
	fake := apitest.NewFake("gpu0")
	c := rawClient(t, fake)
	job, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{[]byte("a"), []byte("b")}})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.Await(ctx, &zkhostv1.AwaitRequest{JobId: job.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil || first.GetKind() != zkhostv1.EventKind_EVENT_KIND_SNAPSHOT || len(first.GetJob().GetPartitions()) != 2 {
		t.Fatalf("first event = %v, %v; want a snapshot of 2 partitions", first, err)
	}
	if err := fake.WaitSubscribers(ctx, job.GetId(), 1); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		part   int
		kind   api.EventKind
		reason string
	}{
		{0, api.EventPartitionSynthesizing, ""},
		{0, api.EventPartitionProving, ""},
		{0, api.EventPartitionRetried, "backend exited: signal: killed"},
		{0, api.EventPartitionProving, ""},
		{0, api.EventPartitionVerified, ""},
		{1, api.EventPartitionFailed, "synthesis: constraint #7 is not satisfied"},
	}
	for _, s := range steps {
		if err := fake.Advance(job.GetId(), s.part, s.kind, "gpu0", s.reason); err != nil {
			t.Fatal(err)
		}
	}
	if err := fake.Fail(job.GetId(), "partition 1 failed"); err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		e, err := stream.Recv()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if api.EventKind(e.GetKind()) != s.kind || int(e.GetPartition()) != s.part || e.GetReason() != s.reason {
			t.Errorf("event %d = %v, want %v of partition %d (%q)", i, e, s.kind, s.part, s.reason)
		}
	}
	if e, _ := stream.Recv(); e.GetKind() != zkhostv1.EventKind_EVENT_KIND_JOB_FAILED {
		t.Fatalf("terminal event = %v", e)
	} else if e.GetJob().GetState() != zkhostv1.JobState_JOB_STATE_FAILED || e.GetJob().GetError() != "partition 1 failed" {
		t.Errorf("terminal job = %v", e.GetJob())
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("after the terminal event: %v, want EOF", err)
	}
}

func TestServerAwaitClientCancel(t *testing.T) {
	ctx := testCtx(t)
	fake := apitest.NewFake("gpu0")
	c := rawClient(t, fake)
	job, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{[]byte("a")}})
	if err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithCancel(ctx)
	stream, err := c.Await(actx, &zkhostv1.AwaitRequest{JobId: job.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitSubscribers(ctx, job.GetId(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	// The service's Await must see the client go away and return.
	if err := fake.WaitAwaitCancelled(ctx, 1); err != nil {
		t.Fatalf("the service's Await did not end after the client cancelled: %v", err)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("Recv after cancel = %v, want Canceled", err)
	}
}

// panicky is a Service whose Status panics, standing in for a daemon bug.
type panicky struct{ *apitest.Fake }

func (panicky) Status(context.Context) (api.StatusReport, error) { panic("nil map") }

func TestServerSurvivesPanic(t *testing.T) {
	ctx := testCtx(t)
	c := rawClient(t, panicky{apitest.NewFake()})
	_, err := c.Status(ctx, &zkhostv1.StatusRequest{})
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "Status") {
		t.Fatalf("Status = %v, want Internal naming the method", err)
	}
	// The server still answers.
	if _, err := c.List(ctx, &zkhostv1.ListRequest{}); err != nil {
		t.Fatalf("List after a panic: %v", err)
	}
}

// TestSubmitStreamProtocol: a SubmitStream that breaks the protocol is refused
// with InvalidArgument saying how, and creates no job; one that keeps it
// creates the job, chunks split across inputs as they come.
func TestSubmitStreamProtocol(t *testing.T) {
	header := func(sizes ...uint64) *zkhostv1.SubmitStreamRequest {
		return &zkhostv1.SubmitStreamRequest{Header: &zkhostv1.SubmitHeader{Circuit: "c", InputSizes: sizes}}
	}
	chunk := func(s string) *zkhostv1.SubmitStreamRequest {
		return &zkhostv1.SubmitStreamRequest{Chunk: []byte(s)}
	}
	for _, tc := range []struct {
		name string
		msgs []*zkhostv1.SubmitStreamRequest
		want string // empty: a job is created
	}{
		{"two inputs in one chunk", []*zkhostv1.SubmitStreamRequest{header(3, 2), chunk("abcde")}, ""},
		{"one input in two chunks", []*zkhostv1.SubmitStreamRequest{header(5), chunk("ab"), chunk("cde")}, ""},
		{"no header", []*zkhostv1.SubmitStreamRequest{chunk("abc")}, "carries the header and no bytes"},
		{"header with bytes", []*zkhostv1.SubmitStreamRequest{{Header: header(3).Header, Chunk: []byte("abc")}}, "carries the header and no bytes"},
		{"no input", []*zkhostv1.SubmitStreamRequest{header()}, "no witness"},
		{"an empty input", []*zkhostv1.SubmitStreamRequest{header(3, 0)}, "witness 1 is empty"},
		{"an impossible size", []*zkhostv1.SubmitStreamRequest{header(1 << 63)}, "witness 0 is declared as more than"},
		{"a second header", []*zkhostv1.SubmitStreamRequest{header(3), header(3)}, "one header, first"},
		{"more bytes than declared", []*zkhostv1.SubmitStreamRequest{header(3), chunk("abcd")}, "more bytes than the header declared"},
		{"fewer bytes than declared", []*zkhostv1.SubmitStreamRequest{header(3, 3), chunk("abcd")}, "within witness 1: 1 of its 3 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			fake := apitest.NewFake("gpu0")
			c := rawClient(t, fake)
			stream, err := c.SubmitStream(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.msgs {
				if err := stream.Send(m); err != nil {
					break // the daemon ended the call; Recv tells why
				}
			}
			stream.CloseSend()
			var job *zkhostv1.Job
			for err == nil && job == nil {
				var r *zkhostv1.SubmitStreamReply
				r, err = stream.Recv()
				job = r.GetJob()
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%v; want a job", err)
				}
				if _, ok := fake.Request(job.GetId()); !ok {
					t.Fatalf("job %s is not the fake's", job.GetId())
				}
				return
			}
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v; want InvalidArgument saying %q", err, tc.want)
			}
			if jobs, _ := fake.List(ctx, api.ListFilter{}); len(jobs) != 0 {
				t.Errorf("%d jobs created, want none", len(jobs))
			}
		})
	}
}
