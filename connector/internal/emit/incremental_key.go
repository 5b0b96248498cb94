package emit

import (
	"encoding/binary"

	"github.com/mooncdc/mooncdc/schema"
)

// AppendTupleKey appends the window key of a row of rel: its key columns'
// values (rel.KeyIndexes: the primary key, the replica identity index or
// format.message_key_columns, as the record key is made), each as its
// kind, length and text. The stream's tuples and the chunk readers' COPY
// rows hold the same text for a value (both are the type's output
// function under the same session settings, as the blocking copy's
// records already rely on), so a key compares equal whichever side read
// it, whatever the key format. false when a key column's value is not in
// the tuple (unchanged TOAST) or the tuple is too short.
func AppendTupleKey(dst []byte, rel *schema.Relation, t schema.Tuple) ([]byte, bool) {
	for _, i := range rel.KeyIndexes {
		if i >= len(t) || t[i].Kind == schema.ValueUnchangedToast {
			return dst, false
		}
		v := t[i]
		dst = append(dst, byte(v.Kind))
		dst = binary.AppendUvarint(dst, uint64(len(v.Data)))
		dst = append(dst, v.Data...)
	}
	return dst, true
}
