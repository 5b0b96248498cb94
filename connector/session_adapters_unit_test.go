package connector

import (
	"context"
	"errors"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
)

// tickSink is a main sink whose Tick does nothing (the rest is unused).
type tickSink struct{ delivery.MainSink }

func (tickSink) Tick(context.Context) error { return nil }

// An incremental snapshot's window that fails to close at a keepalive
// (its unit's Kafka transaction could not begin or commit) ends the
// session at the next Tick, once: the next session, which uses the same
// progress, must not end at its first Tick with the last session's error
// (that would end every later session, and no window would close at a
// keepalive again).
func TestAWindowsErrorAtAKeepaliveEndsOneSession(t *testing.T) {
	pr := &progress{sink: tickSink{}, ctx: context.Background(), incErr: errors.New("commit Kafka transaction: broker gone")}
	if err := pr.Tick(); err == nil {
		t.Fatal("Tick after a window's error at a keepalive: nil, want the error (the session ends)")
	}
	if err := pr.Tick(); err != nil {
		t.Fatalf("the next session's Tick: %v, want nil: the last session's error ends every session after it", err)
	}
}
