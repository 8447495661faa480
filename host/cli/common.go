package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/client"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/sdk/circomconv"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// ErrUsage is wrapped by every command-line mistake (unknown flag, missing argument); the
// command has already printed its usage to stderr. A caller may exit with status 2 for it.
var ErrUsage = errors.New("usage")

// daemonFlags are the flags every command uses to find the daemon.
type daemonFlags struct {
	api, config, tokenFile, caFile string
}

func (d *daemonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.api, "api", "", "daemon address: a socket path, unix:///path, or host:port (TLS) (default $"+EnvAPI+")")
	fs.StringVar(&d.config, "config", "", "read the daemon's socket from this config file's [api] section (default $"+EnvConfig+")")
	fs.StringVar(&d.tokenFile, "token-file", "", "bearer token file, for a host:port address")
	fs.StringVar(&d.caFile, "tls-ca", "", "PEM file of the CA that signed the daemon's certificate, for a host:port address (default: system roots)")
}

// args returns the flags that found the daemon, as command-line text to append to a
// command suggested to the user (" --config zkhost.toml"), so the suggestion reaches
// the same daemon.
func (d *daemonFlags) args() string {
	var b strings.Builder
	for _, f := range []struct{ name, value string }{
		{"api", d.api}, {"config", d.config}, {"token-file", d.tokenFile}, {"tls-ca", d.caFile},
	} {
		if f.value != "" {
			fmt.Fprintf(&b, " --%s %s", f.name, shellQuote(f.value))
		}
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain path characters.
func shellQuote(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,%", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// EnvConfig and EnvAPI name the environment variables that tell the client commands
// (and, for EnvConfig, `zkhost serve` and `zkhost timeline`) which daemon to use when
// no flag does: a config file, whose [api] socket is the daemon's, and an address.
// With ZKHOST_CONFIG exported once, `zkhost serve` and every client in that shell
// agree on one config without repeating --config.
const (
	EnvConfig = "ZKHOST_CONFIG"
	EnvAPI    = "ZKHOST_API"
)

// ConfigPath returns the config file a command uses: flagValue when set, else
// $ZKHOST_CONFIG (empty: none, the embedded defaults).
func ConfigPath(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	return os.Getenv(EnvConfig)
}

// address returns where the daemon is and what said so: --api, else --config's [api]
// socket, else $ZKHOST_CONFIG's, else $ZKHOST_API, else the default socket.
func (d *daemonFlags) address() (addr, source string, err error) {
	switch {
	case d.api != "" && d.config != "":
		return "", "", fmt.Errorf("%w: use --api or --config, not both", ErrUsage)
	case d.api != "":
		return d.api, "--api", nil
	case d.config != "":
		addr, err := configSocket(d.config)
		return addr, "--config " + d.config, err
	case os.Getenv(EnvConfig) != "":
		path := os.Getenv(EnvConfig)
		addr, err := configSocket(path)
		if err != nil {
			err = fmt.Errorf("$%s: %w", EnvConfig, err)
		}
		return addr, EnvConfig + "=" + path, err
	case os.Getenv(EnvAPI) != "":
		return os.Getenv(EnvAPI), EnvAPI + "=" + os.Getenv(EnvAPI), nil
	}
	addr, err = api.DefaultSocketPath()
	if _, statErr := os.Stat(addr); errors.Is(statErr, fs.ErrNotExist) {
		if _, err := os.Stat(systemSocket); err == nil {
			return systemSocket, "the system service's socket", nil
		}
	}
	return addr, "", err
}

// systemSocket is where the system service (packaging/zkhost.service, its
// installed config) listens. A client with no flag or variable uses it when the
// user's own default socket does not exist, so the members of group zkhost reach
// the machine's daemon with no setup. A variable only for tests.
var systemSocket = "/run/zkhost/zkhost.sock"

// configSocket returns the [api] socket of the config file at path.
func configSocket(path string) (string, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return "", err
	}
	if cfg.API.Socket == "" {
		return "", fmt.Errorf("config %s names no [api] socket", path)
	}
	return cfg.API.Socket, nil
}

// parseOneAndDial parses the arguments of a command that takes exactly one
// positional argument (named what in its usage) and dials the daemon. A nil client
// comes with the error to return: nil after --help, else the usage or dial error.
func (d *daemonFlags) parseOneAndDial(fs *flag.FlagSet, args []string, what string) (string, *client.Client, error) {
	pos, c, err := d.parseAndDial(fs, args, func(pos []string) error {
		if len(pos) != 1 {
			return usageErr(fs, "want exactly one %s, got %d arguments", what, len(pos))
		}
		return nil
	})
	if c == nil {
		return "", nil, err
	}
	return pos[0], c, nil
}

// parseSomeAndDial is parseOneAndDial for a command that takes one or more
// positional arguments.
func (d *daemonFlags) parseSomeAndDial(fs *flag.FlagSet, args []string, what string) ([]string, *client.Client, error) {
	return d.parseAndDial(fs, args, func(pos []string) error {
		if len(pos) == 0 {
			return usageErr(fs, "no %s given", what)
		}
		return nil
	})
}

// parseAndDial parses the arguments, has check refuse positional arguments a
// command does not take, and dials the daemon; a nil client comes with the
// error to return, as for parseOneAndDial.
func (d *daemonFlags) parseAndDial(fs *flag.FlagSet, args []string, check func(pos []string) error) ([]string, *client.Client, error) {
	pos, err := Parse(fs, args)
	if errors.Is(err, errHelp) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if err := check(pos); err != nil {
		return nil, nil, err
	}
	c, err := d.dial()
	if err != nil {
		return nil, nil, err
	}
	return pos, c, nil
}

// parseNone parses the arguments of a command that takes no positional argument.
// When ok is false the command returns err at once: nil after --help, else the
// usage error.
func parseNone(fs *flag.FlagSet, args []string) (ok bool, err error) {
	pos, err := Parse(fs, args)
	if errors.Is(err, errHelp) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if len(pos) != 0 {
		return false, usageErr(fs, "unexpected argument %q", pos[0])
	}
	return true, nil
}

func (d *daemonFlags) dial() (*client.Client, error) {
	addr, source, err := d.address()
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(addr, client.Options{TokenFile: d.tokenFile, CAFile: d.caFile})
	if err != nil && errors.Is(err, api.ErrUnavailable) {
		return nil, notFoundHint(err, source)
	}
	return c, err
}

// notFoundHint adds to a daemon-not-found error how the address was chosen and how
// to choose another: a daemon started with a config of its own listens where that
// config says, which the default socket is not.
func notFoundHint(err error, source string) error {
	if source == "" {
		return fmt.Errorf("%w\n(the default socket; for a daemon started with --config FILE, give the same --config FILE or export %s=FILE; for another address, --api ADDR or %s=ADDR)", err, EnvConfig, EnvAPI)
	}
	return fmt.Errorf("%w\n(the address from %s)", err, source)
}

// newFlagSet returns a flag set whose --help prints synopsis, description and flags
// on out (Invocation.FlagSet, which every zkhost subcommand uses).
func newFlagSet(name, synopsis, description string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: zkhost %s\n\n", synopsis)
		if d := strings.TrimSpace(description); d != "" {
			fmt.Fprintf(out, "%s\n\n", d)
		}
		fmt.Fprintln(out, "Flags:")
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses args, allowing flags after positional arguments ("zkhost wait JOB --out
// d"); "--" ends the flags. It returns the positional arguments, or an error wrapping
// flag.ErrHelp for --help (the help printed on the flag set's output) or ErrUsage for
// a bad flag (nothing printed: the caller reports the error, then the synopsis).
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseQuiet(fs, args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.Usage()
				return nil, errHelp
			}
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseQuiet runs fs.Parse without the flag package printing a bad flag's message
// and the usage itself: Parse prints the help when asked, and the message is the
// error's.
func parseQuiet(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	return fs.Parse(args)
}

// errHelp tells a command that --help was asked for and printed; the command returns nil.
var errHelp = flag.ErrHelp

// usageErr returns an ErrUsage error saying what is wrong with the command line;
// the caller prints it, then the command's synopsis.
func usageErr(_ *flag.FlagSet, format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// CheckOutDir checks, before any work is submitted or proven, that dir can receive a
// job's outputs: it is a directory, or can be created, where this user can write, and
// it holds no proof outputs (<i>.proof, <i>.public, summary.json) of an earlier run,
// which would otherwise sit next to the new ones and fail `zkhost verify DIR`. Nothing
// is created: a job that fails leaves no empty directory behind.
func CheckOutDir(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("output directory %s is not a directory", dir)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("output directory: %w", err)
		}
		for _, e := range entries {
			if isOutputFile(e.Name()) {
				return fmt.Errorf("output directory %s already holds proofs (%s); choose another or empty it", dir, e.Name())
			}
		}
		return checkWritable(dir, dir)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("output directory: %w", err)
	}
	// dir is created later, with its missing parents: the nearest existing ancestor
	// must be a directory this user can write in.
	p := dir
	for {
		parent := filepath.Dir(p)
		if parent == p {
			return fmt.Errorf("output directory %s: no existing parent directory", dir)
		}
		p = parent
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("output directory %s: %w", dir, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("output directory %s cannot be created: %s is not a directory", dir, p)
		}
		return checkWritable(dir, p)
	}
}

// isOutputFile reports whether name is one of the files a run writes into its output
// directory.
func isOutputFile(name string) bool {
	for _, suffix := range []string{".proof", ".public", SnarkjsProofSuffix, SnarkjsPublicSuffix} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return name == "summary.json"
}

// CircomWitnesses reports whether files are circom witnesses (.wtns, told by their
// magic, whatever their names): a job of them is a job of wire assignments, so the
// commands need no --assignment for it. Some witnesses and some other files are
// refused, naming one of each.
func CircomWitnesses(files []string) (bool, error) {
	var wtns, other string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return false, err
		}
		head := make([]byte, 4)
		n, _ := io.ReadFull(f, head)
		f.Close()
		if circuit.IsWtns(head[:n]) {
			wtns = name
		} else {
			other = name
		}
	}
	if wtns != "" && other != "" {
		return false, fmt.Errorf("%s is a circom witness but %s is not: a job's partitions are all one kind", wtns, other)
	}
	return wtns != "", nil
}

// The endings of the names writeOutputs gives snarkjs's files of partition i:
// <i>.proof.json and <i>.public.json.
const (
	SnarkjsProofSuffix  = ".proof.json"
	SnarkjsPublicSuffix = ".public.json"
)

// checkWritable checks that a file can be created in the existing directory p, on the
// way to the output directory dir.
func checkWritable(dir, p string) error {
	f, err := os.CreateTemp(p, ".zkhost-write-check-*")
	if err != nil {
		if p == dir {
			return fmt.Errorf("output directory %s is not writable: %w", dir, err)
		}
		return fmt.Errorf("output directory %s cannot be created in %s: %w", dir, p, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// writeOutputs writes each partition's proof and public witness, as the daemon sent them,
// to DIR/<i>.proof and DIR/<i>.public, and with snarkjs also as snarkjs's proof.json and
// public.json, DIR/<i>.proof.json and DIR/<i>.public.json. All files are first written to
// temporary names and synced, then renamed into place, so DIR never holds a partial file,
// and holds no file of this job at all when a write fails.
func writeOutputs(dir string, job api.Job, snarkjs bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	type staged struct{ tmp, final string }
	var files []staged
	cleanup := func() {
		for _, f := range files {
			os.Remove(f.tmp)
		}
	}
	stage := func(name string, data []byte) error {
		f, err := os.CreateTemp(dir, "."+name+".tmp-*")
		if err != nil {
			return err
		}
		files = append(files, staged{f.Name(), filepath.Join(dir, name)})
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(f.Name(), 0o644)
		}
		return err
	}
	for _, p := range job.Partitions {
		if len(p.Proof) == 0 || len(p.PublicWitness) == 0 {
			cleanup()
			return nil, fmt.Errorf("the daemon sent no proof or public witness for partition %d of job %s", p.Index, job.ID)
		}
		if err := stage(fmt.Sprintf("%d.proof", p.Index), p.Proof); err != nil {
			cleanup()
			return nil, fmt.Errorf("write proof of partition %d: %w", p.Index, err)
		}
		if err := stage(fmt.Sprintf("%d.public", p.Index), p.PublicWitness); err != nil {
			cleanup()
			return nil, fmt.Errorf("write public witness of partition %d: %w", p.Index, err)
		}
		if !snarkjs {
			continue
		}
		proofJSON, publicJSON, err := circomconv.SnarkjsFilesOf(p.Proof, p.PublicWitness)
		if err == nil {
			err = stage(fmt.Sprintf("%d%s", p.Index, SnarkjsProofSuffix), proofJSON)
		}
		if err == nil {
			err = stage(fmt.Sprintf("%d%s", p.Index, SnarkjsPublicSuffix), publicJSON)
		}
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("write snarkjs's files of partition %d: %w", p.Index, err)
		}
	}
	var written []string
	for i, f := range files {
		if err := os.Rename(f.tmp, f.final); err != nil {
			for _, g := range files[i:] {
				os.Remove(g.tmp)
			}
			return written, fmt.Errorf("write outputs: %w", err)
		}
		written = append(written, f.final)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // make the renames durable; a failure here loses nothing already written
		d.Close()
	}
	return written, nil
}

// fmtDuration prints a duration short: 850ms, 12.3s, 4m05s, 2h10m.
func fmtDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// span returns end-start, or -1 when either is unknown.
func span(start, end time.Time) time.Duration {
	if start.IsZero() || end.IsZero() {
		return -1
	}
	return end.Sub(start)
}
