// Command faultsynth is a synthesizer plugin that misbehaves on purpose, for the
// end-to-end tests of synthesizer plugins (e2e/synth_test.go). It solves gnark
// circuits without custom hints (the example circuits, on BLS12-381 or BN254)
// with sdk/synthgnark and injects the fault its environment names:
//
//	ZKHOST_FAULT_SYNTH=crash        write part of the partition file, then exit with status 3
//	ZKHOST_FAULT_SYNTH=hang         never answer Synthesize
//	ZKHOST_FAULT_SYNTH=lie          write the partition with one internal wire of W changed
//	ZKHOST_FAULT_SYNTH=lie-a        write the partition with A[0] changed
//	ZKHOST_FAULT_SYNTH=lie-public   write the partition with the first public input changed
//	ZKHOST_FAULT_SYNTH=keep-mapped  write the partition, then keep it mapped writable (so it
//	                                could change it under the backend: the host refuses it)
//	ZKHOST_FAULT_SYNTH=stdout       print to standard output before serving (breaks
//	                                go-plugin's handshake)
//	ZKHOST_FAULT_SYNTH=stdout-late  print to standard output during every Synthesize
//	                                (harmless: go-plugin forwards it to the host's log)
//
// ZKHOST_FAULT_SYNTH_ONCE=PATH injects the fault only while PATH does not exist,
// creating it when it does, so the fault strikes once across restarts. With no
// fault set it is a well-behaved synthesizer.
package main
