package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
)

// This file prints a Config without its secrets.

var (
	// userinfo password: up to the last '@' that still precedes the host
	urlPasswordRE = regexp.MustCompile(`(://[^:/?#@\s]*:)[^@\s]*(?:@[^@\s/?#]*)*@`)
	kvPasswordRE  = regexp.MustCompile(`(?i)\b((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&\s]*)`)
)

const redactedMask = "xxxxx"

// RedactURL masks the passwords in a Postgres connection string (URL
// userinfo, password= and sslpassword= parameters, keyword/value pairs),
// wherever they occur in s, so it can also clean an error message that
// quotes one. It over-masks rather than leak on malformed input.
func RedactURL(s string) string {
	s = urlPasswordRE.ReplaceAllString(s, "${1}"+redactedMask+"@")
	return kvPasswordRE.ReplaceAllString(s, "${1}"+redactedMask)
}

// Redacted returns a copy of c with every secret masked (fields tagged
// `secret`), safe to print or log.
func (c Config) Redacted() Config {
	v := reflect.ValueOf(&c).Elem()
	for _, k := range configKeys() {
		if k.secret == "" {
			continue
		}
		fv := v.FieldByIndex(k.index)
		if fv.Kind() != reflect.String || fv.String() == "" {
			continue
		}
		if k.secret == "url" {
			fv.SetString(RedactURL(fv.String()))
		} else {
			fv.SetString(redactedMask)
		}
	}
	return c
}

// String formats the redacted config on one line as key=value pairs, e.g.
// name=shop postgres.url=postgres://u:xxxxx@h/db postgres.tables=[public.*] …
func (c Config) String() string {
	v := reflect.ValueOf(c.Redacted())
	var b strings.Builder
	for i, k := range configKeys() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fv := v.FieldByIndex(k.index)
		b.WriteString(k.path)
		b.WriteByte('=')
		if fv.Kind() == reflect.Slice {
			b.WriteByte('[')
			for j := range fv.Len() {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprint(&b, fv.Index(j).Interface())
			}
			b.WriteByte(']')
			continue
		}
		s := fmt.Sprint(fv.Interface())
		if s == "" || strings.ContainsAny(s, " \t\n\"") {
			s = strconv.Quote(s)
		}
		b.WriteString(s)
	}
	return b.String()
}

// MarshalLogObject writes the redacted config as nested zap fields, so that
// zap.Any("config", cfg) and zap.Object("config", cfg) never log a password.
func (c Config) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	return marshalStruct(enc, reflect.ValueOf(c.Redacted()))
}

func marshalStruct(enc zapcore.ObjectEncoder, v reflect.Value) error {
	for i := range v.NumField() {
		name := yamlName(v.Type().Field(i))
		if name == "" {
			continue
		}
		fv := v.Field(i)
		switch {
		case fv.Type() == durationType:
			enc.AddDuration(name, time.Duration(fv.Int()))
		case fv.Kind() == reflect.Struct:
			sub := fv
			if err := enc.AddObject(name, zapcore.ObjectMarshalerFunc(func(e zapcore.ObjectEncoder) error {
				return marshalStruct(e, sub)
			})); err != nil {
				return err
			}
		case fv.Kind() == reflect.String:
			enc.AddString(name, fv.String())
		case fv.Kind() == reflect.Bool:
			enc.AddBool(name, fv.Bool())
		case fv.CanInt():
			enc.AddInt64(name, fv.Int())
		case fv.CanUint():
			enc.AddUint64(name, fv.Uint())
		case fv.CanFloat():
			enc.AddFloat64(name, fv.Float())
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String:
			list := fv
			if err := enc.AddArray(name, zapcore.ArrayMarshalerFunc(func(ae zapcore.ArrayEncoder) error {
				for j := range list.Len() {
					ae.AppendString(list.Index(j).String())
				}
				return nil
			})); err != nil {
				return err
			}
		default:
			if err := enc.AddReflected(name, fv.Interface()); err != nil {
				return err
			}
		}
	}
	return nil
}
