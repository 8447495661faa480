package plugins

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/linetail"
)

// DefaultStartTimeout is how long Launch waits for a backend to answer the
// handshake when LaunchConfig.StartTimeout is zero.
const DefaultStartTimeout = time.Minute

// KillGrace is how long Process.Kill lets a plugin close its connection and
// exit before it sends SIGKILL. go-plugin's own Kill first asks the plugin to
// shut down over gRPC and waits for the answer without a deadline; a stopped
// (SIGSTOP) or wedged process never answers, and SIGKILL ends it whatever state
// it is in.
const KillGrace = 5 * time.Second

// killReapWait bounds how long Kill waits, after SIGKILL, for the process to be
// gone. A process inside an uninterruptible call (a device driver) dies only
// when the call returns; Kill logs it and returns rather than block its caller
// (a device restart, the daemon's stop) on it.
const killReapWait = 10 * time.Second

// LaunchConfig says which plugin binary Launch starts and how.
type LaunchConfig struct {
	// Kind is the kind of plugin the binary is; the zero value is a backend.
	Kind Kind
	// Path is the plugin's executable.
	Path string
	// SHA256, when set, is the executable's expected SHA-256 (32 bytes). Launch
	// refuses a binary whose digest differs.
	SHA256 []byte
	// Args are the arguments after the program name.
	Args []string
	// Env holds extra KEY=value entries for the backend; they override the host's
	// own environment, which the backend inherits.
	Env []string
	// Logger receives the backend's log lines (backends log to stderr, in hclog's
	// JSON format, which keeps their levels) and go-plugin's own messages. Nil
	// means hclog's default logger.
	Logger hclog.Logger
	// StartTimeout bounds the handshake; zero means DefaultStartTimeout. A
	// deadline on Launch's context shortens it.
	StartTimeout time.Duration
	// SocketDir, when set, is where the backend creates its unix socket
	// (SocketDir in sockets.go); empty means go-plugin's default, the
	// temporary directory.
	SocketDir string
}

// Process is a running plugin (a backend or a synthesizer) started by Launch
// or Attach.
type Process struct {
	client      *plugin.Client
	kind        Kind
	backend     sdk.Backend
	synthesizer sdk.Synthesizer
	pid         int
	socketDir   string       // LaunchConfig.SocketDir
	killNow     func()       // SIGKILLs the started process (os/exec's context); nil when attached
	log         hclog.Logger // go-plugin's and Kill's messages
}

// Kind returns the kind of plugin the process serves.
func (p *Process) Kind() Kind { return p.kind }

// Backend returns the backend the process serves (sdk.NewBackendClient on its
// connection: calls cross gRPC, errors come back as *sdk.Error), or nil when
// the process is not a backend. It is also an sdk.UtilizationReporter.
func (p *Process) Backend() sdk.Backend { return p.backend }

// Synthesizer returns the synthesizer the process serves
// (sdk.NewSynthesizerClient on its connection), or nil when the process is not
// a synthesizer.
func (p *Process) Synthesizer() sdk.Synthesizer { return p.synthesizer }

// Pid returns the backend's process id (0 when attached to a backend that runs
// inside another process in debug mode).
func (p *Process) Pid() int { return p.pid }

// Exited reports whether the backend process has exited.
func (p *Process) Exited() bool { return p.client.Exited() }

// NegotiatedVersion returns the go-plugin protocol version agreed with the backend.
func (p *Process) NegotiatedVersion() int { return p.client.NegotiatedVersion() }

// Kill ends the backend: it closes the connection, waits up to two seconds for
// the process to exit and then kills it. A process that does not let go of its
// connection within KillGrace (stopped, or wedged) is sent SIGKILL. Kill
// returns once the process is gone, or at the latest killReapWait after the
// SIGKILL, and is safe to call more than once and from several goroutines.
func (p *Process) Kill() {
	rc := p.client.ReattachConfig() // read before Kill, which may forget the address
	killClient(p.client, p.killNow, p.pid, p.log)
	if p.killNow != nil {
		p.killNow() // releases the command's context; the process is gone
	}
	// A backend killed by a signal (by us, or before this call) leaves its
	// socket; a clean exit has removed it already.
	removeSocket(p.socketDir, rc)
}

