// Package shm is the host's side of the shared-memory partitions: it writes each
// synthesized partition (W, A, B) into a file a backend maps read-only with
// sdk.OpenPartition, and hands back the sdk.PartitionHandle that names it.
//
// The files live in one private directory (mode 0700, files 0600): preferably in
// /dev/shm, which is tmpfs, so a partition is one copy in RAM that the backend
// maps without any I/O; otherwise under the host's state directory. Files are
// never fsynced: they are scratch data that a crash makes worthless, and
// ReapStale removes what a crashed host left behind.
package shm
