package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecurityKeysAreValidated(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	base := func() Config {
		c := DefaultConfig()
		c.Name = "shop"
		c.Postgres.URL = "postgres://u@h/db"
		c.Kafka.Brokers = []string{"k:9092"}
		c.ApplyDefaults()
		return c
	}
	cases := []struct {
		name string
		mod  func(*Config)
		want string // "" means valid
	}{
		{"scram with a password", func(c *Config) {
			c.Kafka.SASL = KafkaSASLConfig{Mechanism: "SCRAM-SHA-512", Username: "u", Password: "p"}
		}, ""},
		{"lower-case mechanism", func(c *Config) { c.Kafka.SASL = KafkaSASLConfig{Mechanism: "plain", Username: "u", Password: "p"} }, ""},
		{"password from a file", func(c *Config) {
			c.Kafka.SASL = KafkaSASLConfig{Mechanism: "PLAIN", Username: "u", PasswordFile: pwFile}
		}, ""},
		{"unknown mechanism", func(c *Config) {
			c.Kafka.SASL = KafkaSASLConfig{Mechanism: "GSSAPI", Username: "u", Password: "p"}
		}, `kafka.sasl.mechanism: "GSSAPI" is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512`},
		{"no username", func(c *Config) { c.Kafka.SASL = KafkaSASLConfig{Mechanism: "PLAIN", Password: "p"} }, "kafka.sasl.username: required"},
		{"no password", func(c *Config) { c.Kafka.SASL = KafkaSASLConfig{Mechanism: "PLAIN", Username: "u"} }, "kafka.sasl.password: required"},
		{"credentials without a mechanism", func(c *Config) { c.Kafka.SASL = KafkaSASLConfig{Username: "u", Password: "p"} }, "kafka.sasl.mechanism is empty"},
		{"password and its file", func(c *Config) {
			c.Kafka.SASL = KafkaSASLConfig{Mechanism: "PLAIN", Username: "u", Password: "p", PasswordFile: pwFile}
		}, "kafka.sasl.password_file: set together with kafka.sasl.password"},
		{"unreadable password file", func(c *Config) {
			c.Kafka.SASL = KafkaSASLConfig{Mechanism: "PLAIN", Username: "u", PasswordFile: filepath.Join(dir, "missing")}
		}, "kafka.sasl.password_file: cannot read the password file"},
		{"empty password file", func(c *Config) { c.Format.SchemaRegistry.PasswordFile = empty }, "is empty; write the password into it"},
		{"postgres password in the URL and a file", func(c *Config) {
			c.Postgres.URL = "postgres://u:secret@h/db"
			c.Postgres.PasswordFile = pwFile
		}, "postgres.password_file: set together with a password in postgres.url"},
		{"tls files without enabled", func(c *Config) { c.Kafka.TLS.CAFile = pwFile }, "kafka.tls.enabled is false"},
		{"half a client certificate", func(c *Config) { c.Kafka.TLS = KafkaTLSConfig{Enabled: true, CertFile: pwFile} }, "kafka.tls.cert_file and key_file: set both"},
		{"sasl for the embedded kafka", func(c *Config) {
			c.Kafka.Brokers = nil
			c.Kafka.SASL = KafkaSASLConfig{Mechanism: "PLAIN", Username: "u", Password: "p"}
		}, "embedded development Kafka"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.mod(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			case err != nil && (strings.Contains(err.Error(), "from-file") || strings.Contains(err.Error(), "secret")):
				t.Fatalf("the error quotes a password: %v", err)
			}
		})
	}
}

func TestSecurityWarningsAndSecretFiles(t *testing.T) {
	c := DefaultConfig()
	c.Kafka.Brokers = []string{"k:9092"}
	c.Kafka.SASL = KafkaSASLConfig{Mechanism: "PLAIN", Username: "u", Password: "p"}
	if w := c.SecurityWarnings(); len(w) != 1 || !strings.Contains(w[0], "clear text") {
		t.Errorf("PLAIN without TLS: warnings %q", w)
	}
	c.Kafka.TLS.Enabled = true
	if w := c.SecurityWarnings(); len(w) != 0 {
		t.Errorf("PLAIN over verified TLS: warnings %q", w)
	}
	c.Kafka.TLS.InsecureSkipVerify = true
	if w := c.SecurityWarnings(); len(w) != 1 || !strings.Contains(w[0], "insecure_skip_verify") {
		t.Errorf("SASL over unverified TLS: warnings %q", w)
	}

	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Postgres.URL = "postgres://u@h/db"
	c.Postgres.PasswordFile = pw
	pg, err := c.PostgresConnConfig()
	if err != nil || pg.Password != "s3cret" {
		t.Fatalf("password from the file: %q, %v (want s3cret: one line, newline dropped)", pg.Password, err)
	}
	c.Kafka.TLS = KafkaTLSConfig{Enabled: true, CAFile: filepath.Join(dir, "no-ca.pem")}
	if _, err := c.KafkaOpts(c.Kafka.Brokers); err == nil || !strings.Contains(err.Error(), "kafka.tls.ca_file") || ExitCode(err) != ExitConfig {
		t.Errorf("a missing CA file: want a config error naming kafka.tls.ca_file, got %v", err)
	}
}