// killClient runs go-plugin's Kill of client, bounded: when it has not returned
// within KillGrace, killNow sends the process (pid) SIGKILL, which also ends the
// shutdown call Kill waits on (its context ends with the process). killNow is
// nil for an attached plugin, which is not ours to kill; the wait is bounded all
// the same.
func killClient(client *plugin.Client, killNow func(), pid int, log hclog.Logger) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		client.Kill()
	}()
	select {
	case <-done:
		return
	case <-time.After(KillGrace):
	}
	if killNow != nil {
		log.Warn("plugin did not exit after its connection closed; sending SIGKILL", "pid", pid, "grace", KillGrace)
		killNow()
	}
	select {
	case <-done:
	case <-time.After(killReapWait):
		log.Error("plugin process did not end after SIGKILL; no longer waiting for it", "pid", pid, "waited", killReapWait)
	}
}

// stderrTailLines is how many of a plugin's last stderr lines a failed start
// quotes.
const stderrTailLines = 8

// Launch starts the plugin binary cfg.Path (a backend, or the kind cfg.Kind
// names), performs go-plugin's handshake (gRPC only, with automatic mutual TLS
// over a unix socket) and returns the running process. The binary is checked
// first: a missing or non-executable file, or one whose SHA-256 differs from
// cfg.SHA256, is an error naming the kind, the path and the cause. The plugin
// inherits the host's parent-death watch (sdk.ParentPIDEnv) and its standard error
// goes to cfg.Logger. The caller owns the process and must Kill it.
func Launch(ctx context.Context, cfg LaunchConfig) (*Process, error) {
	kind := cfg.Kind
	sets, err := kind.clientPlugins()
	if err != nil {
		return nil, err
	}
	if err := checkBinary(kind, cfg.Path, cfg.SHA256); err != nil {
		return nil, err
	}
	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < timeout {
		timeout = time.Until(deadline)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("launching %s %s: %w", kind, cfg.Path, err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.Default()
	}
	logger = backendLogger(logger)

	// The command's context is how the host SIGKILLs the plugin: os/exec
	// kills the process it started when the context ends (through a pidfd
	// where it can, and never after the process was reaped, so a reused pid
	// is never hit), without reading fields go-plugin's goroutines write.
	killCtx, killNow := context.WithCancel(context.Background())
	cmd := exec.CommandContext(killCtx, cfg.Path, cfg.Args...)
	// The host's environment first, then cfg.Env, so cfg.Env wins (exec keeps
	// the last of duplicate keys); go-plugin appends its own variables after.
	cmd.Env = append(os.Environ(), cfg.Env...)
	cmd.Env = append(cmd.Env, sdk.ParentPIDEnv+"="+strconv.Itoa(os.Getpid()))
	if cfg.SocketDir != "" {
		cmd.Env = append(cmd.Env, socketEnv(cfg.SocketDir))
	}

	var secure *plugin.SecureConfig
	if cfg.SHA256 != nil {
		// Checked above too; go-plugin checks again just before exec, which
		// narrows the window for swapping the file.
		secure = &plugin.SecureConfig{Checksum: cfg.SHA256, Hash: sha256.New()}
	}
	forward := logger.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true})
	tail := &linetail.Tail{Keep: stderrTailLines}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: sets,
		Cmd:              cmd,
		Stderr:           tail,
		SkipHostEnv:      true,
		SecureConfig:     secure,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Managed:          false,
		StartTimeout:     timeout,
		Logger:           logger,
		SyncStdout:       forward,
		SyncStderr:       forward,
	})
	// The handshake has no context of its own: a caller that gives up (a
	// daemon that stops while a plugin restarts) kills the process, which ends
	// the handshake at once, where a stopped plugin would hold it for the
	// whole start timeout.
	abandon := context.AfterFunc(ctx, killNow)
	proc, err := dispense(client, kind, killNow, logger)
	abandon()
	if err != nil {
		killNow()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("launching %s %s: %w (%v)", kind, cfg.Path, ctxErr, err)
		}
		if errors.Is(err, plugin.ErrChecksumsDoNotMatch) {
			return nil, fmt.Errorf("%s binary %s: checksum mismatch (it changed while starting): %w", kind, cfg.Path, err)
		}
		if words := tail.String(); words != "" {
			return nil, fmt.Errorf("starting %s %s: %w (its stderr: %s)", kind, cfg.Path, err, words)
		}
		return nil, fmt.Errorf("starting %s %s: %w", kind, cfg.Path, err)
	}
	proc.socketDir = cfg.SocketDir
	if err := ctx.Err(); err != nil {
		proc.Kill()
		return nil, fmt.Errorf("launching %s %s: %w", kind, cfg.Path, err)
	}
	return proc, nil
}

