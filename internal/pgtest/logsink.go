package pgtest

import (
	"bytes"
	"io"
	"os"
	"sync"
	"time"
)

// tailSize is how much recent output a logSink keeps for error messages.
const tailSize = 8 << 10

// logSink receives server output and the output of initdb and pg_ctl. It
// passes everything on to the caller's writer and keeps the last tailSize
// bytes. It is safe for concurrent use; writes to the caller's writer are
// serialised.
type logSink struct {
	mu    sync.Mutex
	w     io.Writer // nil once detached
	tail  []byte
	total int64 // bytes written so far
}

func newLogSink(w io.Writer) *logSink {
	return &logSink{w: w}
}

// Write never fails: a broken log writer must not stall the server, whose
// output pipe would otherwise fill up.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += int64(len(p))
	s.tail = append(s.tail, p...)
	if over := len(s.tail) - tailSize; over > 0 {
		s.tail = s.tail[:copy(s.tail, s.tail[over:])]
	}
	if s.w != nil {
		_, _ = s.w.Write(p)
	}
	return len(p), nil
}

// Tail returns the kept output, starting at a line boundary when possible.
func (s *logSink) Tail() string {
	return s.TailSince(0)
}

// Mark returns a position for TailSince.
func (s *logSink) Mark() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// TailSince returns the kept output written after mark, or all of the kept
// output, from its first line boundary, if some of that was dropped.
func (s *logSink) TailSince(mark int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tail
	if start := s.total - int64(len(t)); mark >= start {
		return string(t[mark-start:])
	}
	if i := bytes.IndexByte(t, '\n'); i >= 0 {
		t = t[i+1:]
	}
	return string(t)
}

// detach stops forwarding to the caller's writer. Close calls it so that a
// server child that outlives Close cannot write to, say, a finished test's
// t.Log.
func (s *logSink) detach() {
	s.mu.Lock()
	s.w = nil
	s.mu.Unlock()
}

// pipe returns the write end of a new pipe whose output is copied into s,
// and a channel closed when every holder of the write end has closed it. The
// caller hands w to pg_ctl start, so the server and all its children inherit
// it, and closes its own copy; done then means that the server has exited.
//
// We do not use pg_ctl -l: that needs a file the server user can write and
// cannot feed an io.Writer.
func (s *logSink) pipe() (w *os.File, done <-chan struct{}, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		defer r.Close()
		_, _ = io.Copy(s, r)
	}()
	return w, ch, nil
}

// waitClosed waits until done is closed or d has passed, and reports which.
func waitClosed(done <-chan struct{}, d time.Duration) bool {
	if done == nil {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
