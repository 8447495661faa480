package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/zkhost/zkhost/host/api"
	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
)

// Options configures Dial. The TLS and token fields apply to TCP addresses only: a unix
// socket is guarded by its file mode.
type Options struct {
	// CAFile is a PEM bundle of the certificate authorities that sign the daemon's TLS
	// certificate; empty means the system's roots.
	CAFile string
	// ServerName overrides the name checked against the daemon's certificate (default:
	// the host part of the address).
	ServerName string
	// Token is the bearer token; TokenFile names a file holding it. One of them is
	// required for TCP.
	Token     string
	TokenFile string
	// MaxMessageBytes caps one message; 0 means api.DefaultMaxMessageBytes.
	MaxMessageBytes int
	// ProbeTimeout bounds the connection check Dial makes on a unix socket; 0 means 2s.
	ProbeTimeout time.Duration
}

// Client calls one zkhost daemon. It is safe for concurrent use.
type Client struct {
	conn   *grpc.ClientConn
	rpc    zkhostv1.ZkhostClient
	target string // what the user named: the socket path or host:port
}

// Dial connects to the daemon at addr: "unix:///path/zkhost.sock", a socket path, or
// "host:port" (TLS and a token required); empty means api.DefaultSocketPath(). For a
// unix socket Dial checks that a daemon answers, so "not running" is reported here,
// naming the socket.
func Dial(addr string, opts Options) (*Client, error) {
	target, isUnix, err := ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	limit := opts.MaxMessageBytes
	if limit == 0 {
		limit = api.DefaultMaxMessageBytes
	}
	dialOpts := []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(limit), grpc.MaxCallSendMsgSize(limit)),
	}
	var grpcTarget string
	if isUnix {
		if err := probeUnix(target, opts.ProbeTimeout); err != nil {
			return nil, err
		}
		grpcTarget = "unix://" + target
		dialOpts = append(dialOpts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	} else {
		creds, err := tcpCredentials(target, opts)
		if err != nil {
			return nil, err
		}
		grpcTarget = "dns:///" + target
		dialOpts = append(dialOpts, creds...)
	}
	conn, err := grpc.NewClient(grpcTarget, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("zkhost client: %s: %w", target, err)
	}
	return &Client{conn: conn, rpc: zkhostv1.NewZkhostClient(conn), target: target}, nil
}

// ParseAddress says what addr names: a unix socket (its absolute path, true) or a TCP
// "host:port" (false). Anything with a slash, or ending in ".sock", is a path; the
// "unix://" prefix forces a path. Empty means api.DefaultSocketPath().
func ParseAddress(addr string) (target string, isUnix bool, err error) {
	switch {
	case addr == "":
		p, err := api.DefaultSocketPath()
		return p, true, err
	case strings.HasPrefix(addr, "unix://"):
		p := strings.TrimPrefix(addr, "unix://")
		if p == "" {
			return "", false, fmt.Errorf("zkhost client: %q names no socket path", addr)
		}
		abs, err := filepath.Abs(p)
		return abs, true, err
	case strings.HasPrefix(addr, "unix:"):
		abs, err := filepath.Abs(strings.TrimPrefix(addr, "unix:"))
		return abs, true, err
	case strings.Contains(addr, "/") || strings.HasSuffix(addr, ".sock"):
		abs, err := filepath.Abs(addr)
		return abs, true, err
	}
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return "", false, fmt.Errorf("zkhost client: address %q is neither a socket path nor host:port", addr)
	}
	return addr, false, nil
}

// probeUnix connects once to the socket so a daemon that is not running is reported
// clearly, before any call.
func probeUnix(path string, timeout time.Duration) error {
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	conn, err := net.DialTimeout("unix", path, timeout)
	if err == nil {
		conn.Close()
		return nil
	}
	var why string
	switch {
	case errors.Is(err, os.ErrNotExist):
		why = "no such socket"
	case errors.Is(err, syscall.ECONNREFUSED):
		why = "connection refused"
	case errors.Is(err, os.ErrPermission):
		return &api.Error{Kind: api.ErrUnavailable, Message: fmt.Sprintf(
			"zkhost daemon at %s: permission denied — the socket's mode and group decide who may connect", path)}
	default:
		why = err.Error()
	}
	return notRunning(path, why)
}

func notRunning(target, why string) error {
	return &api.Error{Kind: api.ErrUnavailable, Message: fmt.Sprintf(
		"no zkhost daemon at %s: %s — is `zkhost serve` running?", target, why)}
}

