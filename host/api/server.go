package api

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
)

// DefaultMaxMessageBytes caps one gRPC message (a Submit carries every witness of a job;
// SubmitStream carries them in chunks, so this does not bound a streamed job).
const DefaultMaxMessageBytes = 256 << 20

// MaxListLimit caps ListFilter.Limit.
const MaxListLimit = 10000

// DefaultStreamIdleTimeout is how long a SubmitStream may take to deliver its
// next message (the header, a chunk, the end) before the daemon ends it and
// releases the memory reserved for its inputs: a client that stalls must not
// hold memory for ever. A live client sends a chunk (client.StreamChunkBytes)
// far more often than this, even on a slow link; one that sends much larger
// chunks needs a link that carries one within the deadline.
const DefaultStreamIdleTimeout = time.Minute

// NewGRPCServer returns a gRPC server serving svc as zkhost.v1.Zkhost, with server
// reflection, a panic guard (a panicking handler fails its call with Internal instead of
// taking the daemon down) and debug logging of every call. opts come after the defaults
// (a message limit of DefaultMaxMessageBytes), so they can override them; pass TLS
// credentials and IdentityInterceptors here for TCP. A SubmitStream idle for
// DefaultStreamIdleTimeout is ended (Listen's Config can change it).
func NewGRPCServer(svc Service, logger hclog.Logger, opts ...grpc.ServerOption) *grpc.Server {
	return newGRPCServer(svc, logger, DefaultStreamIdleTimeout, opts...)
}

func newGRPCServer(svc Service, logger hclog.Logger, streamIdle time.Duration, opts ...grpc.ServerOption) *grpc.Server {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	all := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(DefaultMaxMessageBytes),
		grpc.MaxSendMsgSize(DefaultMaxMessageBytes),
		grpc.ChainUnaryInterceptor(guardUnary(logger)),
		grpc.ChainStreamInterceptor(guardStream(logger)),
	}
	all = append(all, opts...)
	s := grpc.NewServer(all...)
	zkhostv1.RegisterZkhostServer(s, &grpcService{svc: svc, logger: logger, streamIdle: streamIdle})
	reflection.Register(s)
	return s
}

// grpcService adapts a Service to the generated ZkhostServer: it validates requests,
// translates types and errors, and strips proof bytes where the API promises none.
type grpcService struct {
	zkhostv1.UnimplementedZkhostServer
	svc        Service
	logger     hclog.Logger
	streamIdle time.Duration // the longest wait for a SubmitStream's next message
}

func (g *grpcService) Submit(ctx context.Context, p *zkhostv1.SubmitRequest) (*zkhostv1.Job, error) {
	req := SubmitRequestFromProto(p)
	if err := req.Validate(); err != nil {
		return nil, ToStatus(err)
	}
	// An unspecified class stays unspecified: the service gives the job its
	// circuit's configured class (normal unless the config says otherwise).
	job, err := g.svc.Submit(ctx, req)
	if err != nil {
		return nil, ToStatus(err)
	}
	return JobProto(job), nil
}

