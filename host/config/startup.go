package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zkhost/zkhost/host/api"
)

// CheckStartup checks what `zkhost serve` needs of the machine beyond a valid
// config, before it starts anything, so that a daemon that could not work
// refuses to start naming the setting instead of saying "serving":
//
//   - an api.socket set outside the state directory must be in a directory
//     that exists (the daemon creates the state directory, not others);
//   - every token file ([api] token_file, each [[client]]'s) must hold a
//     usable token (api.ReadTokenFile);
//   - the journal's filesystem must hold [journal] reserve and a first job
//     (CheckJournalSpace).
//
// It returns every problem found, joined, and warnings for the caller to log.
func CheckStartup(c *Config) (warnings []string, err error) {
	var errs []error
	if err := checkSocketDir(c.API.Socket, c.StateDir); err != nil {
		errs = append(errs, err)
	}
	if c.API.TokenFile != "" {
		if _, err := api.ReadTokenFile(c.API.TokenFile, nil); err != nil {
			errs = append(errs, fmt.Errorf("api.token_file: %w", err))
		}
	}
	for i, cl := range c.API.Clients {
		if _, err := api.ReadTokenFile(cl.TokenFile, nil); err != nil {
			errs = append(errs, fmt.Errorf("client[%d].token_file (client %q): %w", i, cl.Name, err))
		}
	}
	if c.Journal.Path != "" {
		warn, err := CheckJournalSpace(c.Journal.Path, c.Journal.ReserveBytes)
		if err != nil {
			errs = append(errs, err)
		}
		if warn != "" {
			warnings = append(warnings, warn)
		}
	}
	return warnings, errors.Join(errs...)
}

// checkSocketDir refuses a socket whose directory does not exist, unless that
// directory is the state directory, which the daemon creates (mode 0700).
// Creating others would make directories with whatever mode and owner where
// a mistyped path points.
func checkSocketDir(socket, stateDir string) error {
	if socket == "" {
		return nil
	}
	dir := filepath.Dir(socket)
	if stateDir != "" && dir == filepath.Clean(stateDir) {
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("api.socket: the directory of %s does not exist; create %s, or leave api.socket out for zkhost.sock in the state directory (the only directory the daemon creates)", socket, dir)
	case err != nil:
		return fmt.Errorf("api.socket: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("api.socket: %s is not a directory", dir)
	}
	return nil
}
