package progress

import (
	"io"
	"os"

	"github.com/vbauerster/cupwriter"
)

// IsTerminal reports whether w is a terminal that bars can be drawn on: an
// *os.File open on a terminal (as mpb, which draws them, decides) with a
// known, non-zero width. A pseudo-terminal nobody gave a size has none.
func IsTerminal(w io.Writer) bool { return TerminalWidth(w) > 0 }

// TerminalWidth returns the width in columns of the terminal w is open on,
// or 0 if w is not a terminal or its width is unknown.
func TerminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	cw := cupwriter.New(f, false)
	if !cw.IsTerminal() {
		return 0
	}
	width, _, err := cw.GetTermSize()
	if err != nil {
		return 0
	}
	return width
}
