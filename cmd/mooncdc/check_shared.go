package main

// This file holds check --config DIR's capacity check across pipelines:
// the pipelines of one directory that use one Postgres server need their
// slots and WAL senders together, since one worker may run them all (the
// group gives a leaving worker's pipelines to the others). Each
// pipeline's own section checks only its own need.

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
)

// sharedServer is the pipelines of a directory on one Postgres server.
type sharedServer struct {
	addr    string // host:port of the first host
	cfgs    []config.Config
	names   []string
	slots   []string
	need    int64 // 1 + snapshot.workers per pipeline
	workers int64 // snapshot.workers, all pipelines'
}

// sharedServers groups cfgs by their Postgres server (host and port of
// the URL's first host), in the order they first appear; a config whose
// connection settings do not parse is left out (its own section says why).
func sharedServers(cfgs []config.Config) []*sharedServer {
	var out []*sharedServer
	by := map[string]*sharedServer{}
	for _, c := range cfgs {
		pc, err := c.PostgresConnConfig()
		if err != nil {
			continue
		}
		addr := net.JoinHostPort(pc.Host, strconv.Itoa(int(pc.Port)))
		s := by[addr]
		if s == nil {
			s = &sharedServer{addr: addr}
			by[addr] = s
			out = append(out, s)
		}
		s.cfgs = append(s.cfgs, c)
		s.names = append(s.names, c.Name)
		s.slots = append(s.slots, c.Postgres.Slot)
		s.need += int64(1 + c.Snapshot.Workers)
		s.workers += int64(c.Snapshot.Workers)
	}
	return out
}

// checkSharedCapacity checks, for each server that two or more pipelines
// use, that max_replication_slots and max_wal_senders leave room for all
// of their slots and copy slots at once, beside the slots and senders of
// others (these pipelines' own, from a running group, do not count).
func checkSharedCapacity(ctx context.Context, cfgs []config.Config) checkLines {
	var out checkLines
	for _, s := range sharedServers(cfgs) {
		if len(s.cfgs) < 2 {
			continue
		}
		pipelines := strings.Join(s.names, ", ")
		if err := s.check(ctx, &out, pipelines); err != nil {
			out.fail("Postgres "+s.addr, fmt.Sprintf("pipelines %s: could not read its slots: %s", pipelines, checkOneLine(config.RedactURL(err.Error()))), "")
		}
	}
	return out
}

func (s *sharedServer) check(ctx context.Context, out *checkLines, pipelines string) error {
	pc, err := s.cfgs[0].PostgresConnConfig()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	conn, err := pgsource.ConnectSQL(ctx, pc, "mooncdc check")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	room, err := readSlotRoom(ctx, conn, s.slots)
	if err != nil {
		return err
	}
	checkRoom(out, " on "+s.addr, room, s.need, s.workers, "pipelines "+strings.ReplaceAll(pipelines, "%", "%%")+" need %d together", "1 + snapshot.workers each",
		"or lower snapshot.workers (one worker may run all of them)")
	return nil
}
