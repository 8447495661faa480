// Package budget is zkhost's host memory ledger: one budget, in bytes, from
// which every byte the host commits (synthesized partitions, mapped proving
// keys, staging buffers) is reserved before it is allocated.
//
// It encodes lessons from the production prover this design learns from
// (see background/ in the design notes):
//
//   - One ledger. Memory that two accountants each think is theirs is
//     memory counted twice; a single Ledger is the only place that says yes.
//   - Two-step release. A partition's synthesized vectors are freed as soon
//     as the backend has them (Release of that part), the rest when its proof
//     is finalized (ReleaseAll). Holding everything until finalize made the
//     budget look full while the device starved.
//   - No lost wake-ups. Every release and every abandoned wait re-examines
//     the waiters under the same lock that changed the numbers, so a waiter
//     that fits is granted at once, never left asleep beside free memory.
//   - Priority across classes, order within a class. Waiters are granted
//     Critical first, then High, Normal, Low, first come first served within
//     a class. There is no barging: a request, however small, never takes
//     bytes ahead of an earlier waiter of its own or a more urgent class
//     (the head of the line blocks everything behind it), so a large
//     partition is not starved by a stream of small ones.
//   - Budget held back for Critical. A critical reserve is usable only by
//     the Critical class, so batch work can fill the machine and a deadline
//     proof still finds memory (or waits only for the critical work ahead
//     of it, and for bytes being released).
//
// A request that could never be granted (larger than its class may ever
// use) fails at once with the numbers instead of waiting forever; Fits lets
// admission refuse such a job at submit.
//
// Dependencies: budget imports host/api for api.Class, the one definition
// of the priority classes, which the dispatch queue uses too, so the ledger
// and the queue can never disagree about what "high" means.
package budget
