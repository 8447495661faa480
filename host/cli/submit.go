package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/client"
)

// Submit runs `zkhost submit`: it streams one witness file per partition as a job,
// and prints its id on stdout. With --wait (or --out) it then follows the job, showing
// each partition as it finishes, and writes the proofs into --out.
var Submit = Command{Name: "submit", Summary: "submit a proof job (and optionally wait for its proofs)", Usage: "submit --circuit NAME [flags] WITNESS...", Run: submitCmd}

func submitCmd(ctx context.Context, inv Invocation) error {
	args, stdout, stderr := inv.Args, inv.Stdout, inv.Stderr
	fs := inv.FlagSet(`
Submit a proof job: one partition per WITNESS file (a gnark full witness, as
witness.MarshalBinary writes it). Prints the job id on stdout. With --assignment
the files are wire assignments instead: every wire's value, solved elsewhere
(docs/assignment.md); the daemon checks every constraint before proving. Circom
witnesses (.wtns) of a circuit imported with key import --r1cs are wire
assignments, and are submitted as such without the flag (docs/circom.md).

With --wait, follow the job until it ends, printing each partition as it finishes
(on stderr). With --out DIR (implies --wait), write each partition's proof to
DIR/<i>.proof (gnark Proof.WriteTo) and public witness to DIR/<i>.public
(witness.MarshalBinary), i counting from 0 in WITNESS order, once the job is done;
with --snarkjs also as snarkjs's DIR/<i>.proof.json and DIR/<i>.public.json, which
snarkjs groth16 verify reads.

The files are streamed, never held whole in memory: the daemon checks each
file's size against what the circuit expects before any byte is sent.

--request-id makes the submission idempotent: submitting again with the same id
and the same files returns the same job instead of proving twice.`)
	var (
		d         daemonFlags
		circuit   = fs.String("circuit", "", "circuit name, as the daemon's config names it (required)")
		priority  = fs.String("priority", "normal", "priority class: critical, high, normal or low")
		requestID = fs.String("request-id", "", "client request id, for idempotent retries")
		wait      = fs.Bool("wait", false, "wait for the job to end")
		out       = fs.String("out", "", "write proofs and public witnesses into this directory (implies --wait)")
		verbose   = fs.Bool("v", false, "with --wait, print every partition event, not only finished ones")
		assign    = fs.Bool("assignment", false, "the files are wire assignments (docs/assignment.md), not gnark witnesses")
		snarkjs   = fs.Bool("snarkjs", false, "with --out, also write snarkjs's <i>.proof.json and <i>.public.json")
	)
	d.register(fs)
	files, err := Parse(fs, args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if *circuit == "" {
		return usageErr(fs, "--circuit is required")
	}
	if len(files) == 0 {
		return usageErr(fs, "no WITNESS file: give one per partition")
	}
	class, err := api.ParseClass(*priority)
	if err != nil {
		return usageErr(fs, "--priority: %v", err)
	}
	if *out != "" {
		// Before submitting: a bad --out found only once the job is proven wastes it.
		if err := CheckOutDir(*out); err != nil {
			return err
		}
	}
	if *snarkjs && *out == "" {
		return usageErr(fs, "--snarkjs writes files into --out DIR: give --out")
	}
	if !*assign {
		if *assign, err = CircomWitnesses(files); err != nil {
			return err
		}
	}
	sizes, err := inputSizes(files, *assign)
	if err != nil {
		return err
	}
	c, err := d.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	h := api.SubmitHeader{Circuit: *circuit, Class: class, RequestID: *requestID, Assignments: *assign, InputSizes: sizes}
	job, err := streamFiles(ctx, c, h, files)
	if errors.Is(err, client.ErrNoStreaming) {
		// A daemon older than SubmitStream: one message, within its limit.
		job, err = submitWhole(ctx, c, h, files)
	}
	if err != nil {
		return api.NameInputFiles(err, files)
	}
	fmt.Fprintln(stdout, job.ID)
	if !*wait && *out == "" {
		return nil
	}
	fmt.Fprintf(stderr, "job %s: %s of %s, class %s\n", job.ID, plural(len(job.Partitions), "partition"), job.Circuit, job.Class)
	return follow(ctx, c, &d, job.ID, *out, *snarkjs, *verbose, stderr)
}

// inputSizes returns the size of each input file, refusing one that is not a
// regular file or is empty before anything is sent.
func inputSizes(files []string, assign bool) ([]int64, error) {
	noun := "witness"
	if assign {
		noun = "wire assignment"
	}
	sizes := make([]int64, len(files))
	for i, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", noun, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s %s is not a regular file (%s)", noun, f, fi.Mode().Type())
		}
		if fi.Size() == 0 {
			return nil, fmt.Errorf("%s file %s is empty", noun, f)
		}
		sizes[i] = fi.Size()
	}
	return sizes, nil
}

