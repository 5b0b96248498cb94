package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "kfakeserver: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "host:port to listen on; port 0 picks a free port")
	dataDir := flag.String("data-dir", "", "directory kfake persists to and reloads from (required)")
	logLevel := flag.String("log-level", "warn", "kfake log level on stderr: none, error, warn, info, debug")
	syncWrites := flag.Bool("sync", false, "fsync every batch (only needed to survive a machine crash, not a SIGKILL)")
	exitOnEOF := flag.Bool("exit-on-stdin-eof", false, "shut down when stdin reaches EOF (the parent died)")
	flag.Parse()
	if *dataDir == "" {
		return fmt.Errorf("-data-dir is required")
	}
	level, err := parseLevel(*logLevel)
	if err != nil {
		return err
	}
	// From the start, so that a SIGTERM while loading still ends in a
	// clean Close once serving.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)

	// kfake always listens on 127.0.0.1:<port>; ListenFn makes it bind
	// exactly the address we give instead.
	start := func(addr string) (*kfake.Cluster, error) {
		opts := []kfake.Opt{
			kfake.NumBrokers(1),
			kfake.DataDir(*dataDir),
			kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, addr) }),
			kfake.WithLogger(kfake.BasicLogger(os.Stderr, level)),
		}
		if *syncWrites {
			opts = append(opts, kfake.SyncWrites())
		}
		c, err := kfake.NewCluster(opts...)
		if err != nil {
			return nil, fmt.Errorf("start kfake on %s with data dir %s: %w", addr, *dataDir, err)
		}
		return c, nil
	}

	// First load the data on a private port, where no client can reach
	// it, and abort what a crash left open (see repair.go); then serve.
	c, err := start("127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	n, err := abortOrphanedTransactions(ctx, c.ListenAddrs()[0])
	cancel()
	c.Close()
	if err != nil {
		return fmt.Errorf("abort transactions left open by a crash: %w", err)
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "kfakeserver: wrote abort markers on %d partitions for transactions left open by a crash\n", n)
	}
	if c, err = start(*addr); err != nil {
		return err
	}
	fmt.Printf("listening on %s\n", c.ListenAddrs()[0])

	stdinEOF := make(chan struct{})
	if *exitOnEOF {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(stdinEOF)
		}()
	}
	select {
	case <-stop:
	case <-stdinEOF:
	}
	c.Close() // saves kfake's state files; blocks until done
	return nil
}

func parseLevel(s string) (kfake.LogLevel, error) {
	switch strings.ToLower(s) {
	case "none":
		return kfake.LogLevelNone, nil
	case "error":
		return kfake.LogLevelError, nil
	case "warn":
		return kfake.LogLevelWarn, nil
	case "info":
		return kfake.LogLevelInfo, nil
	case "debug":
		return kfake.LogLevelDebug, nil
	}
	return 0, fmt.Errorf("unknown -log-level %q (want none, error, warn, info or debug)", s)
}
