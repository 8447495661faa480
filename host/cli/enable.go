package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Enable runs `zkhost enable`: it puts a device taken out of service after repeated
// crashes back into service.
func Enable(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := NewFlagSet("enable", "enable [flags] DEVICE", `
Put a device back into service after it crashed too often within the health window
([health] crash_limit and crash_window) and was taken out of scheduling. Its backend
restarts; zkhost status shows it healthy again.`, stderr)
	var d daemonFlags
	d.register(fs)
	pos, err := Parse(fs, args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr(fs, "want exactly one DEVICE, got %d arguments", len(pos))
	}
	c, err := d.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	ds, err := c.EnableDevice(ctx, pos[0])
	if err != nil {
		return fmt.Errorf("enable: %w", err)
	}
	state := "healthy"
	if !ds.Healthy {
		state = "not healthy yet: " + ds.Error
	}
	fmt.Fprintf(stdout, "device %s enabled (%s, %s): %s\n", ds.Name, ds.Kind, ds.Model, state)
	return nil
}
