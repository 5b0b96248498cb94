// Package gobuild builds a main package of this module into a binary, for
// the tests and the bench that run mooncdc (or a broker) as a process.
//
// It builds with the calling binary's own race setting. Under `go test
// -race` the go command has just compiled every package with -race, so a
// build with -race is a link from the cache, while a build without it
// compiles the whole dependency tree a second time (on the 2-core machine
// about 140 s of CPU from an empty cache, a minute of make test). The
// process is then also checked by the race detector, as the test is. The
// bench and the fault suite are built without -race and so build without
// it: their figures and timings are those of the binary users run.
package gobuild
