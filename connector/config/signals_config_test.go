package config

import (
	"strings"
	"testing"
)

// notifications.kafka_topic must be a topic name, and not the signals'
// topic: the signal reader would take each notification for a signal.
func TestNotificationsTopicIsValidatedAndNotTheSignalsTopic(t *testing.T) {
	for _, c := range []struct {
		topic, signals, want string
	}{
		{"shop.notifications", "", ""},
		{"shop.notifications", "shop.signals", ""},
		{"bad topic", "", "notifications.kafka_topic"},
		{"shop.signals", "shop.signals", "is signals.kafka_topic too"},
	} {
		cfg := validConfig()
		cfg.Notifications.KafkaTopic, cfg.Signals.KafkaTopic = c.topic, c.signals
		err := cfg.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.topic, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q with signals %q: %v, want an error with %q", c.topic, c.signals, err, c.want)
		}
	}
}
