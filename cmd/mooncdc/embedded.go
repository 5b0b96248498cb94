package main

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/zap"
)

// EmbeddedKafkaAddr is where the development Kafka listens when
// kafka.brokers is empty.
const EmbeddedKafkaAddr = "127.0.0.1:9092"

// StartEmbeddedKafka starts a single-node Kafka (franz-go's kfake) on
// 127.0.0.1:9092 keeping its data under dataDir/kafka, so that it survives
// a restart. It is for development only: `mooncdc run` starts it when
// kafka.brokers is empty and points the pipeline at it; a Pipeline itself
// always needs brokers. Close the cluster to stop it.
func StartEmbeddedKafka(dataDir string, log *zap.Logger) (*kfake.Cluster, error) {
	dir := filepath.Join(dataDir, "kafka")
	c, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.Ports(9092),
		kfake.DataDir(dir),
		kfake.ListenFn(func(network, address string) (net.Listener, error) {
			_, port, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			return net.Listen(network, net.JoinHostPort("127.0.0.1", port))
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("start the embedded Kafka on %s: %w (kafka.brokers is empty; set it to your Kafka, or stop what listens on port 9092)", EmbeddedKafkaAddr, err)
	}
	log.Warn("kafka.brokers is empty: started an embedded single-node Kafka for development only; do not use it in production",
		zap.String("listen", EmbeddedKafkaAddr), zap.String("data_dir", dir))
	return c, nil
}
