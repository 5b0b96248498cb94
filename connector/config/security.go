package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Secrets may come from the config file, from MOONCDC_* variables (every
// key has one) or from files (the *password_file keys, for mounted
// secrets). A secret is never logged: the password keys are tagged secret
// and the connection URL's password is masked (Config.Redacted); the files'
// contents are only ever read into the clients' configs.

// readSecretFile reads a one-line secret; one trailing newline (as editors
// and `echo` leave) is dropped. Errors name the key and are *ConfigError.
func readSecretFile(key, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", &ConfigError{Err: fmt.Errorf("%s: cannot read the password file: %w (check the path and that mooncdc's user may read it)", key, err)}
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if s == "" {
		return "", &ConfigError{Err: fmt.Errorf("%s: %s is empty; write the password into it", key, path)}
	}
	return s, nil
}

// secretValue is value, or the content of file when file is set.
func SecretValue(value, fileKey, file string) (string, error) {
	if file == "" {
		return value, nil
	}
	return readSecretFile(fileKey, file)
}

// PostgresConnConfig parses postgres.url and applies postgres.password_file;
// its sockets get keepalives and TCP_USER_TIMEOUT (snapshot: link.go).
// Errors are *ConfigError and never quote a password.
func (c Config) PostgresConnConfig() (*pgconn.Config, error) {
	pgcfg, err := pgconn.ParseConfig(c.Postgres.URL)
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("postgres.url: %s", RedactURL(err.Error()))}
	}
	if c.Postgres.PasswordFile != "" {
		pw, err := readSecretFile("postgres.password_file", c.Postgres.PasswordFile)
		if err != nil {
			return nil, err
		}
		pgcfg.Password = pw
	}
	pgcfg.DialFunc = linkDialer(c.LinkTimeout()).DialContext
	if pgcfg.ConnectTimeout == 0 {
		// A connect into a black hole (no SYN-ACK, or no answer to the
		// startup) gives up too, unless connect_timeout says otherwise.
		pgcfg.ConnectTimeout = c.LinkTimeout()
	}
	return pgcfg, nil
}

// KafkaOpts returns the options that connect a franz-go client to brokers
// as kafka.tls and kafka.sasl say: seed brokers, TLS dialer, SASL. Every
// Kafka client of mooncdc (producers, offsets readers, the commands) starts
// from them. The embedded development Kafka gets neither TLS nor SASL.
// Errors are *ConfigError.
func (c Config) KafkaOpts(brokers []string) ([]kgo.Opt, error) {
	return c.KafkaOptsLinked(brokers, nil)
}

// kafkaOptsLinked is KafkaOpts; with links set, the clients dial through
// them (links.go), which an abort resets.
func (c Config) KafkaOptsLinked(brokers []string, links *KafkaLinks) ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(brokers...)}
	var t *tls.Config
	k := c.Kafka
	if k.TLS.Enabled && !c.EmbeddedKafka() {
		var err error
		t, err = LoadTLS("kafka.tls", k.TLS.CAFile, k.TLS.CertFile, k.TLS.KeyFile, k.TLS.InsecureSkipVerify)
		if err != nil {
			return nil, err
		}
		t.ServerName = k.TLS.ServerName // empty: each broker's host
	}
	switch {
	case links != nil:
		links.setTLS(t)
		opts = append(opts, kgo.Dialer(links.dial))
	case t != nil:
		opts = append(opts, kgo.DialTLSConfig(t))
	}
	if c.EmbeddedKafka() {
		return opts, nil
	}
	if k.SASL.Mechanism != "" {
		pw, err := SecretValue(k.SASL.Password, "kafka.sasl.password_file", k.SASL.PasswordFile)
		if err != nil {
			return nil, err
		}
		var m sasl.Mechanism
		switch strings.ToUpper(k.SASL.Mechanism) {
		case "PLAIN":
			m = plain.Auth{User: k.SASL.Username, Pass: pw}.AsMechanism()
		case "SCRAM-SHA-256":
			m = scram.Auth{User: k.SASL.Username, Pass: pw}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			m = scram.Auth{User: k.SASL.Username, Pass: pw}.AsSha512Mechanism()
		default:
			return nil, &ConfigError{Err: fmt.Errorf("kafka.sasl.mechanism: %q is not one of %s", k.SASL.Mechanism, strings.Join(SASLMechanisms, ", "))}
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// loadTLS builds a client TLS config from PEM files; key names the config
// keys in errors.
func LoadTLS(key, caFile, certFile, keyFile string, insecure bool) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure} //nolint:gosec // opt-in
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, &ConfigError{Err: fmt.Errorf("%s.ca_file: %w", key, err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &ConfigError{Err: fmt.Errorf("%s.ca_file: %s holds no PEM certificate", key, caFile)}
		}
		t.RootCAs = pool
	}
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, &ConfigError{Err: fmt.Errorf("%s.cert_file/key_file: %w", key, err)}
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

// certificateError reports whether err is a TLS peer certificate that did
// not verify (unknown authority, wrong host name, expired): no retry fixes
// it, the CA setting (sslrootcert, kafka.tls.ca_file,
// format.schema_registry.ca_file) or the certificate must change.
func CertificateError(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}

// IsAuthError reports whether err is the brokers refusing mooncdc's SASL
// credentials or mechanism, or a TLS server certificate that does not
// verify: no retry fixes those.
func IsAuthError(err error) bool {
	return errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.UnsupportedSaslMechanism) ||
		errors.Is(err, kerr.IllegalSaslState) || CertificateError(err)
}

