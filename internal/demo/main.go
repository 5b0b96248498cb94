package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	o := options{Out: os.Stdout}
	flag.StringVar(&o.Binary, "mooncdc", "bin/mooncdc", "path of the mooncdc binary (make build makes it)")
	flag.DurationVar(&o.Load, "load", 5*time.Second, "how long to write changes to Postgres")
	flag.BoolVar(&o.Keep, "keep", false, "keep the temporary directory (config, logs, Postgres and Kafka data)")
	flag.IntVar(&o.Samples, "samples", 3, "records to print per operation")
	flag.IntVar(&o.Rows, "rows", defaultRows, "rows of public.page_views, the table whose snapshot the demo shows")
	flag.BoolVar(&o.Avro, "avro", false, "write Avro keys and values (format.key/value: avro), their schemas in a Schema Registry")
	flag.StringVar(&o.Registry, "registry", "", "with -avro: the Schema Registry's URL; empty starts an in-process stand-in")
	flag.Parse()
	if o.Rows < 0 {
		fmt.Fprintln(os.Stderr, "demo: -rows must be 0 or more")
		os.Exit(2)
	}
	if o.Registry != "" && !o.Avro {
		fmt.Fprintln(os.Stderr, "demo: -registry needs -avro")
		os.Exit(2)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "demo: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}

	// Ctrl-C (or SIGTERM) cancels ctx; run then stops mooncdc and Postgres
	// and removes its files before returning.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	_, err := run(ctx, o)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		if !errors.Is(err, context.Canceled) {
			fmt.Fprintf(os.Stderr, "\ndemo: %v\n", err)
		}
		done := "everything it started is stopped and its files removed"
		if o.Keep {
			done = "everything it started is stopped; its files are kept"
		}
		fmt.Fprintf(os.Stderr, "\ndemo: interrupted; %s\n", done)
		stop()
		os.Exit(130)
	default:
		fmt.Fprintf(os.Stderr, "\ndemo: %v\n", err)
		stop()
		os.Exit(1)
	}
}
