package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/zkhost/zkhost/host/client"
)

// Preload is `zkhost preload`: it loads a circuit's proving key on one device or all.
var Preload = Command{Name: "preload", Summary: "load a circuit's proving key on the devices", Usage: "preload [flags] CIRCUIT",
	Run: func(ctx context.Context, inv Invocation) error {
		return keyCommand(ctx, inv, `
Load a circuit's proving key on a device (every device without --device), so the
first job of that circuit does not wait for it.`, "loaded on", (*client.Client).PreloadKey)
	}}

// Evict is `zkhost evict`: it unloads a circuit's proving key from one device or all.
var Evict = Command{Name: "evict", Summary: "unload a circuit's proving key from the devices", Usage: "evict [flags] CIRCUIT",
	Run: func(ctx context.Context, inv Invocation) error {
		return keyCommand(ctx, inv, `
Unload a circuit's proving key from a device (every device without --device), to
free device memory for other circuits.`, "evicted from", (*client.Client).EvictKey)
	}}

func keyCommand(ctx context.Context, inv Invocation, description, verb string,
	call func(*client.Client, context.Context, string, string) ([]string, error)) error {
	fs := inv.FlagSet(description)
	var d daemonFlags
	device := fs.String("device", "", "only this device (default: every device)")
	d.register(fs)
	arg, c, err := d.parseOneAndDial(fs, inv.Args, "CIRCUIT")
	if c == nil {
		return err // nil after --help
	}
	defer c.Close()
	devices, err := call(c, ctx, arg, *device)
	if err != nil {
		return err // main says "zkhost preload:" already; the daemon's error names the circuit
	}
	fmt.Fprintf(inv.Stdout, "proving key of %s %s %s\n", arg, verb, strings.Join(devices, ", "))
	return nil
}