// Attach connects to a backend that already runs, typically one served in
// debug mode (sdk.WithDebug) inside a test or under a debugger. go-plugin does
// not allow automatic TLS on a reattached connection, so the connection is a
// plain unix socket. A backend in debug mode stops when its own context ends;
// Kill on the returned process does not stop it.
func Attach(reattach *plugin.ReattachConfig, logger hclog.Logger) (*Process, error) {
	if reattach == nil {
		return nil, errors.New("attaching to backend: nil reattach config")
	}
	if logger == nil {
		logger = hclog.Default()
	}
	logger = backendLogger(logger)
	forward := logger.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true})
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: sdk.Handshake,
		// A reattached client skips version negotiation, so it needs the
		// plugin set of the version the backend serves.
		Plugins:          sdk.BackendPlugins(nil)[reattach.ProtocolVersion],
		Reattach:         reattach,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           logger,
		SyncStdout:       forward,
		SyncStderr:       forward,
	})
	proc, err := dispense(client, KindBackend, nil, logger)
	if err != nil {
		return nil, fmt.Errorf("attaching to backend at %v: %w", reattach.Addr, err)
	}
	return proc, nil
}

// dispense completes the handshake of client and returns the service of the
// plugin kind. killNow SIGKILLs the process client starts (nil when it
// attaches). On failure the client is killed.
func dispense(client *plugin.Client, kind Kind, killNow func(), log hclog.Logger) (*Process, error) {
	pid := func() int {
		if rc := client.ReattachConfig(); rc != nil {
			return rc.Pid
		}
		return 0
	}
	rpc, err := client.Client()
	if err != nil {
		killClient(client, killNow, pid(), log)
		return nil, err
	}
	name := kind.pluginName()
	raw, err := rpc.Dispense(name)
	if err != nil {
		killClient(client, killNow, pid(), log)
		return nil, err
	}
	proc := &Process{client: client, kind: kind, killNow: killNow, log: log, pid: pid()}
	ok := false
	switch kind {
	case KindBackend:
		proc.backend, ok = raw.(sdk.Backend)
	case KindSynthesizer:
		proc.synthesizer, ok = raw.(sdk.Synthesizer)
	}
	if !ok {
		killClient(client, killNow, proc.pid, log)
		return nil, fmt.Errorf("plugin %q dispensed a %T, not a %s client", name, raw, kind)
	}
	return proc, nil
}

// checkBinary reports, naming the kind and path, why it cannot be started as a
// plugin: it is missing, not a regular file, not executable, or its SHA-256 is
// not want.
func checkBinary(kind Kind, path string, want []byte) error {
	if path == "" {
		return fmt.Errorf("%s binary: no path given", kind)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s binary %s: no such file", kind, path)
	case err != nil:
		return fmt.Errorf("%s binary %s: %w", kind, path, err)
	case fi.IsDir():
		return fmt.Errorf("%s binary %s: is a directory", kind, path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s binary %s: not a regular file (mode %v)", kind, path, fi.Mode())
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s binary %s: not executable (mode %v)", kind, path, fi.Mode().Perm())
	}
	if want == nil {
		return nil
	}
	if len(want) != sha256.Size {
		return fmt.Errorf("%s binary %s: configured SHA-256 has %d bytes, want %d", kind, path, len(want), sha256.Size)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s binary %s: %w", kind, path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("%s binary %s: reading it for its checksum: %w", kind, path, err)
	}
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return fmt.Errorf("%s binary %s: checksum mismatch: SHA-256 is %x, configured %x", kind, path, got, want)
	}
	return nil
}
