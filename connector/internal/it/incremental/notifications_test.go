package incremental

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/internal/eventually"
)

// notification is a notification record as Debezium's sink channel
// writes it with the JSON converter, schemas off
// (SinkNotificationChannel.java:92-98 at v3.6.1.Final): key {id}, value
// {id, type, aggregate_type, additional_data, timestamp}.
type notification struct {
	Key            string            // the key's id
	ID             string            `json:"id"`
	Type           string            `json:"type"`
	AggregateType  string            `json:"aggregate_type"`
	AdditionalData map[string]string `json:"additional_data"`
	Timestamp      int64             `json:"timestamp"`
}

// notificationsUntil reads topic until a notification of type last
// arrives (the last, or with any, anywhere), and returns them in order.
func notificationsUntil(t *testing.T, addr, topic, last string, any bool) []notification {
	t.Helper()
	var ns []notification
	eventually.True(t, 30*time.Second, 50*time.Millisecond, "no "+last+" notification on "+topic, func() bool {
		ns = ns[:0]
		for _, r := range readAll(t, addr, topic, -1) {
			var n notification
			var k struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(r.Value, &n); err != nil {
				t.Fatalf("notification value %s: %v", r.Value, err)
			}
			if err := json.Unmarshal(r.Key, &k); err != nil {
				t.Fatalf("notification key %s: %v", r.Key, err)
			}
			n.Key = k.ID
			ns = append(ns, n)
		}
		for i := range ns {
			if ns[i].Type == last && (any || i == len(ns)-1) {
				return true
			}
		}
		return false
	})
	return ns
}

// types is the notifications' types, IN_PROGRESS runs folded to one.
func types(ns []notification) string {
	var out []string
	for _, n := range ns {
		if n.Type == "IN_PROGRESS" && len(out) > 0 && out[len(out)-1] == "IN_PROGRESS…" {
			continue
		}
		if n.Type == "IN_PROGRESS" {
			out = append(out, "IN_PROGRESS…")
			continue
		}
		out = append(out, n.Type)
	}
	return strings.Join(out, " ")
}

// checkCommon checks what every notification carries
// (IncrementalSnapshotNotificationService.java:151-166): the aggregate
// type, connector_name (the logical name: kafka.topic_prefix), the id
// in the key and the value, a timestamp of the test's time.
func checkCommon(t *testing.T, ns []notification, connector string, began time.Time) {
	t.Helper()
	for i, n := range ns {
		if n.AggregateType != "Incremental Snapshot" || n.AdditionalData["connector_name"] != connector || n.ID == "" || n.Key != n.ID ||
			n.Timestamp < began.UnixMilli() || n.Timestamp > time.Now().UnixMilli() {
			t.Errorf("notification %d: %+v (aggregate type, connector_name %q, key = id, timestamp since %d)", i, n, connector, began.UnixMilli())
		}
	}
}

// checkData checks n's additional_data against want (connector_name
// aside).
func checkData(t *testing.T, n notification, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for k, v := range n.AdditionalData {
		if k != "connector_name" {
			got[k] = v
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: additional_data %v, want %v", n.Type, got, want)
	}
}

// checkInProgress checks the IN_PROGRESS notifications of table read in
// chunks of chunkPages pages: one per chunk, each with the pages planned
// as maximum_key and its end page as last_processed_key (mooncdc's pages
// for Debezium's keys), together every chunk of [0, maximum_key).
func checkInProgress(t *testing.T, ns []notification, table string, chunkPages uint32) int {
	t.Helper()
	ends := map[uint32]bool{}
	var pages uint32
	n := 0
	for _, x := range ns {
		if x.Type != "IN_PROGRESS" {
			continue
		}
		n++
		d := x.AdditionalData
		if d["data_collections"] != table || d["current_collection_in_progress"] != table {
			t.Errorf("IN_PROGRESS %v, want %s as data_collections and current_collection_in_progress", d, table)
		}
		mk, err1 := strconv.ParseUint(d["maximum_key"], 10, 32)
		end, err2 := strconv.ParseUint(d["last_processed_key"], 10, 32)
		if err1 != nil || err2 != nil || (pages != 0 && uint32(mk) != pages) {
			t.Fatalf("IN_PROGRESS %v: maximum_key and last_processed_key are the pages planned and the chunk's end", d)
		}
		pages = uint32(mk)
		ends[uint32(end)] = true
	}
	for end := chunkPages; ; end += chunkPages {
		e := min(end, pages)
		if !ends[e] {
			t.Errorf("no IN_PROGRESS for the chunk ending at page %d of %d (ends %v)", e, pages, ends)
		}
		delete(ends, e)
		if e == pages {
			break
		}
	}
	if len(ends) > 0 || n != int((pages+chunkPages-1)/chunkPages) {
		t.Errorf("%d IN_PROGRESS, extra chunk ends %v, for %d pages in chunks of %d", n, ends, pages, chunkPages)
	}
	return n
}
