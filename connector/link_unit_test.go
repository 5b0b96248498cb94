package connector

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
)

// Readiness: Postgres silent past the session's timeout, or Kafka
// acknowledging nothing past the link timeout while records wait.
func TestLinkWatchSaysWhyNotReady(t *testing.T) {
	now := time.Unix(5000, 0)
	for _, c := range []struct {
		name           string
		heard, timeout time.Duration // heard: ago; 0 timeout: no session yet
		kafka          time.Duration // Kafka's last progress, ago
		want           string
	}{
		{"fresh", time.Second, 5 * time.Second, time.Second, ""},
		{"no session yet", time.Hour, 0, 0, ""},
		{"postgres silent", 6 * time.Second, 5 * time.Second, time.Second, "postgres silent"},
		{"kafka stalled", time.Second, 5 * time.Second, 61 * time.Second, "kafka stalled"},
		{"kafka slow but within", time.Second, 5 * time.Second, 59 * time.Second, ""},
	} {
		var w linkWatch
		w.heard(now.Add(-c.heard))
		w.timeout.Store(int64(c.timeout))
		w.kafkaAt.Store(now.Add(-c.kafka).UnixNano())
		got := w.notReady(now, time.Minute)
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: notReady %q, want prefix %q", c.name, got, c.want)
		}
	}
	// Kafka's progress: an acknowledgement, or nothing in flight.
	var w linkWatch
	tr := delivery.NewTracker(0, 1<<20, nil)
	w.sample(now, tr)
	a := tr.Begin()
	tr.Add(a, 100)
	w.sample(now.Add(10*time.Second), tr)
	if got := w.kafkaStall(now.Add(70 * time.Second)); got != 70*time.Second {
		t.Errorf("stall with a record in flight, unacknowledged: %v, want 70s", got)
	}
	// A failed record is no progress.
	b := tr.Begin()
	tr.Add(b, 100)
	tr.Ack(b, 100, errors.New("broken"))
	w.sample(now.Add(70*time.Second), tr)
	if got := w.kafkaStall(now.Add(70 * time.Second)); got != 70*time.Second {
		t.Errorf("stall after a failed record: %v, want 70s", got)
	}
	tr.Ack(a, 100, nil)
	w.sample(now.Add(80*time.Second), tr)
	if got := w.kafkaStall(now.Add(80 * time.Second)); got != 0 {
		t.Errorf("stall after the ack: %v, want 0", got)
	}
	// An incremental snapshot's window waiting for the stream holds
	// reserved bytes, not records: nothing for Kafka to acknowledge.
	if err := tr.Reserve(t.Context(), 5000); err != nil {
		t.Fatal(err)
	}
	w.sample(now.Add(90*time.Second), tr)
	w.sample(now.Add(200*time.Second), tr)
	if got := w.kafkaStall(now.Add(200 * time.Second)); got != 0 {
		t.Errorf("stall with only a window's reservation in flight: %v, want 0", got)
	}
}
