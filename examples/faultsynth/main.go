package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/consensys/gnark/logger"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/synthgnark"
)

func main() {
	logger.Disable() // go-plugin owns stdout
	fault := os.Getenv("ZKHOST_FAULT_SYNTH")
	log := sdk.NewLogger("faultsynth")
	if fault == "stdout" && strike() {
		log.Warn("fault: printing to standard output before serving")
		fmt.Println("hello from a synthesizer that prints to stdout")
	}
	s := &faulty{Synthesizer: synthgnark.New(synthgnark.Options{Name: "faultsynth", Version: "0.1.0"}), fault: fault, log: log}
	if err := sdk.ServeSynthesizer(s, sdk.WithLogger(log)); err != nil {
		fmt.Fprintln(os.Stderr, "faultsynth:", err)
		os.Exit(1)
	}
}

// strike reports whether the fault is injected now: always, or, with
// ZKHOST_FAULT_SYNTH_ONCE set, only the first time across processes.
func strike() bool {
	marker := os.Getenv("ZKHOST_FAULT_SYNTH_ONCE")
	if marker == "" {
		return true
	}
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false
	}
	if err == nil {
		f.Close()
	}
	return err == nil
}

// faulty wraps a well-behaved synthesizer with the configured fault.
type faulty struct {
	*synthgnark.Synthesizer
	fault string
	log   interface{ Warn(string, ...any) }
}

func (f *faulty) Synthesize(ctx context.Context, req sdk.SynthesizeRequest) (sdk.SynthesizeResult, error) {
	switch f.fault {
	case "crash":
		if strike() {
			f.log.Warn("fault: crashing mid-partition")
			if out, err := os.OpenFile(req.Output.Path, os.O_WRONLY, 0); err == nil {
				out.Write(make([]byte, 4096))
			}
			os.Exit(3)
		}
	case "hang":
		if strike() {
			f.log.Warn("fault: hanging")
			select {}
		}
	case "stdout-late":
		fmt.Println("a synthesizer printing to stdout while it works")
	}
	res, err := f.Synthesizer.Synthesize(ctx, req)
	if err != nil {
		return res, err
	}
	out := req.Output
	var off uint64
	switch f.fault {
	case "lie":
		off = out.WOffset + (out.NbWires-1)*sdk.ElementSize // the last wire is internal
	case "lie-a":
		off = out.AOffset
	case "lie-public":
		off = out.WOffset + sdk.ElementSize // W[1], the first public input
	case "keep-mapped":
		// A writable mapping kept after answering: the synthesizer could still
		// change the partition while a backend proves it.
		if strike() {
			f.log.Warn("fault: keeping the partition mapped writable")
			if err := keepMapped(out); err != nil {
				return res, sdk.Errorf(sdk.ErrInternal, "faultsynth: %v", err)
			}
		}
		return res, nil
	default:
		return res, nil
	}
	if !strike() {
		return res, nil
	}
	f.log.Warn("fault: lying about the partition", "fault", f.fault, "offset", off)
	if err := flipBit(out.Path, int64(off)); err != nil {
		return res, sdk.Errorf(sdk.ErrInternal, "faultsynth: %v", err)
	}
	return res, nil
}

// flipBit flips bit 1 of the byte at off: the element's value moves by 2 in its
// Montgomery representation and stays below the modulus.
func flipBit(path string, off int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	b[0] ^= 2
	_, err = f.WriteAt(b, off)
	return err
}

// kept holds the mappings keepMapped made, so they stay for the process's life.
var (
	keptMu sync.Mutex
	kept   [][]byte
)

// keepMapped maps the output out shared and writable, and keeps the mapping.
func keepMapped(out sdk.PartitionHandle) error {
	f, err := os.OpenFile(out.Path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := unix.Mmap(int(f.Fd()), 0, int(out.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return err
	}
	keptMu.Lock()
	kept = append(kept, data)
	keptMu.Unlock()
	return nil
}
