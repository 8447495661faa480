// Package daemon is `zkhost serve`: the proving host that operators run.
//
// It owns the pipeline every partition travels:
//
//	submit ─> synthesis queue ─> budget ─> synthesis pool ─> ready queue ─> device slots ─> finalizer ─> journal
//
// Both queues dispatch the highest priority class first and, within a class, in
// strict (job sequence, partition index) order, so jobs finish one after another
// instead of all of them creeping forward at once. A partition reserves its memory
// from the one budget ledger before synthesis starts (nothing is allocated that was
// not reserved, so overlapping work cannot run the machine out of memory) and
// releases it in two steps: the backend's working memory when the device returns,
// the synthesized data once the proof is verified and recorded. Each device gets as
// many slots as its backend declared partitions in flight, so the next partition is
// staged while the current one computes: the device never waits while the CPU
// prepares its next work. A critical partition has a synthesis lane of its own and
// budget held back for it. The finalizer verifies every proof with gnark before it
// counts (a bad device costs a retry, never a wrong proof). Jobs, witnesses and
// proofs are durable in the journal: a restarted daemon resumes unfinished jobs
// from their unproved partitions.
//
// Synthesis has two sources, chosen per circuit: gnark's solver in the daemon,
// or the circuit's synthesizer plugin ([[circuit]] synthesizer, package
// host/synth, synthplugin.go), a process that writes the partition into a memfd
// the daemon made and seals once it answers. The pipeline around it is the same (budget first, order,
// verification); what the plugin writes is checked, and a proof that does not
// verify makes the daemon check the partition against the circuit, so a
// synthesizer that lies fails its job with an error that says so.
package daemon
