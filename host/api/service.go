package api

import "context"

// Service is what the daemon implements and the gRPC layer serves. Requests reach it
// validated (SubmitRequest.Validate passed, Class set to a real class, ids and names
// non-empty); errors it returns should wrap one of the sentinel errors (NotFoundf,
// InvalidArgumentf, Conflictf, Unavailablef, TooLarge), anything else reaches the client
// as an internal error with its message.
type Service interface {
	// Submit queues a job. The same RequestID with the same Digest returns the job already
	// created; the same RequestID with another Digest is an ErrConflict naming the job.
	// A job that can never fit the memory budget is a *ResourceExhaustedError (TooLarge).
	Submit(ctx context.Context, req SubmitRequest) (Job, error)
	// CheckSubmit checks a streamed submission's header before any of its bytes
	// arrive: the circuit exists, every declared size is the size the circuit
	// expects (an ErrInvalidArgument naming the input and that size), and the
	// caller's quotas and the journal's free space admit the job. Submit, once the
	// bytes are assembled, checks everything again and decides.
	CheckSubmit(ctx context.Context, h SubmitHeader) error
	// AdmitStream admits a streamed submission's inputs, after CheckSubmit and
	// before a byte of them is buffered: it refuses a header declaring more
	// inputs than one stream may, and reserves the declared bytes from the
	// memory budget in the job's class, waiting for them until ctx ends (a
	// total the budget could never grant is a *ResourceExhaustedError at
	// once). release gives the bytes back; the gRPC layer calls it once the
	// job is journaled (Submit returned) or the stream has failed. It may be
	// called more than once.
	AdmitStream(ctx context.Context, h SubmitHeader) (release func(), err error)
	// Await calls send with the job's events until the job ends: first an EventSnapshot
	// whose Job is the job as it is now (so a client that connects late, or reconnects,
	// starts from the truth), then one event per change, and last exactly one terminal
	// event whose Job is the final job with its proofs. It returns nil after the terminal
	// event, ctx.Err() when the client goes away (ctx is cancelled), or the error send
	// returned (the stream broke). An unknown job is an ErrNotFound.
	Await(ctx context.Context, jobID string, send func(JobEvent) error) error
	// Get returns a job; a done job carries its proofs and public witnesses.
	Get(ctx context.Context, jobID string) (Job, error)
	// Cancel stops a job and returns it. Cancelling an ended job returns it unchanged.
	Cancel(ctx context.Context, jobID string) (Job, error)
	// List returns recent jobs, newest first. The gRPC layer strips proof bytes.
	List(ctx context.Context, filter ListFilter) ([]Job, error)
	// Status reports queues, synthesis, devices and the memory budget.
	Status(ctx context.Context) (StatusReport, error)
	// PreloadKey loads a circuit's proving key on a device, or on every device when
	// device is empty, and returns the devices it acted on. Like EvictKey and
	// EnableDevice it is an admin action: the gRPC layer serves it to admins only.
	PreloadKey(ctx context.Context, circuit, device string) ([]string, error)
	// EvictKey unloads a circuit's proving key from a device, or from every device when
	// device is empty, and returns the devices it acted on.
	EvictKey(ctx context.Context, circuit, device string) ([]string, error)
	// EnableDevice puts a device taken out of service after repeated crashes back
	// into service and returns its status. An unknown device is an ErrNotFound.
	EnableDevice(ctx context.Context, device string) (DeviceStatus, error)
}
