package watermark

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
)

// A window open longer than its longest life is voided, whatever holds it
// open: its chunk's read not ended, or the stream not past its High; one
// within its life, or already void, is left alone. A voided window comes
// back from Advance as void (read the chunk again) once its chunk is read,
// with no rows, at any position; and it holds no rows from then on.
func TestExpireVoidsWindowsPastTheirLongestLife(t *testing.T) {
	const life = 5 * time.Minute
	t0 := time.Date(2026, 12, 7, 16, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		age     time.Duration
		read    bool   // the chunk's rows handed over (Complete)
		void    bool   // already void (a TRUNCATE during the window)
		expired bool   // Expire returns it
		why     string // in the void reason
	}{
		{"read, waiting for the stream, within its life", life - time.Second, true, false, false, ""},
		{"read, waiting for the stream, exactly its life", life, true, false, false, ""},
		{"read, waiting for the stream, past its life", life + time.Second, true, false, true, "has not passed its high watermark 0/500"},
		{"being read, within its life", time.Minute, false, false, false, ""},
		{"being read, past its life", life + time.Hour, false, false, true, "its chunk's read has not ended"},
		{"already void, past its life", life + time.Second, true, true, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := t0
			tr := NewTracker[string](100)
			tr.SetClock(func() time.Time { return now })
			tr.Watch(tbl)
			w, err := tr.Open(tbl, Chunk{First: 4096, End: 5120}, snap(t, "100:100:"), 0x500)
			if err != nil {
				t.Fatal(err)
			}
			if tc.read {
				if err := tr.Complete(w, []Row[string]{{Key: "a", Value: "1", Size: 10}, {Key: "b", Value: "2", Size: 20}}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.void {
				if err := tr.Begin(101); err != nil {
					t.Fatal(err)
				}
				if err := tr.ObserveAll(tbl, "TRUNCATE"); err != nil {
					t.Fatal(err)
				}
				tr.End()
			}
			before := w.Void()
			now = t0.Add(tc.age)
			got := tr.Expire(now, life, 0x400)
			if !tc.expired {
				if len(got) != 0 || w.Void() != before {
					t.Fatalf("Expire voided %+v (void %q → %q), want nothing", got, before, w.Void())
				}
				return
			}
			if len(got) != 1 || got[0].ID != w.ID() || got[0].Table != tbl || got[0].Chunk != w.Chunk() || got[0].Age != tc.age {
				t.Fatalf("Expire returned %+v, want window %d of %d, %s, age %v", got, w.ID(), tbl, w.Chunk(), tc.age)
			}
			if !strings.Contains(got[0].Why, tc.why) || !strings.Contains(got[0].Why, "longest life (5m0s)") || got[0].Why != w.Void() {
				t.Fatalf("void reason %q (window's %q), want it to say %q and the life", got[0].Why, w.Void(), tc.why)
			}
			if w.Rows() != 0 || w.Bytes() != 0 {
				t.Fatalf("a voided window holds %d rows, %d bytes", w.Rows(), w.Bytes())
			}
			if again := tr.Expire(now.Add(time.Hour), life, 0x400); len(again) != 0 {
				t.Fatalf("a second Expire returned %+v: a window is voided once", again)
			}
			if !tc.read {
				if err := tr.Complete(w, []Row[string]{{Key: "a", Value: "1", Size: 10}}); err != nil {
					t.Fatal(err)
				}
			}
			// Below its High: a void window closes all the same.
			cs := tr.Advance(pglogrepl.LSN(0x400))
			if len(cs) != 1 || cs[0].Void == "" || len(cs[0].Rows) != 0 || cs[0].Chunk != w.Chunk() {
				t.Fatalf("Advance returned %+v, want the window void with no rows", cs)
			}
			if tr.OpenWindows() != 0 {
				t.Fatalf("%d windows still open", tr.OpenWindows())
			}
		})
	}
}

// A window says what status shows of it: when it opened, whether its
// chunk is read, and the rows and bytes it holds.
func TestWindowShowsItsAgeRowsAndBytes(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 16, 0, 0, 0, time.UTC)
	tr := NewTracker[string](100)
	tr.SetClock(func() time.Time { return t0 })
	tr.Watch(tbl)
	w, err := tr.Open(tbl, Chunk{First: 0, End: 8}, snap(t, "100:100:"), 0x500)
	if err != nil {
		t.Fatal(err)
	}
	if !w.Opened().Equal(t0) || w.Read() || w.Rows() != 0 || w.Bytes() != 0 || w.Void() != "" {
		t.Fatalf("a new window: opened %v read %v rows %d bytes %d void %q", w.Opened(), w.Read(), w.Rows(), w.Bytes(), w.Void())
	}
	if err := tr.Complete(w, []Row[string]{{Key: "a", Size: 100}, {Key: "b", Size: 28}}); err != nil {
		t.Fatal(err)
	}
	if !w.Read() || w.Rows() != 2 || w.Bytes() != 128 {
		t.Fatalf("a read window: read %v rows %d bytes %d, want true, 2, 128", w.Read(), w.Rows(), w.Bytes())
	}
}
