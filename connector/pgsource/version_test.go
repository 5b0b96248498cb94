package pgsource

import (
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/fault"
)

func TestServerVersionBelow14IsRefusedWithTheCause(t *testing.T) {
	for _, tt := range []struct {
		num  int
		want string
	}{
		{130012, "PostgreSQL 13.12 is too old"},
		{100023, "PostgreSQL 10.23 is too old"},
		{140000, ""},
		{150018, ""},
	} {
		err := CheckServerVersion(tt.num)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%d: %v", tt.num, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || fault.Classify(err) != fault.ClassCritical):
			t.Errorf("%d: want a critical error containing %q, got %v", tt.num, tt.want, err)
		}
	}
}
