package sdk

// This file serves a Synthesizer as the synthv1 gRPC service and calls one
// through it, translating between the sdk types and the wire types both ways,
// as serve.go, client.go and wire.go do for backends (errors cross the same
// way, as a zkhost.backend.v1.ErrorDetail).

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"

	backendv1 "github.com/zkhost/zkhost/sdk/internal/proto/backendv1"
	synthv1 "github.com/zkhost/zkhost/sdk/internal/proto/synthv1"
)

// ServeSynthesizer serves s to the host through go-plugin and returns when the
// host closes the connection; a synthesizer's main calls it and returns. It
// takes the options Serve takes (WithLogger, WithDebug) and, like Serve, starts
// the parent watchdog, so a synthesizer whose host died exits. Before s sees a
// request, the output handle of Synthesize is checked (curve, counts, offsets
// and size as PartitionLayout gives them, an absolute path, an inode), so s can
// trust it.
func ServeSynthesizer(s Synthesizer, opts ...ServeOption) error {
	if s == nil {
		return errors.New("sdk.ServeSynthesizer: nil Synthesizer")
	}
	serve("synthesizer", SynthesizerPlugins(s), opts)
	return nil
}

// synthServer serves a Synthesizer as the synthv1 gRPC service. Methods added
// to the service later answer Unimplemented through the embedded type.
// Deliberately parallel to serve.go's grpcServer: see why there.
type synthServer struct {
	synthv1.UnimplementedSynthesizerServer
	s Synthesizer
}

func (g *synthServer) Describe(ctx context.Context, _ *synthv1.DescribeRequest) (*synthv1.DescribeResponse, error) {
	d, err := g.s.Describe(ctx)
	if err != nil {
		return nil, errorToStatus(err)
	}
	curves := make([]string, len(d.Curves))
	for i, c := range d.Curves {
		curves[i] = string(c)
	}
	return &synthv1.DescribeResponse{
		Name:        d.Name,
		Version:     d.Version,
		ApiVersions: append([]uint32(nil), d.APIVersions...),
		Curves:      curves,
		MaxInFlight: clampUint32(d.MaxInFlight),
	}, nil
}

func (g *synthServer) LoadCircuit(ctx context.Context, req *synthv1.LoadCircuitRequest) (*synthv1.LoadCircuitResponse, error) {
	ref, err := circuitRefFromProto(req.GetCircuit())
	if err != nil {
		return nil, errorToStatus(err)
	}
	if err := g.s.LoadCircuit(ctx, ref); err != nil {
		return nil, errorToStatus(err)
	}
	return &synthv1.LoadCircuitResponse{}, nil
}

func (g *synthServer) Synthesize(ctx context.Context, req *synthv1.SynthesizeRequest) (*synthv1.SynthesizeResponse, error) {
	start := time.Now()
	out, err := outputFromProto(req.GetOutput())
	if err != nil {
		return nil, errorToStatus(err)
	}
	res, err := g.s.Synthesize(ctx, SynthesizeRequest{CircuitID: req.GetCircuitId(), Witness: req.GetWitness(), Output: out})
	if err != nil {
		return nil, errorToStatus(err)
	}
	if res.Wall <= 0 {
		res.Wall = time.Since(start)
	}
	return &synthv1.SynthesizeResponse{WallNs: int64(res.Wall)}, nil
}

// NewSynthesizerClient returns a Synthesizer that calls the synthesizer served
// on conn (SynthesizerPlugin.GRPCClient calls it; the host's
// plugins.Process.Synthesizer returns its result), so the host deals only in
// sdk types. Errors come back as NewBackendClient's do: an *Error with the
// synthesizer's kind, retryable flag and message; a lost connection also
// matches ErrPluginShutdown, a cancellation ctx.Err().
func NewSynthesizerClient(conn grpc.ClientConnInterface) Synthesizer {
	return &synthClient{c: synthv1.NewSynthesizerClient(conn)}
}

