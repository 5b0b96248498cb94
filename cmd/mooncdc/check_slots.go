package main

// This file holds how check counts replication slots and WAL senders: who
// else uses them, and how many the pipelines need, their copy slots
// included.

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/mooncdc/mooncdc/connector/pgsource"
)

// slotRoom is a server's replication slots and WAL senders: the settings,
// how many others use, and how many copy slots of the pipelines' own wait
// for a copy to resume (no one streams them).
type slotRoom struct {
	maxSlots, maxSends     int64
	otherSlots, otherSends int64
	waiting                int64
}

// readSlotRoom reads the slots and senders of the server behind conn; the
// pipeline slots pipelines and their copy slots are not others'.
func readSlotRoom(ctx context.Context, conn *pgx.Conn, pipelines []string) (slotRoom, error) {
	var room slotRoom
	ours := func(name string) (own, copySlot bool) {
		for _, p := range pipelines {
			if name == p {
				return true, false
			}
			if pgsource.IsCopySlot(p, name) {
				return true, true
			}
		}
		return false, false
	}
	if err := conn.QueryRow(ctx, `SELECT current_setting('max_replication_slots')::bigint, current_setting('max_wal_senders')::bigint`).
		Scan(&room.maxSlots, &room.maxSends); err != nil {
		return room, err
	}
	rows, err := conn.Query(ctx, `SELECT slot_name::text, active_pid FROM pg_replication_slots`)
	if err != nil {
		return room, err
	}
	var ourPids []int32
	for rows.Next() {
		var name string
		var pid *int32
		if err := rows.Scan(&name, &pid); err != nil {
			rows.Close()
			return room, err
		}
		own, copySlot := ours(name)
		switch {
		case !own:
			room.otherSlots++
		case pid != nil:
			ourPids = append(ourPids, *pid)
		case copySlot:
			room.waiting++
		}
	}
	if err := rows.Err(); err != nil {
		return room, err
	}
	rows, err = conn.Query(ctx, `SELECT pid FROM pg_stat_replication`)
	if err != nil {
		return room, err
	}
	senders, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return room, err
	}
	for _, pid := range senders {
		if !slices.Contains(ourPids, pid) {
			room.otherSends++
		}
	}
	return room, nil
}

// slotNeed is what pipelines need of a server: base slots and senders (one
// per pipeline and one per copy worker), plus a slot for each copy slot
// that waits to resume, and while a copy resumes a second sender for its
// worker (the copy slot streams while the new snapshot's slot holds it).
func slotNeed(base, workers int64, room slotRoom) (slots, sends int64, slotsWhy, sendsWhy string) {
	resuming := min(workers, room.waiting)
	slots, sends = base+room.waiting, base+resuming
	switch room.waiting {
	case 0:
	case 1:
		slotsWhy = " + 1 copy slot waiting to resume"
	default:
		slotsWhy = fmt.Sprintf(" + %d copy slots waiting to resume", room.waiting)
	}
	switch resuming {
	case 0:
	case 1:
		sendsWhy = " + 1 while a copy resumes"
	default:
		sendsWhy = fmt.Sprintf(" + %d while copies resume", resuming)
	}
	return slots, sends, slotsWhy, sendsWhy
}

// checkRoom checks that room leaves the slots and WAL senders that the
// pipelines need free, one line each (their names followed by where),
// base and workers being their need before copy slots, needs saying who
// needs the number (a format with one %d), baseWhy what base is, and orFix
// the other fix beside raising the setting.
func checkRoom(out *checkLines, where string, room slotRoom, base, workers int64, needs, baseWhy, orFix string) {
	slots, sends, slotsWhy, sendsWhy := slotNeed(base, workers, room)
	for _, r := range []struct {
		what, setting string
		max, others   int64
		need          int64
		why           string
	}{
		{"replication slots", "max_replication_slots", room.maxSlots, room.otherSlots, slots, slotsWhy},
		{"WAL senders", "max_wal_senders", room.maxSends, room.otherSends, sends, sendsWhy},
	} {
		detail := fmt.Sprintf("%s %d, %d used by others, %s (%s%s)", r.setting, r.max, r.others, fmt.Sprintf(needs, r.need), baseWhy, r.why)
		if r.max-r.others >= r.need {
			out.pass(r.what+where, detail)
			continue
		}
		out.fail(r.what+where, detail, fmt.Sprintf("ALTER SYSTEM SET %s = %d; then restart Postgres; %s", r.setting, r.others+r.need, orFix))
	}
}
