package progress

import (
	"math"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector"
)

// logLines is the progress where there is no terminal: one Info line per
// running copy at each update. Used by the Run goroutine only.
type logLines struct {
	log    *zap.Logger
	meters map[string]*meter // by table, for the copies seen at the last update
}

func newLogLines(log *zap.Logger) *logLines {
	return &logLines{log: log, meters: map[string]*meter{}}
}

// update logs one line per copy: the rate is over the time since the
// previous line (up to rateWindow), or since the copy started.
func (l *logLines) update(now time.Time, copies []connector.CopyProgress) {
	seen := make(map[string]bool, len(copies))
	for _, c := range copies {
		seen[c.Table] = true
		m := l.meters[c.Table]
		if m == nil || !m.started.Equal(c.Started) { // a new copy, or the table copied again
			m = newMeter(c.Started)
			l.meters[c.Table] = m
		}
		m.observe(now, c.Rows)
		s := m.stats(c)
		fields := []zap.Field{
			zap.String("table", s.Table),
			zap.Int64("rows", s.Rows),
			zap.Int64("estimated_rows", s.Estimated),
			zap.Float64("rows_per_sec", math.Round(s.Rate)),
		}
		if s.ETA >= 0 {
			fields = append(fields, zap.Duration("eta", s.ETA.Round(time.Second)))
		}
		l.log.Info("copy progress", fields...)
	}
	for table := range l.meters {
		if !seen[table] {
			delete(l.meters, table)
		}
	}
}
