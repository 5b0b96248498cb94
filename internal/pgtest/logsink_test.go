package pgtest

import (
	"strings"
	"testing"
)

func TestLogSinkKeepsTailFromLineStart(t *testing.T) {
	var out strings.Builder
	s := newLogSink(&out)
	line := strings.Repeat("x", 99) + "\n"
	for range 200 { // 20000 bytes, more than tailSize
		s.Write([]byte(line))
	}
	s.Write([]byte("FATAL: last words\n"))

	tail := s.Tail()
	if len(tail) > tailSize || !strings.HasPrefix(tail, "xxx") || !strings.HasSuffix(tail, "FATAL: last words\n") {
		t.Fatalf("tail of %d bytes starts %q, ends %q", len(tail), tail[:10], tail[len(tail)-20:])
	}
	if strings.Count(tail, "\n")*100 < tailSize-200 {
		t.Fatalf("tail holds %d lines, want about %d", strings.Count(tail, "\n"), tailSize/100)
	}
	if out.Len() != 200*100+len("FATAL: last words\n") {
		t.Fatalf("writer got %d bytes, want all of them", out.Len())
	}

	s.detach()
	s.Write([]byte("after close\n"))
	if strings.Contains(out.String(), "after close") {
		t.Fatal("writer got output after detach")
	}
	if !strings.HasSuffix(s.Tail(), "after close\n") {
		t.Fatal("tail lost output after detach")
	}
}

func TestLogSinkTailSinceMark(t *testing.T) {
	s := newLogSink(nil)
	s.Write([]byte("initdb chatter\n"))
	mark := s.Mark()
	s.Write([]byte("FATAL: bad setting\n"))
	if got := s.TailSince(mark); got != "FATAL: bad setting\n" {
		t.Fatalf("TailSince(mark) = %q", got)
	}

	// When output after the mark overflows the tail, the newest lines win.
	s.Write([]byte(strings.Repeat(strings.Repeat("y", 99)+"\n", 100)))
	if got := s.TailSince(mark); strings.Contains(got, "FATAL") || !strings.HasPrefix(got, "yyy") {
		t.Fatalf("TailSince(mark) after overflow starts %q", got[:20])
	}
}
