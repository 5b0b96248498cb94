package ittest

import (
	"context"
	"fmt"
)

// WalMessage is one pgoutput message as the slot's walsender positions it.
type WalMessage struct {
	LSN  uint64
	Kind byte // 'B', 'I', 'C', …
}

// PeekSlot returns the pgoutput messages the slot would send next, with the
// LSN the stream gives each (a change's own LSN, a commit's end), without
// consuming them.
func (e *Env) PeekSlot(slot, pub string) []WalMessage {
	e.T.Helper()
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		e.T.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT lsn::text, data FROM pg_logical_slot_peek_binary_changes($1, NULL, NULL,
		'proto_version', '1', 'publication_names', $2)`, slot, pub)
	if err != nil {
		e.T.Fatal(err)
	}
	defer rows.Close()
	var out []WalMessage
	for rows.Next() {
		var s string
		var data []byte
		if err := rows.Scan(&s, &data); err != nil {
			e.T.Fatal(err)
		}
		var hi, lo uint64
		if _, err := fmt.Sscanf(s, "%X/%X", &hi, &lo); err != nil {
			e.T.Fatal(err)
		}
		out = append(out, WalMessage{LSN: hi<<32 | lo, Kind: data[0]})
	}
	if err := rows.Err(); err != nil {
		e.T.Fatal(err)
	}
	return out
}
