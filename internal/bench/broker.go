package main

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// This file starts the kfakeserver broker process the benchmarks write to.

// broker is a kfakeserver process.
type broker struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
	out   *syncBuffer
	done  chan struct{}
}

func startBroker(bin, dataDir string) (*broker, error) {
	b := &broker{out: new(syncBuffer), done: make(chan struct{})}
	b.cmd = exec.Command(bin, "-addr", "127.0.0.1:0", "-data-dir", dataDir, "-log-level", "warn", "-exit-on-stdin-eof")
	pr, pw := io.Pipe()
	b.cmd.Stdout = pw
	b.cmd.Stderr = b.out
	stdin, err := b.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	b.stdin = stdin
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start kfakeserver: %w", err)
	}
	go func() {
		_ = b.cmd.Wait()
		_ = pw.Close()
		close(b.done)
	}()
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "listening on "); ok {
				addrs <- a
			}
			_, _ = b.out.Write(append(sc.Bytes(), '\n'))
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case b.addr = <-addrs:
	case <-b.done:
		return nil, fmt.Errorf("kfakeserver exited before listening:\n%s", b.out.String())
	case <-time.After(30 * time.Second):
		b.kill()
		return nil, fmt.Errorf("kfakeserver not listening after 30s:\n%s", b.out.String())
	}
	return b, nil
}

func (b *broker) pid() int { return b.cmd.Process.Pid }

func (b *broker) kill() {
	_ = b.cmd.Process.Kill()
	<-b.done
}