// SubmitStream serves a streamed submission: the header is checked (shape, then
// the service's CheckSubmit) and its inputs admitted (AdmitStream: the count
// of inputs one stream may declare, and their declared bytes reserved from the
// memory budget) before a READY reply invites the bytes, so a refused job
// costs the client no upload and every byte buffered here is counted in the
// budget. Each input is assembled into a buffer of its declared size, which
// CheckSubmit held to the circuit's expected size; a chunk past the declared
// sizes, or a stream that ends short, is refused. Only once every byte is in
// does the job reach Submit, so a client that goes away mid-stream leaves
// nothing behind. The reservation is released once Submit has journaled the
// job, or when the stream fails; a stream that sends nothing for streamIdle is
// ended as failed, so a stalled client cannot hold memory for ever.
func (g *grpcService) SubmitStream(stream grpc.BidiStreamingServer[zkhostv1.SubmitStreamRequest, zkhostv1.SubmitStreamReply]) error {
	ctx := stream.Context()
	recv := g.receiver(stream)
	first, err := recv("the header")
	if err != nil {
		return err
	}
	ph := first.GetHeader()
	if ph == nil || len(first.GetChunk()) > 0 {
		return ToStatus(InvalidArgumentf("the first message of SubmitStream carries the header and no bytes"))
	}
	h := SubmitHeaderFromProto(ph)
	if err := h.Validate(); err != nil {
		return ToStatus(err)
	}
	if err := g.svc.CheckSubmit(ctx, h); err != nil {
		return ToStatus(err)
	}
	release, err := g.svc.AdmitStream(ctx, h)
	if err != nil {
		return ToStatus(err)
	}
	defer release() // the stream failed: nothing was journaled
	if err := stream.Send(&zkhostv1.SubmitStreamReply{Ready: true}); err != nil {
		return err
	}
	inputs := make([][]byte, len(h.InputSizes))
	cur, filled := 0, 0 // the input being filled, and how many of its bytes are in
	for {
		what := "the end of the stream"
		if cur < len(inputs) {
			what = fmt.Sprintf("%s %d (%d of its %d bytes in)", h.Noun(), cur, filled, h.InputSizes[cur])
		}
		msg, err := recv(what)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err // the client went away or stalled: nothing was created
		}
		if msg.GetHeader() != nil {
			return ToStatus(InvalidArgumentf("SubmitStream carries one header, first"))
		}
		chunk := msg.GetChunk()
		for len(chunk) > 0 {
			if cur == len(inputs) {
				return ToStatus(InvalidArgumentf("more bytes than the header declared (%s)", countOf(len(inputs), h.Noun())))
			}
			if inputs[cur] == nil {
				inputs[cur] = make([]byte, h.InputSizes[cur])
			}
			n := copy(inputs[cur][filled:], chunk)
			chunk, filled = chunk[n:], filled+n
			if filled == len(inputs[cur]) {
				cur, filled = cur+1, 0
			}
		}
	}
	if cur < len(inputs) {
		return ToStatus(InvalidArgumentf("the stream ended within %s %d: %d of its %d bytes arrived", h.Noun(), cur, filled, h.InputSizes[cur]))
	}
	req := SubmitRequest{Circuit: h.Circuit, Class: h.Class, RequestID: h.RequestID}
	if h.Assignments {
		req.Assignments = inputs
	} else {
		req.Witnesses = inputs
	}
	if err := req.Validate(); err != nil {
		return ToStatus(err)
	}
	job, err := g.svc.Submit(ctx, req)
	release() // journaled, or refused: the stream holds its bytes no longer
	if err != nil {
		return ToStatus(err)
	}
	return stream.Send(&zkhostv1.SubmitStreamReply{Job: JobProto(job)})
}

// received is one result of a SubmitStream's Recv.
type received struct {
	msg *zkhostv1.SubmitStreamRequest
	err error
}

