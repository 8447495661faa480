package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/zkhost/zkhost/host/client"
)

// Preload runs `zkhost preload`: it loads a circuit's proving key on one device or all.
func Preload(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return keyCommand(ctx, "preload", `
Load a circuit's proving key on a device (every device without --device), so the
first job of that circuit does not wait for it.`, "loaded on", (*client.Client).PreloadKey, args, stdout, stderr)
}

// Evict runs `zkhost evict`: it unloads a circuit's proving key from one device or all.
func Evict(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return keyCommand(ctx, "evict", `
Unload a circuit's proving key from a device (every device without --device), to
free device memory for other circuits.`, "evicted from", (*client.Client).EvictKey, args, stdout, stderr)
}

func keyCommand(ctx context.Context, name, description, verb string,
	call func(*client.Client, context.Context, string, string) ([]string, error),
	args []string, stdout, stderr io.Writer) error {
	fs := NewFlagSet(name, name+" [flags] CIRCUIT", description, stderr)
	var d daemonFlags
	device := fs.String("device", "", "only this device (default: every device)")
	d.register(fs)
	arg, c, err := d.parseOneAndDial(fs, args, "CIRCUIT")
	if c == nil {
		return err // nil after --help
	}
	defer c.Close()
	devices, err := call(c, ctx, arg, *device)
	if err != nil {
		return err // main says "zkhost preload:" already; the daemon's error names the circuit
	}
	fmt.Fprintf(stdout, "proving key of %s %s %s\n", arg, verb, strings.Join(devices, ", "))
	return nil
}
