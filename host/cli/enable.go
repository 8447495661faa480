package cli

import (
	"context"
	"fmt"
)

// Enable runs `zkhost enable`: it puts a device taken out of service after repeated
// crashes back into service.
var Enable = Command{Name: "enable", Summary: "put a device taken out of service after repeated crashes back into service", Usage: "enable [flags] DEVICE", Run: enableCmd}

func enableCmd(ctx context.Context, inv Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet(`
Put a device back into service after it crashed too often within the health window
([health] crash_limit and crash_window) and was taken out of scheduling. Its backend
restarts; zkhost status shows it healthy again.`)
	var d daemonFlags
	d.register(fs)
	arg, c, err := d.parseOneAndDial(fs, args, "DEVICE")
	if c == nil {
		return err // nil after --help
	}
	defer c.Close()
	ds, err := c.EnableDevice(ctx, arg)
	if err != nil {
		return err // main says "zkhost enable:" already
	}
	state := "healthy"
	if !ds.Healthy {
		state = "not healthy yet: " + ds.Error
	}
	fmt.Fprintf(stdout, "device %s enabled (%s, %s): %s\n", ds.Name, ds.Kind, ds.Model, state)
	return nil
}