func tcpCredentials(target string, opts Options) ([]grpc.DialOption, error) {
	token := strings.TrimSpace(opts.Token)
	if opts.TokenFile != "" {
		if token != "" {
			return nil, errors.New("zkhost client: set a token or a token file, not both")
		}
		b, err := os.ReadFile(opts.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("zkhost client: token file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token == "" {
		return nil, fmt.Errorf("zkhost client: %s is a TCP address; the daemon requires a bearer token there (a token or a token file)", target)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: opts.ServerName}
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("zkhost client: CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("zkhost client: CA file %s holds no PEM certificate", opts.CAFile)
		}
		cfg.RootCAs = pool
	}
	return []grpc.DialOption{
		grpc.WithTransportCredentials(credentials.NewTLS(cfg)),
		grpc.WithPerRPCCredentials(bearer(token)),
	}, nil
}

// bearer sends the token as "authorization: Bearer <token>", over TLS only.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return true }

// Target returns the socket path or TCP address the client talks to.
func (c *Client) Target() string { return c.target }

// Close releases the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Submit queues a job. The request is checked here first (api.SubmitRequest.Validate),
// so a malformed one does not travel.
func (c *Client) Submit(ctx context.Context, req api.SubmitRequest) (api.Job, error) {
	if err := req.Validate(); err != nil {
		return api.Job{}, err
	}
	p, err := c.rpc.Submit(ctx, api.SubmitRequestProto(req))
	if err != nil {
		return api.Job{}, c.convert(err)
	}
	return api.JobFromProto(p), nil
}

// ErrNoStreaming is what SubmitStream returns from a daemon that predates it:
// such a daemon takes a job in one Submit message only.
var ErrNoStreaming = errors.New("the daemon does not take streamed submissions")

// StreamChunkBytes is the size of the chunks SubmitStream sends.
const StreamChunkBytes = 1 << 20

// SubmitStream queues a job whose inputs are read from inputs, one reader per
// partition, each holding exactly h.InputSizes[i] bytes, without holding them in
// memory: the header goes first and the daemon checks it (every declared size
// against what the circuit expects, quotas, free space) before a byte is sent,
// then each input follows in StreamChunkBytes chunks. A reader that fails or holds
// another number of bytes than declared abandons the call, which leaves no job.
func (c *Client) SubmitStream(ctx context.Context, h api.SubmitHeader, inputs []io.Reader) (api.Job, error) {
	if err := h.Validate(); err != nil {
		return api.Job{}, err
	}
	if len(inputs) != len(h.InputSizes) {
		return api.Job{}, fmt.Errorf("%d inputs for the %d sizes the header declares", len(inputs), len(h.InputSizes))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // abandons the call on any early return: the daemon creates no job
	stream, err := c.rpc.SubmitStream(ctx)
	if err != nil {
		return api.Job{}, c.convert(err)
	}
	if err := stream.Send(&zkhostv1.SubmitStreamRequest{Header: api.SubmitHeaderProto(h)}); err != nil {
		return api.Job{}, c.streamError(stream, err)
	}
	reply, err := stream.Recv()
	if status.Code(err) == codes.Unimplemented {
		return api.Job{}, fmt.Errorf("%w: %w", ErrNoStreaming, c.convert(err))
	}
	if err != nil {
		return api.Job{}, c.convert(err) // the daemon refused the header
	}
	if !reply.GetReady() {
		return api.Job{}, fmt.Errorf("the daemon answered the header without READY")
	}
	buf := make([]byte, StreamChunkBytes)
	for i, r := range inputs {
		var sent int64
		for {
			n, rerr := io.ReadFull(r, buf)
			if n > 0 {
				if sent+int64(n) > h.InputSizes[i] {
					return api.Job{}, fmt.Errorf("%s %d holds more than the %d bytes declared", h.Noun(), i, h.InputSizes[i])
				}
				if err := stream.Send(&zkhostv1.SubmitStreamRequest{Chunk: buf[:n]}); err != nil {
					return api.Job{}, c.streamError(stream, err)
				}
				sent += int64(n)
			}
			if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
				break
			}
			if rerr != nil {
				return api.Job{}, fmt.Errorf("%s %d: %w", h.Noun(), i, rerr)
			}
		}
		if sent != h.InputSizes[i] {
			return api.Job{}, fmt.Errorf("%s %d holds %d bytes, %d were declared", h.Noun(), i, sent, h.InputSizes[i])
		}
	}
	if err := stream.CloseSend(); err != nil {
		return api.Job{}, c.convert(err)
	}
	reply, err = stream.Recv()
	if err != nil {
		return api.Job{}, c.convert(err)
	}
	if reply.GetJob() == nil {
		return api.Job{}, fmt.Errorf("the daemon ended the submission without a job")
	}
	return api.JobFromProto(reply.GetJob()), nil
}

// streamError returns why a Send failed: io.EOF means the daemon ended the call,
// and its status, read with Recv, says why.
func (c *Client) streamError(stream grpc.BidiStreamingClient[zkhostv1.SubmitStreamRequest, zkhostv1.SubmitStreamReply], err error) error {
	if err == io.EOF {
		if _, rerr := stream.Recv(); rerr != nil && rerr != io.EOF {
			return c.convert(rerr)
		}
	}
	return c.convert(err)
}

// Await follows a job until it ends, calling fn (which may be nil) with every event:
// first an api.EventSnapshot, last the terminal event. It returns the final job, with
// its proofs when it is done, whatever the final state; an error means the job could
// not be followed to its end (unknown job, lost daemon, ctx cancelled, fn's error).
func (c *Client) Await(ctx context.Context, jobID string, fn func(api.JobEvent) error) (api.Job, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream (and the daemon's Await) on every return
	stream, err := c.rpc.Await(ctx, &zkhostv1.AwaitRequest{JobId: jobID})
	if err != nil {
		return api.Job{}, c.convert(err)
	}
	for {
		p, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return api.Job{}, fmt.Errorf("the zkhost daemon ended the events of job %s before the job ended", jobID)
		}
		if err != nil {
			return api.Job{}, c.convert(err)
		}
		e := api.JobEventFromProto(p)
		if fn != nil {
			if err := fn(e); err != nil {
				return api.Job{}, err
			}
		}
		if e.Kind.Terminal() {
			if e.Job == nil {
				return api.Job{}, fmt.Errorf("the zkhost daemon sent %s for job %s without the job", e.Kind, jobID)
			}
			return *e.Job, nil
		}
	}
}

// Get returns a job, with its proofs and public witnesses once it is done.
func (c *Client) Get(ctx context.Context, jobID string) (api.Job, error) {
	p, err := c.rpc.Get(ctx, &zkhostv1.GetRequest{JobId: jobID})
	if err != nil {
		return api.Job{}, c.convert(err)
	}
	return api.JobFromProto(p), nil
}

// Cancel stops a job and returns it (without proof bytes).
func (c *Client) Cancel(ctx context.Context, jobID string) (api.Job, error) {
	p, err := c.rpc.Cancel(ctx, &zkhostv1.CancelRequest{JobId: jobID})
	if err != nil {
		return api.Job{}, c.convert(err)
	}
	return api.JobFromProto(p), nil
}

// List returns recent jobs, newest first, without proof bytes.
func (c *Client) List(ctx context.Context, filter api.ListFilter) ([]api.Job, error) {
	p, err := c.rpc.List(ctx, api.ListRequestProto(filter))
	if err != nil {
		return nil, c.convert(err)
	}
	jobs := make([]api.Job, len(p.GetJobs()))
	for i, j := range p.GetJobs() {
		jobs[i] = api.JobFromProto(j)
	}
	return jobs, nil
}

// Status returns the daemon's status report.
func (c *Client) Status(ctx context.Context) (api.StatusReport, error) {
	p, err := c.rpc.Status(ctx, &zkhostv1.StatusRequest{})
	if err != nil {
		return api.StatusReport{}, c.convert(err)
	}
	return api.StatusReportFromProto(p), nil
}

// PreloadKey loads a circuit's proving key on device (every device when empty) and
// returns the devices that hold it now.
func (c *Client) PreloadKey(ctx context.Context, circuit, device string) ([]string, error) {
	p, err := c.rpc.PreloadKey(ctx, &zkhostv1.KeyRequest{Circuit: circuit, Device: device})
	if err != nil {
		return nil, c.convert(err)
	}
	return p.GetDevices(), nil
}

// EvictKey unloads a circuit's proving key from device (every device when empty) and
// returns the devices it acted on.
func (c *Client) EvictKey(ctx context.Context, circuit, device string) ([]string, error) {
	p, err := c.rpc.EvictKey(ctx, &zkhostv1.KeyRequest{Circuit: circuit, Device: device})
	if err != nil {
		return nil, c.convert(err)
	}
	return p.GetDevices(), nil
}

// EnableDevice puts a device taken out of service after repeated crashes back into
// service and returns its status.
func (c *Client) EnableDevice(ctx context.Context, device string) (api.DeviceStatus, error) {
	p, err := c.rpc.EnableDevice(ctx, &zkhostv1.EnableDeviceRequest{Device: device})
	if err != nil {
		return api.DeviceStatus{}, c.convert(err)
	}
	return api.DeviceStatusFromProto(p), nil
}

// convert turns a call's error into the daemon's api error, or into one that names the
// daemon's address when the call never reached the daemon's service.
func (c *Client) convert(err error) error {
	err = api.FromStatus(err)
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	msg := st.Message()
	switch {
	case st.Code() == codes.Unavailable && strings.Contains(msg, "connection refused"):
		return notRunning(c.target, "connection refused")
	case st.Code() == codes.Unavailable && strings.Contains(msg, "no such file"):
		return notRunning(c.target, "no such socket")
	case st.Code() == codes.Unavailable:
		return &api.Error{Kind: api.ErrUnavailable, Message: fmt.Sprintf("lost the zkhost daemon at %s: %s", c.target, msg)}
	}
	return fmt.Errorf("zkhost daemon at %s: %w", c.target, err)
}
