// Package group runs a pipeline on only one of several mooncdc processes
// at a time: standby instances (ha.enabled: several processes with one
// config, exactly one of them active) and worker groups ("mooncdc run
// --config DIR": the pipelines of a directory shared among the workers).
// Both are members of a Kafka consumer group whose units of assignment,
// the seats, are partition 0 of one topic per pipeline: the offsets topic
// for standby instances (group mooncdc-<name>), the assignment topic
// mooncdc-pipeline-<name> for a worker group (group
// mooncdc-workers-<group>). The member that holds a seat runs a fresh
// connector.Pipeline for it; a revoke stops that pipeline cleanly before
// the callback returns (only then can the seat move), a lost membership
// aborts it at once.
//
// What it owns: the group membership (group.go: joining, the
// cooperative-sticky callbacks, leaving within a bound, joining again as a
// new member), the member's own clock on its session (lease.go: the lease
// lapses a margin before the coordinator can end the session, so a member
// cut off from the coordinator has stopped writing before its seat can be
// given to another), a seat's activations (standby.go: a fresh Pipeline
// each time, the wait for the slot's last walsender, the clean stop), the
// rules a directory of pipelines must follow and its assignment topics
// (workers.go), and the seats' /readyz and /status. It has no
// package-level state.
//
// Neighbours: cmd/mooncdc builds a Standby or a Workers and runs it.
// group builds each Pipeline with connector.New and the options
// connector.WithMetrics (one set of metrics across activations) and
// connector.Seated (fenced in both delivery modes), and uses of connector
// only its exported API: what connector/group_api.go exports for it
// (NewMetrics, ServeHTTP, Pipeline.Name, Inflight, Readiness) and the
// pipeline's own (Run, Abort, Status, Copies, TablePhases, Ready). It
// also imports connector/config (the Config, its Kafka options and
// ConfigError), connector/pgsource (ConnectSQL and LookupSlot, for the
// slot's walsender) and connector/internal/fault (Retry, Sleep).
//
// What it must not touch: a pipeline's stages and fields (the tracker, the
// sinks, phases): what it needs of them is a method in group_api.go. And
// nothing under connector/ imports group: it stands above the pipeline
// (cmd → group → connector; TestPackagesImportOnlyAlongTheFlow).
//
// Invariant: no two members write for one seat at once. The lease and the
// clean stop keep a member from writing after its seat may have moved;
// what the lease cannot cover (a process paused between its lease check
// and a write) the pipeline fences itself: the slot admits one walsender,
// and a seated pipeline writes through transactional producers whose
// epoch the next holder bumps (connector's delivery).
package group
