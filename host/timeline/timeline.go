package timeline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"
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
	// Request is the job's request id, when its client gave one: for a job a
	// cluster host runs for a partition of a cluster job, the cluster job
	// and partition (api.ParseClusterRequestID).
	Request string `json:"request,omitempty"`
	Class   string `json:"class,omitempty"`
	Circuit string `json:"circuit,omitempty"`
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
	// Bytes is set on PhaseStage events: the size of the partition file the
	// host hands the backend (full: W, A and B; compact: W packed).
	Bytes uint64 `json:"bytes,omitempty"`
}

// Rotation bounds a timeline on disk: once the file passes MaxBytes it is
// renamed PATH.1 (an older PATH.1 becomes PATH.2, and so on up to PATH.Keep;
// the oldest is deleted) and a new file started, so the timeline never takes
// more than about MaxBytes × (Keep + 1). Zero MaxBytes never rotates.
type Rotation struct {
	MaxBytes uint64
	Keep     int
}

// bufferBytes is how many bytes of whole lines the Writer gathers before it
// writes them; the daemon also flushes every second.
const bufferBytes = 64 << 10

// Writer appends events to a file. It is safe for concurrent use.
//
// It writes whole lines only, so a full disk never leaves a line cut in the
// middle: a write the file took only part of is cut back to the last whole
// line. While writes fail (a full disk, a file size limit) the events are
// dropped and counted, the failure is logged once, and every flush tries
// again, so recording resumes by itself when space returns. The timeline must
// never stop the pipeline, so Record returns nothing.
type Writer struct {
	mu   sync.Mutex
	path string
	rot  Rotation
	log  hclog.Logger
	f    *os.File // nil when closed, or when reopening after a rotation failed
	buf  []byte   // whole lines not yet written
	size uint64   // bytes in the current file, the lines in buf not counted
	// failing is the error of the last failed write, nil while writes succeed;
	// dropped counts the events lost since it began.
	failing error
	dropped int
	// torn is set when a partial write could not be cut back: the next write
	// first tries again.
	torn bool
	// badEvent is set once an event could not be encoded (logged once).
	badEvent bool
	closed   bool
}

// Create opens path for appending (creating it, mode 0600), never rotated,
// with no logger.
func Create(path string) (*Writer, error) { return Open(path, Rotation{}, nil) }

