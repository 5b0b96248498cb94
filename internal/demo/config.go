package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// kafkaAddr is where mooncdc's embedded development Kafka listens when
// kafka.brokers is empty (EmbeddedKafkaAddr in cmd/mooncdc).
const kafkaAddr = "127.0.0.1:9092"

// topicPrefix is the demo connector's name, hence its topic prefix.
const topicPrefix = "demo"

// configTemplate is the demo's mooncdc.yaml. Arguments: the name, the
// embedded Kafka's data directory, the Postgres URL, the Kafka address, the
// metrics address, the format section.
const configTemplate = `# Written by the mooncdc demo.
name: %s
data_dir: %s  # the embedded Kafka's data, fresh for every demo
postgres:
  url: %s
  tables: ["public.*"]
kafka:
  brokers: []  # empty: the embedded development Kafka on %s
metrics:
  listen: %s  # also serves /status, which the demo polls for the snapshot's progress
log:
  level: info
  format: console
%s`

// avroFormat is the format section for Avro keys and values; the argument
// is the Schema Registry's URL.
const avroFormat = `format:
  key: avro
  value: avro
  schema_registry:
    url: %s
`

// exampleConfig is the minimal config printed at the end, for the user's own
// database.
const exampleConfig = `name: shop
postgres:
  url: postgres://user:password@localhost:5432/shop?sslmode=disable
  tables: ["public.*"]
kafka:
  brokers: [localhost:9092]     # leave empty for the embedded development Kafka
`

// writeConfig writes dir/mooncdc.yaml and returns its path. A registryURL
// makes the keys and values Avro; empty leaves them JSON.
func writeConfig(dir, postgresURL, metricsAddr, registryURL string) (string, error) {
	path := filepath.Join(dir, "mooncdc.yaml")
	format := ""
	if registryURL != "" {
		format = fmt.Sprintf(avroFormat, strconv.Quote(registryURL))
	}
	text := fmt.Sprintf(configTemplate, topicPrefix,
		strconv.Quote(filepath.Join(dir, "mooncdc-data")),
		strconv.Quote(postgresURL), kafkaAddr, strconv.Quote(metricsAddr), format)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("write the mooncdc config: %w", err)
	}
	return path, nil
}

// checkKafkaPort fails when 127.0.0.1:9092 is taken: mooncdc's embedded
// Kafka needs it.
func checkKafkaPort() error {
	l, err := net.Listen("tcp", kafkaAddr)
	if err != nil {
		return fmt.Errorf("%s is already in use (%v): mooncdc's embedded Kafka needs it. "+
			"Stop whatever listens there (a local Kafka, or another demo; `ss -ltnp 'sport = :9092'` shows it) and run make demo again",
			kafkaAddr, err)
	}
	return l.Close()
}

// freeLoopbackAddr returns 127.0.0.1:<a port free right now>, for mooncdc's
// metrics endpoint.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port for mooncdc's metrics: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}