// receiver returns a function that receives the stream's next message, or
// fails with DeadlineExceeded, saying what was awaited, when none comes within
// g.streamIdle. Recv cannot be interrupted, so a goroutine receives for the
// whole call; it ends when the handler returns, which ends the stream and
// with it a Recv in progress. It calls Recv only when asked, never ahead: a
// message a client sends before READY stays in gRPC's flow control instead of
// in memory the budget does not count while AdmitStream waits.
func (g *grpcService) receiver(stream grpc.BidiStreamingServer[zkhostv1.SubmitStreamRequest, zkhostv1.SubmitStreamReply]) func(what string) (*zkhostv1.SubmitStreamRequest, error) {
	ctx := stream.Context()
	asks := make(chan struct{})
	msgs := make(chan received)
	go func() {
		for {
			select {
			case <-asks:
			case <-ctx.Done():
				return
			}
			msg, err := stream.Recv()
			select {
			case msgs <- received{msg, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return func(what string) (*zkhostv1.SubmitStreamRequest, error) {
		timer := time.NewTimer(g.streamIdle)
		defer timer.Stop()
		select {
		case asks <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case r := <-msgs:
			return r.msg, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
			return nil, ToStatus(fmt.Errorf("SubmitStream: no message for %v while waiting for %s; the stream is ended and the memory held for it released: %w",
				g.streamIdle, what, context.DeadlineExceeded))
		}
	}
}

func (g *grpcService) Await(p *zkhostv1.AwaitRequest, stream grpc.ServerStreamingServer[zkhostv1.JobEvent]) error {
	if err := checkJobID(p.GetJobId()); err != nil {
		return ToStatus(err)
	}
	err := g.svc.Await(stream.Context(), p.GetJobId(), func(e JobEvent) error {
		if e.Kind == EventSnapshot && e.Job != nil {
			j := e.Job.WithoutOutputs()
			e.Job = &j
		}
		return stream.Send(JobEventProto(e))
	})
	return ToStatus(err)
}

func (g *grpcService) Get(ctx context.Context, p *zkhostv1.GetRequest) (*zkhostv1.Job, error) {
	if err := checkJobID(p.GetJobId()); err != nil {
		return nil, ToStatus(err)
	}
	job, err := g.svc.Get(ctx, p.GetJobId())
	if err != nil {
		return nil, ToStatus(err)
	}
	return JobProto(job), nil
}

func (g *grpcService) Cancel(ctx context.Context, p *zkhostv1.CancelRequest) (*zkhostv1.Job, error) {
	if err := checkJobID(p.GetJobId()); err != nil {
		return nil, ToStatus(err)
	}
	job, err := g.svc.Cancel(ctx, p.GetJobId())
	if err != nil {
		return nil, ToStatus(err)
	}
	return JobProto(job.WithoutOutputs()), nil
}

func (g *grpcService) List(ctx context.Context, p *zkhostv1.ListRequest) (*zkhostv1.ListResponse, error) {
	f := ListFilterFromProto(p)
	if f.State < JobStateUnspecified || f.State > JobCancelled {
		return nil, ToStatus(InvalidArgumentf("unknown job state %d", int(f.State)))
	}
	if f.Limit > MaxListLimit {
		return nil, ToStatus(InvalidArgumentf("limit %d is above the maximum %d", f.Limit, MaxListLimit))
	}
	jobs, err := g.svc.List(ctx, f)
	if err != nil {
		return nil, ToStatus(err)
	}
	resp := &zkhostv1.ListResponse{Jobs: make([]*zkhostv1.Job, len(jobs))}
	for i, j := range jobs {
		resp.Jobs[i] = JobProto(j.WithoutOutputs())
	}
	return resp, nil
}

func (g *grpcService) Status(ctx context.Context, _ *zkhostv1.StatusRequest) (*zkhostv1.StatusReport, error) {
	s, err := g.svc.Status(ctx)
	if err != nil {
		return nil, ToStatus(err)
	}
	return StatusReportProto(s), nil
}

func (g *grpcService) PreloadKey(ctx context.Context, p *zkhostv1.KeyRequest) (*zkhostv1.KeyResponse, error) {
	if err := requireAdmin(ctx, "preload (PreloadKey)"); err != nil {
		return nil, ToStatus(err)
	}
	return g.key(ctx, p, g.svc.PreloadKey)
}

func (g *grpcService) EvictKey(ctx context.Context, p *zkhostv1.KeyRequest) (*zkhostv1.KeyResponse, error) {
	if err := requireAdmin(ctx, "evict (EvictKey)"); err != nil {
		return nil, ToStatus(err)
	}
	return g.key(ctx, p, g.svc.EvictKey)
}

func (g *grpcService) EnableDevice(ctx context.Context, p *zkhostv1.EnableDeviceRequest) (*zkhostv1.DeviceStatus, error) {
	if err := requireAdmin(ctx, "enable (EnableDevice)"); err != nil {
		return nil, ToStatus(err)
	}
	if err := checkName("device", p.GetDevice()); err != nil {
		return nil, ToStatus(err)
	}
	ds, err := g.svc.EnableDevice(ctx, p.GetDevice())
	if err != nil {
		return nil, ToStatus(err)
	}
	return deviceStatusProto(ds), nil
}

func (g *grpcService) key(ctx context.Context, p *zkhostv1.KeyRequest,
	fn func(ctx context.Context, circuit, device string) ([]string, error)) (*zkhostv1.KeyResponse, error) {
	if err := checkName("circuit", p.GetCircuit()); err != nil {
		return nil, ToStatus(err)
	}
	if len(p.GetDevice()) > MaxNameLength {
		return nil, ToStatus(InvalidArgumentf("device name is %d bytes, at most %d allowed", len(p.GetDevice()), MaxNameLength))
	}
	devices, err := fn(ctx, p.GetCircuit(), p.GetDevice())
	if err != nil {
		return nil, ToStatus(err)
	}
	return &zkhostv1.KeyResponse{Devices: devices}, nil
}

func checkJobID(id string) error {
	if id == "" {
		return InvalidArgumentf("job id is empty")
	}
	if len(id) > MaxNameLength {
		return InvalidArgumentf("job id is %d bytes, at most %d allowed", len(id), MaxNameLength)
	}
	return nil
}

// guardUnary logs each call at debug level and turns a panic into an Internal error.
func guardUnary(logger hclog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer endCall(logger, info.FullMethod, time.Now(), &err)
		return handler(ctx, req)
	}
}

// guardStream is guardUnary for streaming calls.
func guardStream(logger hclog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer endCall(logger, info.FullMethod, time.Now(), &err)
		return handler(srv, ss)
	}
}

// endCall ends a call of method begun at start, deferred by both guards: a
// panic in the handler becomes an Internal error in *err, and the call is
// logged. It must be the deferred function itself, for recover to see the
// panic.
func endCall(logger hclog.Logger, method string, start time.Time, err *error) {
	if r := recover(); r != nil {
		*err = panicError(logger, method, r)
	}
	logCall(logger, method, start, *err)
}

func panicError(logger hclog.Logger, method string, r any) error {
	logger.Error("panic in API handler", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	return status.Errorf(codes.Internal, "internal error in %s (the daemon log has the details)", method)
}

func logCall(logger hclog.Logger, method string, start time.Time, err error) {
	code := status.Code(err)
	switch code {
	case codes.Internal, codes.Unknown:
		logger.Error("API call failed", "method", method, "duration", time.Since(start), "error", err)
	default:
		if logger.IsDebug() {
			logger.Debug("API call", "method", method, "duration", time.Since(start), "code", code.String())
		}
	}
}
