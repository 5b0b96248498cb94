package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/internal/progress"
)

// copyLogInterval is how often the snapshot's progress is printed when the
// demo's output is not a terminal (no bars).
const copyLogInterval = 2 * time.Second

// copies returns a progress.Source of mooncdc's running table copies, read
// from its /status endpoint. When /status does not answer, it returns the
// last answer, so that one slow poll does not end the bars. Each source is
// for one goroutine.
func (m *mooncdc) copies() progress.Source {
	client := &http.Client{Timeout: time.Second}
	var last []connector.CopyProgress
	return func() []connector.CopyProgress {
		resp, err := client.Get(m.metricsURL + "/status")
		if err != nil {
			return last
		}
		defer resp.Body.Close()
		var st connector.LiveStatus
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&st) != nil {
			return last
		}
		last = st.Copies
		return last
	}
}

// showCopies shows the copies src returns on out until the returned stop is
// called: a bar per copy when out is a terminal, as `mooncdc run` draws
// them, else a line per copy every copyLogInterval. stop blocks until the
// bars are flushed; nothing else may write to out meanwhile.
func showCopies(out io.Writer, src progress.Source) (stop func()) {
	r := progress.New(progress.Options{Out: out, TTY: progress.IsTerminal(out), LogInterval: copyLogInterval})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx, src, plainLogger(out))
	}()
	return func() {
		cancel()
		<-done
	}
}

// plainLogger is a zap logger for the demo's output: the message and the
// fields, indented like the demo's details, without time, level or caller.
func plainLogger(out io.Writer) *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zapcore.EncoderConfig{MessageKey: "msg", LineEnding: "\n", ConsoleSeparator: "  ",
		EncodeDuration: zapcore.StringDurationEncoder})
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(indented{out}), zapcore.InfoLevel))
}

// indented writes each line (zap writes whole lines) under the demo's
// current step.
type indented struct{ w io.Writer }

func (i indented) Write(p []byte) (int, error) {
	lines := bytes.SplitAfter(p, []byte("\n"))
	var b bytes.Buffer
	for _, l := range lines {
		if len(l) > 0 {
			fmt.Fprintf(&b, "  %-9s %s", "", l)
		}
	}
	if _, err := i.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// waitNoCopies waits until src lists no copy, ctx ends or timeout passes.
func waitNoCopies(ctx context.Context, src progress.Source, timeout time.Duration) {
	for deadline := time.Now().Add(timeout); len(src()) > 0 && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}