// SecurityWarnings lists settings that work but expose a secret: SASL
// credentials sent without TLS (PLAIN sends the password itself), or over
// TLS that does not verify the brokers. run logs them at start and check
// prints them.
func (c Config) SecurityWarnings() []string {
	var w []string
	k := c.Kafka
	if c.EmbeddedKafka() || k.SASL.Mechanism == "" {
		return nil
	}
	switch {
	case !k.TLS.Enabled && strings.EqualFold(k.SASL.Mechanism, "PLAIN"):
		w = append(w, "kafka.sasl.mechanism PLAIN without kafka.tls.enabled sends the password in clear text; enable TLS, or use SCRAM")
	case !k.TLS.Enabled:
		w = append(w, "kafka.sasl without kafka.tls.enabled: the login is not sent in clear, but every record is; enable TLS")
	case k.TLS.InsecureSkipVerify:
		w = append(w, "kafka.tls.insecure_skip_verify with kafka.sasl: a man in the middle can take the login; trust the brokers' CA with kafka.tls.ca_file instead")
	}
	return w
}

// validateSecurity checks kafka.tls, kafka.sasl and the password files.
func (c Config) validateSecurity() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	k := c.Kafka
	tlsSet := k.TLS.CAFile != "" || k.TLS.CertFile != "" || k.TLS.KeyFile != "" || k.TLS.ServerName != "" || k.TLS.InsecureSkipVerify
	if tlsSet && !k.TLS.Enabled {
		bad("kafka.tls: ca_file, cert_file, key_file, server_name or insecure_skip_verify is set but kafka.tls.enabled is false; set kafka.tls.enabled: true")
	}
	if (k.TLS.CertFile == "") != (k.TLS.KeyFile == "") {
		bad("kafka.tls.cert_file and key_file: set both (a client certificate and its key) or neither")
	}
	s := k.SASL
	if s.Mechanism != "" && !slices.Contains(SASLMechanisms, strings.ToUpper(s.Mechanism)) {
		bad("kafka.sasl.mechanism: %q is not one of %s", s.Mechanism, strings.Join(SASLMechanisms, ", "))
	}
	if s.Mechanism == "" && (s.Username != "" || s.Password != "" || s.PasswordFile != "") {
		bad("kafka.sasl: username or password is set but kafka.sasl.mechanism is empty; set it to one of %s", strings.Join(SASLMechanisms, ", "))
	}
	if s.Mechanism != "" {
		if s.Username == "" {
			bad("kafka.sasl.username: required with kafka.sasl.mechanism %s", s.Mechanism)
		}
		if s.Password == "" && s.PasswordFile == "" {
			bad("kafka.sasl.password: required with kafka.sasl.mechanism %s; set it (or MOONCDC_KAFKA_SASL_PASSWORD) or kafka.sasl.password_file", s.Mechanism)
		}
	}
	if c.EmbeddedKafka() && (k.TLS.Enabled || s.Mechanism != "") {
		bad("kafka.tls/kafka.sasl: set for the embedded development Kafka (kafka.brokers is empty), which has neither; set kafka.brokers, or remove them")
	}
	urlPassword := ""
	if RedactURL(c.Postgres.URL) != c.Postgres.URL {
		urlPassword = "x"
	}
	for _, f := range []struct{ key, value, file, other string }{
		{"postgres.password_file", urlPassword, c.Postgres.PasswordFile, "a password in postgres.url"},
		{"kafka.sasl.password_file", s.Password, s.PasswordFile, "kafka.sasl.password"},
		{"format.schema_registry.password_file", c.Format.SchemaRegistry.Password, c.Format.SchemaRegistry.PasswordFile, "format.schema_registry.password"},
	} {
		if f.file == "" {
			continue
		}
		if f.value != "" {
			bad("%s: set together with %s; keep one of them", f.key, f.other)
			continue
		}
		if _, err := readSecretFile(f.key, f.file); err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) {
				err = ce.Err
			}
			errs = append(errs, err)
		}
	}
	return errs
}

// redactedError is err with any connection-string password in its message
// masked; errors.Is and errors.As still see err.
type RedactedError struct{ Err error }

func (e RedactedError) Error() string { return RedactURL(e.Err.Error()) }
func (e RedactedError) Unwrap() error { return e.Err }