// Open opens path for appending (creating it, mode 0600), rotated as rot
// says. Failures to write are logged through log (nil logs nothing). A last
// line an earlier writer left cut off (a crash or a full disk mid-line) is
// cut away first, so the events appended after it stay readable.
func Open(path string, rot Rotation, log hclog.Logger) (*Writer, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	w := &Writer{path: path, rot: rot, log: log}
	if err := w.openLocked(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Writer) openLocked() error {
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	size, err := wholeLines(f, st.Size())
	if err != nil {
		f.Close()
		return fmt.Errorf("timeline %s: %w", w.path, err)
	}
	if size < st.Size() {
		if err := f.Truncate(size); err != nil {
			f.Close()
			return fmt.Errorf("timeline %s: cutting a torn last line: %w", w.path, err)
		}
		w.log.Warn("timeline: cut a torn last line an earlier writer left", "path", w.path, "bytes", st.Size()-size)
	}
	w.f, w.size = f, uint64(size)
	return nil
}

// wholeLines returns the length of f's first size bytes up to and including
// their last newline: where a file with a torn last line should end.
func wholeLines(f *os.File, size int64) (int64, error) {
	var b [4096]byte
	for end := size; end > 0; {
		n := min(end, int64(len(b)))
		if _, err := f.ReadAt(b[:n], end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b[:n], '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return 0, nil
}

// Record appends one event; an event that cannot be written is dropped (see
// Writer).
func (w *Writer) Record(ev Event) {
	line, err := json.Marshal(ev)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if err != nil {
		// Only a NaN or infinite utilization gets here.
		if !w.badEvent {
			w.badEvent = true
			w.log.Warn("timeline: an event could not be encoded; dropped (logged once)", "phase", ev.Phase, "lane", ev.Lane, "error", err)
		}
		return
	}
	pending := w.size + uint64(len(w.buf))
	if w.rot.MaxBytes > 0 && pending > 0 && pending+uint64(len(line))+1 > w.rot.MaxBytes {
		w.flushLocked()
		if err := w.rotateLocked(); err != nil {
			w.failedLocked(err, 0)
		}
	}
	w.buf = append(w.buf, line...)
	w.buf = append(w.buf, '\n')
	if len(w.buf) >= bufferBytes {
		w.flushLocked()
	}
}

// flushLocked writes the buffered lines. On failure it cuts the file back to
// its last whole line and drops the lines (a full disk must not grow the
// daemon's memory); the next flush tries again with the lines recorded since.
func (w *Writer) flushLocked() error {
	if len(w.buf) == 0 {
		return w.failing
	}
	lines := bytes.Count(w.buf, []byte{'\n'})
	if w.f == nil {
		// A rotation failed between closing the old file and opening the new.
		if err := w.openLocked(); err != nil {
			w.failedLocked(err, lines)
			return err
		}
	}
	if w.torn {
		if err := w.f.Truncate(int64(w.size)); err != nil {
			w.failedLocked(err, lines)
			return err
		}
		w.torn = false
	}
	n, err := w.f.Write(w.buf)
	if err != nil {
		if n > 0 {
			// The file took part of a line: cut it back, or try again
			// before the next write.
			if terr := w.f.Truncate(int64(w.size)); terr != nil {
				w.torn = true
			}
		}
		w.failedLocked(err, lines)
		return err
	}
	w.size += uint64(n)
	w.buf = w.buf[:0]
	if w.failing != nil {
		w.log.Info("timeline: recording again", "path", w.path, "dropped_events", w.dropped)
		w.failing, w.dropped = nil, 0
	}
	return nil
}

// failedLocked drops the buffered lines (lines events) after err, logging
// the first failure of a run of them.
func (w *Writer) failedLocked(err error, lines int) {
	if w.failing == nil {
		w.log.Warn("timeline: writing failed; events are dropped until a write succeeds (tried again at every flush)", "path", w.path, "error", err)
	}
	w.failing = err
	w.dropped += lines
	w.buf = w.buf[:0]
}

// rotateLocked closes the current file, shifts PATH.i to PATH.i+1 (dropping
// the oldest) and PATH to PATH.1, and opens a new PATH.
func (w *Writer) rotateLocked() error {
	if w.f != nil {
		if err := w.f.Close(); err != nil {
			return err
		}
		w.f = nil
	}
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

// Flush writes buffered events to the file. It returns the error of the last
// write while writes fail, nil once one succeeds.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	return w.flushLocked()
}

// Close flushes and closes the file; events recorded after it are dropped.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	err := w.flushLocked()
	w.closed = true
	if w.f != nil {
		if cerr := w.f.Close(); cerr != nil && err == nil {
			err = cerr
		}
		w.f = nil
	}
	return err
}

// Contents is what ReadAll finds in a timeline.
type Contents struct {
	Events []Event
	// TornLine is the number (from 1) of a last line that ends without a
	// newline and is not an event: a writer was cut off in it (a full disk, a
	// crash, or a file read while it is written). It is skipped; 0 when there
	// is none.
	TornLine int
}

// ReadAll parses a timeline, skipping a torn last line (see Contents). Any
// other line that is not an event is an error naming the line.
func ReadAll(r io.Reader) (Contents, error) {
	var c Contents
	br := bufio.NewReaderSize(r, 64<<10)
	line := 0
	for {
		text, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line: gather it whole, up to maxLine.
			long := append([]byte(nil), text...)
			for err == bufio.ErrBufferFull && len(long) <= maxLine {
				text, err = br.ReadSlice('\n')
				long = append(long, text...)
			}
			text = long
			if len(text) > maxLine {
				return Contents{}, fmt.Errorf("timeline line %d: longer than %d bytes", line+1, maxLine)
			}
		}
		if err != nil && err != io.EOF {
			return Contents{}, err
		}
		if len(text) == 0 && err == io.EOF {
			return c, nil
		}
		line++
		complete := len(text) > 0 && text[len(text)-1] == '\n'
		body := bytes.TrimSpace(text)
		if len(body) > 0 {
			var ev Event
			if jerr := json.Unmarshal(body, &ev); jerr != nil {
				if !complete {
					c.TornLine = line
					return c, nil
				}
				return Contents{}, fmt.Errorf("timeline line %d: %w", line, jerr)
			}
			c.Events = append(c.Events, ev)
		}
		if err == io.EOF {
			return c, nil
		}
	}
}

// maxLine is the longest line ReadAll accepts; an event is a few hundred bytes.
const maxLine = 1 << 20

// Read parses a timeline as ReadAll does, skipping a torn last line silently.
func Read(r io.Reader) ([]Event, error) {
	c, err := ReadAll(r)
	return c.Events, err
}

// ReadFile reads the timeline file at path as Read does.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}
