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

// Writer appends events to a file. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	f   *os.File
	buf *bufio.Writer
	enc *json.Encoder
	err error
}

// Create opens path for appending (creating it, mode 0600).
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	buf := bufio.NewWriterSize(f, 64<<10)
	return &Writer{f: f, buf: buf, enc: json.NewEncoder(buf)}, nil
}

// Record appends one event. Errors are kept and returned by Close: the timeline
// must never stop the pipeline.
func (w *Writer) Record(ev Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.f == nil {
		return
	}
	w.err = w.enc.Encode(ev)
}

// Flush writes buffered events to the file.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
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
