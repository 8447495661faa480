// Package journal keeps the daemon's jobs durable, in a bbolt database.
//
// A job is written with its witnesses before the host acknowledges it, and each
// partition's proof is written as soon as it is verified, so a daemon that
// restarts (crash, upgrade, reboot) finds every unfinished job with the indices
// of the partitions still to prove and their witnesses, and resumes them
// without the client resubmitting. Submission is idempotent on the client's
// request ID: a retried submission gets the job it already created.
//
// Every mutation is committed and synced before the call returns. Mutations
// that arrive while a commit syncs share the next transaction (group commit),
// so a disk with slow syncs costs latency, not proofs per second.
//
// Nothing read back is trusted blindly (integrity.go): every stored value has
// a checksum beside it, checked on every read; Open checks the whole journal,
// fails each job with a damaged record (and only those), and refuses a file
// that is empty, cut short or too damaged to read, with an error that names it
// and the way out (Recovery).
//
// A full disk is a state, not a failure (space.go): progress on accepted jobs
// waits and is retried until it commits, a reserve file beside the journal is
// given up to make room for it, new jobs are refused with a NoSpaceError that
// names the directory and the space wanted, and the journal recovers by itself
// when space returns. A Journal is
// safe for concurrent use. The database
// file is mode 0600 (witnesses are private inputs) and holds an exclusive lock,
// so a second daemon on the same state directory fails with ErrLocked instead
// of corrupting the first one's jobs.
package journal
