package stream

import (
	"errors"
	"net"
	"testing"
	"time"
)

// The silence timeout follows the server's wal_sender_timeout, as the
// server gives up on a silent client after it; Postgres's default where
// the server turned it off (walsender.c: wal_sender_timeout 0 disables
// the timeout; guc_tables.c: its default is 60 s).
func TestDeriveTimeoutFollowsWalSenderTimeout(t *testing.T) {
	for _, c := range []struct {
		setting string
		want    time.Duration
		bad     bool
	}{
		{"60000", 60 * time.Second, false},
		{"5000", 5 * time.Second, false},
		{"250", 250 * time.Millisecond, false},
		{" 30000\n", 30 * time.Second, false},
		{"0", DefaultTimeout, false},
		{"-1", 0, true},
		{"1min", 0, true},
		{"", 0, true},
	} {
		got, err := DeriveTimeout(c.setting)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("DeriveTimeout(%q) = %v, %v; want %v, error %v", c.setting, got, err, c.want, c.bad)
		}
	}
}

// A quiet server is asked for a reply after a quarter of the timeout, and
// the session ends with a retryable timeout error after all of it.
func TestSilencePingsThenEnds(t *testing.T) {
	start := time.Unix(1000, 0)
	s := &Session{timeout: 8 * time.Second}
	s.heard(start)
	for _, c := range []struct {
		after     time.Duration
		reply, ok bool
	}{
		{time.Second, false, true},
		{2 * time.Second, true, true},
		{7 * time.Second, true, true},
		{8 * time.Second, true, false},
	} {
		now := start.Add(c.after)
		if got := s.wantReply(now); got != c.reply {
			t.Errorf("after %v: wantReply %v, want %v", c.after, got, c.reply)
		}
		err := s.checkSilence(now)
		if (err == nil) != c.ok {
			t.Errorf("after %v: checkSilence %v, want ok %v", c.after, err, c.ok)
		}
		if err != nil {
			var se *SilenceError
			var ne net.Error
			if !errors.As(err, &se) || se.After != 8*time.Second || !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("after %v: error %v is not a timeout *SilenceError of 8s", c.after, err)
			}
		}
	}
	// A message resets the clock.
	s.heard(start.Add(7 * time.Second))
	if err := s.checkSilence(start.Add(10 * time.Second)); err != nil {
		t.Errorf("3s after a message: %v", err)
	}
}

// Time the loop spends waiting for Kafka is taken out of the silence, and
// what was silent before still counts.
func TestTimeNotListeningIsNotSilence(t *testing.T) {
	start := time.Unix(1000, 0)
	s := &Session{timeout: 8 * time.Second}
	s.heard(start)
	// 5 s silent, then 20 s waiting for Kafka, then 2 s silent: 7 s.
	s.notListening(start.Add(5*time.Second), start.Add(25*time.Second))
	if err := s.checkSilence(start.Add(27 * time.Second)); err != nil {
		t.Fatalf("7 s of silence around a 20 s wait: %v", err)
	}
	if err := s.checkSilence(start.Add(28 * time.Second)); err == nil {
		t.Fatal("8 s of silence around a 20 s wait: no error")
	}
}
