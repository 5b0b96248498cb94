// Package npmfetch fetches packages from the npm registry without the npm
// client, for a machine with only Go: the registry's package document
// lists every version with its tarball and integrity (the npm registry
// API's "packument"), a tarball is checked against its sha512 integrity
// before it is unpacked, and Untar unpacks it refusing paths that leave
// the target directory. internal/pgtest fetches PostgreSQL server binaries
// with it, internal/jsclients Node.js and npm.
package npmfetch