// streamFiles submits the job with SubmitStream, reading each file as it is
// sent, so that no file is held in memory whole and no message limit applies:
// the daemon holds each file's size to what the circuit expects before a byte
// is sent.
func streamFiles(ctx context.Context, c *client.Client, h api.SubmitHeader, files []string) (api.Job, error) {
	readers := make([]io.Reader, len(files))
	for i, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return api.Job{}, fmt.Errorf("%s: %w", h.Noun(), err)
		}
		defer f.Close()
		readers[i] = f
	}
	return c.SubmitStream(ctx, h, readers)
}

// submitWhole submits the job in one Submit message, for a daemon that does not
// take streamed submissions; the files must fit that message together.
func submitWhole(ctx context.Context, c *client.Client, h api.SubmitHeader, files []string) (api.Job, error) {
	if err := checkWitnessSizes(files, api.DefaultMaxMessageBytes); err != nil {
		return api.Job{}, err
	}
	req := api.SubmitRequest{Circuit: h.Circuit, Class: h.Class, RequestID: h.RequestID}
	for _, f := range files {
		w, err := os.ReadFile(f)
		if err != nil {
			return api.Job{}, fmt.Errorf("%s: %w", h.Noun(), err)
		}
		if h.Assignments {
			req.Assignments = append(req.Assignments, w)
		} else {
			req.Witnesses = append(req.Witnesses, w)
		}
	}
	return c.Submit(ctx, req)
}

// checkWitnessSizes refuses, before reading any of them, witness files that are
// not regular files or that together pass limit, the most one Submit message may
// carry (the API's message limit; it applies only to a daemon that takes no
// streamed submission): reading a gigabyte only for gRPC to refuse it costs the
// client seconds and its size in memory, and gRPC's refusal names neither the
// file nor the limit.
func checkWitnessSizes(files []string, limit int) error {
	var total int64
	largest, largestSize := "", int64(-1)
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return fmt.Errorf("witness: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("witness %s is not a regular file (%s)", f, fi.Mode().Type())
		}
		total += fi.Size()
		if fi.Size() > largestSize {
			largest, largestSize = f, fi.Size()
		}
	}
	if total > int64(limit) {
		return fmt.Errorf("the witness files take %s together (the largest, %s, %s); one submission carries at most %s (the API's message limit): split the job into several",
			api.FormatBytes(uint64(total)), largest, api.FormatBytes(uint64(largestSize)), api.FormatBytes(uint64(limit)))
	}
	return nil
}

// Wait runs `zkhost wait`: it follows a job until it ends, showing partitions as they
// finish, and writes its proofs into --out.
var Wait = Command{Name: "wait", Summary: "follow a job until it ends and write its proofs", Usage: "wait [flags] JOB", Run: waitCmd}

func waitCmd(ctx context.Context, inv Invocation) error {
	args, stderr := inv.Args, inv.Stderr
	fs := inv.FlagSet(`
Follow a job until it ends, printing each partition as it finishes (on stderr).
With --out DIR, write each partition's proof to DIR/<i>.proof and public witness
to DIR/<i>.public once the job is done, and with --snarkjs also as snarkjs's
DIR/<i>.proof.json and DIR/<i>.public.json (snarkjs groth16 verify reads them). A
job that already ended is reported (and its proofs written) at once. Exits with an
error if the job failed or was cancelled.`)
	var (
		d       daemonFlags
		out     = fs.String("out", "", "write proofs and public witnesses into this directory")
		snarkjs = fs.Bool("snarkjs", false, "with --out, also write snarkjs's <i>.proof.json and <i>.public.json")
		verbose = fs.Bool("v", false, "print every partition event, not only finished ones")
	)
	d.register(fs)
	arg, c, err := d.parseOneAndDial(fs, args, "JOB")
	if c == nil {
		return err // nil after --help
	}
	defer c.Close()
	if *snarkjs && *out == "" {
		return usageErr(fs, "--snarkjs writes files into --out DIR: give --out")
	}
	if *out != "" {
		if err := CheckOutDir(*out); err != nil {
			return err
		}
	}
	return follow(ctx, c, &d, arg, *out, *snarkjs, *verbose, stderr)
}

