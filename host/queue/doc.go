// Package queue is zkhost's ordered dispatch queue of partitions, ordered by
// the job's priority class (api.Class, the one type of the idea, shared with
// the memory budget, the config and the client API).
//
// Every partition of every job waits here until a dispatcher takes it to
// reserve memory and synthesize it. The order is the lesson of the
// production prover this design learns from (see background/ in the design
// notes): when partitions raced each other for memory in random order,
// every job advanced a little and none finished, so the pipeline stalled
// together. Here the order is strict:
//
//   - Across classes, priority: a Critical item (a deadline proof) is
//     always taken before High, High before Normal, Normal before Low.
//   - Within a class, (job sequence number, partition index): job 7 is
//     dispatched completely before job 8 starts, so jobs finish one after
//     another and the first result arrives as early as possible.
//   - A partition that fails after dispatch (its backend crashed) is put back
//     with Requeue into its place, ahead of later jobs, not at the tail.
//
// Pop blocks until there is work or its context ends, and any number of
// consumers may pop concurrently; wake-ups cannot be lost (a consumer takes
// the wake-up channel under the same lock a producer closes it under).
// PopClass serves a dispatcher per class, so that a Normal partition blocked
// on the budget never holds back a Critical one: the budget (package
// host/budget) then wakes waiters in class order. PopIf serves consumers
// that can take only some items.
//
// Dependencies: queue imports the standard library and host/api, for Class.
package queue
