// Package launch starts a plugin binary for the SDK's conformance suites (sdktest,
// synthtest) over the transport the host uses: go-plugin with sdk.Handshake and
// the SDK's plugin sets, gRPC only, automatic mutual TLS, the host's pid for the
// plugin's parent watchdog (sdk.ParentPIDEnv), the plugin's stderr lines into a
// logger, and the binary's SHA-256 pinned when given. The host's own launcher
// (package plugins, outside the SDK's module) adds what only a host needs (its
// socket directory, the stderr tail in start errors, its own checks of the binary);
// the parts the two ends must agree on come from package sdk for both.
package launch

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/zkhost/zkhost/sdk"
)

// Config says which plugin binary to start and how.
type Config struct {
	// Path is the plugin's executable; SHA256, when set, its expected digest.
	Path   string
	SHA256 []byte
	// Args follow the program name; Env entries override the inherited environment.
	Args []string
	Env  []string
	// Logger receives the plugin's log lines (hclog JSON on its stderr).
	Logger hclog.Logger
	// StartTimeout bounds the handshake (default one minute); a deadline on the
	// context shortens it.
	StartTimeout time.Duration
}

// Process is a running plugin.
type Process struct {
	client *plugin.Client
	pid    int
}

// Kill ends the plugin and waits for it to be gone; it is safe to call twice.
func (p *Process) Kill() { p.client.Kill() }

// Exited reports whether the plugin process has exited.
func (p *Process) Exited() bool { return p.client.Exited() }

// Pid is the plugin's process id.
func (p *Process) Pid() int { return p.pid }

// Backend starts cfg.Path as a backend and returns it with the sdk.Backend it serves.
func Backend(ctx context.Context, cfg Config) (*Process, sdk.Backend, error) {
	proc, raw, err := start(ctx, cfg, sdk.BackendPlugins(nil), sdk.BackendPluginName)
	if err != nil {
		return nil, nil, err
	}
	b, ok := raw.(sdk.Backend)
	if !ok {
		proc.Kill()
		return nil, nil, fmt.Errorf("backend %s: dispensed a %T, not an sdk.Backend", cfg.Path, raw)
	}
	return proc, b, nil
}

// Synthesizer starts cfg.Path as a synthesizer and returns it with the
// sdk.Synthesizer it serves.
func Synthesizer(ctx context.Context, cfg Config) (*Process, sdk.Synthesizer, error) {
	proc, raw, err := start(ctx, cfg, sdk.SynthesizerPlugins(nil), sdk.SynthesizerPluginName)
	if err != nil {
		return nil, nil, err
	}
	s, ok := raw.(sdk.Synthesizer)
	if !ok {
		proc.Kill()
		return nil, nil, fmt.Errorf("synthesizer %s: dispensed a %T, not an sdk.Synthesizer", cfg.Path, raw)
	}
	return proc, s, nil
}

func start(ctx context.Context, cfg Config, sets map[int]plugin.PluginSet, name string) (*Process, any, error) {
	if cfg.Path == "" {
		return nil, nil, fmt.Errorf("%s: no binary path given", name)
	}
	if _, err := os.Stat(cfg.Path); err != nil {
		return nil, nil, fmt.Errorf("%s binary: %w", name, err)
	}
	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.Default()
	}
	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	cmd.Env = append(cmd.Env, sdk.ParentPIDEnv+"="+strconv.Itoa(os.Getpid()))
	var secure *plugin.SecureConfig
	if cfg.SHA256 != nil {
		secure = &plugin.SecureConfig{Checksum: cfg.SHA256, Hash: sha256.New()}
	}
	forward := logger.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true})
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: sets,
		Cmd:              cmd,
		SkipHostEnv:      true,
		SecureConfig:     secure,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     timeout,
		Logger:           logger,
		SyncStdout:       forward,
		SyncStderr:       forward,
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, nil, fmt.Errorf("starting %s %s: %w", name, cfg.Path, err)
	}
	raw, err := rpc.Dispense(name)
	if err != nil {
		client.Kill()
		return nil, nil, fmt.Errorf("starting %s %s: %w", name, cfg.Path, err)
	}
	proc := &Process{client: client}
	if rc := client.ReattachConfig(); rc != nil {
		proc.pid = rc.Pid
	}
	if err := ctx.Err(); err != nil {
		proc.Kill()
		return nil, nil, fmt.Errorf("starting %s %s: %w", name, cfg.Path, err)
	}
	return proc, raw, nil
}