// follow awaits a job with a progress printer, then writes its outputs into out (if set).
// d is how the daemon was found, repeated in the hint to follow the job again.
func follow(ctx context.Context, c *client.Client, d *daemonFlags, jobID, out string, snarkjs, verbose bool, stderr io.Writer) error {
	p := &progress{w: stderr, verbose: verbose, started: map[int]time.Time{}, proving: map[int]time.Time{}}
	job, err := c.Await(ctx, jobID, p.event)
	if err != nil {
		again := "zkhost wait " + jobID + d.args()
		if out != "" {
			again += " --out " + shellQuote(out)
		}
		if snarkjs {
			again += " --snarkjs"
		}
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return fmt.Errorf("stopped waiting; job %s goes on in the daemon (`%s` to follow it again)", jobID, again)
		}
		if errors.Is(err, api.ErrNotFound) {
			return fmt.Errorf("wait for job %s: %w", jobID, err)
		}
		// The connection, not the job, failed: the job may well be running still.
		return fmt.Errorf("wait for job %s: %w; the job may still be running in the daemon (`%s` to follow it again)", jobID, err, again)
	}
	switch job.State {
	case api.JobDone:
	case api.JobCancelled:
		return fmt.Errorf("job %s was cancelled", job.ID)
	default:
		msg := job.Error
		if msg == "" {
			msg = "no reason given"
		}
		return fmt.Errorf("job %s %s: %s", job.ID, job.State, msg)
	}
	if out == "" {
		return nil
	}
	written, err := writeOutputs(out, job, snarkjs)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s to %s\n", plural(len(written), "file"), out)
	return nil
}

// progress prints a job's events as lines: every finished, retried or failed partition
// (all events with verbose), and the job's end. Durations come from the daemon's event
// times, so they measure the daemon's work, not this client's latency.
type progress struct {
	w       io.Writer
	verbose bool
	total   int
	done    int
	// started and proving hold when each partition's synthesis and proving began.
	started map[int]time.Time
	proving map[int]time.Time
	created time.Time
}

func (p *progress) event(e api.JobEvent) error {
	switch {
	case e.Kind == api.EventSnapshot && e.Job != nil:
		p.total = len(e.Job.Partitions)
		p.done = e.Job.Count(api.PartitionVerified)
		p.created = e.Job.CreatedAt
		// A job that has ended is reported by the terminal event that follows.
		if !e.Job.State.Terminal() && (p.done > 0 || e.Job.State == api.JobRunning) {
			fmt.Fprintf(p.w, "job %s %s: %d/%s verified\n", e.JobID, e.Job.State, p.done, plural(p.total, "partition"))
		}
	case e.Kind == api.EventPartitionSynthesizing:
		p.started[e.Partition] = e.Time
		p.verboseLine(e, "synthesizing")
	case e.Kind == api.EventPartitionProving:
		p.proving[e.Partition] = e.Time
		p.verboseLine(e, fmt.Sprintf("proving on %s (attempt %d)", e.Device, e.Attempt))
	case e.Kind == api.EventPartitionQueued:
		p.verboseLine(e, "queued")
	case e.Kind == api.EventPartitionVerified:
		p.done++
		line := fmt.Sprintf("[%d/%d] partition %d verified", p.done, p.total, e.Partition)
		if e.Device != "" {
			line += " on " + e.Device
		}
		var parts []string
		if s, ok := p.started[e.Partition]; ok {
			if pr, ok := p.proving[e.Partition]; ok {
				// From synthesis start to dispatch: synthesis plus the wait for a
				// device slot (the daemon's own split is in `zkhost job`).
				parts = append(parts, "staged "+fmtDuration(pr.Sub(s)))
			}
		}
		if pr, ok := p.proving[e.Partition]; ok {
			parts = append(parts, "prove "+fmtDuration(e.Time.Sub(pr)))
		}
		if e.Attempt > 1 {
			parts = append(parts, fmt.Sprintf("attempt %d", e.Attempt))
		}
		if len(parts) > 0 {
			line += " (" + strings.Join(parts, ", ") + ")"
		}
		fmt.Fprintln(p.w, line)
	case e.Kind == api.EventPartitionRetried:
		fmt.Fprintf(p.w, "partition %d attempt %d on %s failed, retrying: %s\n", e.Partition, e.Attempt, orDash(e.Device), e.Reason)
	case e.Kind == api.EventPartitionFailed:
		fmt.Fprintf(p.w, "partition %d failed: %s\n", e.Partition, e.Reason)
	case e.Kind.Terminal() && e.Job != nil:
		took := ""
		if d := span(e.Job.CreatedAt, e.Job.FinishedAt); d >= 0 {
			took = " in " + fmtDuration(d)
		}
		fmt.Fprintf(p.w, "job %s %s%s: %d/%s verified\n", e.JobID, e.Job.State, took,
			e.Job.Count(api.PartitionVerified), plural(len(e.Job.Partitions), "partition"))
	}
	return nil
}

func (p *progress) verboseLine(e api.JobEvent, what string) {
	if p.verbose {
		fmt.Fprintf(p.w, "partition %d %s\n", e.Partition, what)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