// synthClient is deliberately parallel to client.go's grpcClient: see why
// there.
type synthClient struct {
	c synthv1.SynthesizerClient
}

func (g *synthClient) Describe(ctx context.Context) (SynthDescription, error) {
	r, err := g.c.Describe(ctx, &synthv1.DescribeRequest{})
	if err != nil {
		return SynthDescription{}, errorFromStatus(ctx, err)
	}
	curves := make([]Curve, len(r.GetCurves()))
	for i, c := range r.GetCurves() {
		curves[i] = Curve(c)
	}
	return SynthDescription{
		Name:        r.GetName(),
		Version:     r.GetVersion(),
		APIVersions: append([]uint32(nil), r.GetApiVersions()...),
		Curves:      curves,
		MaxInFlight: int(r.GetMaxInFlight()),
	}, nil
}

func (g *synthClient) LoadCircuit(ctx context.Context, ref CircuitRef) error {
	if _, err := g.c.LoadCircuit(ctx, &synthv1.LoadCircuitRequest{Circuit: circuitRefToProto(ref)}); err != nil {
		return errorFromStatus(ctx, err)
	}
	return nil
}

func (g *synthClient) Synthesize(ctx context.Context, req SynthesizeRequest) (SynthesizeResult, error) {
	r, err := g.c.Synthesize(ctx, &synthv1.SynthesizeRequest{CircuitId: req.CircuitID, Witness: req.Witness, Output: handleToProto(req.Output)})
	if err != nil {
		return SynthesizeResult{}, errorFromStatus(ctx, err)
	}
	return SynthesizeResult{Wall: time.Duration(r.GetWallNs())}, nil
}

// circuitRefToProto and circuitRefFromProto are alike in shape to wire.go's
// conversions, deliberately: see why there.
func circuitRefToProto(r CircuitRef) *synthv1.CircuitRef {
	return &synthv1.CircuitRef{
		Id:            r.ID,
		Curve:         string(r.Curve),
		CcsPath:       r.CCSPath,
		CcsSha256:     r.CCSSHA256[:],
		NbWires:       r.NbWires,
		NbConstraints: r.NbConstraints,
		NbPublic:      r.NbPublic,
		NbSecret:      r.NbSecret,
	}
}

func circuitRefFromProto(r *synthv1.CircuitRef) (CircuitRef, error) {
	if r == nil {
		return CircuitRef{}, Errorf(ErrInvalidArgument, "load circuit: no circuit given")
	}
	if r.GetId() == "" {
		return CircuitRef{}, Errorf(ErrInvalidArgument, "load circuit: empty circuit id")
	}
	d, err := digestFromProto("constraint system SHA-256", r.GetCcsSha256())
	if err != nil {
		return CircuitRef{}, err
	}
	return CircuitRef{
		ID:            r.GetId(),
		Curve:         Curve(r.GetCurve()),
		CCSPath:       r.GetCcsPath(),
		CCSSHA256:     d,
		NbWires:       r.GetNbWires(),
		NbConstraints: r.GetNbConstraints(),
		NbPublic:      r.GetNbPublic(),
		NbSecret:      r.GetNbSecret(),
	}, nil
}

// outputFromProto reads Synthesize's output handle (a memfd of the host, named
// by path and inode) and checks its layout.
func outputFromProto(h *backendv1.PartitionHandle) (PartitionHandle, error) {
	if h == nil {
		return PartitionHandle{}, Errorf(ErrInvalidArgument, "synthesize: no output handle given")
	}
	out, err := handleFromProto(h)
	if err != nil {
		return PartitionHandle{}, err
	}
	if out.Inode == 0 {
		return PartitionHandle{}, Errorf(ErrInvalidArgument, "synthesize: the output handle has no inode")
	}
	if err := checkHandle(out); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Message = "synthesize: output " + e.Message
		}
		return PartitionHandle{}, err
	}
	return out, nil
}
