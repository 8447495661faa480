package timeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Host-side phase names. Backend phases keep the names their backend gives them
// (sdk.PhaseUpload, sdk.PhaseNTT, ...).
const (
	PhaseBudgetWait = "budget_wait" // queued for synthesis until memory was reserved
	PhaseSynthesis  = "synthesis"   // gnark's solver
	PhaseStage      = "stage"       // writing W, A, B to shared memory
	PhaseDispatch   = "dispatch"    // handed to a device (an instant)
	PhaseKeyLoad    = "key_load"    // a proving key loaded on the device on demand, before its partition
	PhaseFinalize   = "finalize"    // verification and journaling
	// PhaseUtilization is one utilization sample of a device (Lane), not of a
	// partition: Job is empty, the event spans the sample's period and
	// Utilization holds its percentage, Source what measured it ("nvml").
	PhaseUtilization = "utilization"
)

// Event is one phase of one partition attempt.
type Event struct {
	Job       string `json:"job"`
	Partition int    `json:"partition"`
	Attempt   int    `json:"attempt"`
	Class     string `json:"class,omitempty"`
	Circuit   string `json:"circuit,omitempty"`
	// Lane is the device that ran the phase, or empty for host phases.
	Lane  string    `json:"lane,omitempty"`
	Phase string    `json:"phase"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// DeviceBusy is the time the device reported busy within the phase.
	DeviceBusy time.Duration `json:"device_busy_ns,omitempty"`
	// Utilization (0..100) and Source are set on PhaseUtilization events only;
	// a pointer, because 0% is a sample too.
	Utilization *float64 `json:"utilization,omitempty"`
	Source      string   `json:"source,omitempty"`
}

// Rotation bounds a timeline on disk: once the file passes MaxBytes it is
// renamed PATH.1 (an older PATH.1 becomes PATH.2, and so on up to PATH.Keep;
// the oldest is deleted) and a new file started, so the timeline never takes
// more than about MaxBytes × (Keep + 1). Zero MaxBytes never rotates.
type Rotation struct {
	MaxBytes uint64
	Keep     int
}

// Writer appends events to a file. It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	path string
	rot  Rotation
	f    *os.File
	buf  *bufio.Writer
	size uint64 // bytes in the current file, buffered ones included
	err  error
}

// Create opens path for appending (creating it, mode 0600), never rotated.
func Create(path string) (*Writer, error) { return Open(path, Rotation{}) }

// Open opens path for appending (creating it, mode 0600), rotated as rot says.
func Open(path string, rot Rotation) (*Writer, error) {
	w := &Writer{path: path, rot: rot}
	if err := w.openLocked(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Writer) openLocked() error {
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	w.f, w.buf, w.size = f, bufio.NewWriterSize(f, 64<<10), uint64(st.Size())
	return nil
}

// Record appends one event. Errors are kept and returned by Close: the timeline
// must never stop the pipeline.
func (w *Writer) Record(ev Event) {
	line, err := json.Marshal(ev)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.f == nil {
		return
	}
	if err != nil {
		w.err = err
		return
	}
	if w.rot.MaxBytes > 0 && w.size > 0 && w.size+uint64(len(line))+1 > w.rot.MaxBytes {
		if w.err = w.rotateLocked(); w.err != nil {
			return
		}
	}
	line = append(line, '\n')
	_, w.err = w.buf.Write(line)
	w.size += uint64(len(line))
}

// rotateLocked closes the current file, shifts PATH.i to PATH.i+1 (dropping
// the oldest) and PATH to PATH.1, and opens a new PATH.
func (w *Writer) rotateLocked() error {
	if err := w.buf.Flush(); err != nil {
		return err
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	w.f = nil
	if w.rot.Keep < 1 {
		if err := os.Remove(w.path); err != nil && !os.IsNotExist(err) {
			return err
		}
	} else {
		os.Remove(fmt.Sprintf("%s.%d", w.path, w.rot.Keep))
		for i := w.rot.Keep - 1; i >= 1; i-- {
			if err := os.Rename(fmt.Sprintf("%s.%d", w.path, i), fmt.Sprintf("%s.%d", w.path, i+1)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		if err := os.Rename(w.path, w.path+".1"); err != nil {
			return err
		}
	}
	return w.openLocked()
}

// Files lists the timeline at path with the files rotation made of it, oldest
// first (PATH.N ... PATH.1, PATH), as far as they exist.
func Files(path string) []string {
	var rotated []string
	for i := 1; ; i++ {
		p := fmt.Sprintf("%s.%d", path, i)
		if _, err := os.Stat(p); err != nil {
			break
		}
		rotated = append(rotated, p)
	}
	out := make([]string, 0, len(rotated)+1)
	for i := len(rotated) - 1; i >= 0; i-- {
		out = append(out, rotated[i])
	}
	if _, err := os.Stat(path); err == nil {
		out = append(out, path)
	}
	return out
}

// Flush writes buffered events to the file.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil || w.buf == nil {
		return w.err
	}
	if err := w.buf.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// Close flushes and closes the file.
func (w *Writer) Close() error {
	err := w.Flush()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		if cerr := w.f.Close(); cerr != nil && err == nil {
			err = cerr
		}
		w.f = nil
	}
	return err
}

// Read parses a timeline file.
func Read(r io.Reader) ([]Event, error) {
	var evs []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("timeline line %d: %w", line, err)
		}
		evs = append(evs, ev)
	}
	return evs, sc.Err()
}
