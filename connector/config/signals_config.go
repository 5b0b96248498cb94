package config

// SignalsConfig is where signals come from.
type SignalsConfig struct {
	// KafkaTopic is read for signals (Debezium's signal.kafka.topic).
	KafkaTopic string `yaml:"kafka_topic"`
	// Table is a signal table (Debezium's signal.data.collection), as
	// schema.table: a row inserted into it is a signal. It is captured
	// like a postgres.tables entry.
	Table string `yaml:"table"`
}

// NotificationsConfig is where notifications go.
type NotificationsConfig struct {
	// KafkaTopic receives the incremental snapshots' notifications, as
	// Debezium's sink channel writes them (notification.enabled.channels
	// sink, notification.sink.topic.name); "" for none.
	KafkaTopic string `yaml:"kafka_topic"`
}
