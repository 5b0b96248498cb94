// Package tlstest makes a throwaway certificate authority and server
// certificates for tests of TLS connections (Postgres sslmode=verify-full,
// Kafka kafka.tls.*, the Schema Registry).
//
// Place in the pipeline: beside it, never in it. Only tests import it (the
// connector's TLS tests). The keys and certificates it makes live in memory;
// only WriteCA writes a file, into a directory the test gives.
package tlstest
