package main

import (
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mooncdc/mooncdc/connector/config"
)

// newLogger builds the process logger from log.level and log.format, writing
// to w. It is passed down explicitly; nothing sets zap's globals.
func newLogger(c config.LogConfig, w io.Writer) (*zap.Logger, error) {
	var level zapcore.Level
	if err := level.UnmarshalText([]byte(c.Level)); err != nil {
		return nil, fmt.Errorf("log.level: %w", err)
	}
	var enc zapcore.Encoder
	switch c.Format {
	case "json":
		ec := zap.NewProductionEncoderConfig()
		ec.EncodeTime = zapcore.ISO8601TimeEncoder
		enc = zapcore.NewJSONEncoder(ec)
	case "console":
		ec := zap.NewDevelopmentEncoderConfig()
		ec.EncodeTime = zapcore.ISO8601TimeEncoder
		enc = zapcore.NewConsoleEncoder(ec)
	default:
		return nil, fmt.Errorf("log.format: %q is not json or console", c.Format)
	}
	out := zapcore.Lock(zapcore.AddSync(w))
	return zap.New(zapcore.NewCore(enc, out, level), zap.AddCaller(), zap.ErrorOutput(out)), nil
}
