#pragma once
// The communicators of collectives across processes (runtime/distributed.hpp): a collective's
// group of devices runs over a communicator of exactly the processes holding its members, made
// the first time a collective spans those processes and kept for the rest of the run (never one
// per call). A (mesh, mesh axes) pair needs one per distinct set of processes among its groups.

namespace tessel::distributed {

// How many such communicators this process holds (a program run again makes none).
int communicator_count();

}  // namespace tessel::distributed
