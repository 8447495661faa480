package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	backendv1 "github.com/zkhost/zkhost/sdk/internal/proto/backendv1"
)

// LogLevelEnv is the environment variable that sets the level of NewLogger's
// loggers (trace, debug, info, warn, error); the default is info.
const LogLevelEnv = "ZKHOST_LOG_LEVEL"

// stderr is the process's standard error as it was at start-up. go-plugin's
// server replaces os.Stderr with a pipe while it serves; logs written to the
// original descriptor reach the host's logger with their levels intact.
var stderr = os.Stderr

// NewLogger returns a logger that writes hclog JSON lines to the process's
// standard error, the one place a backend may log: go-plugin owns standard
// output, and the host parses these lines into its own logger, keeping levels
// and fields.
func NewLogger(name string) hclog.Logger {
	level := hclog.LevelFromString(os.Getenv(LogLevelEnv))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      level,
		Output:     stderr,
		JSONFormat: true,
	})
}

// ServeOption configures Serve.
type ServeOption func(*serveConfig)

type serveConfig struct {
	logger hclog.Logger
	debug  *plugin.ServeTestConfig
}

// WithLogger makes Serve log through l instead of NewLogger("backend").
func WithLogger(l hclog.Logger) ServeOption {
	return func(c *serveConfig) { c.logger = l }
}

// WithDebug runs the backend in debug mode: in the calling process, without
// the handshake cookie and without the parent watchdog, until ctx is done. This
// is how a backend runs under a debugger or inside a test. Serve sends the
// configuration to attach with (plugins.Attach) on reattach, or prints it as
// JSON to standard error when reattach is nil, and closes closed (when not nil)
// once it has stopped serving.
func WithDebug(ctx context.Context, reattach chan<- *plugin.ReattachConfig, closed chan<- struct{}) ServeOption {
	return func(c *serveConfig) {
		c.debug = &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed}
	}
}

// Serve serves b to the host through go-plugin and returns when the host closes
// the connection. A backend's main calls it and returns. It refuses a nil
// backend; outside debug mode, go-plugin ends the process itself when the
// binary is run by hand rather than by a host.
//
// Serve also starts the parent watchdog (WatchParent): if the host dies,
// the backend exits rather than hold its device.
func Serve(b Backend, opts ...ServeOption) error {
	if b == nil {
		return errors.New("sdk.Serve: nil Backend")
	}
	serve("backend", BackendPlugins(b), opts)
	return nil
}

// serve runs go-plugin's server for one plugin kind (named in the default
// logger and the debug message), with the parent watchdog outside debug mode.
func serve(kind string, sets map[int]plugin.PluginSet, opts []ServeOption) {
	cfg := serveConfig{}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = NewLogger(kind)
	}
	if cfg.debug == nil {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		WatchParent(ctx, func() {
			cfg.logger.Error("the host process died; exiting")
			os.Exit(1)
		})
	} else if cfg.debug.ReattachConfigCh == nil {
		ch := make(chan *plugin.ReattachConfig, 1)
		cfg.debug.ReattachConfigCh = ch
		go printReattach(kind, ch)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: sets,
		GRPCServer:       plugin.DefaultGRPCServer,
		Logger:           cfg.logger,
		Test:             cfg.debug,
	})
}

// printReattach prints the debug-mode attach configuration for a developer.
func printReattach(kind string, ch <-chan *plugin.ReattachConfig) {
	rc, ok := <-ch
	if !ok || rc == nil {
		return
	}
	out, err := json.Marshal(map[string]any{
		"protocol": rc.Protocol, "protocol_version": rc.ProtocolVersion,
		"network": rc.Addr.Network(), "address": rc.Addr.String(), "pid": rc.Pid,
	})
	if err != nil {
		return
	}
	fmt.Fprintf(stderr, "%s serving in debug mode; attach with: %s\n", kind, out)
}

// grpcServer serves a Backend as the backendv1 gRPC service, translating both
// ways. Methods added to the service later answer Unimplemented through the
// embedded type, so a backend built with an older SDK keeps working.
// Deliberately parallel to synth_grpc.go's synthServer: each serves its own
// service, whose messages share no Go types.
type grpcServer struct {
	backendv1.UnimplementedBackendServer
	b Backend
}

func (s *grpcServer) Describe(ctx context.Context, _ *backendv1.DescribeRequest) (*backendv1.DescribeResponse, error) {
	d, err := s.b.Describe(ctx)
	if err != nil {
		return nil, errorToStatus(err)
	}
	return describeToProto(d), nil
}

func (s *grpcServer) LoadKey(ctx context.Context, req *backendv1.LoadKeyRequest) (*backendv1.LoadKeyResponse, error) {
	key, err := keyRefFromProto(req.GetKey())
	if err != nil {
		return nil, errorToStatus(err)
	}
	if key.Constraints, err = constraintsFromProto(req.GetConstraints()); err != nil {
		return nil, errorToStatus(err)
	}
	info, err := s.b.LoadKey(ctx, key)
	if err != nil {
		return nil, errorToStatus(err)
	}
	return &backendv1.LoadKeyResponse{HostBytes: info.HostBytes, DeviceBytes: info.DeviceBytes, CompactW: info.CompactW}, nil
}

func (s *grpcServer) UnloadKey(ctx context.Context, req *backendv1.UnloadKeyRequest) (*backendv1.UnloadKeyResponse, error) {
	if err := s.b.UnloadKey(ctx, req.GetKeyId()); err != nil {
		return nil, errorToStatus(err)
	}
	return &backendv1.UnloadKeyResponse{}, nil
}

func (s *grpcServer) Prove(ctx context.Context, req *backendv1.ProveRequest) (*backendv1.ProveResponse, error) {
	h, err := handleFromProto(req.GetPartition())
	if err != nil {
		return nil, errorToStatus(err)
	}
	res, err := s.b.Prove(ctx, ProveRequest{KeyID: req.GetKeyId(), Partition: h})
	if err != nil {
		return nil, errorToStatus(err)
	}
	return proveResultToProto(res), nil
}

// Utilization answers from the backend's UtilizationReporter, or Unimplemented
// when it has none (an optional interface, as terraform-plugin-go adds
// capabilities).
func (s *grpcServer) Utilization(ctx context.Context, req *backendv1.UtilizationRequest) (*backendv1.UtilizationResponse, error) {
	r, ok := s.b.(UtilizationReporter)
	if !ok {
		return nil, errorToStatus(Errorf(ErrUnimplemented, "utilization: this backend does not report it"))
	}
	var since time.Time
	if ns := req.GetSinceUnixNs(); ns > 0 {
		since = time.Unix(0, ns)
	}
	u, err := r.Utilization(ctx, since)
	if err != nil {
		return nil, errorToStatus(err)
	}
	return utilizationToProto(u), nil
}
